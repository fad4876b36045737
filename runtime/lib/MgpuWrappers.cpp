//===- MgpuWrappers.cpp - The upstream mgpu* ABI on libcachet_runtime -----===//
//
// The functions that MLIR's `gpu-to-llvm` lowering calls (signatures of LLVM
// 22), implemented on the C API, so IR lowered upstream runs under
// `mlir-runner --shared-libs=libcachet_runtime.so`.
//
// One process-wide runtime is created on first use, on the backend named by
// cachetMgpuSetBackend, else $CACHET_BACKEND, else Vulkan.
//
// Vulkan: kernels take their arguments as upstream's Vulkan convention has
// them (`gpu-to-llvm{use-bare-pointers-for-kernels
// intersperse-sizes-for-kernels}`): params = {&ptr0, &bytes0, &ptr1,
// &bytes1, ...}, each pair bound as storage buffer i. A pointer from
// mgpuMemAlloc is bound in place (its memory is host-visible device memory,
// so the host may also read it after a synchronize); any other pointer is
// host memory, copied to the device for the launch and back after it.
// mgpuMemcpy and mgpuMemset* into or out of mgpuMemAlloc memory go through
// the runtime's transfers, not the host mapping: on a discrete GPU that
// mapping is the PCIe BAR, which the host writes slowly and reads uncached,
// and the runtime copies through staging there instead.
//
// CUDA and HIP: as upstream's CudaRuntimeWrappers / RocmRuntimeWrappers.
// Kernels take the CUDA convention (params passed on as kernelParams);
// mgpuMemAlloc returns a device address; mgpuMemcpy and mgpuMemset* accept
// device addresses from mgpuMemAlloc and host pointers.
//
// Streams are the runtime's single in-order queue. Errors are printed to
// stderr with the name of the call, and the first one is kept for
// cachetMgpuTakeError; nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "cachet/runtime.h"

#include "Backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Allocation {
  CachetBuffer buffer;
  uint64_t bytes;
};

/// The process-wide runtime and the host pointers of its mgpu allocations.
struct MgpuState {
  std::mutex mutex;
  CachetRuntime runtime = nullptr;
  bool failed = false;
  /// The backend requested by cachetMgpuSetBackend (empty: not set).
  std::string requested;
  /// The backend of `runtime` once created ("vulkan", "cuda", "hip").
  std::string backend;
  /// Keyed by the mapped host address of each allocation.
  std::map<uintptr_t, Allocation> allocations;
  /// Resident host buffers (cachetMgpuBindResident): host address to its
  /// device copy and size.
  std::map<uintptr_t, std::pair<void *, uint64_t>> resident;
  /// Bytes in `allocations` now, and the most since the last reset
  /// (cachetMgpuMemoryUsage).
  uint64_t allocatedBytes = 0, peakBytes = 0;
  /// CUDA and HIP: freed device allocations kept for reuse, by size, with
  /// their device addresses. Every launch and copy is recorded on the
  /// backend's one stream, so memory freed after the work that used it
  /// can be handed to later work at once; cuMemFree / hipFree would
  /// instead wait for the device at every free (a decode step of a 32-layer
  /// model frees about a thousand temporaries).
  std::multimap<uint64_t, std::pair<CachetBuffer, void *>> freed;
  uint64_t freedBytes = 0;
};

MgpuState &state() {
  static MgpuState *instance = new MgpuState();
  return *instance;
}

/// CACHET_MGPU_PROFILE=1: the host time spent in each mgpu entry point and
/// its calls, summed over the process and printed to stderr at exit (where
/// a call's host time goes: recording launches, transfers, waits).
struct HostProfile {
  std::mutex mutex;
  std::map<std::string, std::pair<uint64_t, uint64_t>> byFunction;
};

HostProfile *hostProfile() {
  static HostProfile *profile = []() -> HostProfile * {
    const char *env = std::getenv("CACHET_MGPU_PROFILE");
    if (!env || std::strcmp(env, "1") != 0)
      return nullptr;
    std::atexit([] {
      HostProfile *p = hostProfile();
      std::lock_guard<std::mutex> lock(p->mutex);
      std::fprintf(stderr, "libcachet_runtime: CACHET_MGPU_PROFILE: host "
                           "time per mgpu function (ms, calls, us/call)\n");
      for (const auto &[name, entry] : p->byFunction)
        std::fprintf(stderr, "  %-28s %10.3f ms %8llu calls %9.2f us\n",
                     name.c_str(), entry.first / 1e6,
                     static_cast<unsigned long long>(entry.second),
                     entry.second ? entry.first / 1e3 / entry.second : 0.0);
    });
    return new HostProfile();
  }();
  return profile;
}

/// Adds the host time of its scope to `function`'s entry of the profile.
class ProfileScope {
public:
  explicit ProfileScope(const char *function)
      : function(hostProfile() ? function : nullptr) {
    if (this->function)
      start = std::chrono::steady_clock::now();
  }
  ~ProfileScope() {
    if (!function)
      return;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    HostProfile *p = hostProfile();
    std::lock_guard<std::mutex> lock(p->mutex);
    auto &entry = p->byFunction[function];
    entry.first += static_cast<uint64_t>(ns);
    ++entry.second;
  }

private:
  const char *function;
  std::chrono::steady_clock::time_point start;
};

/// Returns the device copy of resident `host` if it is bound with at least
/// `bytes`, else null.
void *findResident(const void *host, uint64_t bytes) {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.resident.find(reinterpret_cast<uintptr_t>(host));
  if (it == s.resident.end() || it->second.second < bytes)
    return nullptr;
  return it->second.first;
}

/// The first failure since the last cachetMgpuTakeError.
struct FirstError {
  std::mutex mutex;
  CachetStatus status = CACHET_SUCCESS;
  std::string message;
};

FirstError &firstError() {
  static FirstError *instance = new FirstError();
  return *instance;
}

/// Prints a failure of `function` (of kind `status`) and keeps it if it is
/// the first since the last cachetMgpuTakeError.
void reportError(const char *function, const char *what, CachetStatus status) {
  std::fprintf(stderr, "libcachet_runtime: %s: %s\n", function, what);
  FirstError &first = firstError();
  std::lock_guard<std::mutex> lock(first.mutex);
  if (first.status == CACHET_SUCCESS) {
    first.status = status;
    first.message = std::string(function) + ": " + what;
  }
}

/// Returns the kind of the failure kept for cachetMgpuTakeError (without
/// taking it), CACHET_SUCCESS when there is none.
CachetStatus pendingStatus() {
  FirstError &first = firstError();
  std::lock_guard<std::mutex> lock(first.mutex);
  return first.status;
}

/// Returns the runtime (creating it on first use), or null after printing
/// why there is none.
CachetRuntime getRuntime(const char *function) {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.runtime && !s.failed) {
    const char *fromEnv = std::getenv("CACHET_BACKEND");
    std::string name = !s.requested.empty()  ? s.requested
                       : fromEnv && *fromEnv ? fromEnv
                                             : "vulkan";
    CachetDeviceInfo info;
    CachetStatus status = cachetRuntimeCreate(name.c_str(), 0, &s.runtime);
    if (status == CACHET_SUCCESS)
      status = cachetGetDeviceInfo(s.runtime, &info);
    if (status != CACHET_SUCCESS) {
      s.failed = true;
      s.runtime = nullptr;
      reportError(function, cachetGetLastError(), status);
    } else {
      s.backend = info.backend;
    }
  } else if (s.failed) {
    reportError(function, "no runtime (its creation failed)",
                CACHET_ERROR_NO_DEVICE);
  }
  return s.runtime;
}

/// Returns true when the mgpu runtime is the CUDA one.
bool usesCuda() {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.backend == "cuda";
}

/// Returns true for a CUDA or HIP backend (device addresses, the CUDA kernel
/// convention). The caller holds MgpuState's lock.
bool isDeviceAddressBackend(const MgpuState &s) {
  return s.backend == "cuda" || s.backend == "hip";
}

/// Returns true when the mgpu runtime is a CUDA or HIP one.
bool usesDeviceAddresses() {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return isDeviceAddressBackend(s);
}

/// Returns the largest range one binding may cover on `runtime`'s device.
uint64_t maxBindingBytes(CachetRuntime runtime) {
  static uint64_t limit = [runtime] {
    CachetDeviceInfo info;
    return cachetGetDeviceInfo(runtime, &info) == CACHET_SUCCESS
               ? info.maxBindingBytes
               : uint64_t(128) << 20;
  }();
  return limit;
}

/// Reports a failed runtime call; returns true if `status` is a failure.
bool failed(const char *function, CachetStatus status) {
  if (status == CACHET_SUCCESS)
    return false;
  reportError(function, cachetGetLastError(), status);
  return true;
}

/// Finds the allocation that holds [ptr, ptr + bytes).
bool findAllocation(const void *ptr, uint64_t bytes, CachetBuffer &buffer,
                    uint64_t &offset, uint64_t *remaining = nullptr) {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto address = reinterpret_cast<uintptr_t>(ptr);
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin())
    return false;
  --it;
  uint64_t start = address - it->first;
  if (start > it->second.bytes || bytes > it->second.bytes - start)
    return false;
  buffer = it->second.buffer;
  offset = start;
  if (remaining)
    *remaining = it->second.bytes - start;
  return true;
}

/// One launch of mgpuLaunchKernel and cachetMgpuLaunchKernelEx, reported as
/// `caller`.
void launchNow(const char *caller, void *function, intptr_t gridX,
               intptr_t gridY, intptr_t gridZ, intptr_t blockX, intptr_t blockY,
               intptr_t blockZ, int32_t smem, void **params, void **extra,
               size_t paramsCount, uint32_t flags) {
  CachetRuntime runtime = getRuntime(caller);
  if (!runtime)
    return;
  auto *kernel = static_cast<CachetKernel>(function);
  const uint32_t grid[3] = {static_cast<uint32_t>(gridX),
                            static_cast<uint32_t>(gridY),
                            static_cast<uint32_t>(gridZ)};
  const uint32_t block[3] = {static_cast<uint32_t>(blockX),
                             static_cast<uint32_t>(blockY),
                             static_cast<uint32_t>(blockZ)};
  if (usesDeviceAddresses()) {
    if (extra) {
      reportError(caller,
                  "'extra' kernel arguments are not supported; pass params",
                  CACHET_ERROR_UNSUPPORTED);
      return;
    }
    failed(caller,
           cachetLaunchKernel(runtime, kernel, grid, block,
                              static_cast<uint32_t>(smem), params,
                              static_cast<uint32_t>(paramsCount), flags));
    return;
  }
  // Vulkan: PDL is a hint the single in-order queue does not need.
  if (smem != 0) {
    reportError(caller,
                "dynamic shared memory is not supported on Vulkan; the "
                "shader declares its workgroup memory",
                CACHET_ERROR_UNSUPPORTED);
    return;
  }
  if (paramsCount % 2 != 0 || (paramsCount && !params)) {
    reportError(caller,
                "kernel parameters are not (pointer, size) pairs: lower with "
                "gpu-to-llvm{use-bare-pointers-for-kernels=1 "
                "intersperse-sizes-for-kernels=1}",
                CACHET_ERROR_ARGUMENT_MISMATCH);
    return;
  }

  // Host memory that is not an mgpu allocation is staged per launch.
  struct Staged {
    CachetBuffer buffer;
    void *host;
    uint64_t bytes;
  };
  std::vector<Staged> staged;
  std::vector<CachetBinding> bindings;
  bool ok = true;
  for (size_t i = 0; ok && i < paramsCount; i += 2) {
    void *ptr = *static_cast<void **>(params[i]);
    uint64_t bytes = *static_cast<size_t *>(params[i + 1]);
    CachetBinding binding = {nullptr, 0, bytes};
    uint64_t remaining = 0;
    if (findAllocation(ptr, bytes, binding.buffer, binding.offset,
                       &remaining)) {
      // A view of a buffer (a subview with a static offset) is passed as
      // the buffer's base pointer and the view's size; the kernel adds the
      // offset itself. Bind up to the end of the allocation so the view's
      // elements are in range, within the device's binding limit.
      binding.range = std::max<uint64_t>(
          bytes, std::min<uint64_t>(remaining, maxBindingBytes(runtime)));
    } else {
      Staged copy = {nullptr, ptr, bytes};
      ok = !failed(caller,
                   cachetBufferAlloc(runtime, bytes ? bytes : 4, &copy.buffer));
      if (ok) {
        staged.push_back(copy);
        binding.buffer = copy.buffer;
        ok = !failed(caller,
                     cachetBufferUpload(runtime, copy.buffer, 0, ptr, bytes));
      }
    }
    bindings.push_back(binding);
  }
  if (ok)
    ok = !failed(caller,
                 cachetLaunchWithBlock(
                     runtime, kernel, grid, block, bindings.data(),
                     static_cast<uint32_t>(bindings.size()), nullptr, 0));
  for (const Staged &copy : staged) {
    if (ok)
      ok = !failed(caller, cachetBufferDownload(runtime, copy.buffer, 0,
                                                copy.host, copy.bytes));
    failed(caller, cachetBufferFree(runtime, copy.buffer));
  }
}

/// Launch flags that cachetMgpuSetNextLaunchFlags set for this thread's next
/// launch (compiled host code marks PDL launches so).
thread_local uint32_t nextLaunchFlags = 0;

/// The kernel span of cachetMgpuKernelSpanBegin / cachetMgpuKernelSpanNs:
/// a mark before the first launch and one after the latest. The end mark is
/// queued lazily, by the next call that queues or waits for work
/// (getQueueRuntime; `pending` until then): a mark between two launches
/// would keep a programmatic dependent launch from starting before the
/// previous kernel ends, and separates launches that the compiled code
/// queues back to back. Calls that queue nothing (allocations, stream,
/// event and function handles) leave it pending.
struct KernelSpan {
  bool active = false;
  bool started = false;
  bool pending = false;
  /// Kernels launched since cachetMgpuKernelSpanBegin (not the span's own
  /// wait kernel).
  uint64_t launches = 0;
  CachetEvent first = nullptr;
  CachetEvent last = nullptr;
};

KernelSpan &kernelSpan() {
  static KernelSpan *span = new KernelSpan();
  return *span;
}

/// A one-thread kernel that waits `ns` nanoseconds of the global timer.
/// Queued before a kernel span's first mark on CUDA: the device is then
/// busy while the host records the mark and launches the first kernel, so
/// the mark completes when that kernel can start (on an idle device it
/// would complete at once, and the span would hold the host's launch time:
/// 20-30 us on the H200, docs/BENCHMARKS.md).
constexpr char kSpanWaitPtx[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry cachet_span_wait(.param .u64 ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
WAIT:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra WAIT;
  ret;
}
)";

/// How long the span's wait kernel keeps the device busy: longer than the
/// host takes to record a mark and launch a kernel.
constexpr uint64_t kSpanWaitNs = 200000;

/// Queues the span's wait kernel (CUDA only; the PTX is loaded once).
/// Returns false, after printing why, if it cannot.
bool queueSpanWait(const char *caller, CachetRuntime runtime) {
  static CachetKernel kernel = nullptr;
  static bool failedOnce = false;
  if (failedOnce)
    return false;
  if (!kernel) {
    CachetModule module = nullptr;
    if (failed(caller, cachetModuleLoad(runtime, kSpanWaitPtx,
                                        sizeof(kSpanWaitPtx) - 1, &module)) ||
        failed(caller,
               cachetKernelGet(runtime, module, "cachet_span_wait", &kernel))) {
      failedOnce = true;
      return false;
    }
  }
  uint64_t ns = kSpanWaitNs;
  void *params[] = {&ns};
  const uint32_t one[3] = {1, 1, 1};
  if (failed(caller,
             cachetLaunchKernel(runtime, kernel, one, one, 0, params, 1, 0))) {
    failedOnce = true;
    return false;
  }
  return true;
}

/// The launch of mgpuLaunchKernel and cachetMgpuLaunchKernelEx: adds the
/// flags set for it and the kernel-span marks around it.
void launch(const char *caller, void *function, intptr_t gridX, intptr_t gridY,
            intptr_t gridZ, intptr_t blockX, intptr_t blockY, intptr_t blockZ,
            int32_t smem, void **params, void **extra, size_t paramsCount,
            uint32_t flags) {
  flags |= std::exchange(nextLaunchFlags, 0u);
  KernelSpan &span = kernelSpan();
  CachetRuntime runtime = span.active ? getRuntime(caller) : nullptr;
  if (runtime && !span.started) {
    if (usesCuda())
      queueSpanWait(caller, runtime);
    span.started = !failed(caller, cachetEventRecord(runtime, span.first));
  }
  launchNow(caller, function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
            params, extra, paramsCount, flags);
  span.pending = runtime && span.started;
  if (span.active)
    ++span.launches;
}

/// getRuntime for the calls that queue or wait for work: first queues the
/// kernel span's pending end mark, so it follows the latest launch and
/// precedes whatever this call queues or waits for.
CachetRuntime getQueueRuntime(const char *function) {
  CachetRuntime runtime = getRuntime(function);
  KernelSpan &span = kernelSpan();
  if (runtime && span.pending) {
    span.pending = false;
    failed(function, cachetEventRecord(runtime, span.last));
  }
  return runtime;
}

struct MgpuStream {};
struct MgpuEvent {
  CachetEvent event = nullptr;
};

} // namespace

extern "C" {

/// Loads a kernel module of `gpuBlobSize` bytes (SPIR-V on Vulkan; cubin,
/// fatbin or PTX on CUDA; a code object on HIP).
CACHET_RT_EXPORT void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  ProfileScope profile(__func__);
  CachetRuntime runtime = getQueueRuntime(__func__);
  CachetModule module = nullptr;
  if (runtime &&
      failed(__func__, cachetModuleLoad(runtime, data, gpuBlobSize, &module)))
    return nullptr;
  return module;
}

/// Loads a NUL-terminated PTX module, as gpu-to-llvm emits for
/// gpu.binary objects in assembly format (CUDA only; the driver's default
/// JIT optimization level is used, `optLevel` is ignored).
CACHET_RT_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ProfileScope profile(__func__);
  CachetRuntime runtime = getQueueRuntime(__func__);
  if (!runtime)
    return nullptr;
  if (!data) {
    reportError(__func__, "null module", CACHET_ERROR_INVALID_ARGUMENT);
    return nullptr;
  }
  CachetDeviceInfo info;
  if (failed(__func__, cachetGetDeviceInfo(runtime, &info)))
    return nullptr;
  if (std::strcmp(info.backend, "cuda") != 0) {
    reportError(__func__,
                (std::string("PTX modules need the cuda backend, "
                             "not ") +
                 info.backend)
                    .c_str(),
                CACHET_ERROR_UNSUPPORTED);
    return nullptr;
  }
  CachetModule module = nullptr;
  if (failed(__func__,
             cachetModuleLoad(runtime, data,
                              std::strlen(static_cast<char *>(data)), &module)))
    return nullptr;
  return module;
}

/// Unloads a module from mgpuModuleLoad.
CACHET_RT_EXPORT void mgpuModuleUnload(void *module) {
  ProfileScope profile(__func__);
  if (CachetRuntime runtime = getQueueRuntime(__func__))
    failed(__func__,
           cachetModuleUnload(runtime, static_cast<CachetModule>(module)));
}

/// Returns the kernel `name` of `module`.
CACHET_RT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  ProfileScope profile(__func__);
  CachetRuntime runtime = getRuntime(__func__);
  CachetKernel kernel = nullptr;
  if (runtime &&
      failed(__func__,
             cachetKernelGet(runtime, static_cast<CachetModule>(module), name,
                             &kernel)))
    return nullptr;
  return kernel;
}

/// Launches `function` on a grid of blocks. On Vulkan the block size must
/// match the workgroup size in the shader, `smem` must be 0 and params are
/// (pointer, size) pairs; on CUDA and HIP params are the kernel's parameters
/// (the CUDA convention) and `smem` is the dynamic shared memory. `extra`
/// is not supported.
CACHET_RT_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                       intptr_t gridY, intptr_t gridZ,
                                       intptr_t blockX, intptr_t blockY,
                                       intptr_t blockZ, int32_t smem,
                                       void *stream, void **params,
                                       void **extra, size_t paramsCount) {
  ProfileScope profile(__func__);
  launch(__func__, function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
         params, extra, paramsCount, 0);
}

void cachetMgpuLaunchKernelEx(void *function, intptr_t gridX, intptr_t gridY,
                              intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                              intptr_t blockZ, int32_t smem, void *stream,
                              void **params, void **extra, size_t paramsCount,
                              uint32_t flags) {
  launch(__func__, function, gridX, gridY, gridZ, blockX, blockY, blockZ, smem,
         params, extra, paramsCount, flags);
}

/// Returns a stream: every stream is the runtime's one in-order queue.
CACHET_RT_EXPORT void *mgpuStreamCreate() {
  ProfileScope profile(__func__);
  getRuntime(__func__);
  return new MgpuStream();
}

/// Destroys a stream from mgpuStreamCreate.
CACHET_RT_EXPORT void mgpuStreamDestroy(void *stream) {
  ProfileScope profile(__func__);
  delete static_cast<MgpuStream *>(stream);
}

/// Waits for all work.
CACHET_RT_EXPORT void mgpuStreamSynchronize(void *stream) {
  ProfileScope profile(__func__);
  if (CachetRuntime runtime = getQueueRuntime(__func__))
    failed(__func__, cachetSynchronize(runtime));
}

/// Orders `stream` after `event`: a no-op on one in-order queue.
CACHET_RT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  ProfileScope profile(__func__);
}

/// Creates an event (a device timestamp mark).
CACHET_RT_EXPORT void *mgpuEventCreate() {
  ProfileScope profile(__func__);
  auto *event = new MgpuEvent();
  if (CachetRuntime runtime = getRuntime(__func__))
    failed(__func__, cachetEventCreate(runtime, &event->event));
  return event;
}

/// Destroys an event from mgpuEventCreate.
CACHET_RT_EXPORT void mgpuEventDestroy(void *event) {
  ProfileScope profile(__func__);
  auto *mgpuEvent = static_cast<MgpuEvent *>(event);
  if (!mgpuEvent)
    return;
  if (CachetRuntime runtime = getRuntime(__func__))
    failed(__func__, cachetEventDestroy(runtime, mgpuEvent->event));
  delete mgpuEvent;
}

/// Waits until the work before the event's record has completed.
CACHET_RT_EXPORT void mgpuEventSynchronize(void *event) {
  ProfileScope profile(__func__);
  if (CachetRuntime runtime = getQueueRuntime(__func__))
    failed(__func__, cachetSynchronize(runtime));
}

/// Records the event after the work recorded so far.
CACHET_RT_EXPORT void mgpuEventRecord(void *event, void *stream) {
  ProfileScope profile(__func__);
  auto *mgpuEvent = static_cast<MgpuEvent *>(event);
  CachetRuntime runtime = getQueueRuntime(__func__);
  if (runtime && mgpuEvent && mgpuEvent->event)
    failed(__func__, cachetEventRecord(runtime, mgpuEvent->event));
}

/// Allocates `sizeBytes` of device memory. Vulkan: host-visible memory,
/// returned as its host address (which kernels get bound to and mgpuMemcpy
/// copies through). CUDA and HIP: returns the device address.
CACHET_RT_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                    bool isHostShared) {
  ProfileScope profile(__func__);
  CachetRuntime runtime = getRuntime(__func__);
  if (!runtime)
    return nullptr;
  CachetBuffer buffer = nullptr;
  void *ptr = nullptr;
  uint64_t bytes = sizeBytes ? sizeBytes : 4;
  if (usesDeviceAddresses()) {
    if (isHostShared) {
      reportError(__func__,
                  "host-shared (managed) memory is not supported on CUDA "
                  "and HIP",
                  CACHET_ERROR_UNSUPPORTED);
      return nullptr;
    }
    {
      // A freed allocation of the same size, if one is kept.
      MgpuState &s = state();
      std::lock_guard<std::mutex> lock(s.mutex);
      auto it = s.freed.find(bytes);
      if (it != s.freed.end()) {
        buffer = it->second.first;
        ptr = it->second.second;
        s.freed.erase(it);
        s.freedBytes -= bytes;
        s.allocations[reinterpret_cast<uintptr_t>(ptr)] = {buffer, bytes};
        s.allocatedBytes += bytes;
        s.peakBytes = std::max(s.peakBytes, s.allocatedBytes);
        return ptr;
      }
    }
    uint64_t address = 0;
    if (cachetBufferAlloc(runtime, bytes, &buffer) != CACHET_SUCCESS) {
      // Out of memory, perhaps for the kept allocations: free them, retry.
      std::vector<CachetBuffer> kept;
      {
        MgpuState &s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        for (auto &entry : s.freed)
          kept.push_back(entry.second.first);
        s.freed.clear();
        s.freedBytes = 0;
      }
      for (CachetBuffer b : kept)
        cachetBufferFree(runtime, b);
      if (failed(__func__, cachetBufferAlloc(runtime, bytes, &buffer)))
        return nullptr;
    }
    if (failed(__func__,
               cachetBufferDeviceAddress(runtime, buffer, &address))) {
      cachetBufferFree(runtime, buffer);
      return nullptr;
    }
    ptr = reinterpret_cast<void *>(uintptr_t(address));
  } else {
    if (failed(__func__,
               cachetBufferAllocEx(runtime, bytes, CACHET_BUFFER_HOST_VISIBLE,
                                   &buffer)))
      return nullptr;
    if (failed(__func__, cachetBufferMap(runtime, buffer, &ptr))) {
      cachetBufferFree(runtime, buffer);
      return nullptr;
    }
  }
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.allocations[reinterpret_cast<uintptr_t>(ptr)] = {buffer, bytes};
  s.allocatedBytes += bytes;
  s.peakBytes = std::max(s.peakBytes, s.allocatedBytes);
  return ptr;
}

/// Frees memory from mgpuMemAlloc.
CACHET_RT_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  ProfileScope profile(__func__);
  if (!ptr)
    return;
  CachetRuntime runtime = getQueueRuntime(__func__);
  MgpuState &s = state();
  CachetBuffer buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == s.allocations.end()) {
      reportError(__func__, "pointer was not returned by mgpuMemAlloc",
                  CACHET_ERROR_NOT_FOUND);
      return;
    }
    buffer = it->second.buffer;
    uint64_t bytes = it->second.bytes;
    s.allocatedBytes -= bytes;
    s.allocations.erase(it);
    if (isDeviceAddressBackend(s) &&
        s.freedBytes + bytes <= cachet::runtime::getFreedCacheLimit()) {
      s.freed.insert({bytes, {buffer, ptr}});
      s.freedBytes += bytes;
      return;
    }
  }
  if (runtime)
    failed(__func__, cachetBufferFree(runtime, buffer));
}

/// Copies `sizeBytes` after the work recorded so far. Each side is
/// mgpuMemAlloc memory (on Vulkan also host addressable, but copied by the
/// runtime) or host memory.
CACHET_RT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                 void *stream) {
  ProfileScope profile(__func__);
  CachetRuntime runtime = getQueueRuntime(__func__);
  if (!runtime || !sizeBytes)
    return;
  CachetBuffer dstBuffer = nullptr, srcBuffer = nullptr;
  uint64_t dstOffset = 0, srcOffset = 0;
  bool dstDevice = findAllocation(dst, sizeBytes, dstBuffer, dstOffset);
  bool srcDevice = findAllocation(src, sizeBytes, srcBuffer, srcOffset);
  if (dstDevice && srcDevice)
    failed(__func__, cachetBufferCopy(runtime, srcBuffer, srcOffset, dstBuffer,
                                      dstOffset, sizeBytes));
  else if (dstDevice)
    failed(__func__,
           cachetBufferUpload(runtime, dstBuffer, dstOffset, src, sizeBytes));
  else if (srcDevice)
    failed(__func__,
           cachetBufferDownload(runtime, srcBuffer, srcOffset, dst, sizeBytes));
  else if (!failed(__func__, cachetSynchronize(runtime)))
    std::memmove(dst, src, sizeBytes);
}

/// Sets `count` 32-bit words at `dst` to `value`.
CACHET_RT_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                   void *stream) {
  CachetRuntime runtime = getQueueRuntime(__func__);
  CachetBuffer buffer = nullptr;
  uint64_t offset = 0;
  if (runtime && findAllocation(dst, uint64_t(count) * 4, buffer, offset)) {
    failed(__func__, cachetBufferFill(runtime, buffer, offset,
                                      uint64_t(count) * 4, value));
    return;
  }
  if (!runtime || failed(__func__, cachetSynchronize(runtime)))
    return;
  auto *words = static_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
}

/// Sets `count` 16-bit words at `dst` to `value`.
CACHET_RT_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                   size_t count, void *stream) {
  CachetRuntime runtime = getQueueRuntime(__func__);
  CachetBuffer buffer = nullptr;
  uint64_t offset = 0;
  if (runtime && findAllocation(dst, uint64_t(count) * 2, buffer, offset)) {
    std::vector<uint16_t> halves(count, value);
    failed(__func__, cachetBufferUpload(runtime, buffer, offset, halves.data(),
                                        uint64_t(count) * 2));
    return;
  }
  if (!runtime || failed(__func__, cachetSynchronize(runtime)))
    return;
  auto *halves = static_cast<uint16_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    halves[i] = value;
}

/// Selects the device of later calls; only the default device (0) is
/// supported (CACHET_VULKAN_DEVICE, CACHET_CUDA_DEVICE or CACHET_HIP_DEVICE
/// picks another).
CACHET_RT_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  ProfileScope profile(__func__);
  if (device != 0)
    reportError(__func__,
                "only device 0 is supported; set "
                "CACHET_VULKAN_DEVICE, CACHET_CUDA_DEVICE or "
                "CACHET_HIP_DEVICE to pick another device",
                CACHET_ERROR_UNSUPPORTED);
}

CachetStatus cachetMgpuSetBackend(const char *backend) {
  if (!backend) {
    reportError(__func__, "null backend name", CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  std::string name = backend;
  if (name != "vulkan" && name != "cuda" && name != "hip" && name != "auto") {
    reportError(
        __func__,
        ("unknown backend '" + name + "' (known: vulkan, cuda, hip, auto)")
            .c_str(),
        CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.runtime || s.failed) {
    if (name == s.backend || name == s.requested)
      return CACHET_SUCCESS;
    reportError(__func__,
                ("the mgpu runtime already uses '" +
                 (s.backend.empty() ? s.requested : s.backend) +
                 "'; name the backend before the first mgpu call")
                    .c_str(),
                CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  s.requested = name;
  return CACHET_SUCCESS;
}

CachetStatus cachetMgpuGetRuntime(CachetRuntime *runtime) {
  if (!runtime)
    return CACHET_ERROR_INVALID_ARGUMENT;
  *runtime = getQueueRuntime(__func__);
  return *runtime ? CACHET_SUCCESS : CACHET_ERROR_NO_DEVICE;
}

CachetStatus cachetMgpuTakeError(char *message, size_t capacity) {
  FirstError &first = firstError();
  std::lock_guard<std::mutex> lock(first.mutex);
  CachetStatus status = first.status;
  if (message && capacity)
    std::snprintf(message, capacity, "%s", first.message.c_str());
  first.status = CACHET_SUCCESS;
  first.message.clear();
  return status;
}

CachetStatus cachetMgpuLookup(const void *ptr, CachetBuffer *buffer,
                              uint64_t *offset) {
  if (!buffer || !offset)
    return CACHET_ERROR_INVALID_ARGUMENT;
  return findAllocation(ptr, 0, *buffer, *offset) ? CACHET_SUCCESS
                                                  : CACHET_ERROR_NOT_FOUND;
}

CachetStatus cachetMgpuMemcpy2D(void *dst, uint64_t dstPitch, const void *src,
                                uint64_t srcPitch, uint64_t rowBytes,
                                uint64_t rows) {
  CachetRuntime runtime = getQueueRuntime(__func__);
  if (!runtime)
    return CACHET_ERROR_NO_DEVICE;
  if (!rows)
    return CACHET_SUCCESS;
  if (!dst || !src || rowBytes > dstPitch || rowBytes > srcPitch) {
    reportError(__func__, "null pointer, or a pitch below the row size",
                CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  CachetBuffer buffer = nullptr;
  uint64_t offset = 0;
  if (findAllocation(dst, rows * dstPitch, buffer, offset)) {
    CachetStatus status = cachetBufferUpload2D(
        runtime, buffer, offset, dstPitch, src, srcPitch, rowBytes, rows);
    failed(__func__, status);
    return status;
  }
  CachetStatus status = cachetSynchronize(runtime);
  if (failed(__func__, status))
    return status;
  auto *out = static_cast<char *>(dst);
  auto *in = static_cast<const char *>(src);
  for (uint64_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * dstPitch, in + r * srcPitch, rowBytes);
    std::memset(out + r * dstPitch + rowBytes, 0, dstPitch - rowBytes);
  }
  return CACHET_SUCCESS;
}

void *cachetMgpuResident(void **slot, const void *host, uint64_t bytes) {
  if (!slot || (!host && bytes)) {
    reportError(__func__, "null slot or host pointer",
                CACHET_ERROR_INVALID_ARGUMENT);
    return nullptr;
  }
  // One lock for every slot: two threads calling a function for the first
  // time upload its constants once.
  static std::mutex residentMutex;
  std::lock_guard<std::mutex> lock(residentMutex);
  if (*slot)
    return *slot;
  void *device = mgpuMemAlloc(bytes, nullptr, false);
  if (!device)
    return nullptr;
  mgpuMemcpy(device, const_cast<void *>(host), bytes, nullptr);
  *slot = device;
  return device;
}

CachetStatus cachetMgpuBindResident(const void *host, uint64_t bytes,
                                    void **device) {
  if (!host || !device || !bytes) {
    reportError(__func__, "null host or device pointer, or zero bytes",
                CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  if (findResident(host, 0)) {
    reportError(__func__, "the host buffer is already resident",
                CACHET_ERROR_INVALID_ARGUMENT);
    return CACHET_ERROR_INVALID_ARGUMENT;
  }
  void *copy = mgpuMemAlloc(bytes, nullptr, false);
  if (!copy)
    return pendingStatus() == CACHET_SUCCESS ? CACHET_ERROR_OUT_OF_MEMORY
                                             : pendingStatus();
  mgpuMemcpy(copy, const_cast<void *>(host), bytes, nullptr);
  CachetStatus status = pendingStatus();
  if (status != CACHET_SUCCESS) {
    mgpuMemFree(copy, nullptr);
    return status;
  }
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.resident[reinterpret_cast<uintptr_t>(host)] = {copy, bytes};
  *device = copy;
  return CACHET_SUCCESS;
}

CachetStatus cachetMgpuSyncResident(void *host) {
  MgpuState &s = state();
  std::pair<void *, uint64_t> entry;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.resident.find(reinterpret_cast<uintptr_t>(host));
    if (it == s.resident.end()) {
      reportError(__func__, "the host buffer is not resident",
                  CACHET_ERROR_NOT_FOUND);
      return CACHET_ERROR_NOT_FOUND;
    }
    entry = it->second;
  }
  mgpuMemcpy(host, entry.first, entry.second, nullptr);
  return pendingStatus();
}

CachetStatus cachetMgpuUnbindResident(const void *host) {
  MgpuState &s = state();
  void *copy = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.resident.find(reinterpret_cast<uintptr_t>(host));
    if (it == s.resident.end()) {
      reportError(__func__, "the host buffer is not resident",
                  CACHET_ERROR_NOT_FOUND);
      return CACHET_ERROR_NOT_FOUND;
    }
    copy = it->second.first;
    s.resident.erase(it);
  }
  mgpuMemFree(copy, nullptr);
  return pendingStatus();
}

void *cachetMgpuArgument(const void *host, uint64_t bytes) {
  if (void *copy = findResident(host, bytes))
    return copy;
  void *copy = mgpuMemAlloc(bytes, nullptr, false);
  if (copy)
    mgpuMemcpy(copy, const_cast<void *>(host), bytes, nullptr);
  return copy;
}

void cachetMgpuArgumentEnd(void *host, void *device, uint64_t bytes,
                           int32_t written) {
  if (!device || findResident(host, bytes) == device)
    return;
  if (written)
    mgpuMemcpy(host, device, bytes, nullptr);
  mgpuMemFree(device, nullptr);
}

CachetStatus cachetMgpuSetNextLaunchFlags(uint32_t flags) {
  nextLaunchFlags = flags;
  return CACHET_SUCCESS;
}

int32_t cachetMgpuHasCooperativeMatrixF16(int32_t m, int32_t n, int32_t k) {
  CachetRuntime runtime = getRuntime(__func__);
  CachetCooperativeMatrixInfo info;
  if (!runtime ||
      failed(__func__, cachetGetCooperativeMatrixInfo(runtime, &info)) ||
      !info.enabled)
    return 0;
  std::string shapes = std::string(",") + info.shapes + ",";
  std::string shape = "," + std::to_string(m) + "x" + std::to_string(n) + "x" +
                      std::to_string(k) + ":f16->f32,";
  return shapes.find(shape) != std::string::npos ? 1 : 0;
}

CachetStatus cachetMgpuKernelSpanBegin(void) {
  CachetRuntime runtime = getRuntime(__func__);
  if (!runtime)
    return CACHET_ERROR_NO_DEVICE;
  KernelSpan &span = kernelSpan();
  for (CachetEvent *event : {&span.first, &span.last})
    if (!*event) {
      CachetStatus status = cachetEventCreate(runtime, event);
      if (failed(__func__, status))
        return status;
    }
  span.active = true;
  span.started = false;
  span.pending = false;
  span.launches = 0;
  return CACHET_SUCCESS;
}

CachetStatus cachetMgpuMemoryUsage(uint64_t *current, uint64_t *peak,
                                   int32_t resetPeak) {
  MgpuState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (current)
    *current = s.allocatedBytes;
  if (peak)
    *peak = s.peakBytes;
  if (resetPeak)
    s.peakBytes = s.allocatedBytes;
  return CACHET_SUCCESS;
}

CachetStatus cachetMgpuKernelSpanNs(uint64_t *ns) {
  CachetRuntime runtime = getQueueRuntime(__func__);
  if (!runtime)
    return CACHET_ERROR_NO_DEVICE;
  if (!ns)
    return CACHET_ERROR_INVALID_ARGUMENT;
  KernelSpan &span = kernelSpan();
  span.active = false;
  *ns = 0;
  if (!span.started)
    return CACHET_SUCCESS;
  CachetStatus status =
      cachetEventElapsedNs(runtime, span.first, span.last, ns);
  failed(__func__, status);
  return status;
}

CachetStatus cachetMgpuKernelSpanLaunches(uint64_t *launches) {
  if (!launches)
    return CACHET_ERROR_INVALID_ARGUMENT;
  *launches = kernelSpan().launches;
  return CACHET_SUCCESS;
}

CachetStatus cachetMgpuEventElapsedNs(void *start, void *end, uint64_t *ns) {
  CachetRuntime runtime = getQueueRuntime(__func__);
  auto *first = static_cast<MgpuEvent *>(start);
  auto *last = static_cast<MgpuEvent *>(end);
  if (!runtime)
    return CACHET_ERROR_NO_DEVICE;
  if (!first || !last || !ns)
    return CACHET_ERROR_INVALID_ARGUMENT;
  CachetStatus status =
      cachetEventElapsedNs(runtime, first->event, last->event, ns);
  failed(__func__, status);
  return status;
}

} // extern "C"
