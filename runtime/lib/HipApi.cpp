//===- HipApi.cpp - HIP over dlopen ---------------------------------------===//
//
// The HIP calls of DriverApi.h, resolved with dlsym from libamdhip64.so (or
// $CACHET_HIP_LIBRARY), so the runtime builds and loads where ROCm is
// absent. The enum values below are HIP's ABI (ROCm 5 and 6); no HIP
// header is included. HIP has no programmatic dependent launch:
// CACHET_LAUNCH_PDL launches in plain stream order.
//
//===----------------------------------------------------------------------===//

#include "DriverApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

using namespace cachet::runtime;

namespace {

using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void *;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;

enum : hipError_t { hipSuccess = 0 };

enum {
  hipDeviceAttributeL2CacheSize = 19,
  hipDeviceAttributeComputeCapabilityMajor = 23,
  hipDeviceAttributeMaxBlockDimX = 26,
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeComputeCapabilityMinor = 61,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeWarpSize = 87,
};

enum { hipStreamNonBlocking = 1 };
enum { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2 };

void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
void *const kLaunchParamEnd = reinterpret_cast<void *>(0x03);

/// Every HIP entry point used, as (member, symbol, signature).
#define CACHET_HIP_FUNCTIONS(X)                                                \
  X(init, "hipInit", hipError_t (*)(unsigned))                                 \
  X(getErrorName, "hipGetErrorName", const char *(*)(hipError_t))              \
  X(getDeviceCount, "hipGetDeviceCount", hipError_t (*)(int *))                \
  X(setDevice, "hipSetDevice", hipError_t (*)(int))                            \
  X(deviceGetName, "hipDeviceGetName",                                         \
    hipError_t (*)(char *, int, hipDevice_t))                                  \
  X(deviceGetAttribute, "hipDeviceGetAttribute",                               \
    hipError_t (*)(int *, int, int))                                           \
  X(deviceTotalMem, "hipDeviceTotalMem",                                       \
    hipError_t (*)(size_t *, hipDevice_t))                                     \
  X(streamCreateWithFlags, "hipStreamCreateWithFlags",                         \
    hipError_t (*)(hipStream_t *, unsigned))                                   \
  X(streamDestroy, "hipStreamDestroy", hipError_t (*)(hipStream_t))            \
  X(streamSynchronize, "hipStreamSynchronize", hipError_t (*)(hipStream_t))    \
  X(memAlloc, "hipMalloc", hipError_t (*)(void **, size_t))                    \
  X(memFree, "hipFree", hipError_t (*)(void *))                                \
  X(memcpyHtoDAsync, "hipMemcpyHtoDAsync",                                     \
    hipError_t (*)(hipDeviceptr_t, void *, size_t, hipStream_t))               \
  X(memcpyDtoHAsync, "hipMemcpyDtoHAsync",                                     \
    hipError_t (*)(void *, hipDeviceptr_t, size_t, hipStream_t))               \
  X(memcpyDtoDAsync, "hipMemcpyDtoDAsync",                                     \
    hipError_t (*)(hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t))       \
  X(memcpy2DAsync, "hipMemcpy2DAsync",                                         \
    hipError_t (*)(void *, size_t, const void *, size_t, size_t, size_t, int,  \
                   hipStream_t))                                               \
  X(memsetD8Async, "hipMemsetD8Async",                                         \
    hipError_t (*)(hipDeviceptr_t, unsigned char, size_t, hipStream_t))        \
  X(memsetD32Async, "hipMemsetD32Async",                                       \
    hipError_t (*)(hipDeviceptr_t, int, size_t, hipStream_t))                  \
  X(moduleLoadData, "hipModuleLoadData",                                       \
    hipError_t (*)(hipModule_t *, const void *))                               \
  X(moduleUnload, "hipModuleUnload", hipError_t (*)(hipModule_t))              \
  X(moduleGetFunction, "hipModuleGetFunction",                                 \
    hipError_t (*)(hipFunction_t *, hipModule_t, const char *))                \
  X(moduleLaunchKernel, "hipModuleLaunchKernel",                               \
    hipError_t (*)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,      \
                   unsigned, unsigned, unsigned, hipStream_t, void **,         \
                   void **))                                                   \
  X(eventCreate, "hipEventCreate", hipError_t (*)(hipEvent_t *))               \
  X(eventDestroy, "hipEventDestroy", hipError_t (*)(hipEvent_t))               \
  X(eventRecord, "hipEventRecord", hipError_t (*)(hipEvent_t, hipStream_t))    \
  X(eventSynchronize, "hipEventSynchronize", hipError_t (*)(hipEvent_t))       \
  X(eventElapsedTime, "hipEventElapsedTime",                                   \
    hipError_t (*)(float *, hipEvent_t, hipEvent_t))

void *toPointer(uint64_t address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}

class HipApi final : public DriverApi {
public:
  ~HipApi() override;

  Status open(int index) override;
  Status makeCurrent() override;
  Status queryInfo(CachetDeviceInfo &info) override;
  Status alloc(uint64_t bytes, uint64_t &address) override;
  Status free(uint64_t address) override;
  Status copyToDevice(uint64_t dst, const void *src, uint64_t bytes) override;
  Status copyToHost(void *dst, uint64_t src, uint64_t bytes) override;
  Status copyOnDevice(uint64_t dst, uint64_t src, uint64_t bytes) override;
  Status copy2DToDevice(uint64_t dst, uint64_t dstPitch, const void *src,
                        uint64_t srcPitch, uint64_t width,
                        uint64_t rows) override;
  Status copy2DToHost(void *dst, uint64_t dstPitch, uint64_t src,
                      uint64_t srcPitch, uint64_t width,
                      uint64_t rows) override;
  Status fill8(uint64_t dst, uint8_t value, uint64_t count) override;
  Status fill32(uint64_t dst, uint32_t value, uint64_t count) override;
  Status synchronize() override;
  Status loadModule(const void *data, size_t bytes, void *&module) override;
  void unloadModule(void *module) override;
  Status getFunction(void *module, const char *name, void *&function) override;
  Status launch(void *function, const LaunchDims &dims, void **params,
                void *argBuffer, size_t argBytes, uint32_t flags) override;
  Status createEvent(void *&event) override;
  void destroyEvent(void *event) override;
  Status recordEvent(void *event) override;
  Status elapsedMs(void *start, void *end, float &ms) override;

private:
  /// Turns the result of HIP call `call` into a Status.
  Status check(hipError_t result, const char *call);
  Status attribute(int attribute, int &value);

  void *library = nullptr;
#define CACHET_HIP_MEMBER(member, symbol, type) Fn<type> member = nullptr;
  CACHET_HIP_FUNCTIONS(CACHET_HIP_MEMBER)
#undef CACHET_HIP_MEMBER

  int device = 0;
  hipStream_t stream = nullptr;
};

Status HipApi::check(hipError_t result, const char *call) {
  if (result == hipSuccess)
    return Status::success();
  return driverFailure(result, getErrorName ? getErrorName(result) : nullptr,
                       call);
}

HipApi::~HipApi() {
  if (stream && setDevice(device) == hipSuccess)
    streamDestroy(stream);
}

Status HipApi::open(int index) {
  const char *override = std::getenv("CACHET_HIP_LIBRARY");
  std::string tried;
  if (override && *override) {
    library = dlopen(override, RTLD_NOW | RTLD_LOCAL);
    tried = override;
  } else {
    // The development symlink first, then the runtime packages' sonames.
    for (const char *name :
         {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (library)
        break;
      tried += (tried.empty() ? "" : ", ") + std::string(name);
    }
  }
  if (!library) {
    const char *why = dlerror();
    return Status(CACHET_ERROR_NO_DEVICE, "hipInit: " + tried + " not found (" +
                                              (why ? why : "dlopen failed") +
                                              ")");
  }
#define CACHET_HIP_RESOLVE(member, symbol, type)                               \
  member = reinterpret_cast<Fn<type>>(dlsym(library, symbol));                 \
  if (!member)                                                                 \
    return Status(CACHET_ERROR_NO_DEVICE,                                      \
                  "hipInit: the HIP library lacks " symbol);
  CACHET_HIP_FUNCTIONS(CACHET_HIP_RESOLVE)
#undef CACHET_HIP_RESOLVE

  CACHET_RETURN_IF_ERROR(check(init(0), "hipInit"));
  int count = 0;
  CACHET_RETURN_IF_ERROR(check(getDeviceCount(&count), "hipGetDeviceCount"));
  if (count == 0)
    return Status(CACHET_ERROR_NO_DEVICE, "hipGetDeviceCount: no HIP device");
  if (index >= count)
    return Status(CACHET_ERROR_NO_DEVICE,
                  "hipSetDevice: CACHET_HIP_DEVICE=" + std::to_string(index) +
                      " but there are " + std::to_string(count) + " device(s)");
  device = index;
  CACHET_RETURN_IF_ERROR(makeCurrent());
  return check(streamCreateWithFlags(&stream, hipStreamNonBlocking),
               "hipStreamCreateWithFlags");
}

Status HipApi::makeCurrent() {
  return check(setDevice(device), "hipSetDevice");
}

Status HipApi::attribute(int attr, int &value) {
  value = 0;
  return check(deviceGetAttribute(&value, attr, device),
               "hipDeviceGetAttribute");
}

Status HipApi::queryInfo(CachetDeviceInfo &info) {
  CACHET_RETURN_IF_ERROR(
      check(deviceGetName(info.name, sizeof(info.name) - 1, device),
            "hipDeviceGetName"));
  size_t total = 0;
  CACHET_RETURN_IF_ERROR(
      check(deviceTotalMem(&total, device), "hipDeviceTotalMem"));
  int value = 0;
  info.vendorId = 0x1002;
  info.maxBindingBytes = total;
  info.maxAllocationBytes = total;
  info.deviceMemoryBytes = total;
  info.bindingOffsetAlignment = 256;
  info.maxPushConstantBytes = 4096;
  CACHET_RETURN_IF_ERROR(attribute(hipDeviceAttributeWarpSize, value));
  info.subgroupSize = uint32_t(value);
  for (int d = 0; d < 3; ++d) {
    CACHET_RETURN_IF_ERROR(
        attribute(hipDeviceAttributeMaxBlockDimX + d, value));
    info.maxWorkgroupSize[d] = uint32_t(value);
    CACHET_RETURN_IF_ERROR(attribute(hipDeviceAttributeMaxGridDimX + d, value));
    info.maxWorkgroupCount[d] = uint32_t(value);
  }
  CACHET_RETURN_IF_ERROR(
      attribute(hipDeviceAttributeMaxThreadsPerBlock, value));
  info.maxWorkgroupInvocations = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(hipDeviceAttributeMaxSharedMemoryPerBlock, value));
  info.maxSharedMemoryBytes = uint32_t(value);
  info.unifiedMemory = 0;
  info.bufferDeviceAddress = 1;
  info.timestamps = 1;
  info.timestampPeriodNs = 1.0;
  CACHET_RETURN_IF_ERROR(
      attribute(hipDeviceAttributeMultiprocessorCount, value));
  info.multiprocessorCount = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(hipDeviceAttributeComputeCapabilityMajor, value));
  info.computeCapabilityMajor = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(hipDeviceAttributeComputeCapabilityMinor, value));
  info.computeCapabilityMinor = uint32_t(value);
  CACHET_RETURN_IF_ERROR(attribute(hipDeviceAttributeL2CacheSize, value));
  info.l2CacheBytes = uint64_t(value);
  return Status::success();
}

Status HipApi::alloc(uint64_t bytes, uint64_t &address) {
  void *ptr = nullptr;
  CACHET_RETURN_IF_ERROR(check(memAlloc(&ptr, bytes), "hipMalloc"));
  address = uint64_t(reinterpret_cast<uintptr_t>(ptr));
  return Status::success();
}

Status HipApi::free(uint64_t address) {
  return check(memFree(toPointer(address)), "hipFree");
}

Status HipApi::copyToDevice(uint64_t dst, const void *src, uint64_t bytes) {
  return check(
      memcpyHtoDAsync(toPointer(dst), const_cast<void *>(src), bytes, stream),
      "hipMemcpyHtoDAsync");
}

Status HipApi::copyToHost(void *dst, uint64_t src, uint64_t bytes) {
  return check(memcpyDtoHAsync(dst, toPointer(src), bytes, stream),
               "hipMemcpyDtoHAsync");
}

Status HipApi::copyOnDevice(uint64_t dst, uint64_t src, uint64_t bytes) {
  return check(memcpyDtoDAsync(toPointer(dst), toPointer(src), bytes, stream),
               "hipMemcpyDtoDAsync");
}

Status HipApi::copy2DToDevice(uint64_t dst, uint64_t dstPitch, const void *src,
                              uint64_t srcPitch, uint64_t width,
                              uint64_t rows) {
  return check(memcpy2DAsync(toPointer(dst), dstPitch, src, srcPitch, width,
                             rows, hipMemcpyHostToDevice, stream),
               "hipMemcpy2DAsync");
}

Status HipApi::copy2DToHost(void *dst, uint64_t dstPitch, uint64_t src,
                            uint64_t srcPitch, uint64_t width, uint64_t rows) {
  return check(memcpy2DAsync(dst, dstPitch, toPointer(src), srcPitch, width,
                             rows, hipMemcpyDeviceToHost, stream),
               "hipMemcpy2DAsync");
}

Status HipApi::fill8(uint64_t dst, uint8_t value, uint64_t count) {
  return check(memsetD8Async(toPointer(dst), value, count, stream),
               "hipMemsetD8Async");
}

Status HipApi::fill32(uint64_t dst, uint32_t value, uint64_t count) {
  return check(
      memsetD32Async(toPointer(dst), static_cast<int>(value), count, stream),
      "hipMemsetD32Async");
}

Status HipApi::synchronize() {
  return check(streamSynchronize(stream), "hipStreamSynchronize");
}

Status HipApi::loadModule(const void *data, size_t, void *&module) {
  hipModule_t handle = nullptr;
  CACHET_RETURN_IF_ERROR(
      check(moduleLoadData(&handle, data), "hipModuleLoadData"));
  module = handle;
  return Status::success();
}

void HipApi::unloadModule(void *module) {
  if (makeCurrent().ok())
    moduleUnload(static_cast<hipModule_t>(module));
}

Status HipApi::getFunction(void *module, const char *name, void *&function) {
  hipFunction_t handle = nullptr;
  CACHET_RETURN_IF_ERROR(
      check(moduleGetFunction(&handle, static_cast<hipModule_t>(module), name),
            "hipModuleGetFunction"));
  function = handle;
  return Status::success();
}

Status HipApi::launch(void *function, const LaunchDims &dims, void **params,
                      void *argBuffer, size_t argBytes, uint32_t) {
  void *extra[] = {kLaunchParamBufferPointer, argBuffer, kLaunchParamBufferSize,
                   &argBytes, kLaunchParamEnd};
  return check(moduleLaunchKernel(static_cast<hipFunction_t>(function),
                                  dims.grid[0], dims.grid[1], dims.grid[2],
                                  dims.block[0], dims.block[1], dims.block[2],
                                  dims.sharedBytes, stream, params,
                                  params ? nullptr : extra),
               "hipModuleLaunchKernel");
}

Status HipApi::createEvent(void *&event) {
  hipEvent_t handle = nullptr;
  CACHET_RETURN_IF_ERROR(check(eventCreate(&handle), "hipEventCreate"));
  event = handle;
  return Status::success();
}

void HipApi::destroyEvent(void *event) {
  if (makeCurrent().ok())
    eventDestroy(static_cast<hipEvent_t>(event));
}

Status HipApi::recordEvent(void *event) {
  return check(eventRecord(static_cast<hipEvent_t>(event), stream),
               "hipEventRecord");
}

Status HipApi::elapsedMs(void *start, void *end, float &ms) {
  CACHET_RETURN_IF_ERROR(check(eventSynchronize(static_cast<hipEvent_t>(start)),
                               "hipEventSynchronize"));
  CACHET_RETURN_IF_ERROR(check(eventSynchronize(static_cast<hipEvent_t>(end)),
                               "hipEventSynchronize"));
  return check(eventElapsedTime(&ms, static_cast<hipEvent_t>(start),
                                static_cast<hipEvent_t>(end)),
               "hipEventElapsedTime");
}

} // namespace

std::unique_ptr<DriverApi> cachet::runtime::createHipApi() {
  return std::make_unique<HipApi>();
}
