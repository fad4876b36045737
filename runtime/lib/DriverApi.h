//===- DriverApi.h - CUDA / HIP calls of the runtime ------------*- C++ -*-===//
//
// The CUDA driver API and HIP are close enough that one backend
// (DeviceBackend.cpp) serves both. This interface is the few calls it needs,
// with vendor-neutral types: device memory is a 64-bit address, modules,
// functions and events are opaque pointers. CudaApi.cpp and HipApi.cpp load
// the vendor library with dlopen (nothing links against libcuda or
// libamdhip64) and turn every vendor result into a Status whose message
// names the driver call ("cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)").
//
// Every call acts on the device and the one stream chosen by open(); copies,
// fills and launches are asynchronous on that stream.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_RUNTIME_LIB_DRIVERAPI_H
#define CACHET_RUNTIME_LIB_DRIVERAPI_H

#include "Backend.h"

namespace cachet {
namespace runtime {

/// Names a function pointer type in a declaration (`Fn<int (*)(int)> f;`).
template <typename T> using Fn = T;

/// The launch geometry of a DriverApi::launch.
struct LaunchDims {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t sharedBytes;
};

/// The driver calls of one vendor, on one device and one stream.
class DriverApi {
public:
  virtual ~DriverApi() = default;

  /// Loads the library, initializes the driver, picks device `index`, makes
  /// its context current and creates the stream. Fails with
  /// CACHET_ERROR_NO_DEVICE when there is no library, driver or device.
  virtual Status open(int index) = 0;
  /// Makes the device current on the calling thread.
  virtual Status makeCurrent() = 0;
  /// Fills the device's name and limits.
  virtual Status queryInfo(CachetDeviceInfo &info) = 0;

  virtual Status alloc(uint64_t bytes, uint64_t &address) = 0;
  virtual Status free(uint64_t address) = 0;
  virtual Status copyToDevice(uint64_t dst, const void *src,
                              uint64_t bytes) = 0;
  virtual Status copyToHost(void *dst, uint64_t src, uint64_t bytes) = 0;
  virtual Status copyOnDevice(uint64_t dst, uint64_t src, uint64_t bytes) = 0;
  /// Copies `rows` rows of `width` bytes from host rows `srcPitch` apart to
  /// device rows `dstPitch` apart.
  virtual Status copy2DToDevice(uint64_t dst, uint64_t dstPitch,
                                const void *src, uint64_t srcPitch,
                                uint64_t width, uint64_t rows) = 0;
  /// The inverse of copy2DToDevice.
  virtual Status copy2DToHost(void *dst, uint64_t dstPitch, uint64_t src,
                              uint64_t srcPitch, uint64_t width,
                              uint64_t rows) = 0;
  virtual Status fill8(uint64_t dst, uint8_t value, uint64_t count) = 0;
  virtual Status fill32(uint64_t dst, uint32_t value, uint64_t count) = 0;
  /// Waits for all work on the stream.
  virtual Status synchronize() = 0;

  /// Loads a code object (CUDA: cubin, fatbin or PTX text; HIP: a code
  /// object or an offload bundle).
  virtual Status loadModule(const void *data, size_t bytes, void *&module) = 0;
  virtual void unloadModule(void *module) = 0;
  virtual Status getFunction(void *module, const char *name,
                             void *&function) = 0;
  /// Launches `function`. Arguments are either `params` (one pointer per
  /// kernel parameter, the CUDA convention) or, when `params` is null,
  /// `argBuffer` (`argBytes` bytes laid out as the kernel's parameter
  /// block). CACHET_LAUNCH_PDL in `flags` asks for programmatic dependent
  /// launch where the driver has it.
  virtual Status launch(void *function, const LaunchDims &dims, void **params,
                        void *argBuffer, size_t argBytes, uint32_t flags) = 0;

  virtual Status createEvent(void *&event) = 0;
  virtual void destroyEvent(void *event) = 0;
  virtual Status recordEvent(void *event) = 0;
  /// Waits for both events and returns the milliseconds between them.
  virtual Status elapsedMs(void *start, void *end, float &ms) = 0;
};

/// Returns the failure of driver call `call` with result `result` (named
/// `resultName`, or null where the driver cannot name it). CUDA and HIP
/// share the numbering of the results that map to a specific CachetStatus
/// (out of memory, no device, invalid binary, not found, out of resources).
Status driverFailure(int result, const char *resultName, const char *call);

/// dlopens the CUDA driver library, $CACHET_CUDA_LIBRARY where set, else
/// libcuda.so.1 (RTLD_NOW | RTLD_LOCAL; never closed: the driver does not
/// support being unloaded). Returns null where it cannot be loaded; `path`
/// receives the name tried.
void *openCudaLibrary(const char *&path);

/// Creates the (not yet opened) CUDA driver API over openCudaLibrary().
std::unique_ptr<DriverApi> createCudaApi();
/// Creates the (not yet opened) HIP API over dlopen of libamdhip64.so, or of
/// $CACHET_HIP_LIBRARY where set.
std::unique_ptr<DriverApi> createHipApi();

/// Creates the backend of `api` on device $CACHET_<NAME>_DEVICE (default 0)
/// where `name` is "cuda" or "hip".
Status createDeviceBackend(const char *name, std::unique_ptr<DriverApi> api,
                           std::unique_ptr<Backend> &result);

} // namespace runtime
} // namespace cachet

#endif // CACHET_RUNTIME_LIB_DRIVERAPI_H
