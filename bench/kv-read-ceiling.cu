// kv-read-ceiling: how fast a kernel that only reads a decode step's K and V
// bytes runs on this GPU, as cachet-bench times attention (one launch per
// call, back to back, device time between events) and after the L2 was
// filled with other lines by a read. The floor under any decode-attention
// kernel at the same bytes (issue 20): Llama-3-8B attention, Hkv 8, D 128,
// token-major K/V of DEPTH positions in f16, q8_0 (34-byte blocks) and
// q4_0 (18-byte blocks).
//
//   nvcc -O3 -arch=sm_90 -o kv-read-ceiling bench/kv-read-ceiling.cu
//   ./kv-read-ceiling [DEPTH=32768] [REPEAT=30]
//
// Kernels: `stream` reads each cache as one contiguous span, 16 bytes a
// lane, 4 loads in flight per lane, 512 workgroups of 256; `q8_0 blocks`
// reads q8_0 K/V as the mma.sync decode kernel does (per KV head and
// split, lane 4 g + q reading block q of rows g and g + 8 of its 16
// positions in 8-byte pieces, five per block). The loads are only XORed.
// Prints the median [min, max] in us and GB/s of K+V bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
constexpr int kHeads = 8, kDim = 128;
__device__ unsigned sink;

__global__ void __launch_bounds__(256)
    stream(const uint4 *k, const uint4 *v, size_t n16, int workgroups) {
  size_t per = (n16 + workgroups - 1) / workgroups;
  size_t begin = blockIdx.x * per, end = min(n16, begin + per);
  unsigned acc = 0;
  for (size_t i = begin + threadIdx.x; i < end; i += 256 * 4) {
    uint4 a[4], b[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      size_t j = i + 256 * u;
      a[u] = j < end ? k[j] : make_uint4(0, 0, 0, 0);
      b[u] = j < end ? v[j] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
      acc ^=
          a[u].x + a[u].y + a[u].z + a[u].w + b[u].x + b[u].y + b[u].z + b[u].w;
  }
  if (acc == 0x9e3779b9u)
    sink = acc;
}

// q8_0 rows of 136 bytes (4 blocks), a position's 8 rows 1088 bytes apart.
__global__ void __launch_bounds__(256)
    q8Blocks(const uint8_t *k, const uint8_t *v, int positions, int splits) {
  constexpr int row = 136, position = kHeads * row;
  int head = blockIdx.x % kHeads, split = blockIdx.x / kHeads;
  int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q = threadIdx.x % 4;
  int per = (positions + splits - 1) / splits, first = split * per;
  int last = min(positions, first + per);
  unsigned acc = 0;
  for (int base = first + warp * 16; base + 16 <= last; base += 128) {
    uint2 r[2][2][5];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      size_t at =
          ((size_t)(base + 8 * j + g) * position + head * row + q * 34) &
          ~size_t(7);
#pragma unroll
      for (int c = 0; c < 5; ++c) {
        r[0][j][c] = *reinterpret_cast<const uint2 *>(k + at + 8 * c);
        r[1][j][c] = *reinterpret_cast<const uint2 *>(v + at + 8 * c);
      }
    }
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int c = 0; c < 5; ++c)
          acc ^= r[t][j][c].x + r[t][j][c].y;
  }
  if (acc == 0x9e3779b9u)
    sink = acc;
}

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kv-read-ceiling: %s: %s\n", what,
                 cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class Before, class Launch>
void time(const char *name, double bytes, int repeat, Before before,
          Launch launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> us;
  for (int i = 0; i < repeat + 3; ++i) {
    before();
    check(cudaEventRecord(start), "record");
    launch();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "synchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    if (i >= 3)
      us.push_back(ms * 1000);
  }
  check(cudaGetLastError(), name);
  std::sort(us.begin(), us.end());
  float median = us[us.size() / 2];
  std::printf("%-34s %8.2f us [%.2f, %.2f]  %6.0f GB/s\n", name, median,
              us.front(), us.back(), bytes / median / 1e3);
}
} // namespace

int main(int argc, char **argv) {
  int depth = argc > 1 ? std::atoi(argv[1]) : 32768;
  int repeat = argc > 2 ? std::atoi(argv[2]) : 30;
  struct Format {
    const char *name;
    size_t rowBytes;
  } formats[] = {
      {"f16", kDim * 2}, {"q8_0", kDim / 32 * 34}, {"q4_0", kDim / 32 * 18}};
  size_t most = (size_t)depth * kHeads * kDim * 2 + 64;
  const size_t flushBytes = size_t(256) << 20;
  uint8_t *k, *v, *flush;
  check(cudaMalloc(&k, most), "malloc");
  check(cudaMalloc(&v, most), "malloc");
  check(cudaMalloc(&flush, flushBytes), "malloc");
  check(cudaMemset(k, 1, most), "memset");
  check(cudaMemset(v, 2, most), "memset");
  check(cudaMemset(flush, 3, flushBytes), "memset");
  auto nothing = [] {};
  auto readFlush = [&] {
    stream<<<1024, 256>>>(reinterpret_cast<uint4 *>(flush),
                          reinterpret_cast<uint4 *>(flush + flushBytes / 2),
                          flushBytes / 32, 1024);
  };
  std::printf("depth %d, Hkv %d, D %d; K+V read once per launch\n", depth,
              kHeads, kDim);
  for (int round = 0; round < 2; ++round) {
    for (const Format &f : formats) {
      size_t bytes = (size_t)depth * kHeads * f.rowBytes;
      char name[64];
      for (int flushed = 0; flushed < 2; ++flushed) {
        std::snprintf(name, sizeof name, "%s stream%s", f.name,
                      flushed ? ", L2 flushed" : "");
        auto launch = [&] {
          stream<<<512, 256>>>(reinterpret_cast<uint4 *>(k),
                               reinterpret_cast<uint4 *>(v), bytes / 16, 512);
        };
        if (flushed)
          time(name, 2.0 * bytes, repeat, readFlush, launch);
        else
          time(name, 2.0 * bytes, repeat, nothing, launch);
      }
      if (f.rowBytes == 136)
        for (int splits : {32, 64}) {
          std::snprintf(name, sizeof name, "q8_0 blocks, %d splits", splits);
          time(name, 2.0 * bytes, repeat, nothing, [&] {
            q8Blocks<<<kHeads * splits, 256>>>(k, v, depth, splits);
          });
        }
    }
  }
  return 0;
}
