//===- Backend.h - The interface of every runtime backend -------*- C++ -*-===//
//
// libcachet_runtime's C API (Runtime.cpp) and the mgpu* wrappers are written
// once against this interface; a backend (Vulkan, and CUDA and HIP through
// DriverApi.h) implements it. Backend objects never abort: every fallible call
// returns a Status whose message says what failed; the C API prefixes the name
// of the public function.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_RUNTIME_LIB_BACKEND_H
#define CACHET_RUNTIME_LIB_BACKEND_H

#include "cachet/runtime.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cachet {
namespace runtime {

/// The result of a backend call: a status code and, on failure, a reason.
class Status {
public:
  Status() = default;
  Status(CachetStatus code, std::string message)
      : code(code), message(std::move(message)) {}

  /// Returns the successful status.
  static Status success() { return Status(); }

  bool ok() const { return code == CACHET_SUCCESS; }
  CachetStatus getCode() const { return code; }
  const std::string &getMessage() const { return message; }

private:
  CachetStatus code = CACHET_SUCCESS;
  std::string message;
};

/// Returns `status` from the enclosing function when it is a failure.
#define CACHET_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::cachet::runtime::Status cachetStatus_ = (expr);                          \
    if (!cachetStatus_.ok())                                                   \
      return cachetStatus_;                                                    \
  } while (false)

/// A device allocation. Backends derive from it.
class Buffer {
public:
  virtual ~Buffer() = default;
  uint64_t getSize() const { return size; }

protected:
  explicit Buffer(uint64_t size) : size(size) {}

private:
  uint64_t size;
};

/// A compiled entry point, ready to launch. Backends derive from it.
class Kernel {
public:
  virtual ~Kernel() = default;
  const CachetKernelInfo &getInfo() const { return info; }

protected:
  explicit Kernel(const CachetKernelInfo &info) : info(info) {}

private:
  CachetKernelInfo info;
};

/// A loaded kernel binary. Backends derive from it.
class Module {
public:
  virtual ~Module() = default;
};

/// A device timing mark. Backends derive from it.
class Event {
public:
  virtual ~Event() = default;
};

/// One buffer argument of a launch (a resolved CachetBinding).
struct BindingRef {
  Buffer *buffer;
  uint64_t offset;
  uint64_t range;
};

/// Everything one launch needs. On Vulkan, binding i is storage buffer i of
/// descriptor set 0 and the push constants carry the scalars; a backend
/// whose kernels take a parameter list (CUDA, HIP) passes the bindings as
/// device pointers (base + offset) in order, then the push-constant bytes.
struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  /// Threads per workgroup; zeros mean the kernel's own (on Vulkan, the
  /// shader's workgroup size, which a non-zero block must equal).
  uint32_t block[3] = {0, 0, 0};
  /// Dynamic shared memory in bytes (0 on Vulkan).
  uint32_t sharedBytes = 0;
  const BindingRef *bindings = nullptr;
  uint32_t numBindings = 0;
  const void *pushConstants = nullptr;
  uint32_t pushBytes = 0;
  /// When non-null, the kernel's parameters in the CUDA convention (one
  /// pointer per parameter, cachetLaunchKernel) instead of bindings and push
  /// constants; backends without parameter lists reject it.
  void **params = nullptr;
  uint32_t numParams = 0;
  /// CACHET_LAUNCH_* flags (hints a backend may ignore).
  uint32_t flags = 0;
};

/// One device and one in-order queue of work on it.
///
/// Launches, fills and event records are recorded in submission order and
/// may run asynchronously; host copies and frees wait for the work that
/// precedes them. Offsets and sizes are validated by the caller (the C API)
/// against the buffer's size; device limits are validated here.
class Backend {
public:
  virtual ~Backend() = default;

  /// Describes the device.
  virtual const CachetDeviceInfo &getDeviceInfo() const = 0;
  /// Describes the device's cooperative matrices (none unless a backend says
  /// otherwise).
  virtual const CachetCooperativeMatrixInfo &getCooperativeMatrixInfo() const;

  /// Allocates `bytes` (CACHET_BUFFER_* `flags`).
  virtual Status allocate(uint64_t bytes, uint32_t flags,
                          std::unique_ptr<Buffer> &result) = 0;
  /// Frees a buffer once the device no longer uses it.
  virtual void release(std::unique_ptr<Buffer> buffer) = 0;

  /// Copies host memory into `buffer` (`bytes` at `offset`).
  virtual Status upload(Buffer &buffer, uint64_t offset, const void *src,
                        uint64_t bytes) = 0;
  /// Copies `buffer` into host memory after all recorded work.
  virtual Status download(Buffer &buffer, uint64_t offset, void *dst,
                          uint64_t bytes) = 0;
  /// Zero-filled strided 2D upload (see cachetBufferUpload2D).
  virtual Status upload2D(Buffer &buffer, uint64_t offset, uint64_t dstPitch,
                          const void *src, uint64_t srcPitch, uint64_t rowBytes,
                          uint64_t rows) = 0;
  /// Strided 2D download (see cachetBufferDownload2D).
  virtual Status download2D(Buffer &buffer, uint64_t offset, uint64_t srcPitch,
                            void *dst, uint64_t dstPitch, uint64_t rowBytes,
                            uint64_t rows) = 0;
  /// Records a device-to-device copy of `bytes`.
  virtual Status copy(Buffer &src, uint64_t srcOffset, Buffer &dst,
                      uint64_t dstOffset, uint64_t bytes) = 0;
  /// Records a 32-bit fill.
  virtual Status fill(Buffer &buffer, uint64_t offset, uint64_t bytes,
                      uint32_t value) = 0;
  /// Returns the persistent host mapping of a host-visible buffer.
  virtual Status map(Buffer &buffer, void **ptr) = 0;
  /// Returns the device address of a buffer.
  virtual Status deviceAddress(Buffer &buffer, uint64_t *address) = 0;

  /// Validates and loads a kernel binary.
  virtual Status loadModule(const void *data, size_t bytes,
                            std::unique_ptr<Module> &result) = 0;
  /// Builds the kernel `name` of `module`.
  virtual Status getKernel(Module &module, const char *name,
                           std::unique_ptr<Kernel> &result) = 0;
  /// Records a launch; arguments are checked against the kernel.
  virtual Status launch(Kernel &kernel, const LaunchConfig &config) = 0;

  /// Creates a timing mark.
  virtual Status createEvent(std::unique_ptr<Event> &result) = 0;
  /// Records a timing mark after all recorded work.
  virtual Status recordEvent(Event &event) = 0;
  /// Waits for a recorded mark and returns its device time in ns.
  virtual Status eventTimestampNs(Event &event, uint64_t *ns) = 0;
  /// Waits for both marks and returns the device time between them in ns.
  virtual Status eventElapsedNs(Event &start, Event &end, uint64_t *ns);

  /// Waits for all recorded work.
  virtual Status synchronize() = 0;
};

/// Creates the Vulkan backend on the default (or CACHET_VULKAN_DEVICE)
/// device.
/// The most bytes of freed memory kept for reuse, by the mgpu functions on
/// CUDA and HIP and by the Vulkan backend (CACHET_MGPU_CACHE_BYTES; default
/// 8 GiB; 0 keeps nothing).
uint64_t getFreedCacheLimit();

Status createVulkanBackend(uint32_t flags, std::unique_ptr<Backend> &result);
/// Creates the CUDA backend (driver API over dlopen) on the default (or
/// CACHET_CUDA_DEVICE) device.
Status createCudaBackend(std::unique_ptr<Backend> &result);
/// Creates the HIP backend (libamdhip64 over dlopen) on the default (or
/// CACHET_HIP_DEVICE) device.
Status createHipBackend(std::unique_ptr<Backend> &result);

} // namespace runtime
} // namespace cachet

#endif // CACHET_RUNTIME_LIB_BACKEND_H
