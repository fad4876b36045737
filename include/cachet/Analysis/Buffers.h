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

namespace cachet {

/// Returns the buffer `value` is a view of (through subviews, reshapes and
/// casts), or `value` itself.
mlir::Value getRootBuffer(mlir::Value value);

/// Returns true if an op may write the memref `buffer` or a view of it. Ops
/// that do not describe their memory effects count as writers; `memref.dim`
/// and metadata extraction do not.
bool mayWriteBuffer(mlir::Value buffer);

/// Returns true if `type` is one run of bytes from its aligned pointer: an
/// identity layout (of any sizes), or a statically shaped, contiguous view
/// at offset 0. The runtime's copies take
/// the aligned pointer (upstream's gpu.memcpy lowering drops a view's
/// offset), so only such buffers may be copied between host and device.
bool isPlainBuffer(mlir::MemRefType type);

} // namespace cachet

#endif // CACHET_ANALYSIS_BUFFERS_H
