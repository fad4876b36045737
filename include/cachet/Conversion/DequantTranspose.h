//===- DequantTranspose.h - the dequant-transpose lowering pattern -*- C++ -*-//
//
// The lowering of cachet-lower-dequant-transpose as a rewrite pattern, for
// compilers that drive their own pattern sets.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_CONVERSION_DEQUANTTRANSPOSE_H
#define CACHET_CONVERSION_DEQUANTTRANSPOSE_H

#include "mlir/IR/PatternMatch.h"

namespace cachet {

/// Adds a pattern that replaces the `linalg.generic` of a packed
/// dequant-transpose on buffers (marked `cachet.dequant_transpose` by
/// cachet-lower-to-linalg) that carries a `#cachet.kernel_config`
/// (cachet-select-kernel-configs, or written by the caller) by that kernel:
/// a gpu.launch that reads each block once and writes the head-major rows
/// with wide stores. An op without a config, or whose config the kernel
/// cannot build (whyNotDequantTransposeConfig in
/// cachet/Analysis/DequantTransposeConfig.h), does not match.
/// `workgroupAlloc` stages in a memref.alloc of workgroup memory inside the
/// kernel and `scalarStores` stores values one by one (both for SPIR-V).
void populateLowerDequantTransposePatterns(mlir::RewritePatternSet &patterns,
                                           bool workgroupAlloc = false,
                                           bool scalarStores = false);

} // namespace cachet

#endif // CACHET_CONVERSION_DEQUANTTRANSPOSE_H
