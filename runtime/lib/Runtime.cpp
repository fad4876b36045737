//===- Runtime.cpp - The C API of libcachet_runtime -----------------------===//
//
// Validates arguments, owns the handles and forwards to a Backend. Every
// failure is recorded as "<function>: <reason>" in a thread-local string.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

using namespace cachet::runtime;

uint64_t cachet::runtime::getFreedCacheLimit() {
  static uint64_t limit = [] {
    const char *text = std::getenv("CACHET_MGPU_CACHE_BYTES");
    return text && *text ? std::strtoull(text, nullptr, 10) : uint64_t(8) << 30;
  }();
  return limit;
}

struct CachetBufferImpl {
  /// The allocation; null for a sub-allocation of an arena.
  std::unique_ptr<Buffer> owned;
  Buffer *base = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t pitch = 0;
  CachetArenaImpl *arena = nullptr;
};

struct CachetArenaImpl {
  CachetBufferImpl storage;
  uint64_t used = 0;
  uint64_t peak = 0;
  std::set<CachetBufferImpl *> views;
};

struct CachetKernelImpl {
  std::unique_ptr<Kernel> kernel;
};

struct CachetModuleImpl {
  std::unique_ptr<Module> module;
  std::map<std::string, std::unique_ptr<CachetKernelImpl>> kernels;
};

struct CachetEventImpl {
  std::unique_ptr<Event> event;
};

struct CachetRuntimeImpl {
  std::mutex mutex;
  std::unique_ptr<Backend> backend;
  std::set<CachetBufferImpl *> buffers;
  std::set<CachetArenaImpl *> arenas;
  std::set<CachetModuleImpl *> modules;
  std::set<CachetEventImpl *> events;
};

Status Backend::eventElapsedNs(Event &start, Event &end, uint64_t *ns) {
  uint64_t startNs = 0, endNs = 0;
  CACHET_RETURN_IF_ERROR(eventTimestampNs(start, &startNs));
  CACHET_RETURN_IF_ERROR(eventTimestampNs(end, &endNs));
  if (endNs < startNs)
    return Status(CACHET_ERROR_INVALID_ARGUMENT,
                  "the end mark precedes the start mark");
  *ns = endNs - startNs;
  return Status::success();
}

const CachetCooperativeMatrixInfo &Backend::getCooperativeMatrixInfo() const {
  static const CachetCooperativeMatrixInfo none = {};
  return none;
}

namespace {

thread_local std::string lastError;

/// Records the outcome of public function `function` and returns its code.
CachetStatus report(const char *function, const Status &status) {
  if (status.ok())
    return CACHET_SUCCESS;
  lastError = std::string(function) + ": " + status.getMessage();
  return status.getCode();
}

/// Calls `fn`, turning a C++ exception (host memory exhausted by a size that
/// came from the caller or from a binary) into a failed Status.
template <typename Fn> Status safely(Fn &&fn) {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return Status(CACHET_ERROR_OUT_OF_MEMORY, "host memory exhausted");
  } catch (const std::exception &error) {
    return Status(CACHET_ERROR_BACKEND,
                  std::string("internal error: ") + error.what());
  }
}

Status invalidArgument(const std::string &message) {
  return Status(CACHET_ERROR_INVALID_ARGUMENT, message);
}

/// Checks that [offset, offset + bytes) lies inside `buffer`.
Status checkRange(const CachetBufferImpl *buffer, uint64_t offset,
                  uint64_t bytes) {
  if (offset > buffer->size || bytes > buffer->size - offset)
    return invalidArgument("range [" + std::to_string(offset) + ", " +
                           std::to_string(offset) + " + " +
                           std::to_string(bytes) + ") is outside the " +
                           std::to_string(buffer->size) + "-byte buffer");
  return Status::success();
}

/// Checks a rows x pitch region starting at `offset` of `buffer`.
Status checkRegion2D(const CachetBufferImpl *buffer, uint64_t offset,
                     uint64_t pitch, uint64_t rowBytes, uint64_t rows) {
  if (pitch == 0)
    return invalidArgument("the buffer has no pitch; pass one");
  if (rowBytes > pitch)
    return invalidArgument("row of " + std::to_string(rowBytes) +
                           " bytes is wider than the pitch of " +
                           std::to_string(pitch));
  if (rows > UINT64_MAX / pitch)
    return invalidArgument("rows x pitch overflows");
  return checkRange(buffer, offset, rows * pitch);
}

void freeView(CachetRuntimeImpl *runtime, CachetBufferImpl *buffer) {
  if (buffer->owned)
    runtime->backend->release(std::move(buffer->owned));
  delete buffer;
}

/// Creates the backend called `name` (not "auto").
Status createBackend(const std::string &name, uint32_t flags,
                     std::unique_ptr<Backend> &result) {
  if (name == "vulkan")
    return createVulkanBackend(flags, result);
  if (name == "cuda")
    return createCudaBackend(result);
  if (name == "hip")
    return createHipBackend(result);
  return invalidArgument("unknown backend '" + name +
                         "' (known: vulkan, cuda, hip, auto)");
}

CachetStatus createRuntime(const char *backendName, uint32_t flags,
                           CachetRuntime *runtime) {
  const char *fromEnv = std::getenv("CACHET_BACKEND");
  std::string name = backendName           ? backendName
                     : fromEnv && *fromEnv ? fromEnv
                                           : "vulkan";
  auto impl = std::make_unique<CachetRuntimeImpl>();
  Status status;
  if (name == "auto") {
    // The first backend with a device; the message lists why each failed.
    std::string reasons;
    for (const char *candidate : {"cuda", "hip", "vulkan"}) {
      status = safely(
          [&] { return createBackend(candidate, flags, impl->backend); });
      if (status.ok() || status.getCode() != CACHET_ERROR_NO_DEVICE)
        break;
      reasons += (reasons.empty() ? "" : "; ") + std::string(candidate) + ": " +
                 status.getMessage();
    }
    if (status.getCode() == CACHET_ERROR_NO_DEVICE)
      status = Status(CACHET_ERROR_NO_DEVICE,
                      "no backend has a device (" + reasons + ")");
  } else {
    status = safely([&] { return createBackend(name, flags, impl->backend); });
  }
  if (!status.ok())
    return report("cachetRuntimeCreate", status);
  *runtime = impl.release();
  return CACHET_SUCCESS;
}

/// Allocates a buffer for public function `function`.
CachetStatus allocateBuffer(const char *function, CachetRuntime runtime,
                            uint64_t bytes, uint32_t flags, uint64_t pitch,
                            CachetBuffer *buffer) {
  if (!runtime || !buffer)
    return report(function, invalidArgument("null argument"));
  std::lock_guard<std::mutex> lock(runtime->mutex);
  *buffer = nullptr;
  if (bytes == 0)
    return report(function, invalidArgument("zero-byte allocation"));
  if (flags & ~uint32_t(CACHET_BUFFER_HOST_VISIBLE))
    return report(function, invalidArgument("unknown buffer flags " +
                                            std::to_string(flags)));
  auto impl = std::make_unique<CachetBufferImpl>();
  Status status = safely(
      [&] { return runtime->backend->allocate(bytes, flags, impl->owned); });
  if (!status.ok())
    return report(function, status);
  impl->base = impl->owned.get();
  impl->size = bytes;
  impl->pitch = pitch;
  *buffer = impl.release();
  runtime->buffers.insert(*buffer);
  return CACHET_SUCCESS;
}

/// Launches for public function `function` (see cachetLaunchWithBlock).
CachetStatus launchWithBindings(const char *function, CachetRuntime runtime,
                                CachetKernel kernel, const uint32_t grid[3],
                                const uint32_t block[3],
                                const CachetBinding *bindings,
                                uint32_t numBindings, const void *pushConstants,
                                uint32_t pushBytes) {
  if (!runtime || !kernel || !grid || !block)
    return report(function, invalidArgument("null argument"));
  if (!bindings && numBindings)
    return report(function, invalidArgument("null bindings"));
  if (!pushConstants && pushBytes)
    return report(function, invalidArgument("null push constants"));
  std::lock_guard<std::mutex> lock(runtime->mutex);
  std::vector<BindingRef> refs(numBindings);
  for (uint32_t i = 0; i < numBindings; ++i) {
    const CachetBinding &binding = bindings[i];
    if (!binding.buffer)
      return report(function, invalidArgument("binding " + std::to_string(i) +
                                              " has a null buffer"));
    uint64_t range = binding.range ? binding.range
                     : binding.offset < binding.buffer->size
                         ? binding.buffer->size - binding.offset
                         : 0;
    Status status = checkRange(binding.buffer, binding.offset, range);
    if (!status.ok() || range == 0)
      return report(function,
                    invalidArgument("binding " + std::to_string(i) + ": " +
                                    (range ? status.getMessage()
                                           : std::string("empty range"))));
    refs[i] = {binding.buffer->base, binding.buffer->offset + binding.offset,
               range};
  }
  LaunchConfig config;
  std::copy(grid, grid + 3, config.grid);
  std::copy(block, block + 3, config.block);
  config.bindings = refs.data();
  config.numBindings = numBindings;
  config.pushConstants = pushConstants;
  config.pushBytes = pushBytes;
  return report(function, safely([&] {
                  return runtime->backend->launch(*kernel->kernel, config);
                }));
}

} // namespace

#define CACHET_CHECK_ARG(cond, message)                                        \
  do {                                                                         \
    if (!(cond))                                                               \
      return report(__func__, invalidArgument(message));                       \
  } while (false)

#define CACHET_LOCK(runtime)                                                   \
  CACHET_CHECK_ARG(runtime, "null runtime");                                   \
  std::lock_guard<std::mutex> lock((runtime)->mutex)

extern "C" {

const char *cachetGetLastError(void) { return lastError.c_str(); }

const char *cachetStatusString(CachetStatus status) {
  switch (status) {
  case CACHET_SUCCESS:
    return "CACHET_SUCCESS";
  case CACHET_ERROR_INVALID_ARGUMENT:
    return "CACHET_ERROR_INVALID_ARGUMENT";
  case CACHET_ERROR_NO_DEVICE:
    return "CACHET_ERROR_NO_DEVICE";
  case CACHET_ERROR_UNSUPPORTED:
    return "CACHET_ERROR_UNSUPPORTED";
  case CACHET_ERROR_OUT_OF_MEMORY:
    return "CACHET_ERROR_OUT_OF_MEMORY";
  case CACHET_ERROR_INVALID_BINARY:
    return "CACHET_ERROR_INVALID_BINARY";
  case CACHET_ERROR_NOT_FOUND:
    return "CACHET_ERROR_NOT_FOUND";
  case CACHET_ERROR_ARGUMENT_MISMATCH:
    return "CACHET_ERROR_ARGUMENT_MISMATCH";
  case CACHET_ERROR_LIMIT_EXCEEDED:
    return "CACHET_ERROR_LIMIT_EXCEEDED";
  case CACHET_ERROR_BACKEND:
    return "CACHET_ERROR_BACKEND";
  }
  return "CACHET_ERROR_UNKNOWN";
}

CachetStatus cachetRuntimeCreate(const char *backend, uint32_t flags,
                                 CachetRuntime *runtime) {
  CACHET_CHECK_ARG(runtime, "null result pointer");
  *runtime = nullptr;
  return createRuntime(backend, flags, runtime);
}

CachetStatus cachetRuntimeDestroy(CachetRuntime runtime) {
  if (!runtime)
    return CACHET_SUCCESS;
  Status status;
  {
    std::lock_guard<std::mutex> lock(runtime->mutex);
    status = runtime->backend->synchronize();
    for (CachetEventImpl *event : runtime->events)
      delete event;
    for (CachetModuleImpl *module : runtime->modules)
      delete module;
    for (CachetArenaImpl *arena : runtime->arenas) {
      for (CachetBufferImpl *view : arena->views)
        delete view;
      runtime->backend->release(std::move(arena->storage.owned));
      delete arena;
    }
    for (CachetBufferImpl *buffer : runtime->buffers)
      freeView(runtime, buffer);
    runtime->backend.reset();
  }
  delete runtime;
  return report(__func__, status);
}

CachetStatus cachetGetDeviceInfo(CachetRuntime runtime,
                                 CachetDeviceInfo *info) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(info, "null result pointer");
  *info = runtime->backend->getDeviceInfo();
  return CACHET_SUCCESS;
}

CachetStatus cachetGetCooperativeMatrixInfo(CachetRuntime runtime,
                                            CachetCooperativeMatrixInfo *info) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(info, "null result pointer");
  *info = runtime->backend->getCooperativeMatrixInfo();
  return CACHET_SUCCESS;
}

CachetStatus cachetSynchronize(CachetRuntime runtime) {
  CACHET_LOCK(runtime);
  return report(__func__, runtime->backend->synchronize());
}

CachetStatus cachetBufferAllocEx(CachetRuntime runtime, uint64_t bytes,
                                 uint32_t flags, CachetBuffer *buffer) {
  return allocateBuffer(__func__, runtime, bytes, flags, 0, buffer);
}

CachetStatus cachetBufferAlloc(CachetRuntime runtime, uint64_t bytes,
                               CachetBuffer *buffer) {
  return allocateBuffer(__func__, runtime, bytes, 0, 0, buffer);
}

CachetStatus cachetBufferAllocPitched(CachetRuntime runtime, uint64_t rowBytes,
                                      uint64_t rows, uint64_t pitchBytes,
                                      CachetBuffer *buffer) {
  CACHET_CHECK_ARG(buffer, "null result pointer");
  *buffer = nullptr;
  uint64_t pitch = pitchBytes ? pitchBytes : rowBytes;
  CACHET_CHECK_ARG(rowBytes > 0 && rows > 0, "empty matrix");
  CACHET_CHECK_ARG(pitch >= rowBytes, "pitch of " + std::to_string(pitch) +
                                          " bytes is below the row size of " +
                                          std::to_string(rowBytes));
  CACHET_CHECK_ARG(rows <= UINT64_MAX / pitch, "rows x pitch overflows");
  return allocateBuffer(__func__, runtime, rows * pitch, 0, pitch, buffer);
}

CachetStatus cachetBufferFree(CachetRuntime runtime, CachetBuffer buffer) {
  if (!buffer)
    return CACHET_SUCCESS;
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(!buffer->arena, "the buffer belongs to an arena; "
                                   "cachetArenaReset frees it");
  CACHET_CHECK_ARG(runtime->buffers.erase(buffer),
                   "the buffer does not belong to this runtime");
  freeView(runtime, buffer);
  return CACHET_SUCCESS;
}

CachetStatus cachetBufferGetSize(CachetBuffer buffer, uint64_t *bytes) {
  CACHET_CHECK_ARG(buffer && bytes, "null argument");
  *bytes = buffer->size;
  return CACHET_SUCCESS;
}

CachetStatus cachetBufferGetPitch(CachetBuffer buffer, uint64_t *pitchBytes) {
  CACHET_CHECK_ARG(buffer && pitchBytes, "null argument");
  *pitchBytes = buffer->pitch;
  return CACHET_SUCCESS;
}

CachetStatus cachetBufferUpload(CachetRuntime runtime, CachetBuffer buffer,
                                uint64_t offset, const void *src,
                                uint64_t bytes) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && (src || !bytes), "null argument");
  Status status = checkRange(buffer, offset, bytes);
  if (status.ok() && bytes)
    status = safely([&] {
      return runtime->backend->upload(*buffer->base, buffer->offset + offset,
                                      src, bytes);
    });
  return report(__func__, status);
}

CachetStatus cachetBufferDownload(CachetRuntime runtime, CachetBuffer buffer,
                                  uint64_t offset, void *dst, uint64_t bytes) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && (dst || !bytes), "null argument");
  Status status = checkRange(buffer, offset, bytes);
  if (status.ok() && bytes)
    status = safely([&] {
      return runtime->backend->download(*buffer->base, buffer->offset + offset,
                                        dst, bytes);
    });
  return report(__func__, status);
}

CachetStatus cachetBufferUpload2D(CachetRuntime runtime, CachetBuffer buffer,
                                  uint64_t offset, uint64_t dstPitch,
                                  const void *src, uint64_t srcPitch,
                                  uint64_t rowBytes, uint64_t rows) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && (src || !rows), "null argument");
  uint64_t pitch = dstPitch ? dstPitch : buffer->pitch;
  uint64_t hostPitch = srcPitch ? srcPitch : rowBytes;
  CACHET_CHECK_ARG(hostPitch >= rowBytes, "source pitch below the row size");
  Status status = checkRegion2D(buffer, offset, pitch, rowBytes, rows);
  if (status.ok() && rows)
    status = safely([&] {
      return runtime->backend->upload2D(*buffer->base, buffer->offset + offset,
                                        pitch, src, hostPitch, rowBytes, rows);
    });
  return report(__func__, status);
}

CachetStatus cachetBufferDownload2D(CachetRuntime runtime, CachetBuffer buffer,
                                    uint64_t offset, uint64_t srcPitch,
                                    void *dst, uint64_t dstPitch,
                                    uint64_t rowBytes, uint64_t rows) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && (dst || !rows), "null argument");
  uint64_t pitch = srcPitch ? srcPitch : buffer->pitch;
  uint64_t hostPitch = dstPitch ? dstPitch : rowBytes;
  CACHET_CHECK_ARG(hostPitch >= rowBytes,
                   "destination pitch below the row size");
  Status status = checkRegion2D(buffer, offset, pitch, rowBytes, rows);
  if (status.ok() && rows)
    status = safely([&] {
      return runtime->backend->download2D(*buffer->base,
                                          buffer->offset + offset, pitch, dst,
                                          hostPitch, rowBytes, rows);
    });
  return report(__func__, status);
}

CachetStatus cachetBufferCopy(CachetRuntime runtime, CachetBuffer src,
                              uint64_t srcOffset, CachetBuffer dst,
                              uint64_t dstOffset, uint64_t bytes) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(src && dst, "null buffer");
  Status status = checkRange(src, srcOffset, bytes);
  if (status.ok())
    status = checkRange(dst, dstOffset, bytes);
  uint64_t from = src->offset + srcOffset, to = dst->offset + dstOffset;
  if (status.ok() && src->base == dst->base && from < to + bytes &&
      to < from + bytes)
    status = invalidArgument("source and destination ranges overlap");
  if (status.ok() && bytes)
    status = runtime->backend->copy(*src->base, from, *dst->base, to, bytes);
  return report(__func__, status);
}

CachetStatus cachetBufferFill(CachetRuntime runtime, CachetBuffer buffer,
                              uint64_t offset, uint64_t bytes, uint32_t value) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer, "null buffer");
  CACHET_CHECK_ARG(offset % 4 == 0 && bytes % 4 == 0,
                   "offset and size must be multiples of 4");
  Status status = checkRange(buffer, offset, bytes);
  if (status.ok() && bytes)
    status = runtime->backend->fill(*buffer->base, buffer->offset + offset,
                                    bytes, value);
  return report(__func__, status);
}

CachetStatus cachetBufferMap(CachetRuntime runtime, CachetBuffer buffer,
                             void **ptr) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && ptr, "null argument");
  void *base = nullptr;
  Status status = runtime->backend->map(*buffer->base, &base);
  if (status.ok())
    *ptr = static_cast<char *>(base) + buffer->offset;
  return report(__func__, status);
}

CachetStatus cachetBufferDeviceAddress(CachetRuntime runtime,
                                       CachetBuffer buffer, uint64_t *address) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(buffer && address, "null argument");
  uint64_t base = 0;
  Status status = runtime->backend->deviceAddress(*buffer->base, &base);
  if (status.ok())
    *address = base + buffer->offset;
  return report(__func__, status);
}

CachetStatus cachetArenaCreate(CachetRuntime runtime, uint64_t bytes,
                               CachetArena *arena) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(arena, "null result pointer");
  *arena = nullptr;
  CACHET_CHECK_ARG(bytes > 0, "zero-byte arena");
  auto impl = std::make_unique<CachetArenaImpl>();
  Status status = safely([&] {
    return runtime->backend->allocate(bytes, 0, impl->storage.owned);
  });
  if (!status.ok())
    return report(__func__, status);
  impl->storage.base = impl->storage.owned.get();
  impl->storage.size = bytes;
  *arena = impl.release();
  runtime->arenas.insert(*arena);
  return CACHET_SUCCESS;
}

CachetStatus cachetArenaAlloc(CachetRuntime runtime, CachetArena arena,
                              uint64_t bytes, CachetBuffer *buffer) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(arena && buffer, "null argument");
  *buffer = nullptr;
  CACHET_CHECK_ARG(bytes > 0, "zero-byte sub-allocation");
  uint64_t align = runtime->backend->getDeviceInfo().bindingOffsetAlignment;
  uint64_t offset = (arena->used + align - 1) / align * align;
  uint64_t capacity = arena->storage.size;
  if (offset > capacity || bytes > capacity - offset)
    return report(
        __func__,
        Status(CACHET_ERROR_OUT_OF_MEMORY,
               "arena of " + std::to_string(capacity) + " bytes has " +
                   std::to_string(capacity - std::min(offset, capacity)) +
                   " bytes left, " + std::to_string(bytes) + " requested"));
  auto view = std::make_unique<CachetBufferImpl>();
  view->base = arena->storage.base;
  view->offset = offset;
  view->size = bytes;
  view->arena = arena;
  arena->used = offset + bytes;
  arena->peak = std::max(arena->peak, arena->used);
  *buffer = view.release();
  arena->views.insert(*buffer);
  return CACHET_SUCCESS;
}

CachetStatus cachetArenaReset(CachetRuntime runtime, CachetArena arena) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(arena, "null arena");
  // Launches recorded so far may still use the sub-allocations; the next
  // user of the memory must come after them, which in-order execution
  // guarantees.
  for (CachetBufferImpl *view : arena->views)
    delete view;
  arena->views.clear();
  arena->used = 0;
  return CACHET_SUCCESS;
}

CachetStatus cachetArenaGetUsage(CachetArena arena, uint64_t *usedBytes,
                                 uint64_t *peakBytes, uint64_t *capacityBytes) {
  CACHET_CHECK_ARG(arena, "null arena");
  if (usedBytes)
    *usedBytes = arena->used;
  if (peakBytes)
    *peakBytes = arena->peak;
  if (capacityBytes)
    *capacityBytes = arena->storage.size;
  return CACHET_SUCCESS;
}

CachetStatus cachetArenaDestroy(CachetRuntime runtime, CachetArena arena) {
  if (!arena)
    return CACHET_SUCCESS;
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(runtime->arenas.erase(arena),
                   "the arena does not belong to this runtime");
  for (CachetBufferImpl *view : arena->views)
    delete view;
  runtime->backend->release(std::move(arena->storage.owned));
  delete arena;
  return CACHET_SUCCESS;
}

CachetStatus cachetModuleLoad(CachetRuntime runtime, const void *data,
                              size_t bytes, CachetModule *module) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(module, "null result pointer");
  *module = nullptr;
  CACHET_CHECK_ARG(data || !bytes, "null binary");
  auto impl = std::make_unique<CachetModuleImpl>();
  Status status = safely(
      [&] { return runtime->backend->loadModule(data, bytes, impl->module); });
  if (!status.ok())
    return report(__func__, status);
  *module = impl.release();
  runtime->modules.insert(*module);
  return CACHET_SUCCESS;
}

CachetStatus cachetModuleUnload(CachetRuntime runtime, CachetModule module) {
  if (!module)
    return CACHET_SUCCESS;
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(runtime->modules.erase(module),
                   "the module does not belong to this runtime");
  // Recorded launches may still use its pipelines.
  Status status = runtime->backend->synchronize();
  delete module;
  return report(__func__, status);
}

CachetStatus cachetKernelGet(CachetRuntime runtime, CachetModule module,
                             const char *name, CachetKernel *kernel) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(module && name && kernel, "null argument");
  *kernel = nullptr;
  auto it = module->kernels.find(name);
  if (it == module->kernels.end()) {
    auto impl = std::make_unique<CachetKernelImpl>();
    Status status = safely([&] {
      return runtime->backend->getKernel(*module->module, name, impl->kernel);
    });
    if (!status.ok())
      return report(__func__, status);
    it = module->kernels.emplace(name, std::move(impl)).first;
  }
  *kernel = it->second.get();
  return CACHET_SUCCESS;
}

CachetStatus cachetKernelGetInfo(CachetKernel kernel, CachetKernelInfo *info) {
  CACHET_CHECK_ARG(kernel && info, "null argument");
  *info = kernel->kernel->getInfo();
  return CACHET_SUCCESS;
}

CachetStatus cachetLaunch(CachetRuntime runtime, CachetKernel kernel,
                          const uint32_t grid[3], const CachetBinding *bindings,
                          uint32_t numBindings, const void *pushConstants,
                          uint32_t pushBytes) {
  const uint32_t kernelBlock[3] = {0, 0, 0};
  return launchWithBindings(__func__, runtime, kernel, grid, kernelBlock,
                            bindings, numBindings, pushConstants, pushBytes);
}

CachetStatus
cachetLaunchWithBlock(CachetRuntime runtime, CachetKernel kernel,
                      const uint32_t grid[3], const uint32_t block[3],
                      const CachetBinding *bindings, uint32_t numBindings,
                      const void *pushConstants, uint32_t pushBytes) {
  return launchWithBindings(__func__, runtime, kernel, grid, block, bindings,
                            numBindings, pushConstants, pushBytes);
}

CachetStatus cachetLaunchKernel(CachetRuntime runtime, CachetKernel kernel,
                                const uint32_t grid[3], const uint32_t block[3],
                                uint32_t sharedBytes, void **params,
                                uint32_t numParams, uint32_t flags) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(kernel && grid && block, "null argument");
  CACHET_CHECK_ARG(params || !numParams, "null parameters");
  CACHET_CHECK_ARG(!(flags & ~uint32_t(CACHET_LAUNCH_PDL)),
                   "unknown launch flags " + std::to_string(flags));
  for (uint32_t i = 0; i < numParams; ++i)
    CACHET_CHECK_ARG(params[i],
                     "parameter " + std::to_string(i) + " is a null pointer");
  // An empty list still selects the parameter-list path.
  void *none = nullptr;
  LaunchConfig config;
  std::copy(grid, grid + 3, config.grid);
  std::copy(block, block + 3, config.block);
  config.sharedBytes = sharedBytes;
  config.params = numParams ? params : &none;
  config.numParams = numParams;
  config.flags = flags;
  return report(__func__, safely([&] {
                  return runtime->backend->launch(*kernel->kernel, config);
                }));
}

CachetStatus cachetEventCreate(CachetRuntime runtime, CachetEvent *event) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(event, "null result pointer");
  *event = nullptr;
  auto impl = std::make_unique<CachetEventImpl>();
  Status status =
      safely([&] { return runtime->backend->createEvent(impl->event); });
  if (!status.ok())
    return report(__func__, status);
  *event = impl.release();
  runtime->events.insert(*event);
  return CACHET_SUCCESS;
}

CachetStatus cachetEventRecord(CachetRuntime runtime, CachetEvent event) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(event, "null event");
  return report(__func__, runtime->backend->recordEvent(*event->event));
}

CachetStatus cachetEventTimestampNs(CachetRuntime runtime, CachetEvent event,
                                    uint64_t *ns) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(event && ns, "null argument");
  return report(__func__,
                runtime->backend->eventTimestampNs(*event->event, ns));
}

CachetStatus cachetEventElapsedNs(CachetRuntime runtime, CachetEvent start,
                                  CachetEvent end, uint64_t *ns) {
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(start && end && ns, "null argument");
  return report(__func__, runtime->backend->eventElapsedNs(*start->event,
                                                           *end->event, ns));
}

CachetStatus cachetEventDestroy(CachetRuntime runtime, CachetEvent event) {
  if (!event)
    return CACHET_SUCCESS;
  CACHET_LOCK(runtime);
  CACHET_CHECK_ARG(runtime->events.erase(event),
                   "the event does not belong to this runtime");
  // A recorded timestamp write may still be pending.
  Status status = runtime->backend->synchronize();
  delete event;
  return report(__func__, status);
}

} // extern "C"
