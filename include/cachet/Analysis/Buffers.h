//===- Buffers.h - questions about memref buffers -----------------*- C++
//-*-===//
//
// Which arguments a function updates in place (the artifact's manifest and
// cachet-device-buffers, which copies device-written arguments back, ask it),
// and which buffers the runtime can copy as one run of bytes.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_BUFFERS_H
#define CACHET_ANALYSIS_BUFFERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace mlir {
class AliasAnalysis;
class Region;
} // namespace mlir

namespace cachet {

/// Returns the buffer `value` is a view of (through subviews, reshapes and
/// casts), or `value` itself.
mlir::Value getRootBuffer(mlir::Value value);

/// Returns true unless `aliases` proves `a` and `b` disjoint, or they are
/// views of two different globals (constant weights), or of a global and a
/// buffer the function allocates, which never share bytes.
bool mayAlias(mlir::AliasAnalysis &aliases, mlir::Value a, mlir::Value b);

/// Returns true if an op may write the memref `buffer` or a view of it. Ops
/// that do not describe their memory effects count as writers; `memref.dim`
/// and metadata extraction do not.
bool mayWriteBuffer(mlir::Value buffer);

/// The runtime function through which cachet-device-buffers passes a
/// function argument to the kernels (its resident device copy, or a new
/// copy): `void *cachetMgpuArgument(const void *host, uint64_t bytes)`.
inline constexpr llvm::StringLiteral kArgumentFunction = "cachetMgpuArgument";

/// Returns true if `buffer` is the device copy of a function argument made
/// by cachet-device-buffers (a `cachetMgpuArgument` call's pointer given a
/// memref descriptor).
bool isArgumentDeviceCopy(mlir::Value buffer);

/// Returns true if `buffer` is memory no other buffer of the function
/// shares: a `memref.alloc`, a `gpu.alloc` or the device copy of an
/// argument (each argument has its own; a caller that binds one host
/// buffer resident must not pass it as two arguments of one call).
bool isDistinctBuffer(mlir::Value buffer);

/// Returns true if `type` is one run of bytes from its aligned pointer: an
/// identity layout (of any sizes), or a statically shaped, contiguous view
/// at offset 0. The runtime's copies take
/// the aligned pointer (upstream's gpu.memcpy lowering drops a view's
/// offset), so only such buffers may be copied between host and device.
bool isPlainBuffer(mlir::MemRefType type);

/// Returns the one buffer defined outside `region` that memref.load ops in
/// it read (a reference lowering's generic reads its packed bytes or its
/// values in the body), or null where there is none or more than one.
mlir::Value getOnlyBufferLoadedIn(mlir::Region &region);

} // namespace cachet

#endif // CACHET_ANALYSIS_BUFFERS_H
