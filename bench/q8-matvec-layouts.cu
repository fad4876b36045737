// q8-matvec-layouts.cu: how the layout of q8_0 weights and the loads that
// read them bound a streaming bf16 mat-vec (issue 21).
//
// cachet's block mat-vec reads ggml's packed q8_0 rows (34-byte blocks: an
// f16 scale, 32 i8 quants) with aligned 32-bit words: a lane's slice of 8
// values costs a scale word and three quant words shifted into place, 16
// bytes requested for 8.5 used. This program times one 14336 x 4096 mat-vec
// (bf16 x, each weight bf16(q * d) as a bf16 model's dequantize rounds it,
// f32 sums) over the same values read five ways:
//   words    cachet's scheme: two rows per warp, a lane per 8-value slice,
//            four slices in flight, scale + 3 quant words (LDG.32)
//   stream   the packed row read as a stream of 16-byte chunks (LDG.128,
//            rows of 4352 bytes are 16-aligned), each lane decoding the
//            byte pairs of its chunk (a pair is a scale or two quants, never
//            split by a block boundary), x staged in shared memory
//   split    the values repacked at upload: 4096 i8 quants per row (LDG.128
//            of 16) and the f16 scales beside them (ggml's layout is not
//            this; the bound a repack could reach)
//   dense    bf16 weights (twice the bytes), a lane per 8 values (LDG.128)
//   read     a read of the packed bytes with LDG.128, nothing computed
// Between launches a 256 MiB buffer is written so that no weight is in L2.
// Each variant's y is checked against a CPU reference. Build: nvcc -O3
// -arch=sm_90a bench/q8-matvec-layouts.cu -o q8lay; run: ./q8lay [rows cols
// rounds].
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__,                        \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// The four signed quants of `w` (q + 128 made the low byte of 2^23 + u, less
// 2^23 + 128: exact, no int-to-float conversion), times d, rounded to bf16
// in pairs and widened back: the dequantize's values.
__device__ __forceinline__ void decode4(uint32_t w, float d, float out[4]) {
  uint32_t u = w ^ 0x80808080u;
  float p[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    p[j] = (__uint_as_float(__byte_perm(u, 0x4B000000u, j | 0x7540)) -
            8388736.0f) *
           d;
#pragma unroll
  for (int j = 0; j < 4; j += 2) {
    __nv_bfloat162 r = __floats2bfloat162_rn(p[j], p[j + 1]);
    uint32_t bits = *reinterpret_cast<uint32_t *>(&r);
    out[j] = __uint_as_float(bits << 16);
    out[j + 1] = __uint_as_float(bits & 0xFFFF0000u);
  }
}

__device__ __forceinline__ float bfLo(uint32_t v) {
  return __uint_as_float(v << 16);
}
__device__ __forceinline__ float bfHi(uint32_t v) {
  return __uint_as_float(v & 0xFFFF0000u);
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// words: two rows per warp, 4 warps per block.
__global__ void __launch_bounds__(128)
    wordsKernel(const uint8_t *w, const __nv_bfloat16 *x, float *y, int rows,
                int cols) {
  int lane = threadIdx.x & 31;
  int row0 = (blockIdx.x * 4 + (threadIdx.x >> 5)) * 2;
  if (row0 >= rows)
    return;
  int nb = cols / 32, rb = nb * 34;
  const uint32_t *words = reinterpret_cast<const uint32_t *>(w);
  float acc[2] = {0.f, 0.f};
  int blkInRound = lane >> 2, slice = lane & 3;
  for (int round = 0; round < nb / 8; round += 4) {
    uint32_t sw[2][4], q[2][4][3];
    uint4 xv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int blk = (round + k) * 8 + blkInRound;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        int base = (row0 + r) * rb + blk * 34;
        sw[r][k] = words[base >> 2];
        int start = base + 2 + 8 * slice;
#pragma unroll
        for (int i = 0; i < 3; ++i)
          q[r][k][i] = words[(start >> 2) + i];
      }
      xv[k] = reinterpret_cast<const uint4 *>(x)[(blk * 32 + slice * 8) / 8];
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int blk = (round + k) * 8 + blkInRound;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        int base = (row0 + r) * rb + blk * 34;
        uint32_t s = sw[r][k] >> ((base & 3) * 8);
        float d = __half2float(__ushort_as_half((unsigned short)(s & 0xFFFF)));
        int sh = ((base + 2 + 8 * slice) & 3) * 8;
        uint32_t lo = __funnelshift_r(q[r][k][0], q[r][k][1], sh);
        uint32_t hi = __funnelshift_r(q[r][k][1], q[r][k][2], sh);
        float v[8];
        decode4(lo, d, v);
        decode4(hi, d, v + 4);
        const uint32_t xs[4] = {xv[k].x, xv[k].y, xv[k].z, xv[k].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[r] = fmaf(v[2 * j], bfLo(xs[j]), acc[r]);
          acc[r] = fmaf(v[2 * j + 1], bfHi(xs[j]), acc[r]);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float s = warpSum(acc[r]);
    if (lane == 0)
      y[row0 + r] = s;
  }
}

// stream: one row per warp at a time, 8 warps per block, rows strided over
// the grid; x (bf16) in shared memory. Columns: 4096 at most.
template <int CHUNKS> // 16-byte chunks per lane: ceil(rowBytes / 512)
__global__ void __launch_bounds__(256, 3)
    streamKernel(const uint8_t *w, const __nv_bfloat16 *x, float *y, int rows,
                 int cols) {
  __shared__ uint32_t xs[2048];
  for (int i = threadIdx.x; i < cols / 2; i += blockDim.x)
    xs[i] = reinterpret_cast<const uint32_t *>(x)[i];
  __syncthreads();
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int nb = cols / 32, rb = nb * 34, nchunks = rb / 16;
  for (int row = blockIdx.x * 8 + warp; row < rows; row += gridDim.x * 8) {
    const uint4 *src = reinterpret_cast<const uint4 *>(w + (size_t)row * rb);
    const uint8_t *rowp = w + (size_t)row * rb;
    uint4 c[CHUNKS];
#pragma unroll
    for (int r = 0; r < CHUNKS; ++r) {
      int ci = lane + 32 * r;
      c[r] = ci < nchunks ? src[ci] : make_uint4(0, 0, 0, 0);
    }
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < CHUNKS; ++r) {
      int ci = lane + 32 * r;
      if (ci >= nchunks)
        break;
      int o0 = ci * 16, b0 = o0 / 34, p0 = o0 - 34 * b0;
      float d0 = __half2float(*reinterpret_cast<const __half *>(rowp + 34 * b0));
      float d1 = b0 + 1 < nb
                     ? __half2float(
                           *reinterpret_cast<const __half *>(rowp + 34 * b0 + 34))
                     : 0.f;
      const uint32_t cw[4] = {c[r].x, c[r].y, c[r].z, c[r].w};
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        int p = p0 + 2 * j;
        bool second = p >= 34;
        int pp = second ? p - 34 : p;
        int b = b0 + second;
        float d = second ? d1 : d0;
        uint32_t pair = (cw[j >> 1] >> ((j & 1) * 16)) & 0xFFFF;
        // Two signed quants -> values; a scale pair (pp == 0) weighs 0.
        uint32_t u = pair ^ 0x8080u;
        float q0 = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7540)) -
                   8388736.0f;
        float q1 = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7541)) -
                   8388736.0f;
        __nv_bfloat162 rr = __floats2bfloat162_rn(q0 * d, q1 * d);
        uint32_t bits = *reinterpret_cast<uint32_t *>(&rr);
        int xi = 16 * b + (pp >> 1) - 1;
        uint32_t xp = xs[max(xi, 0)];
        float v0 = pp ? bfLo(bits) : 0.f, v1 = pp ? bfHi(bits) : 0.f;
        acc = fmaf(v0, bfLo(xp), acc);
        acc = fmaf(v1, bfHi(xp), acc);
      }
    }
    acc = warpSum(acc);
    if (lane == 0)
      y[row] = acc;
  }
}

// split: a warp per row, 4 warps per block; 16 quants per lane and load,
// four loads in flight.
__global__ void __launch_bounds__(128)
    splitKernel(const int8_t *q, const __half *dsc, const __nv_bfloat16 *x,
                float *y, int rows, int cols) {
  int lane = threadIdx.x & 31;
  int row = blockIdx.x * 4 + (threadIdx.x >> 5);
  if (row >= rows)
    return;
  const uint4 *qr = reinterpret_cast<const uint4 *>(q + (size_t)row * cols);
  const __half *dr = dsc + (size_t)row * (cols / 32);
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  float acc = 0.f;
  for (int r0 = 0; r0 < cols / 512; r0 += 4) {
    uint4 qq[4];
    float d[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int ci = lane + 32 * (r0 + k);
      qq[k] = qr[ci];
      d[k] = __half2float(dr[ci >> 1]);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int ci = lane + 32 * (r0 + k);
      uint4 xa = xv[2 * ci], xb = xv[2 * ci + 1];
      const uint32_t qs[4] = {qq[k].x, qq[k].y, qq[k].z, qq[k].w};
      const uint32_t xw[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float v[4];
        decode4(qs[i], d[k], v);
        acc = fmaf(v[0], bfLo(xw[2 * i]), acc);
        acc = fmaf(v[1], bfHi(xw[2 * i]), acc);
        acc = fmaf(v[2], bfLo(xw[2 * i + 1]), acc);
        acc = fmaf(v[3], bfHi(xw[2 * i + 1]), acc);
      }
    }
  }
  acc = warpSum(acc);
  if (lane == 0)
    y[row] = acc;
}

// dense: a warp per row, 4 warps per block, 8 bf16 per lane and load, four
// loads in flight.
__global__ void __launch_bounds__(128)
    denseKernel(const __nv_bfloat16 *wd, const __nv_bfloat16 *x, float *y,
                int rows, int cols) {
  int lane = threadIdx.x & 31;
  int row = blockIdx.x * 4 + (threadIdx.x >> 5);
  if (row >= rows)
    return;
  const uint4 *wr = reinterpret_cast<const uint4 *>(wd + (size_t)row * cols);
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  float acc = 0.f;
  for (int r0 = 0; r0 < cols / 256; r0 += 4) {
    uint4 ww[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      ww[k] = wr[lane + 32 * (r0 + k)];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      uint4 xa = xv[lane + 32 * (r0 + k)];
      const uint32_t a[4] = {ww[k].x, ww[k].y, ww[k].z, ww[k].w};
      const uint32_t b[4] = {xa.x, xa.y, xa.z, xa.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        acc = fmaf(bfLo(a[i]), bfLo(b[i]), acc);
        acc = fmaf(bfHi(a[i]), bfHi(b[i]), acc);
      }
    }
  }
  acc = warpSum(acc);
  if (lane == 0)
    y[row] = acc;
}

__global__ void readKernel(const uint4 *p, size_t n, uint32_t *sink) {
  uint32_t s = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride],
          d = p[i + 3 * stride];
    s ^= a.x ^ a.w ^ b.y ^ b.z ^ c.x ^ c.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride)
    s ^= p[i].x;
  if (s == 0x12345678u)
    *sink = s;
}

static float bf16ToF(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t fToBf16(float f) { // round to nearest even (finite)
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 14336;
  int cols = argc > 2 ? atoi(argv[2]) : 4096;
  int rounds = argc > 3 ? atoi(argv[3]) : 30;
  if (cols % 512 || cols > 4096 || rows % 8) {
    fprintf(stderr, "cols: a multiple of 512 up to 4096; rows: of 8\n");
    return 2;
  }
  int nb = cols / 32, rb = nb * 34;
  size_t packedBytes = (size_t)rows * rb;
  std::vector<uint8_t> packed(packedBytes + 64, 0);
  std::vector<int8_t> qs((size_t)rows * cols);
  std::vector<__half> ds((size_t)rows * nb);
  std::vector<uint16_t> dense((size_t)rows * cols), xh(cols);
  std::vector<float> x(cols);
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto rnd = [&]() {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  for (int k = 0; k < cols; ++k) {
    xh[k] = fToBf16(((int)(rnd() % 2001) - 1000) / 1000.f);
    x[k] = bf16ToF(xh[k]);
  }
  std::vector<double> ref(rows, 0.0), mag(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < nb; ++b) {
      __half d = __float2half((1 + rnd() % 1000) / 64000.f);
      ds[(size_t)r * nb + b] = d;
      float df = __half2float(d);
      uint8_t *blk = &packed[(size_t)r * rb + 34 * b];
      memcpy(blk, &d, 2);
      for (int i = 0; i < 32; ++i) {
        int8_t qv = (int8_t)(rnd() & 0xFF);
        blk[2 + i] = (uint8_t)qv;
        size_t k = (size_t)b * 32 + i;
        qs[(size_t)r * cols + k] = qv;
        uint16_t v = fToBf16((float)qv * df);
        dense[(size_t)r * cols + k] = v;
        double t = (double)bf16ToF(v) * x[k];
        ref[r] += t;
        mag[r] += fabs(t);
      }
    }
  uint8_t *dPacked;
  int8_t *dQ;
  __half *dD;
  __nv_bfloat16 *dDense, *dX;
  float *dY;
  uint32_t *dSink;
  void *flush;
  size_t flushBytes = 256ull << 20;
  CHECK(cudaMalloc(&dPacked, packedBytes + 64));
  CHECK(cudaMalloc(&dQ, qs.size()));
  CHECK(cudaMalloc(&dD, ds.size() * 2));
  CHECK(cudaMalloc(&dDense, dense.size() * 2));
  CHECK(cudaMalloc(&dX, cols * 2));
  CHECK(cudaMalloc(&dY, rows * 4));
  CHECK(cudaMalloc(&dSink, 4));
  CHECK(cudaMalloc(&flush, flushBytes));
  CHECK(cudaMemcpy(dPacked, packed.data(), packedBytes + 64,
                   cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dQ, qs.data(), qs.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dD, ds.data(), ds.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dDense, dense.data(), dense.size() * 2,
                   cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dX, xh.data(), cols * 2, cudaMemcpyHostToDevice));
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int streamBlocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &streamBlocks, streamKernel<9>, 256, 0));
  printf("device %s, %d SMs; %d x %d q8_0 (%zu packed bytes); stream: %d "
         "blocks/SM resident\n",
         prop.name, sms, rows, cols, packedBytes, streamBlocks);

  const char *names[] = {"words", "stream", "split", "dense", "read"};
  const int nv = 5;
  double bytes[nv] = {(double)packedBytes, (double)packedBytes,
                      (double)packedBytes, (double)rows * cols * 2,
                      (double)packedBytes};
  auto launch = [&](int v) {
    switch (v) {
    case 0:
      wordsKernel<<<rows / 8, 128>>>(dPacked, dX, dY, rows, cols);
      break;
    case 1:
      streamKernel<9><<<sms * streamBlocks, 256>>>(dPacked, dX, dY, rows,
                                                   cols);
      break;
    case 2:
      splitKernel<<<rows / 4, 128>>>(dQ, dD, dX, dY, rows, cols);
      break;
    case 3:
      denseKernel<<<rows / 4, 128>>>(dDense, dX, dY, rows, cols);
      break;
    case 4:
      readKernel<<<sms * 8, 512>>>(reinterpret_cast<const uint4 *>(dPacked),
                                   packedBytes / 16, dSink);
      break;
    }
  };
  int bad = 0;
  for (int v = 0; v < 4; ++v) {
    CHECK(cudaMemset(dY, 0xFF, rows * 4));
    launch(v);
    CHECK(cudaGetLastError());
    std::vector<float> got(rows);
    CHECK(cudaMemcpy(got.data(), dY, rows * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
      double err = fabs(got[r] - ref[r]) / (mag[r] + 1e-30);
      worst = std::max(worst, err);
      if (!(err <= 1e-5))
        ++bad;
    }
    printf("check %-6s worst |y - ref| / sum|terms| %.2e\n", names[v], worst);
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<std::vector<float>> t(nv);
  for (int round = 0; round < rounds; ++round)
    for (int v = 0; v < nv; ++v) {
      CHECK(cudaMemsetAsync(flush, round & 0xFF, flushBytes));
      CHECK(cudaEventRecord(e0));
      launch(v);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      t[v].push_back(ms * 1000.f);
    }
  printf("| variant | median us | p10 | p90 | TB/s (median) |\n|---|---|---|---|---|\n");
  for (int v = 0; v < nv; ++v) {
    std::sort(t[v].begin(), t[v].end());
    float med = t[v][t[v].size() / 2], p10 = t[v][t[v].size() / 10],
          p90 = t[v][t[v].size() * 9 / 10];
    printf("| %s | %.1f | %.1f | %.1f | %.2f |\n", names[v], med, p10, p90,
           bytes[v] / med / 1e6);
  }
  if (bad)
    printf("FAIL: %d rows off the reference\n", bad);
  return bad ? 1 : 0;
}
