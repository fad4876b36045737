// Diagnostic: does programmatic dependent launch slow a chain of streaming
// kernels on this machine, and is it the host's launch call?
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>

__global__ void spin(long long ns) {
  long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) { long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); if (t - t0 > ns) break; }
}

template <int MODE> // 0 plain, 1 pdl trigger at end, 2 pdl trigger at start
__global__ void __launch_bounds__(128) stream(const uint4 *w, size_t n, float *out) {
  if (MODE == 2) asm volatile("griddepcontrol.launch_dependents;");
  if (MODE) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned acc = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
    uint4 v = __ldcs(w + i);
    acc ^= v.x + v.y + v.z + v.w;
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
  if (MODE == 1) asm volatile("griddepcontrol.launch_dependents;");
}

int main() {
  const size_t sizes[] = {50u << 20, 34u << 20, 235u << 20, 117u << 20};
  std::vector<uint4 *> bufs;
  size_t total = 0;
  for (int l = 0; l < 2; ++l)
    for (size_t s : sizes) { uint4 *p; cudaMalloc(&p, s); cudaMemset(p, 1, s); bufs.push_back(p); total += s; }
  float *out; cudaMalloc(&out, 1 << 20);
  cudaStream_t st; cudaStreamCreate(&st);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int grid = sms * 16;
  auto run = [&](int mode, double &hostUs) {
    spin<<<1, 1, 0, st>>>(300000);
    cudaEventRecord(a, st);
    auto t0 = std::chrono::steady_clock::now();
    for (uint4 *p : bufs) {
      size_t n = 0; for (int i = 0; i < 8; ++i) if (bufs[i] == p) n = sizes[i % 4] / 16;
      if (mode == 0) { stream<0><<<grid, 128, 0, st>>>(p, n, out); continue; }
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = grid; cfg.blockDim = 128; cfg.stream = st;
      cudaLaunchAttribute attr; attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr.val.programmaticStreamSerializationAllowed = 1; cfg.attrs = &attr; cfg.numAttrs = 1;
      if (mode == 1) cudaLaunchKernelEx(&cfg, stream<1>, (const uint4 *)p, n, out);
      else cudaLaunchKernelEx(&cfg, stream<2>, (const uint4 *)p, n, out);
    }
    hostUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    cudaEventRecord(b, st);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); return ms;
  };
  const char *names[] = {"plain", "pdl-end", "pdl-start"};
  std::vector<float> t[3]; std::vector<double> h[3];
  for (int r = 0; r < 25; ++r)
    for (int m = 0; m < 3; ++m) { double hu; float ms = run(m, hu); if (r >= 5) { t[m].push_back(ms); h[m].push_back(hu); } }
  printf("grid %d x 128, 8 kernels, %.1f MB; error %s\n", grid, total / 1e6, cudaGetErrorString(cudaGetLastError()));
  for (int m = 0; m < 3; ++m) {
    std::sort(t[m].begin(), t[m].end()); std::sort(h[m].begin(), h[m].end());
    printf("%-10s span %.4f ms [%.4f, %.4f] = %.3f TB/s; host launches %.1f us\n", names[m], t[m][t[m].size() / 2], t[m].front(), t[m].back(), total / (t[m][t[m].size() / 2] * 1e9), h[m][h[m].size() / 2]);
  }
}
