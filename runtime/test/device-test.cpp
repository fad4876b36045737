//===- device-test.cpp - CUDA and HIP checks of cachet-runtime-test -------===//
//
// On CUDA: embedded PTX kernels (vector add; a PDL chain on sm_90+) launched
// through the C API (parameter lists and bindings) and through mgpu*, a
// pitched upload round trip, copies and fills, event timing and the error
// paths. On HIP the same checks without kernels (no code object is
// embedded). Without a device every backend must fail cleanly with
// CACHET_ERROR_NO_DEVICE (expectNoDevice).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include <cinttypes>
#include <cstring>
#include <string>
#include <vector>

using namespace cachet_test;

namespace {

/// vadd_f32(a, b, c, n): c[i] = a[i] + b[i] for i < n (any sm_52+ device;
/// the driver compiles the PTX for the device it runs on).
const char kVaddPtx[] = R"(//
// vadd_f32(a, b, c, n): c[i] = a[i] + b[i] for i < n.
//
.version 7.0
.target sm_52
.address_size 64

.visible .entry vadd_f32(
  .param .u64 vadd_f32_a,
  .param .u64 vadd_f32_b,
  .param .u64 vadd_f32_c,
  .param .u32 vadd_f32_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<11>;

  ld.param.u64 %rd1, [vadd_f32_a];
  ld.param.u64 %rd2, [vadd_f32_b];
  ld.param.u64 %rd3, [vadd_f32_c];
  ld.param.u32 %r1, [vadd_f32_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra $L_done;
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  cvta.to.global.u64 %rd6, %rd3;
  mul.wide.u32 %rd7, %r5, 4;
  add.s64 %rd8, %rd4, %rd7;
  add.s64 %rd9, %rd5, %rd7;
  add.s64 %rd10, %rd6, %rd7;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd9];
  add.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd10], %f3;
$L_done:
  ret;
}
)";

/// pdl_inc_u32(x, n): x[i] += 1 for i < n; lets its dependent launch early
/// and waits for its predecessor before reading (sm_90+).
const char kPdlPtx[] = R"(//
// pdl_inc_u32(x, n): x[i] += 1 for i < n, for programmatic dependent
// launch: it lets its dependent start early, then waits for its
// predecessor's results before reading them.
//
.version 7.8
.target sm_90
.address_size 64

.visible .entry pdl_inc_u32(
  .param .u64 pdl_inc_u32_x,
  .param .u32 pdl_inc_u32_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;

  griddepcontrol.launch_dependents;
  griddepcontrol.wait;
  ld.param.u64 %rd1, [pdl_inc_u32_x];
  ld.param.u32 %r1, [pdl_inc_u32_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra $L_done;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  add.s32 %r7, %r6, 1;
  st.global.u32 [%rd4], %r7;
$L_done:
  ret;
}
)";

struct DeviceFixture {
  std::string backend;
  CachetRuntime rt = nullptr;
  CachetDeviceInfo info = {};
  CachetModule vaddModule = nullptr;
  CachetKernel vadd = nullptr;
};

void testInfo(DeviceFixture &f) {
  const CachetDeviceInfo &info = f.info;
  std::printf("device: %s (%s), compute capability %u.%u, %u SMs, L2 %" PRIu64
              " bytes, %" PRIu64 " bytes of memory, warp %u\n",
              info.name, info.backend, info.computeCapabilityMajor,
              info.computeCapabilityMinor, info.multiprocessorCount,
              info.l2CacheBytes, info.deviceMemoryBytes, info.subgroupSize);
  check(f.backend == info.backend && info.name[0] &&
            info.multiprocessorCount > 0 && info.computeCapabilityMajor > 0 &&
            info.deviceMemoryBytes > 0 && info.subgroupSize >= 32 &&
            info.maxWorkgroupInvocations >= 256 &&
            info.maxWorkgroupCount[0] > 0 && info.bufferDeviceAddress &&
            info.timestamps,
        "device info");
}

/// Uploads `data` into a new buffer.
CachetBuffer uploadNew(DeviceFixture &f, const std::vector<float> &data) {
  CachetBuffer buffer = nullptr;
  uint64_t bytes = data.size() * sizeof(float);
  if (ok(cachetBufferAlloc(f.rt, bytes, &buffer), "cachetBufferAlloc"))
    ok(cachetBufferUpload(f.rt, buffer, 0, data.data(), bytes),
       "cachetBufferUpload");
  return buffer;
}

void testModules(DeviceFixture &f) {
  const char garbage[] = "this is neither cubin nor PTX";
  CachetModule bad = nullptr;
  expectError(cachetModuleLoad(f.rt, garbage, sizeof(garbage), &bad),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad", "ModuleLoad",
              "garbage module is rejected");
  // The embedded kernels are PTX; HIP has no code object here.
  if (f.backend != "cuda")
    return;
  if (!ok(cachetModuleLoad(f.rt, kVaddPtx, std::strlen(kVaddPtx),
                           &f.vaddModule),
          "load the vadd PTX") ||
      !ok(cachetKernelGet(f.rt, f.vaddModule, "vadd_f32", &f.vadd),
          "cachetKernelGet vadd_f32"))
    return;
  check(true, "PTX module loads and vadd_f32 resolves");
  CachetKernel missing = nullptr;
  expectError(cachetKernelGet(f.rt, f.vaddModule, "nope", &missing),
              CACHET_ERROR_NOT_FOUND, "cachetKernelGet", "cuModuleGetFunction",
              "unknown kernel name is reported");
}

void testVectorAdd(DeviceFixture &f) {
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.0f), expected(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.5f * i - 7.25f;
    b[i] = 3.0f - 0.125f * i;
    expected[i] = a[i] + b[i];
  }
  CachetBuffer bufA = uploadNew(f, a), bufB = uploadNew(f, b),
               bufC = uploadNew(f, c);
  uint64_t addrA = 0, addrB = 0, addrC = 0;
  ok(cachetBufferDeviceAddress(f.rt, bufA, &addrA), "device address");
  ok(cachetBufferDeviceAddress(f.rt, bufB, &addrB), "device address");
  ok(cachetBufferDeviceAddress(f.rt, bufC, &addrC), "device address");
  const uint32_t grid[3] = {(n + 127) / 128, 1, 1}, block[3] = {128, 1, 1};
  uint32_t count = n;
  void *params[4] = {&addrA, &addrB, &addrC, &count};
  ok(cachetLaunchKernel(f.rt, f.vadd, grid, block, 0, params, 4, 0),
     "cachetLaunchKernel");
  ok(cachetBufferDownload(f.rt, bufC, 0, c.data(), n * 4), "download");
  check(c == expected, "vadd_f32 with a parameter list matches the CPU");

  // Bindings and push constants: the same kernel, its parameter block built
  // from the bindings' addresses and the push-constant bytes.
  ok(cachetBufferFill(f.rt, bufC, 0, n * 4, 0), "cachetBufferFill");
  CachetBinding bindings[3] = {{bufA, 0, 0}, {bufB, 0, 0}, {bufC, 0, 0}};
  ok(cachetLaunchWithBlock(f.rt, f.vadd, grid, block, bindings, 3, &count, 4),
     "cachetLaunchWithBlock");
  ok(cachetBufferDownload(f.rt, bufC, 0, c.data(), n * 4), "download");
  check(c == expected, "vadd_f32 with bindings and push constants matches "
                       "the CPU");

  // Bindings at offsets: c[0..n-16) = a[16..n) + b[16..n).
  ok(cachetBufferFill(f.rt, bufC, 0, n * 4, 0), "cachetBufferFill");
  CachetBinding shifted[3] = {{bufA, 64, 0}, {bufB, 64, 0}, {bufC, 0, 0}};
  uint32_t fewer = n - 16;
  ok(cachetLaunchWithBlock(f.rt, f.vadd, grid, block, shifted, 3, &fewer, 4),
     "cachetLaunchWithBlock at offsets");
  ok(cachetBufferDownload(f.rt, bufC, 0, c.data(), n * 4), "download");
  bool good = true;
  for (uint32_t i = 0; i < n; ++i)
    good &= c[i] == (i < fewer ? expected[i + 16] : 0.0f);
  check(good, "bindings at an offset pass base + offset");

  // 5000 launches in a chain add up: c = a + b, then c = c + b, ...
  ok(cachetBufferCopy(f.rt, bufA, 0, bufC, 0, n * 4), "cachetBufferCopy");
  std::vector<float> ones(n, 1.0f);
  ok(cachetBufferUpload(f.rt, bufB, 0, ones.data(), n * 4), "upload ones");
  void *chain[4] = {&addrC, &addrB, &addrC, &count};
  for (int i = 0; i < 5000; ++i)
    if (!ok(cachetLaunchKernel(f.rt, f.vadd, grid, block, 0, chain, 4, 0),
            "chained launch"))
      break;
  ok(cachetBufferDownload(f.rt, bufC, 0, c.data(), n * 4), "download");
  good = true;
  for (uint32_t i = 0; i < n; ++i)
    good &= c[i] == a[i] + 5000.0f;
  check(good, "5000 chained launches add up");
  for (CachetBuffer buffer : {bufA, bufB, bufC})
    cachetBufferFree(f.rt, buffer);
}

/// Copies and fills in stream order (no kernel needed).
void testCopyAndFill(DeviceFixture &f) {
  const uint32_t n = 1000;
  std::vector<float> a(n);
  for (uint32_t i = 0; i < n; ++i)
    a[i] = 0.5f * i - 7.25f;
  CachetBuffer bufA = uploadNew(f, a), bufC = uploadNew(f, a);
  std::vector<uint32_t> words(n);
  ok(cachetBufferFill(f.rt, bufC, 0, n * 4, 0), "cachetBufferFill");
  ok(cachetBufferCopy(f.rt, bufA, 0, bufC, 0, n * 4), "cachetBufferCopy");
  ok(cachetBufferFill(f.rt, bufC, 8, 16, 0xdeadbeefu), "cachetBufferFill");
  ok(cachetBufferDownload(f.rt, bufC, 0, words.data(), n * 4), "download");
  bool good = true;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t want;
    std::memcpy(&want, &a[i], 4);
    good &= words[i] == (i >= 2 && i < 6 ? 0xdeadbeefu : want);
  }
  check(good, "cachetBufferCopy and cachetBufferFill");
  cachetBufferFree(f.rt, bufA);
  cachetBufferFree(f.rt, bufC);
}

void testPitched(DeviceFixture &f) {
  const uint64_t rowBytes = 10, rows = 37, pitch = 16, srcPitch = 12;
  std::vector<uint8_t> src(rows * srcPitch);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i * 7 + 1);
  CachetBuffer buffer = nullptr;
  if (!ok(cachetBufferAllocPitched(f.rt, rowBytes, rows, pitch, &buffer),
          "cachetBufferAllocPitched"))
    return;
  ok(cachetBufferFill(f.rt, buffer, 0, rows * pitch, 0xffffffffu),
     "fill with 0xff");
  ok(cachetBufferUpload2D(f.rt, buffer, 0, 0, src.data(), srcPitch, rowBytes,
                          rows),
     "cachetBufferUpload2D");
  std::vector<uint8_t> all(rows * pitch, 0x55);
  ok(cachetBufferDownload(f.rt, buffer, 0, all.data(), all.size()), "download");
  uint64_t bad = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < pitch; ++c)
      bad += all[r * pitch + c] != (c < rowBytes ? src[r * srcPitch + c] : 0);
  check(bad == 0, "pitched upload: rows copied, gaps zeroed, byte by byte: " +
                      std::to_string(bad) + " bad bytes");
  std::vector<uint8_t> back(rows * rowBytes, 0);
  ok(cachetBufferDownload2D(f.rt, buffer, 0, 0, back.data(), 0, rowBytes, rows),
     "cachetBufferDownload2D");
  bad = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < rowBytes; ++c)
      bad += back[r * rowBytes + c] != src[r * srcPitch + c];
  check(bad == 0,
        "pitched download round trip: " + std::to_string(bad) + " bad bytes");
  cachetBufferFree(f.rt, buffer);
}

void testEvents(DeviceFixture &f) {
  CachetEvent start = nullptr, end = nullptr;
  if (!ok(cachetEventCreate(f.rt, &start), "cachetEventCreate") ||
      !ok(cachetEventCreate(f.rt, &end), "cachetEventCreate"))
    return;
  const uint32_t n = 1 << 20;
  CachetBuffer buffer = nullptr;
  ok(cachetBufferAlloc(f.rt, uint64_t(n) * 4, &buffer), "alloc");
  ok(cachetEventRecord(f.rt, start), "cachetEventRecord");
  for (int i = 0; i < 50; ++i)
    ok(cachetBufferFill(f.rt, buffer, 0, uint64_t(n) * 4, uint32_t(i)), "fill");
  ok(cachetEventRecord(f.rt, end), "cachetEventRecord");
  uint64_t elapsed = 0, t0 = 0, t1 = 0;
  ok(cachetEventElapsedNs(f.rt, start, end, &elapsed), "cachetEventElapsedNs");
  ok(cachetEventTimestampNs(f.rt, start, &t0), "cachetEventTimestampNs");
  ok(cachetEventTimestampNs(f.rt, end, &t1), "cachetEventTimestampNs");
  check(elapsed > 0 && t1 >= t0, "events time 50 fills of 4 MiB",
        std::to_string(elapsed) + " ns");
  uint64_t ignored = 0;
  expectError(cachetEventElapsedNs(f.rt, end, start, &ignored),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetEventElapsedNs", "precedes",
              "reversed marks are reported");
  CachetEvent unrecorded = nullptr;
  ok(cachetEventCreate(f.rt, &unrecorded), "cachetEventCreate");
  expectError(cachetEventElapsedNs(f.rt, start, unrecorded, &ignored),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetEventElapsedNs",
              "not been recorded", "an unrecorded mark is reported");
  for (CachetEvent event : {start, end, unrecorded})
    cachetEventDestroy(f.rt, event);
  cachetBufferFree(f.rt, buffer);
}

void testPdl(DeviceFixture &f) {
  if (f.info.computeCapabilityMajor < 9) {
    std::printf("PDL chain skipped: compute capability %u.%u is below 9.0\n",
                f.info.computeCapabilityMajor, f.info.computeCapabilityMinor);
    return;
  }
  CachetModule module = nullptr;
  CachetKernel kernel = nullptr;
  if (!ok(cachetModuleLoad(f.rt, kPdlPtx, std::strlen(kPdlPtx), &module),
          "load the PDL PTX") ||
      !ok(cachetKernelGet(f.rt, module, "pdl_inc_u32", &kernel),
          "cachetKernelGet pdl_inc_u32"))
    return;
  const uint32_t n = 100000, launches = 1000;
  CachetBuffer buffer = nullptr;
  uint64_t address = 0;
  ok(cachetBufferAlloc(f.rt, n * 4, &buffer), "alloc");
  ok(cachetBufferFill(f.rt, buffer, 0, n * 4, 0), "fill");
  ok(cachetBufferDeviceAddress(f.rt, buffer, &address), "device address");
  uint32_t count = n;
  void *params[2] = {&address, &count};
  const uint32_t grid[3] = {(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
  for (uint32_t i = 0; i < launches; ++i)
    if (!ok(cachetLaunchKernel(f.rt, kernel, grid, block, 0, params, 2,
                               CACHET_LAUNCH_PDL),
            "PDL launch"))
      break;
  std::vector<uint32_t> out(n);
  ok(cachetBufferDownload(f.rt, buffer, 0, out.data(), n * 4), "download");
  check(out == std::vector<uint32_t>(n, launches),
        "1000 PDL launches (cuLaunchKernelEx) add up");
  cachetBufferFree(f.rt, buffer);
  cachetModuleUnload(f.rt, module);
}

void testErrors(DeviceFixture &f) {
  CachetBuffer huge = nullptr;
  expectError(cachetBufferAlloc(f.rt, 1ull << 50, &huge),
              CACHET_ERROR_OUT_OF_MEMORY, "cachetBufferAlloc", "bytes",
              "absurd allocation reports out of memory");
  expectError(cachetBufferAllocEx(f.rt, 64, CACHET_BUFFER_HOST_VISIBLE, &huge),
              CACHET_ERROR_UNSUPPORTED, "cachetBufferAllocEx", "host-visible",
              "host-visible buffers are unsupported");
  CachetBuffer small = nullptr;
  ok(cachetBufferAlloc(f.rt, 256, &small), "alloc");
  void *mapped = nullptr;
  expectError(cachetBufferMap(f.rt, small, &mapped),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferMap", "HOST_VISIBLE",
              "mapping a device buffer");
  if (f.vadd) {
    const uint32_t grid[3] = {1, 1, 1}, bigBlock[3] = {4096, 1, 1},
                   block[3] = {64, 1, 1}, hugeGrid[3] = {1, UINT32_MAX, 1};
    CachetBinding bindings[3] = {{small, 0, 0}, {small, 0, 0}, {small, 0, 0}};
    uint32_t n = 64;
    expectError(cachetLaunch(f.rt, f.vadd, grid, bindings, 3, &n, 4),
                CACHET_ERROR_ARGUMENT_MISMATCH, "cachetLaunch",
                "needs a block size", "a launch without a block size");
    expectError(
        cachetLaunchWithBlock(f.rt, f.vadd, grid, bigBlock, bindings, 3, &n, 4),
        CACHET_ERROR_LIMIT_EXCEEDED, "cachetLaunchWithBlock",
        "threads per block", "an oversized block is rejected");
    uint64_t address = 0;
    cachetBufferDeviceAddress(f.rt, small, &address);
    void *params[4] = {&address, &address, &address, &n};
    expectError(
        cachetLaunchKernel(f.rt, f.vadd, hugeGrid, block, 0, params, 4, 0),
        CACHET_ERROR_LIMIT_EXCEEDED, "cachetLaunchKernel", "grid dimension 1",
        "an oversized grid is rejected");
    expectError(cachetLaunchKernel(f.rt, f.vadd, grid, block,
                                   f.info.maxSharedMemoryBytes + 1, params, 4,
                                   0),
                CACHET_ERROR_LIMIT_EXCEEDED, "cachetLaunchKernel",
                "shared memory", "too much shared memory is rejected");
    void *nullParams[4] = {&address, nullptr, &address, &n};
    expectError(
        cachetLaunchKernel(f.rt, f.vadd, grid, block, 0, nullParams, 4, 0),
        CACHET_ERROR_INVALID_ARGUMENT, "cachetLaunchKernel", "parameter 1",
        "a null parameter is rejected");
  }
  // The runtime still works after all of that.
  std::vector<uint32_t> in(64, 0x12345678u), out(64, 0);
  ok(cachetBufferUpload(f.rt, small, 0, in.data(), 256), "upload");
  ok(cachetBufferDownload(f.rt, small, 0, out.data(), 256), "download");
  check(in == out, "the runtime works after errors");
  cachetBufferFree(f.rt, small);
}

void testMgpu(DeviceFixture &f) {
  CachetRuntime shared = nullptr;
  check(cachetMgpuGetRuntime(&shared) == CACHET_SUCCESS && shared,
        "the mgpu runtime is on " + f.backend);
  const size_t n = 300, bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), c(n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 0.25f * float(i) + 1.0f;
  }
  void *stream = mgpuStreamCreate();
  auto *devA = static_cast<float *>(mgpuMemAlloc(bytes, stream, false));
  auto *devB = static_cast<float *>(mgpuMemAlloc(bytes, stream, false));
  auto *devC = static_cast<float *>(mgpuMemAlloc(bytes, stream, false));
  check(devA && devB && devC, "mgpuMemAlloc returns device addresses");
  if (!devA || !devB || !devC)
    return;
  mgpuMemcpy(devA, a.data(), bytes, stream);
  mgpuMemcpy(devB, b.data(), bytes, stream);
  mgpuMemset32(devC, 0, n, stream);
  void *module = nullptr, *function = nullptr;
  if (f.backend == "cuda") {
    module =
        mgpuModuleLoad(const_cast<char *>(kVaddPtx), std::strlen(kVaddPtx));
    function = module ? mgpuModuleGetFunction(module, "vadd_f32") : nullptr;
    check(module && function, "mgpuModuleLoad (PTX) / mgpuModuleGetFunction");
    void *jit = mgpuModuleLoadJIT(const_cast<char *>(kVaddPtx), 3);
    check(jit && mgpuModuleGetFunction(jit, "vadd_f32"),
          "mgpuModuleLoadJIT (NUL-terminated PTX)");
    if (jit)
      mgpuModuleUnload(jit);
  }
  if (function) {
    uint32_t count = n;
    void *params[4] = {&devA, &devB, &devC, &count};
    void *start = mgpuEventCreate(), *end = mgpuEventCreate();
    mgpuEventRecord(start, stream);
    mgpuLaunchKernel(function, (n + 63) / 64, 1, 1, 64, 1, 1, 0, stream, params,
                     nullptr, 4);
    mgpuEventRecord(end, stream);
    mgpuEventSynchronize(end);
    mgpuMemcpy(c.data(), devC, bytes, stream);
    bool good = true;
    for (size_t i = 0; i < n; ++i)
      good &= c[i] == a[i] + b[i];
    check(good, "mgpuLaunchKernel (CUDA convention) matches the CPU");
    uint64_t elapsed = 0;
    check(cachetMgpuEventElapsedNs(start, end, &elapsed) == CACHET_SUCCESS,
          "cachetMgpuEventElapsedNs", std::to_string(elapsed) + " ns");
    mgpuEventDestroy(start);
    mgpuEventDestroy(end);

    // Device to device copy, then a PDL launch through the Ex entry point.
    mgpuMemcpy(devA, devC, bytes, stream);
    cachetMgpuLaunchKernelEx(function, (n + 63) / 64, 1, 1, 64, 1, 1, 0, stream,
                             params, nullptr, 4, CACHET_LAUNCH_PDL);
    mgpuStreamSynchronize(stream);
    mgpuMemcpy(c.data(), devC, bytes, stream);
    good = true;
    for (size_t i = 0; i < n; ++i)
      good &= c[i] == (a[i] + b[i]) + b[i];
    check(good, "mgpuMemcpy device to device and cachetMgpuLaunchKernelEx");
  }

  // Host to device, device to device, device to host.
  std::vector<float> back(n, 0.0f);
  mgpuMemcpy(devA, a.data(), bytes, stream);
  mgpuMemcpy(devC, devA, bytes, stream);
  mgpuMemcpy(back.data(), devC, bytes, stream);
  check(back == a, "mgpuMemcpy host to device, on the device, to the host");

  // Pitched weights through the bridge: rows copied, gaps zeroed.
  std::vector<uint8_t> rowsIn(4 * 12), padded(4 * 16, 0x99);
  for (size_t i = 0; i < rowsIn.size(); ++i)
    rowsIn[i] = static_cast<uint8_t>(i + 1);
  mgpuMemset32(devC, 0xffffffffu, n, stream);
  check(cachetMgpuMemcpy2D(devC, 16, rowsIn.data(), 12, 10, 4) ==
            CACHET_SUCCESS,
        "cachetMgpuMemcpy2D into device memory");
  mgpuMemcpy(padded.data(), devC, padded.size(), stream);
  bool good = true;
  for (size_t r = 0; r < 4; ++r)
    for (size_t c2 = 0; c2 < 16; ++c2)
      good &= padded[r * 16 + c2] == (c2 < 10 ? rowsIn[r * 12 + c2] : 0);
  check(good, "cachetMgpuMemcpy2D copies rows and zeroes the gaps");
  // Resident constants: uploaded by the first call only.
  std::vector<uint8_t> constant(24), readBack(24, 0);
  for (size_t i = 0; i < constant.size(); ++i)
    constant[i] = static_cast<uint8_t>(3 * i + 1);
  void *slot = nullptr;
  void *resident = cachetMgpuResident(&slot, constant.data(), constant.size());
  mgpuMemcpy(readBack.data(), resident, readBack.size(), stream);
  check(resident && slot == resident && readBack == constant,
        "cachetMgpuResident uploads into its slot");
  constant[0] = 0xee;
  void *again = cachetMgpuResident(&slot, constant.data(), constant.size());
  mgpuMemcpy(readBack.data(), again, readBack.size(), stream);
  check(again == resident && readBack[0] == 1,
        "cachetMgpuResident returns the slot's copy without uploading again");
  mgpuMemset16(devC, 0xabcd, 8, stream);
  std::vector<uint16_t> halves(10, 0);
  mgpuMemcpy(halves.data(), devC, 20, stream);
  check(halves[0] == 0xabcd && halves[7] == 0xabcd && halves[8] != 0xabcd,
        "mgpuMemset16 on device memory");
  CachetBuffer backing = nullptr;
  uint64_t offset = 0;
  check(cachetMgpuLookup(devB + 4, &backing, &offset) == CACHET_SUCCESS &&
            offset == 16,
        "cachetMgpuLookup of a device address");
  check(mgpuMemAlloc(16, stream, true) == nullptr,
        "host-shared mgpuMemAlloc is reported, not faked");
  // Freed memory is kept for the next allocation of its size (no
  // cuMemFree / hipFree per temporary), and counted out of the usage.
  uint64_t before = 0, peak = 0, after = 0;
  cachetMgpuMemoryUsage(&before, nullptr, 1);
  mgpuMemFree(devA, stream);
  cachetMgpuMemoryUsage(&after, nullptr, 0);
  void *reused = mgpuMemAlloc(bytes, stream, false);
  void *other = mgpuMemAlloc(bytes + 256, stream, false);
  cachetMgpuMemoryUsage(nullptr, &peak, 0);
  check(reused == devA && other != devA && after + bytes == before &&
            peak == before + bytes + 256,
        "a freed allocation is reused for the same size",
        std::to_string(before) + " B before, " + std::to_string(after) +
            " B after a free, peak " + std::to_string(peak) + " B");
  mgpuMemFree(reused, stream);
  mgpuMemFree(other, stream);
  mgpuMemFree(devB, stream);
  mgpuMemFree(devC, stream);
  if (module)
    mgpuModuleUnload(module);
  mgpuStreamDestroy(stream);
}

} // namespace

int cachet_test::runDeviceTests(const char *backend) {
  DeviceFixture f;
  f.backend = backend;
  CachetStatus status = cachetRuntimeCreate(backend, 0, &f.rt);
  if (status == CACHET_ERROR_NO_DEVICE) {
    std::printf("SKIPPED: no %s device (%s)\n", backend, cachetGetLastError());
    return 0;
  }
  if (!ok(status, "cachetRuntimeCreate") ||
      !ok(cachetGetDeviceInfo(f.rt, &f.info), "cachetGetDeviceInfo"))
    return 1;
  testInfo(f);
  testModules(f);
  if (f.vadd)
    testVectorAdd(f);
  testCopyAndFill(f);
  testPitched(f);
  testEvents(f);
  if (f.vadd)
    testPdl(f);
  testErrors(f);
  testMgpu(f);
  ok(cachetRuntimeDestroy(f.rt), "cachetRuntimeDestroy");
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

int cachet_test::expectNoDevice(const char *backend) {
  CachetRuntime rt = nullptr;
  expectError(cachetRuntimeCreate(backend, 0, &rt), CACHET_ERROR_NO_DEVICE,
              "cachetRuntimeCreate", "", "no device is reported");
  check(rt == nullptr, "no runtime without a device");
  CachetDeviceInfo info;
  expectError(cachetGetDeviceInfo(rt, &info), CACHET_ERROR_INVALID_ARGUMENT,
              "cachetGetDeviceInfo", "null runtime",
              "calls on the missing runtime are rejected");
  const uint32_t words[4] = {0x07230203u, 0, 0, 0};
  check(mgpuModuleLoad(const_cast<uint32_t *>(words), sizeof(words)) == nullptr,
        "mgpuModuleLoad without a device returns null");
  check(mgpuMemAlloc(16, nullptr, false) == nullptr,
        "mgpuMemAlloc without a device returns null");
  CachetRuntime shared = nullptr;
  check(cachetMgpuGetRuntime(&shared) == CACHET_ERROR_NO_DEVICE && !shared,
        "cachetMgpuGetRuntime without a device reports no device");
  return failures ? 1 : 0;
}

int cachet_test::dumpPtx(const char *name) {
  if (std::strcmp(name, "vadd") == 0)
    std::fputs(kVaddPtx, stdout);
  else if (std::strcmp(name, "pdl") == 0)
    std::fputs(kPdlPtx, stdout);
  else
    return 2;
  return 0;
}
