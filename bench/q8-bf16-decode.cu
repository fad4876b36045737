// q8-bf16-decode.cu: what decoding q8_0 weights to bf16-rounded values costs
// inside a streaming mat-vec (issue 21).
//
// A model with bf16 activations dequantizes its q8_0 weights to bf16: each
// value is bf16(f32(q) * f32(d)), rounded to nearest even, and the mat-vec
// multiplies it with bf16 x in f32. This program times one mat-vec kernel
// (a warp per row, 16 i8 quants per lane and load, four loads in flight,
// split layout: 16-byte aligned quants, f16 scales beside them) with the
// per-value decode done five ways:
//   i2f    cvt.rn.f32.s8, mul, cvt.rn.bf16.f32, widen (what cachet emitted)
//   cvt2   magic-number int -> float (prmt + fadd), mul, packed
//          cvt.rn.bf16x2.f32, widen with shift / and
//   int    magic-number int -> float, mul, round to nearest even with
//          integer ops (bits + 0x7fff + lsb, masked; a non-finite scale
//          truncates instead, which keeps inf and NaN)
//   velt   magic-number int -> float, mul, Veltkamp's split (c = p * 65537,
//          p_hi = c - (c - p); exact for finite p, a non-finite scale takes
//          a branch to cvt)
//   none   no rounding (not the dequantize's value: the bound the decode
//          could reach)
// and checks every variant's values against cvt.rn.bf16.f32 over all 256
// quants x 65536 f16 scales. Build: nvcc -O3 -arch=sm_90a
// bench/q8-bf16-decode.cu -o q8dec; run: ./q8dec [rows cols reps].
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>
#include <algorithm>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

enum Mode { I2F, CVT2, INT, VELT, NONE };

__device__ __forceinline__ float magicToFloat(uint32_t u, int byte) {
  // u holds q + 128 per byte; 0x4B0000uu is 2^23 + u.
  uint32_t bits = __byte_perm(u, 0x4B000000u, byte | 0x7540);
  return __uint_as_float(bits) - 8388736.0f;
}

template <int M>
__device__ __forceinline__ void decode4(uint32_t word, float d, bool finite,
                                        float out[4]) {
  if (M == I2F) {
    for (int j = 0; j < 4; ++j) {
      float p = (float)(int8_t)(word >> (8 * j)) * d;
      out[j] = __bfloat162float(__float2bfloat16_rn(p));
    }
    return;
  }
  uint32_t u = word ^ 0x80808080u;
  float p[4];
  for (int j = 0; j < 4; ++j)
    p[j] = magicToFloat(u, j) * d;
  if (M == NONE) {
    for (int j = 0; j < 4; ++j)
      out[j] = p[j];
  } else if (M == CVT2) {
    for (int j = 0; j < 4; j += 2) {
      __nv_bfloat162 h = __floats2bfloat162_rn(p[j], p[j + 1]);
      uint32_t b = *reinterpret_cast<uint32_t *>(&h);
      out[j] = __uint_as_float(b << 16);
      out[j + 1] = __uint_as_float(b & 0xFFFF0000u);
    }
  } else if (M == INT) {
    uint32_t k = finite ? 0x7FFFu : 0u, l = finite ? 1u : 0u;
    for (int j = 0; j < 4; ++j) {
      uint32_t b = __float_as_uint(p[j]);
      out[j] = __uint_as_float((b + k + ((b >> 16) & l)) & 0xFFFF0000u);
    }
  } else {
    for (int j = 0; j < 4; ++j) {
      float c = p[j] * 65537.0f;
      out[j] = c - (c - p[j]);
    }
  }
}

template <int M>
__global__ void __launch_bounds__(128)
    matvec(const uint4 *__restrict__ q, const __half *__restrict__ s,
           const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int rows,
           int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= rows)
    return;
  const uint4 *row = q + (size_t)warp * cols / 16;
  const __half *srow = s + (size_t)warp * cols / 32;
  float acc[16] = {};
  constexpr int U = 4;
  for (int k0 = lane * 16; k0 < cols; k0 += 32 * 16 * U) {
    uint4 w[U];
    float d[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      w[u] = row[(k0 + u * 512) / 16];
      d[u] = __half2float(srow[(k0 + u * 512) / 32]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int k = k0 + u * 512;
      uint4 xv[2];
      xv[0] = *reinterpret_cast<const uint4 *>(x + k);
      xv[1] = *reinterpret_cast<const uint4 *>(x + k + 8);
      bool finite = isfinite(d[u]);
      uint32_t words[4] = {w[u].x, w[u].y, w[u].z, w[u].w};
      uint32_t xw[8] = {xv[0].x, xv[0].y, xv[0].z, xv[0].w,
                        xv[1].x, xv[1].y, xv[1].z, xv[1].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float v[4];
        if (M == VELT && !finite) {
          decode4<I2F>(words[i], d[u], finite, v);
        } else {
          decode4<M>(words[i], d[u], finite, v);
        }
        float x0 = __uint_as_float(xw[2 * i] << 16);
        float x1 = __uint_as_float(xw[2 * i] & 0xFFFF0000u);
        float x2 = __uint_as_float(xw[2 * i + 1] << 16);
        float x3 = __uint_as_float(xw[2 * i + 1] & 0xFFFF0000u);
        acc[4 * i] = fmaf(v[0], x0, acc[4 * i]);
        acc[4 * i + 1] = fmaf(v[1], x1, acc[4 * i + 1]);
        acc[4 * i + 2] = fmaf(v[2], x2, acc[4 * i + 2]);
        acc[4 * i + 3] = fmaf(v[3], x3, acc[4 * i + 3]);
      }
    }
  }
  float sum = 0;
  for (int i = 0; i < 16; ++i)
    sum += acc[i];
  for (int o = 16; o; o /= 2)
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
  if (lane == 0)
    y[warp] = sum;
}

// Every quant x every f16 scale: decoded values against cvt.rn.bf16.f32 of
// the f32 product (NaN for NaN).
template <int M> __global__ void check(unsigned long long *bad) {
  uint32_t h = blockIdx.x * blockDim.x + threadIdx.x;
  if (h >= 65536)
    return;
  float d = __half2float(__ushort_as_half((unsigned short)h));
  bool finite = isfinite(d);
  for (int q0 = -128; q0 < 128; q0 += 4) {
    uint32_t word = 0;
    for (int j = 0; j < 4; ++j)
      word |= (uint32_t)(uint8_t)(int8_t)(q0 + j) << (8 * j);
    float v[4];
    if (M == VELT && !finite)
      decode4<I2F>(word, d, finite, v);
    else
      decode4<M>(word, d, finite, v);
    for (int j = 0; j < 4; ++j) {
      float ref = __bfloat162float(__float2bfloat16_rn((float)(q0 + j) * d));
      bool same = isnan(ref) ? isnan(v[j])
                             : __float_as_uint(ref) == __float_as_uint(v[j]);
      if (!same)
        atomicAdd(bad, 1ull);
    }
  }
}

template <int M>
float timeIt(const uint4 *q, const __half *s, const __nv_bfloat16 *x, float *y,
             int rows, int cols) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  matvec<M><<<(rows * 32 + 127) / 128, 128>>>(q, s, x, y, rows, cols);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1000.0f;
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 14336;
  int cols = argc > 2 ? atoi(argv[2]) : 4096;
  int reps = argc > 3 ? atoi(argv[3]) : 50;
  const char *names[] = {"i2f", "cvt2", "int", "velt", "none"};
  unsigned long long *bad;
  CHECK(cudaMalloc(&bad, 8 * 5));
  CHECK(cudaMemset(bad, 0, 8 * 5));
  check<I2F><<<256, 256>>>(bad + 0);
  check<CVT2><<<256, 256>>>(bad + 1);
  check<INT><<<256, 256>>>(bad + 2);
  check<VELT><<<256, 256>>>(bad + 3);
  check<NONE><<<256, 256>>>(bad + 4);
  unsigned long long hbad[5];
  CHECK(cudaMemcpy(hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost));
  for (int m = 0; m < 5; ++m)
    printf("check %-5s %llu of %d values differ from cvt.rn.bf16.f32\n",
           names[m], hbad[m], 256 * 65536);
  // Several copies of the weight so that each launch reads from HBM.
  const int copies = 8;
  size_t qBytes = (size_t)rows * cols, sBytes = (size_t)rows * cols / 32 * 2;
  std::vector<int8_t> hq(qBytes);
  std::vector<__half> hs(rows * (size_t)cols / 32);
  std::vector<__nv_bfloat16> hx(cols);
  srand(1);
  for (auto &v : hq)
    v = (int8_t)(rand() % 256 - 128);
  for (auto &v : hs)
    v = __float2half((rand() % 1000) / 1000.0f * 0.01f + 0.001f);
  for (auto &v : hx)
    v = __float2bfloat16((rand() % 2000) / 1000.0f - 1.0f);
  uint4 *q;
  __half *s;
  __nv_bfloat16 *x;
  float *y;
  CHECK(cudaMalloc(&q, qBytes * copies));
  CHECK(cudaMalloc(&s, sBytes * copies));
  CHECK(cudaMalloc(&x, cols * 2));
  CHECK(cudaMalloc(&y, rows * 4 * 5));
  for (int c = 0; c < copies; ++c) {
    CHECK(cudaMemcpy((char *)q + c * qBytes, hq.data(), qBytes,
                     cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy((char *)s + c * sBytes, hs.data(), sBytes,
                     cudaMemcpyHostToDevice));
  }
  CHECK(cudaMemcpy(x, hx.data(), cols * 2, cudaMemcpyHostToDevice));
  std::vector<float> t[5];
  for (int r = 0; r < reps; ++r)
    for (int m = 0; m < 5; ++m) {
      int c = (r * 5 + m) % copies;
      const uint4 *qc = (const uint4 *)((char *)q + c * qBytes);
      const __half *sc = (const __half *)((char *)s + c * sBytes);
      float *yc = y + m * rows;
      float us = m == 0   ? timeIt<I2F>(qc, sc, x, yc, rows, cols)
                 : m == 1 ? timeIt<CVT2>(qc, sc, x, yc, rows, cols)
                 : m == 2 ? timeIt<INT>(qc, sc, x, yc, rows, cols)
                 : m == 3 ? timeIt<VELT>(qc, sc, x, yc, rows, cols)
                          : timeIt<NONE>(qc, sc, x, yc, rows, cols);
      if (r > 2)
        t[m].push_back(us);
    }
  CHECK(cudaDeviceSynchronize());
  std::vector<float> hy(rows * 5);
  CHECK(cudaMemcpy(hy.data(), y, rows * 4 * 5, cudaMemcpyDeviceToHost));
  double bytes = qBytes + sBytes + cols * 2.0 + rows * 4.0;
  printf("mat-vec %dx%d q8_0 (split), bf16 x: %.1f MB per launch, %d rounds "
         "interleaved\n",
         rows, cols, bytes / 1e6, reps - 3);
  for (int m = 0; m < 5; ++m) {
    std::sort(t[m].begin(), t[m].end());
    float med = t[m][t[m].size() / 2];
    bool same = true;
    for (int i = 0; i < rows; ++i)
      same &= hy[m * rows + i] == hy[i];
    printf("%-5s median %7.2f us [%7.2f, %7.2f] %5.2f TB/s  y %s i2f's\n",
           names[m], med, t[m][t[m].size() / 10], t[m][t[m].size() * 9 / 10],
           bytes / med / 1e6, same ? "==" : "!=");
  }
  return 0;
}
