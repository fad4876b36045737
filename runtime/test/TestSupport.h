//===- TestSupport.h - Helpers of cachet-runtime-test -----------*- C++ -*-===//
//
// PASS/FAIL reporting shared by the Vulkan and the CUDA/HIP tests, and the
// mgpu* declarations (LLVM 22 signatures) that the runtime exports.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_RUNTIME_TEST_TESTSUPPORT_H
#define CACHET_RUNTIME_TEST_TESTSUPPORT_H

#include "cachet/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

// The upstream mgpu* ABI (LLVM 22 signatures) exported by the runtime.
extern "C" {
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
/// Defined in c-header.c: proves the header is valid C.
int cachetCHeaderCheck(void);
}

namespace cachet_test {

/// The number of failed checks so far.
inline int failures = 0;

/// The number of vkAllocateMemory calls so far for memory type `type`, or
/// for all types when `type` is -1 (vulkan-interpose.cpp).
uint64_t vulkanMemoryAllocations(int type = -1);
/// The number of vkCmdCopyBuffer calls so far (vulkan-interpose.cpp).
uint64_t vulkanBufferCopies();
/// The number of vkCmdWriteTimestamp calls so far (vulkan-interpose.cpp).
uint64_t vulkanTimestampWrites();

/// The memory types of a faked discrete GPU.
enum class FakeMemory {
  None,
  /// As NVIDIA's with resizable BAR, all of VRAM host visible (uncached):
  /// 0 none, 1 device-local, 2 host-visible coherent, 3 host-visible
  /// coherent cached, 4 device-local host-visible coherent.
  ResizableBar,
  /// Host-cached device memory: 0 device-local, 1 host-visible coherent
  /// cached, 2 device-local host-visible coherent cached.
  CachedDeviceLocal,
};

/// From now on, presents a Vulkan device whose first memory type is host
/// visible and coherent (lavapipe's) as a discrete GPU with the memory types
/// of `layout`, all backed by that first type.
void fakeDiscreteGpu(FakeMemory layout);
/// Whether a device has been presented as a discrete GPU.
bool fakeDiscreteGpuActive();

/// Prints PASS or FAIL `name` (and `detail`); counts failures.
inline void check(bool ok, const std::string &name,
                  const std::string &detail = "") {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  if (!ok)
    ++failures;
}

/// Checks that `status` is CACHET_SUCCESS.
inline bool ok(CachetStatus status, const std::string &what) {
  if (status == CACHET_SUCCESS)
    return true;
  check(false, what,
        std::string(cachetStatusString(status)) + " " + cachetGetLastError());
  return false;
}

/// Checks that a call failed with `expected` and a message naming
/// `function` and containing `fragment`; prints the message.
inline void expectError(CachetStatus status, CachetStatus expected,
                        const char *function, const char *fragment,
                        const std::string &name) {
  std::string message = cachetGetLastError();
  bool good = status == expected &&
              message.rfind(std::string(function) + ": ", 0) == 0 &&
              message.find(fragment) != std::string::npos;
  check(good, name,
        std::string(cachetStatusString(status)) + " \"" + message + "\"");
}

/// Runs every check of the CUDA or HIP `backend`; "SKIPPED" and 0 without a
/// device.
int runDeviceTests(const char *backend);

/// Checks that `backend` reports no device cleanly (C API and mgpu*).
int expectNoDevice(const char *backend);

/// Writes the embedded PTX module `name` ("vadd", "pdl") to stdout.
int dumpPtx(const char *name);

} // namespace cachet_test

#endif // CACHET_RUNTIME_TEST_TESTSUPPORT_H
