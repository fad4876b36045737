//===- CudaApi.cpp - The CUDA driver API over dlopen ----------------------===//
//
// The driver API calls of DriverApi.h, resolved with dlsym from
// libcuda.so.1 (or $CACHET_CUDA_LIBRARY), so the runtime builds and loads
// where CUDA is absent. The types, enum values and structures below are
// the driver's ABI as cuda.h declares it; cuda.h itself is not included.
//
//===----------------------------------------------------------------------===//

#include "DriverApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

using namespace cachet::runtime;

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

enum : CUresult { CUDA_SUCCESS = 0, kCudaErrorStubLibrary = 34 };

enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };
enum { CU_STREAM_NON_BLOCKING = 1 };
enum { CU_EVENT_DEFAULT = 0 };
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };
enum CUmemorytype { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2 };
enum CUlaunchAttributeID {
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

void *const kLaunchParamEnd = reinterpret_cast<void *>(0x00);
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);

struct CUDA_MEMCPY2D {
  size_t srcXInBytes, srcY;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
};

union CUlaunchAttributeValue {
  char pad[64];
  int programmaticStreamSerializationAllowed;
};

struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};

struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

static_assert(sizeof(CUDA_MEMCPY2D) == 128, "CUDA_MEMCPY2D layout");
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");

/// Every driver entry point used, as (member, symbol, signature).
#define CACHET_CUDA_FUNCTIONS(X)                                               \
  X(init, "cuInit", CUresult (*)(unsigned))                                    \
  X(driverGetVersion, "cuDriverGetVersion", CUresult (*)(int *))               \
  X(getErrorName, "cuGetErrorName", CUresult (*)(CUresult, const char **))     \
  X(deviceGetCount, "cuDeviceGetCount", CUresult (*)(int *))                   \
  X(deviceGet, "cuDeviceGet", CUresult (*)(CUdevice *, int))                   \
  X(deviceGetName, "cuDeviceGetName", CUresult (*)(char *, int, CUdevice))     \
  X(deviceGetAttribute, "cuDeviceGetAttribute",                                \
    CUresult (*)(int *, int, CUdevice))                                        \
  X(deviceTotalMem, "cuDeviceTotalMem_v2", CUresult (*)(size_t *, CUdevice))   \
  X(primaryCtxRetain, "cuDevicePrimaryCtxRetain",                              \
    CUresult (*)(CUcontext *, CUdevice))                                       \
  X(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult (*)(CUdevice)) \
  X(ctxSetCurrent, "cuCtxSetCurrent", CUresult (*)(CUcontext))                 \
  X(streamCreate, "cuStreamCreate", CUresult (*)(CUstream *, unsigned))        \
  X(streamDestroy, "cuStreamDestroy_v2", CUresult (*)(CUstream))               \
  X(streamSynchronize, "cuStreamSynchronize", CUresult (*)(CUstream))          \
  X(memAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr *, size_t))            \
  X(memFree, "cuMemFree_v2", CUresult (*)(CUdeviceptr))                        \
  X(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                   \
    CUresult (*)(CUdeviceptr, const void *, size_t, CUstream))                 \
  X(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                   \
    CUresult (*)(void *, CUdeviceptr, size_t, CUstream))                       \
  X(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                   \
    CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))                  \
  X(memcpy2DAsync, "cuMemcpy2DAsync_v2",                                       \
    CUresult (*)(const CUDA_MEMCPY2D *, CUstream))                             \
  X(memsetD8Async, "cuMemsetD8Async",                                          \
    CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream))                \
  X(memsetD32Async, "cuMemsetD32Async",                                        \
    CUresult (*)(CUdeviceptr, unsigned, size_t, CUstream))                     \
  X(moduleLoadDataEx, "cuModuleLoadDataEx",                                    \
    CUresult (*)(CUmodule *, const void *, unsigned, int *, void **))          \
  X(moduleUnload, "cuModuleUnload", CUresult (*)(CUmodule))                    \
  X(moduleGetFunction, "cuModuleGetFunction",                                  \
    CUresult (*)(CUfunction *, CUmodule, const char *))                        \
  X(funcSetAttribute, "cuFuncSetAttribute",                                    \
    CUresult (*)(CUfunction, int, int))                                        \
  X(launchKernel, "cuLaunchKernel",                                            \
    CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
                 unsigned, unsigned, CUstream, void **, void **))              \
  X(eventCreate, "cuEventCreate", CUresult (*)(CUevent *, unsigned))           \
  X(eventDestroy, "cuEventDestroy_v2", CUresult (*)(CUevent))                  \
  X(eventRecord, "cuEventRecord", CUresult (*)(CUevent, CUstream))             \
  X(eventSynchronize, "cuEventSynchronize", CUresult (*)(CUevent))

using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig *, CUfunction,
                                      void **, void **);
using EventElapsedFn = CUresult (*)(float *, CUevent, CUevent);

class CudaApi final : public DriverApi {
public:
  ~CudaApi() override;

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
  /// Turns the result of driver call `call` into a Status.
  Status check(CUresult result, const char *call);
  Status attribute(int attribute, int &value);

  void *library = nullptr;
#define CACHET_CUDA_MEMBER(member, symbol, type) Fn<type> member = nullptr;
  CACHET_CUDA_FUNCTIONS(CACHET_CUDA_MEMBER)
#undef CACHET_CUDA_MEMBER
  /// Optional: cuLaunchKernelEx (CUDA 12.0+) for launch attributes.
  LaunchKernelExFn launchKernelEx = nullptr;
  /// cuEventElapsedTime_v2 where the driver has it, else the original.
  EventElapsedFn eventElapsedTime = nullptr;
  const char *eventElapsedName = "cuEventElapsedTime";

  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  bool retained = false;
};

Status CudaApi::check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return Status::success();
  const char *resultName = nullptr;
  if (!getErrorName || getErrorName(result, &resultName) != CUDA_SUCCESS)
    resultName = nullptr;
  // The toolkit's stub library cannot even name its own result.
  if (!resultName && result == kCudaErrorStubLibrary)
    resultName = "CUDA_ERROR_STUB_LIBRARY (a stub libcuda, not a driver)";
  return driverFailure(result, resultName, call);
}

CudaApi::~CudaApi() {
  if (stream && ctxSetCurrent(context) == CUDA_SUCCESS)
    streamDestroy(stream);
  if (retained)
    primaryCtxRelease(device);
  // The library stays loaded: the driver does not support being unloaded
  // while the process runs.
}

Status CudaApi::open(int index) {
  const char *path = nullptr;
  library = openCudaLibrary(path);
  if (!library) {
    const char *why = dlerror();
    return Status(CACHET_ERROR_NO_DEVICE,
                  std::string("cuInit: ") + path + " not found (" +
                      (why ? why : "dlopen failed") + ")");
  }
#define CACHET_CUDA_RESOLVE(member, symbol, type)                              \
  member = reinterpret_cast<Fn<type>>(dlsym(library, symbol));                 \
  if (!member)                                                                 \
    return Status(CACHET_ERROR_NO_DEVICE, std::string(path) +                  \
                                              " lacks " symbol                 \
                                              " (a CUDA driver older than "    \
                                              "11.0?)");
  CACHET_CUDA_FUNCTIONS(CACHET_CUDA_RESOLVE)
#undef CACHET_CUDA_RESOLVE
  launchKernelEx =
      reinterpret_cast<LaunchKernelExFn>(dlsym(library, "cuLaunchKernelEx"));
  eventElapsedTime =
      reinterpret_cast<EventElapsedFn>(dlsym(library, "cuEventElapsedTime_v2"));
  if (eventElapsedTime)
    eventElapsedName = "cuEventElapsedTime_v2";
  else
    eventElapsedTime =
        reinterpret_cast<EventElapsedFn>(dlsym(library, "cuEventElapsedTime"));
  if (!eventElapsedTime)
    return Status(CACHET_ERROR_NO_DEVICE,
                  std::string(path) + " lacks cuEventElapsedTime");

  CACHET_RETURN_IF_ERROR(check(init(0), "cuInit"));
  int count = 0;
  CACHET_RETURN_IF_ERROR(check(deviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0)
    return Status(CACHET_ERROR_NO_DEVICE, "cuDeviceGetCount: no CUDA device");
  if (index >= count)
    return Status(CACHET_ERROR_NO_DEVICE,
                  "cuDeviceGet: CACHET_CUDA_DEVICE=" + std::to_string(index) +
                      " but there are " + std::to_string(count) + " device(s)");
  CACHET_RETURN_IF_ERROR(check(deviceGet(&device, index), "cuDeviceGet"));
  CACHET_RETURN_IF_ERROR(
      check(primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"));
  retained = true;
  CACHET_RETURN_IF_ERROR(makeCurrent());
  return check(streamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Status CudaApi::makeCurrent() {
  return check(ctxSetCurrent(context), "cuCtxSetCurrent");
}

Status CudaApi::attribute(int attr, int &value) {
  value = 0;
  return check(deviceGetAttribute(&value, attr, device),
               "cuDeviceGetAttribute");
}

Status CudaApi::queryInfo(CachetDeviceInfo &info) {
  CACHET_RETURN_IF_ERROR(
      check(deviceGetName(info.name, sizeof(info.name) - 1, device),
            "cuDeviceGetName"));
  size_t total = 0;
  CACHET_RETURN_IF_ERROR(
      check(deviceTotalMem(&total, device), "cuDeviceTotalMem_v2"));
  int value = 0;
  info.vendorId = 0x10de;
  info.maxBindingBytes = total;
  info.maxAllocationBytes = total;
  info.deviceMemoryBytes = total;
  // cuMemAlloc aligns to at least 256 bytes.
  info.bindingOffsetAlignment = 256;
  // The classic kernel parameter limit (every driver and architecture).
  info.maxPushConstantBytes = 4096;
  CACHET_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, value));
  info.subgroupSize = uint32_t(value);
  for (int d = 0; d < 3; ++d) {
    CACHET_RETURN_IF_ERROR(
        attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + d, value));
    info.maxWorkgroupSize[d] = uint32_t(value);
    CACHET_RETURN_IF_ERROR(
        attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d, value));
    info.maxWorkgroupCount[d] = uint32_t(value);
  }
  CACHET_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, value));
  info.maxWorkgroupInvocations = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, value));
  if (value == 0)
    CACHET_RETURN_IF_ERROR(
        attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, value));
  info.maxSharedMemoryBytes = uint32_t(value);
  info.unifiedMemory = 0;
  info.bufferDeviceAddress = 1;
  info.timestamps = 1;
  info.timestampPeriodNs = 1.0;
  CACHET_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, value));
  info.multiprocessorCount = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, value));
  info.computeCapabilityMajor = uint32_t(value);
  CACHET_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, value));
  info.computeCapabilityMinor = uint32_t(value);
  CACHET_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, value));
  info.l2CacheBytes = uint64_t(value);
  return Status::success();
}

Status CudaApi::alloc(uint64_t bytes, uint64_t &address) {
  CUdeviceptr ptr = 0;
  CACHET_RETURN_IF_ERROR(check(memAlloc(&ptr, bytes), "cuMemAlloc_v2"));
  address = ptr;
  return Status::success();
}

Status CudaApi::free(uint64_t address) {
  return check(memFree(address), "cuMemFree_v2");
}

Status CudaApi::copyToDevice(uint64_t dst, const void *src, uint64_t bytes) {
  return check(memcpyHtoDAsync(dst, src, bytes, stream),
               "cuMemcpyHtoDAsync_v2");
}

Status CudaApi::copyToHost(void *dst, uint64_t src, uint64_t bytes) {
  return check(memcpyDtoHAsync(dst, src, bytes, stream),
               "cuMemcpyDtoHAsync_v2");
}

Status CudaApi::copyOnDevice(uint64_t dst, uint64_t src, uint64_t bytes) {
  return check(memcpyDtoDAsync(dst, src, bytes, stream),
               "cuMemcpyDtoDAsync_v2");
}

Status CudaApi::copy2DToDevice(uint64_t dst, uint64_t dstPitch, const void *src,
                               uint64_t srcPitch, uint64_t width,
                               uint64_t rows) {
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = src;
  copy.srcPitch = srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dst;
  copy.dstPitch = dstPitch;
  copy.WidthInBytes = width;
  copy.Height = rows;
  return check(memcpy2DAsync(&copy, stream), "cuMemcpy2DAsync_v2");
}

Status CudaApi::copy2DToHost(void *dst, uint64_t dstPitch, uint64_t src,
                             uint64_t srcPitch, uint64_t width, uint64_t rows) {
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = src;
  copy.srcPitch = srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_HOST;
  copy.dstHost = dst;
  copy.dstPitch = dstPitch;
  copy.WidthInBytes = width;
  copy.Height = rows;
  return check(memcpy2DAsync(&copy, stream), "cuMemcpy2DAsync_v2");
}

Status CudaApi::fill8(uint64_t dst, uint8_t value, uint64_t count) {
  return check(memsetD8Async(dst, value, count, stream), "cuMemsetD8Async");
}

Status CudaApi::fill32(uint64_t dst, uint32_t value, uint64_t count) {
  return check(memsetD32Async(dst, value, count, stream), "cuMemsetD32Async");
}

Status CudaApi::synchronize() {
  return check(streamSynchronize(stream), "cuStreamSynchronize");
}

Status CudaApi::loadModule(const void *data, size_t bytes, void *&module) {
  // The JIT's error log says why PTX did not compile.
  char log[4096] = {};
  int options[2] = {CU_JIT_ERROR_LOG_BUFFER,
                    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[2] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  CUmodule handle = nullptr;
  Status status = check(moduleLoadDataEx(&handle, data, 2, options, values),
                        "cuModuleLoadDataEx");
  if (!status.ok())
    return log[0] ? Status(status.getCode(),
                           status.getMessage() + ": " + std::string(log))
                  : status;
  module = handle;
  return Status::success();
}

void CudaApi::unloadModule(void *module) {
  if (makeCurrent().ok())
    moduleUnload(static_cast<CUmodule>(module));
}

Status CudaApi::getFunction(void *module, const char *name, void *&function) {
  CUfunction handle = nullptr;
  CACHET_RETURN_IF_ERROR(
      check(moduleGetFunction(&handle, static_cast<CUmodule>(module), name),
            "cuModuleGetFunction"));
  function = handle;
  return Status::success();
}

Status CudaApi::launch(void *function, const LaunchDims &dims, void **params,
                       void *argBuffer, size_t argBytes, uint32_t flags) {
  auto *fn = static_cast<CUfunction>(function);
  // Above the default 48 KiB, dynamic shared memory must be opted into.
  if (dims.sharedBytes > 48 * 1024)
    CACHET_RETURN_IF_ERROR(check(
        funcSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         int(dims.sharedBytes)),
        "cuFuncSetAttribute"));
  void *extra[] = {kLaunchParamBufferPointer, argBuffer, kLaunchParamBufferSize,
                   &argBytes, kLaunchParamEnd};
  void **extraArg = params ? nullptr : extra;
  if ((flags & CACHET_LAUNCH_PDL) && launchKernelEx) {
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {dims.grid[0],     dims.grid[1],
                             dims.grid[2],     dims.block[0],
                             dims.block[1],    dims.block[2],
                             dims.sharedBytes, stream,
                             &attribute,       1};
    return check(launchKernelEx(&config, fn, params, extraArg),
                 "cuLaunchKernelEx");
  }
  return check(launchKernel(fn, dims.grid[0], dims.grid[1], dims.grid[2],
                            dims.block[0], dims.block[1], dims.block[2],
                            dims.sharedBytes, stream, params, extraArg),
               "cuLaunchKernel");
}

Status CudaApi::createEvent(void *&event) {
  CUevent handle = nullptr;
  CACHET_RETURN_IF_ERROR(
      check(eventCreate(&handle, CU_EVENT_DEFAULT), "cuEventCreate"));
  event = handle;
  return Status::success();
}

void CudaApi::destroyEvent(void *event) {
  if (makeCurrent().ok())
    eventDestroy(static_cast<CUevent>(event));
}

Status CudaApi::recordEvent(void *event) {
  return check(eventRecord(static_cast<CUevent>(event), stream),
               "cuEventRecord");
}

Status CudaApi::elapsedMs(void *start, void *end, float &ms) {
  CACHET_RETURN_IF_ERROR(check(eventSynchronize(static_cast<CUevent>(start)),
                               "cuEventSynchronize"));
  CACHET_RETURN_IF_ERROR(
      check(eventSynchronize(static_cast<CUevent>(end)), "cuEventSynchronize"));
  return check(eventElapsedTime(&ms, static_cast<CUevent>(start),
                                static_cast<CUevent>(end)),
               eventElapsedName);
}

} // namespace

std::unique_ptr<DriverApi> cachet::runtime::createCudaApi() {
  return std::make_unique<CudaApi>();
}

void *cachet::runtime::openCudaLibrary(const char *&path) {
  path = std::getenv("CACHET_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}
