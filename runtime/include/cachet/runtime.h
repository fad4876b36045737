/*===- cachet/runtime.h - C API of libcachet_runtime --------------*- C -*-===*\
|*                                                                            *|
|* The runtime that executes cachet's compiled output: device-resident        *|
|* buffers, pitched weights with a zero-filled strided 2D upload, a scratch   *|
|* arena, kernel modules (SPIR-V on Vulkan; cubin/PTX on CUDA; code objects   *|
|* on HIP), launches and device-side timing.                                  *|
|*                                                                            *|
|* Every function returns a CachetStatus. On failure, cachetGetLastError()    *|
|* returns a message of the form "<function>: <reason>" for the calling       *|
|* thread; nothing aborts the host process. Handles are opaque. A runtime is  *|
|* safe to use from several threads (calls are serialized).                   *|
\*===----------------------------------------------------------------------===*/

#ifndef CACHET_RUNTIME_H
#define CACHET_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define CACHET_RT_EXPORT __declspec(dllexport)
#else
#define CACHET_RT_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every runtime call. */
typedef enum CachetStatus {
  CACHET_SUCCESS = 0,
  /** A null handle, a null pointer, or a size or offset out of range. */
  CACHET_ERROR_INVALID_ARGUMENT = 1,
  /** No device of the requested backend (no driver, no physical device). */
  CACHET_ERROR_NO_DEVICE = 2,
  /** The backend or the device lacks a feature the call needs. */
  CACHET_ERROR_UNSUPPORTED = 3,
  /** Device or host memory exhausted, or above the device's allocation
   *  limit. */
  CACHET_ERROR_OUT_OF_MEMORY = 4,
  /** A kernel binary that is not valid SPIR-V (or not loadable). */
  CACHET_ERROR_INVALID_BINARY = 5,
  /** A kernel entry point that the module does not define (or a pointer
   *  that no mgpu allocation holds). */
  CACHET_ERROR_NOT_FOUND = 6,
  /** A launch whose buffer or push-constant arguments do not match the
   *  kernel. */
  CACHET_ERROR_ARGUMENT_MISMATCH = 7,
  /** A launch or kernel above a device limit: a binding larger than
   *  maxStorageBufferRange, a grid above maxComputeWorkGroupCount, too many
   *  push-constant bytes, bindings or invocations. */
  CACHET_ERROR_LIMIT_EXCEEDED = 8,
  /** A driver call failed; the message names it and its result. */
  CACHET_ERROR_BACKEND = 9,
} CachetStatus;

typedef struct CachetRuntimeImpl *CachetRuntime;
typedef struct CachetBufferImpl *CachetBuffer;
typedef struct CachetArenaImpl *CachetArena;
typedef struct CachetModuleImpl *CachetModule;
typedef struct CachetKernelImpl *CachetKernel;
typedef struct CachetEventImpl *CachetEvent;

/** Flags of cachetRuntimeCreate. */
enum {
  /** Move data through a staging buffer even where device memory is host
   *  visible (unified memory, as on lavapipe): exercises the discrete-GPU
   *  path. */
  CACHET_RUNTIME_FORCE_STAGING = 1u << 0,
  /** Vulkan: bind each launch's buffers through a descriptor set allocated
   *  and updated per launch even where the device has VK_KHR_push_descriptor
   *  (which pushes them into the command buffer): exercises the path of
   *  devices without it. */
  CACHET_RUNTIME_NO_PUSH_DESCRIPTORS = 1u << 1,
};

/** Flags of cachetBufferAllocEx. */
enum {
  /** Host-visible, persistently mapped memory (cachetBufferMap works). */
  CACHET_BUFFER_HOST_VISIBLE = 1u << 0,
};

/** What a device is and what it allows. */
typedef struct CachetDeviceInfo {
  char backend[16];
  char name[256];
  uint32_t vendorId;
  uint32_t deviceId;
  /** Largest range one buffer binding may cover (Vulkan:
   *  maxStorageBufferRange). */
  uint64_t maxBindingBytes;
  /** Largest single allocation. */
  uint64_t maxAllocationBytes;
  /** Size of the largest device-local memory heap. */
  uint64_t deviceMemoryBytes;
  /** Required alignment of a binding's offset. */
  uint64_t bindingOffsetAlignment;
  uint32_t maxPushConstantBytes;
  uint32_t subgroupSize;
  uint32_t maxWorkgroupSize[3];
  uint32_t maxWorkgroupInvocations;
  uint32_t maxWorkgroupCount[3];
  uint32_t maxSharedMemoryBytes;
  /** Non-zero when device memory is host visible (no staging copy needed). */
  int32_t unifiedMemory;
  /** Non-zero when cachetBufferDeviceAddress works. */
  int32_t bufferDeviceAddress;
  /** Non-zero when events can be timed. */
  int32_t timestamps;
  /** Nanoseconds per timestamp tick. */
  double timestampPeriodNs;
  /** Streaming multiprocessors (CUDA) or compute units (HIP); 0 on Vulkan. */
  uint32_t multiprocessorCount;
  /** Compute capability (CUDA: 9 and 0 on sm_90; HIP: the major and minor
   *  of the gfx target); 0 on Vulkan. */
  uint32_t computeCapabilityMajor;
  uint32_t computeCapabilityMinor;
  /** Bytes of L2 cache (0 where unknown). */
  uint64_t l2CacheBytes;
} CachetDeviceInfo;

/** The cooperative matrices (tensor cores) kernels may use on a device, from
 *  cachetGetCooperativeMatrixInfo. A struct of its own, so that
 *  CachetDeviceInfo keeps its size. */
typedef struct CachetCooperativeMatrixInfo {
  /** Non-zero when kernels may use cooperative matrices. Vulkan: the device
   *  has VK_KHR_cooperative_matrix, its cooperativeMatrix feature and compute
   *  shaders among its supported stages, and the runtime enabled it. */
  int32_t enabled;
  /** The subgroup-scope shapes the driver lists, comma-separated, in the
   *  notation of device profiles' coop_matrix ("MxNxK:A->C", A and B of one
   *  element type, C the result's): "16x16x16:f16->f32,16x16x16:f16->f16".
   *  Element types f16, f32, f64, i8..i64 and u8..u64; shapes with
   *  saturating accumulation, mixed A and B types or other types (bf16 and
   *  fp8 need extensions the runtime does not enable) are left out. ""
   *  when `enabled` is 0, and on CUDA and HIP, whose matrix shapes follow
   *  from the compute capability. */
  char shapes[1024];
} CachetCooperativeMatrixInfo;

/** Flags of cachetLaunchKernel and cachetMgpuLaunchKernelEx. */
enum {
  /** Programmatic dependent launch: the kernel may start while the previous
   *  kernel on the queue finishes (CUDA: cuLaunchKernelEx with
   *  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; the kernel waits
   *  with griddepcontrol.wait before reading its predecessor's results).
   *  A hint: backends without it (Vulkan, HIP, CUDA drivers before 12.0)
   *  launch in plain queue order. */
  CACHET_LAUNCH_PDL = 1u << 0,
};

/** One buffer argument of a launch: `range` bytes of `buffer` from `offset`
 *  (0 = to the end of the buffer). The offset must be a multiple of
 *  CachetDeviceInfo::bindingOffsetAlignment; the range must not exceed
 *  CachetDeviceInfo::maxBindingBytes (bind a larger buffer in pieces, or pass
 *  its device address). */
typedef struct CachetBinding {
  CachetBuffer buffer;
  uint64_t offset;
  uint64_t range;
} CachetBinding;

/** The SpecId of the specialization constant through which a SPIR-V module
 *  states the subgroup size its kernels were written for (a 32-bit integer,
 *  the constant's default value). cachet's compiler adds it to the modules
 *  whose kernels use subgroup operations (cachet-spirv-subgroup-size); the
 *  Vulkan backend asks the device for that size when it creates the
 *  pipeline (VK_EXT_subgroup_size_control, core in Vulkan 1.3) and refuses
 *  the kernel with CACHET_ERROR_UNSUPPORTED where the device cannot run it. */
#define CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID 0x63616368u

/** What the runtime found in a kernel's SPIR-V. */
typedef struct CachetKernelInfo {
  /** Number of storage-buffer bindings (descriptor set 0, bindings 0..n-1). */
  uint32_t numBindings;
  /** Bytes of the push-constant block (0: none). */
  uint32_t pushConstantBytes;
  /** Workgroup size declared by the shader (0 where given by
   *  specialization). */
  uint32_t workgroupSize[3];
  /** The subgroup size the kernel was written for
   *  (CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID), which it runs with; 0 where the
   *  module states none (any size). */
  uint32_t subgroupSize;
} CachetKernelInfo;

/*===--------------------------------------------------------------------===*
 * Errors
 *===--------------------------------------------------------------------===*/

/** Returns the message of the calling thread's last failed call ("" if none):
 *  "<function>: <reason>". Valid until the thread's next runtime call. */
CACHET_RT_EXPORT const char *cachetGetLastError(void);

/** Returns the name of a status code ("CACHET_ERROR_NO_DEVICE"). */
CACHET_RT_EXPORT const char *cachetStatusString(CachetStatus status);

/*===--------------------------------------------------------------------===*
 * Runtime and device
 *===--------------------------------------------------------------------===*/

/** Creates a runtime on the default device of `backend`:
 *  - "vulkan": CACHET_VULKAN_DEVICE=<index> picks a physical device;
 *    otherwise a discrete GPU is preferred, then integrated, then any.
 *  - "cuda": the CUDA driver API, loaded with dlopen("libcuda.so.1") (or
 *    $CACHET_CUDA_LIBRARY); device $CACHET_CUDA_DEVICE (default 0), its
 *    primary context, one stream. Modules are cubin, fatbin or PTX.
 *  - "hip": HIP, loaded with dlopen("libamdhip64.so") (or
 *    $CACHET_HIP_LIBRARY); device $CACHET_HIP_DEVICE (default 0).
 *  - "auto": the first of cuda, hip, vulkan that has a device.
 *  NULL means $CACHET_BACKEND, or "vulkan" where that is unset. Without the
 *  library, the driver or a device the call fails with
 *  CACHET_ERROR_NO_DEVICE and a message naming the failed step
 *  ("cachetRuntimeCreate: cuInit: libcuda.so.1 not found (...)").
 *  `flags` is a mask of CACHET_RUNTIME_* values. */
CACHET_RT_EXPORT CachetStatus cachetRuntimeCreate(const char *backend,
                                                  uint32_t flags,
                                                  CachetRuntime *runtime);

/** Waits for the device and frees everything the runtime owns (buffers,
 *  arenas, modules, events that were not freed). NULL is a no-op. */
CACHET_RT_EXPORT CachetStatus cachetRuntimeDestroy(CachetRuntime runtime);

/** Fills `info` with the device's name and limits. */
CACHET_RT_EXPORT CachetStatus cachetGetDeviceInfo(CachetRuntime runtime,
                                                  CachetDeviceInfo *info);

/** Fills `info` with the device's cooperative-matrix support. */
CACHET_RT_EXPORT CachetStatus cachetGetCooperativeMatrixInfo(
    CachetRuntime runtime, CachetCooperativeMatrixInfo *info);

/** Waits until every launch, copy and event recorded so far has completed. */
CACHET_RT_EXPORT CachetStatus cachetSynchronize(CachetRuntime runtime);

/*===--------------------------------------------------------------------===*
 * Buffers (device resident; they stay on the device across launches)
 *===--------------------------------------------------------------------===*/

/** Allocates `bytes` of device memory. */
CACHET_RT_EXPORT CachetStatus cachetBufferAlloc(CachetRuntime runtime,
                                                uint64_t bytes,
                                                CachetBuffer *buffer);

/** Allocates `bytes` with CACHET_BUFFER_* `flags`. */
CACHET_RT_EXPORT CachetStatus cachetBufferAllocEx(CachetRuntime runtime,
                                                  uint64_t bytes,
                                                  uint32_t flags,
                                                  CachetBuffer *buffer);

/** Allocates `rows` rows of `pitchBytes` bytes each, for a matrix whose rows
 *  hold `rowBytes` bytes (`pitchBytes` >= `rowBytes`; 0 means `rowBytes`).
 *  The pitch is the padded row stride chosen by cachet-pad-weight-rows. */
CACHET_RT_EXPORT CachetStatus cachetBufferAllocPitched(CachetRuntime runtime,
                                                       uint64_t rowBytes,
                                                       uint64_t rows,
                                                       uint64_t pitchBytes,
                                                       CachetBuffer *buffer);

/** Frees a buffer (after the device is done with it). NULL is a no-op. A
 *  sub-allocation of an arena is freed by cachetArenaReset instead. */
CACHET_RT_EXPORT CachetStatus cachetBufferFree(CachetRuntime runtime,
                                               CachetBuffer buffer);

/** Returns a buffer's size in bytes. */
CACHET_RT_EXPORT CachetStatus cachetBufferGetSize(CachetBuffer buffer,
                                                  uint64_t *bytes);

/** Returns the row pitch of a buffer from cachetBufferAllocPitched (0 for
 *  other buffers). */
CACHET_RT_EXPORT CachetStatus cachetBufferGetPitch(CachetBuffer buffer,
                                                   uint64_t *pitchBytes);

/** Copies `bytes` from host memory into the buffer at `offset`. Returns when
 *  the host memory may be reused. */
CACHET_RT_EXPORT CachetStatus cachetBufferUpload(CachetRuntime runtime,
                                                 CachetBuffer buffer,
                                                 uint64_t offset,
                                                 const void *src,
                                                 uint64_t bytes);

/** Copies `bytes` of the buffer at `offset` into host memory, after every
 *  launch recorded so far. */
CACHET_RT_EXPORT CachetStatus cachetBufferDownload(CachetRuntime runtime,
                                                   CachetBuffer buffer,
                                                   uint64_t offset, void *dst,
                                                   uint64_t bytes);

/** Zero-filled strided 2D upload: row r (`rowBytes` bytes at
 *  src + r * srcPitch) goes to offset + r * dstPitch, and bytes
 *  [rowBytes, dstPitch) of every destination row are set to zero.
 *  `dstPitch` 0 means the buffer's pitch (cachetBufferAllocPitched);
 *  `srcPitch` 0 means `rowBytes`. */
CACHET_RT_EXPORT CachetStatus
cachetBufferUpload2D(CachetRuntime runtime, CachetBuffer buffer,
                     uint64_t offset, uint64_t dstPitch, const void *src,
                     uint64_t srcPitch, uint64_t rowBytes, uint64_t rows);

/** Strided 2D download, the inverse of cachetBufferUpload2D: row r of the
 *  buffer (`rowBytes` bytes at offset + r * srcPitch) goes to
 *  dst + r * dstPitch. `srcPitch` 0 means the buffer's pitch; `dstPitch` 0
 *  means `rowBytes`. */
CACHET_RT_EXPORT CachetStatus
cachetBufferDownload2D(CachetRuntime runtime, CachetBuffer buffer,
                       uint64_t offset, uint64_t srcPitch, void *dst,
                       uint64_t dstPitch, uint64_t rowBytes, uint64_t rows);

/** Copies `bytes` from `src` at `srcOffset` to `dst` at `dstOffset` on the
 *  device, in order with launches. The ranges must not overlap. */
CACHET_RT_EXPORT CachetStatus
cachetBufferCopy(CachetRuntime runtime, CachetBuffer src, uint64_t srcOffset,
                 CachetBuffer dst, uint64_t dstOffset, uint64_t bytes);

/** Fills `bytes` of the buffer from `offset` with the 32-bit `value`, in
 *  order with launches (offset and bytes multiples of 4). */
CACHET_RT_EXPORT CachetStatus cachetBufferFill(CachetRuntime runtime,
                                               CachetBuffer buffer,
                                               uint64_t offset, uint64_t bytes,
                                               uint32_t value);

/** Returns the host pointer of a CACHET_BUFFER_HOST_VISIBLE buffer. The host
 *  sees device writes after cachetSynchronize. */
CACHET_RT_EXPORT CachetStatus cachetBufferMap(CachetRuntime runtime,
                                              CachetBuffer buffer, void **ptr);

/** Returns the device address of a buffer, for kernels that reach buffers
 *  through physical pointers (e.g. those above maxBindingBytes). Fails with
 *  CACHET_ERROR_UNSUPPORTED where the device lacks bufferDeviceAddress. */
CACHET_RT_EXPORT CachetStatus cachetBufferDeviceAddress(CachetRuntime runtime,
                                                        CachetBuffer buffer,
                                                        uint64_t *address);

/*===--------------------------------------------------------------------===*
 * Scratch arena (e.g. the f16 K/V scratch of the dequant-once rewrite:
 * reserved once, reused across layers, released after prefill)
 *===--------------------------------------------------------------------===*/

/** Reserves `bytes` of device memory as one arena. */
CACHET_RT_EXPORT CachetStatus cachetArenaCreate(CachetRuntime runtime,
                                                uint64_t bytes,
                                                CachetArena *arena);

/** Hands out `bytes` of the arena as a buffer (aligned to the device's
 *  binding offset alignment). Fails with CACHET_ERROR_OUT_OF_MEMORY when the
 *  arena is full. The buffer lives until cachetArenaReset/Destroy. */
CACHET_RT_EXPORT CachetStatus cachetArenaAlloc(CachetRuntime runtime,
                                               CachetArena arena,
                                               uint64_t bytes,
                                               CachetBuffer *buffer);

/** Frees every sub-allocation at once; the reserved memory stays for the
 *  next layer. Does not wait: launches recorded before the reset run before
 *  any later work that reuses the memory (one in-order queue). */
CACHET_RT_EXPORT CachetStatus cachetArenaReset(CachetRuntime runtime,
                                               CachetArena arena);

/** Returns the bytes in use, the most ever in use, and the capacity. Any
 *  pointer may be NULL. */
CACHET_RT_EXPORT CachetStatus cachetArenaGetUsage(CachetArena arena,
                                                  uint64_t *usedBytes,
                                                  uint64_t *peakBytes,
                                                  uint64_t *capacityBytes);

/** Releases the arena's memory (e.g. after prefill). NULL is a no-op. */
CACHET_RT_EXPORT CachetStatus cachetArenaDestroy(CachetRuntime runtime,
                                                 CachetArena arena);

/*===--------------------------------------------------------------------===*
 * Modules, kernels, launches
 *===--------------------------------------------------------------------===*/

/** Loads a SPIR-V module (`bytes` bytes, a multiple of 4). The blob is
 *  validated and copied; it may be freed after the call. A module that needs
 *  what the device lacks (a SPIR-V version above what its Vulkan version
 *  allows, capability CooperativeMatrixKHR without an enabled
 *  VK_KHR_cooperative_matrix) fails with CACHET_ERROR_UNSUPPORTED. */
CACHET_RT_EXPORT CachetStatus cachetModuleLoad(CachetRuntime runtime,
                                               const void *data, size_t bytes,
                                               CachetModule *module);

/** Unloads a module and its kernels. NULL is a no-op. */
CACHET_RT_EXPORT CachetStatus cachetModuleUnload(CachetRuntime runtime,
                                                 CachetModule module);

/** Looks up the compute entry point `name` and builds (once per module and
 *  entry point) its pipeline. The kernel is owned by the module. */
CACHET_RT_EXPORT CachetStatus cachetKernelGet(CachetRuntime runtime,
                                              CachetModule module,
                                              const char *name,
                                              CachetKernel *kernel);

/** Describes a kernel's arguments and workgroup size. */
CACHET_RT_EXPORT CachetStatus cachetKernelGetInfo(CachetKernel kernel,
                                                  CachetKernelInfo *info);

/** Records a launch of `grid` workgroups (the workgroup size is in the
 *  shader). `bindings[i]` is bound as storage buffer i of descriptor set 0;
 *  `numBindings` must equal the kernel's. `pushConstants` (`pushBytes`, at
 *  least the kernel's push-constant block) are the scalar arguments. The
 *  launch runs in order with earlier launches; arguments may be reused as
 *  soon as the call returns. */
CACHET_RT_EXPORT CachetStatus
cachetLaunch(CachetRuntime runtime, CachetKernel kernel, const uint32_t grid[3],
             const CachetBinding *bindings, uint32_t numBindings,
             const void *pushConstants, uint32_t pushBytes);

/** cachetLaunch with an explicit workgroup size `block` (threads per
 *  workgroup), as the mgpu* ABI passes it. On Vulkan it must equal the
 *  shader's workgroup size (CACHET_ERROR_ARGUMENT_MISMATCH otherwise);
 *  zeros mean the kernel's own. */
CACHET_RT_EXPORT CachetStatus cachetLaunchWithBlock(
    CachetRuntime runtime, CachetKernel kernel, const uint32_t grid[3],
    const uint32_t block[3], const CachetBinding *bindings,
    uint32_t numBindings, const void *pushConstants, uint32_t pushBytes);

/** Launches `kernel` with the CUDA calling convention: `params[i]` points
 *  to the value of kernel parameter i (a device pointer from
 *  cachetBufferDeviceAddress, or a scalar), as cuLaunchKernel's
 *  kernelParams; `numParams` is their count. `block` must be non-zero;
 *  `sharedBytes` is the dynamic shared memory; `flags` is a mask of
 *  CACHET_LAUNCH_* values. CUDA and HIP only (Vulkan kernels take bindings:
 *  CACHET_ERROR_UNSUPPORTED). On CUDA and HIP, cachetLaunch and
 *  cachetLaunchWithBlock pass the bindings' device addresses (8 bytes each,
 *  in order) followed by the push-constant bytes as the parameter block. */
CACHET_RT_EXPORT CachetStatus cachetLaunchKernel(
    CachetRuntime runtime, CachetKernel kernel, const uint32_t grid[3],
    const uint32_t block[3], uint32_t sharedBytes, void **params,
    uint32_t numParams, uint32_t flags);

/*===--------------------------------------------------------------------===*
 * Device-side timing (timestamp queries)
 *===--------------------------------------------------------------------===*/

/** Creates a timing mark. */
CACHET_RT_EXPORT CachetStatus cachetEventCreate(CachetRuntime runtime,
                                                CachetEvent *event);

/** Records the mark: it takes the device time at which the work recorded
 *  before it has completed. A mark may be recorded again. */
CACHET_RT_EXPORT CachetStatus cachetEventRecord(CachetRuntime runtime,
                                                CachetEvent event);

/** Waits for the mark and returns its device time in nanoseconds (an
 *  arbitrary origin; comparable between marks of one runtime). */
CACHET_RT_EXPORT CachetStatus cachetEventTimestampNs(CachetRuntime runtime,
                                                     CachetEvent event,
                                                     uint64_t *ns);

/** Waits for both marks and returns the device time from `start` to `end`
 *  in nanoseconds. Fails if `end` precedes `start`. */
CACHET_RT_EXPORT CachetStatus cachetEventElapsedNs(CachetRuntime runtime,
                                                   CachetEvent start,
                                                   CachetEvent end,
                                                   uint64_t *ns);

/** Frees a mark. NULL is a no-op. */
CACHET_RT_EXPORT CachetStatus cachetEventDestroy(CachetRuntime runtime,
                                                 CachetEvent event);

/*===--------------------------------------------------------------------===*
 * Bridging to the mgpu* ABI
 *
 * libcachet_runtime also exports upstream MLIR's mgpu* functions (module
 * load, launch, mgpuMemAlloc, mgpuMemcpy, streams, events), implemented on
 * one process-wide runtime. Its backend is the one named by
 * cachetMgpuSetBackend before the first mgpu call, else $CACHET_BACKEND
 * (vulkan, cuda, hip or auto), else "vulkan". The semantics follow the
 * backend's upstream wrappers:
 *  - vulkan: kernels take (pointer, size) pairs (gpu-to-llvm with
 *    use-bare-pointers-for-kernels and intersperse-sizes-for-kernels);
 *    mgpuMemAlloc returns host-mapped device memory.
 *  - cuda, hip: kernels take the CUDA convention (params[i] points to
 *    parameter i, as gpu-to-llvm emits for NVVM and ROCDL); mgpuMemAlloc
 *    returns a device address; mgpuMemcpy and mgpuMemset* take device
 *    addresses from mgpuMemAlloc or host pointers (unified addressing).
 * Host code lowered through gpu-to-llvm can reach that runtime's other
 * services with these.
 *===--------------------------------------------------------------------===*/

/** Names the backend of the mgpu* functions ("vulkan", "cuda", "hip",
 *  "auto"). Must come before the first mgpu call; afterwards it fails with
 *  CACHET_ERROR_INVALID_ARGUMENT unless it names the backend in use. */
CACHET_RT_EXPORT CachetStatus cachetMgpuSetBackend(const char *backend);

/** mgpuLaunchKernel with CACHET_LAUNCH_* `flags` (e.g. CACHET_LAUNCH_PDL for
 *  programmatic dependent launch on CUDA). */
CACHET_RT_EXPORT void cachetMgpuLaunchKernelEx(void *function, intptr_t gridX,
                                               intptr_t gridY, intptr_t gridZ,
                                               intptr_t blockX, intptr_t blockY,
                                               intptr_t blockZ, int32_t smem,
                                               void *stream, void **params,
                                               void **extra, size_t paramsCount,
                                               uint32_t flags);

/** Applies CACHET_LAUNCH_* `flags` to this thread's next mgpuLaunchKernel.
 *  cachet-compile emits this call before each launch that
 *  cachet-prefetch-matvec-chains marked `cachet.pdl`, so the kernel is
 *  launched with programmatic stream serialization on CUDA (a hint
 *  elsewhere). */
CACHET_RT_EXPORT CachetStatus cachetMgpuSetNextLaunchFlags(uint32_t flags);

/** 1 when the device of the mgpu functions' runtime runs subgroup-scope
 *  cooperative matrices of `m`x`n`x`k` with f16 A and B and an f32
 *  accumulator ("MxNxK:f16->f32" among cachetGetCooperativeMatrixInfo's
 *  shapes: Vulkan with VK_KHR_cooperative_matrix enabled), else 0 (CUDA and
 *  HIP, whose kernels use no KHR cooperative matrices; no runtime). Compiled
 *  code calls it before a cooperative-matrix kernel that has a fallback
 *  (the SPIR-V mma attention kernel) and launches the one it says. */
CACHET_RT_EXPORT int32_t cachetMgpuHasCooperativeMatrixF16(int32_t m, int32_t n,
                                                           int32_t k);

/** Starts a kernel span: the device time from the first mgpu kernel launch
 *  after this call to the end of the latest one, read with
 *  cachetMgpuKernelSpanNs. Uploads before the first launch and downloads
 *  after the last are not in it; gaps between launches are. On CUDA a
 *  one-thread kernel that waits 200 us is queued before the first launch's
 *  start mark, so that the mark completes when that launch can start, not
 *  while the device idles waiting for the host to launch it. The end mark
 *  is queued by the first mgpu call after a launch that queues or waits
 *  for work (a copy, a fill, a synchronization, an event record, a free,
 *  cachetMgpuKernelSpanNs), not by allocations or handles: nothing
 *  separates launches queued back to back, so a programmatic dependent
 *  launch can still start before its predecessor ends. After its last
 *  launch, code that waits should wait with mgpuStreamSynchronize (or copy
 *  with mgpuMemcpy), not cachetSynchronize: a mark queued after the device
 *  went idle would hold the time until it was queued. */
CACHET_RT_EXPORT CachetStatus cachetMgpuKernelSpanBegin(void);

/** Ends the span begun by cachetMgpuKernelSpanBegin and returns it in ns
 *  (0 when nothing was launched). */
CACHET_RT_EXPORT CachetStatus cachetMgpuKernelSpanNs(uint64_t *ns);

/** The number of kernels the mgpu functions launched since the latest
 *  cachetMgpuKernelSpanBegin (the span's own wait kernel on CUDA not
 *  counted): a span divided by it is the device time per launch. */
CACHET_RT_EXPORT CachetStatus cachetMgpuKernelSpanLaunches(uint64_t *launches);

/** Returns the process-wide runtime behind the mgpu* functions (created on
 *  first use; it lives until the process exits: do not destroy it). */
CACHET_RT_EXPORT CachetStatus cachetMgpuGetRuntime(CachetRuntime *runtime);

/** Returns the kind of the first mgpu* failure since the previous call
 *  (CACHET_SUCCESS when none) and forgets it. The mgpu* functions return no
 *  status: they print each failure to stderr, and keep the first one here
 *  (a module that needs what the device lacks, for instance, fails its
 *  mgpuModuleLoad with CACHET_ERROR_UNSUPPORTED when a compiled program's
 *  constructors load its kernels). `message` (`capacity` bytes; NULL when
 *  0) receives "<mgpu function>: <reason>", truncated to fit, or "". */
CACHET_RT_EXPORT CachetStatus cachetMgpuTakeError(char *message,
                                                  size_t capacity);

/** Returns the buffer and offset behind `ptr`, a pointer into memory from
 *  mgpuMemAlloc (CACHET_ERROR_NOT_FOUND for any other pointer). */
CACHET_RT_EXPORT CachetStatus cachetMgpuLookup(const void *ptr,
                                               CachetBuffer *buffer,
                                               uint64_t *offset);

/** Zero-filled strided 2D copy for padded weights in mgpu memory: row r
 *  (`rowBytes` at src + r * srcPitch) goes to dst + r * dstPitch and bytes
 *  [rowBytes, dstPitch) of each row are zeroed, after the work recorded so
 *  far. `dst` is mgpuMemAlloc memory (or host memory). */
CACHET_RT_EXPORT CachetStatus cachetMgpuMemcpy2D(void *dst, uint64_t dstPitch,
                                                 const void *src,
                                                 uint64_t srcPitch,
                                                 uint64_t rowBytes,
                                                 uint64_t rows);

/** A device copy of host constant data that stays resident: the first call
 *  allocates `bytes` of mgpuMemAlloc memory, uploads `host` into it (after
 *  the work recorded so far) and stores its address in `*slot`; later calls
 *  return `*slot`. Generated code gives each constant global of a module its
 *  own zero-initialized slot, so a module's constants are uploaded once per
 *  load and kept until the process exits. Returns NULL on failure (kept for
 *  cachetMgpuTakeError). */
CACHET_RT_EXPORT void *cachetMgpuResident(void **slot, const void *host,
                                          uint64_t bytes);

/** Makes `bytes` of host memory at `host` resident: allocates mgpuMemAlloc
 *  memory, uploads `host` into it (after the work recorded so far) and
 *  stores its address in `*device`. From then on a generated function that
 *  takes a buffer at exactly `host` (of at most `bytes`) as an argument
 *  uses this device copy: it uploads nothing, and what it writes there (a
 *  KV cache appended in place) stays on the device; `host` is not updated
 *  (cachetMgpuSyncResident reads it back). This is how a caller keeps
 *  weights and caches on the device across calls. Binding `host` again is
 *  CACHET_ERROR_INVALID_ARGUMENT. */
CACHET_RT_EXPORT CachetStatus cachetMgpuBindResident(const void *host,
                                                     uint64_t bytes,
                                                     void **device);

/** Copies the device copy of resident `host` back into it (after the work
 *  recorded so far, waiting for it). */
CACHET_RT_EXPORT CachetStatus cachetMgpuSyncResident(void *host);

/** Ends the residency of `host` and frees its device copy. */
CACHET_RT_EXPORT CachetStatus cachetMgpuUnbindResident(const void *host);

/** Generated code's upload of a function argument at `host`: its resident
 *  device copy where the caller bound one (cachetMgpuBindResident), else a
 *  new mgpuMemAlloc buffer holding a copy of its `bytes`. Returns NULL on
 *  failure (kept for cachetMgpuTakeError). */
CACHET_RT_EXPORT void *cachetMgpuArgument(const void *host, uint64_t bytes);

/** Generated code's end of the argument `device` that cachetMgpuArgument
 *  returned for `host`, at the function's return: nothing for a resident
 *  copy; else copied back into `host` when `written` is non-zero (the
 *  function updated the argument in place), then freed. */
CACHET_RT_EXPORT void cachetMgpuArgumentEnd(void *host, void *device,
                                            uint64_t bytes, int32_t written);

/** Returns the bytes of mgpuMemAlloc memory allocated now (the compiled
 *  code's device temporaries, such as the dequant-once scratch, and the
 *  copies of arguments that are not resident; resident copies are not
 *  counted) in `current`, and the most allocated at once since the last
 *  reset in `peak` (either may be NULL). A non-zero `resetPeak` then
 *  restarts the peak from the current bytes. */
CACHET_RT_EXPORT CachetStatus cachetMgpuMemoryUsage(uint64_t *current,
                                                    uint64_t *peak,
                                                    int32_t resetPeak);

/** Returns the device time between two recorded mgpu events, in ns. */
CACHET_RT_EXPORT CachetStatus cachetMgpuEventElapsedNs(void *start, void *end,
                                                       uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* CACHET_RUNTIME_H */
