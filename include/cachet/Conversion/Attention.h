//===- Attention.h - the cachet.attention lowering pattern ------*- C++ -*-===//
//
// The lowering of cachet-lower-attention as a rewrite pattern, for compilers
// that drive their own pattern sets.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_CONVERSION_ATTENTION_H
#define CACHET_CONVERSION_ATTENTION_H

#include "mlir/IR/PatternMatch.h"

namespace cachet {

/// Adds a pattern that replaces a cachet.attention on static tensors by a
/// flash-attention kernel (a gpu.launch over buffers, its result a
/// bufferization.to_tensor), the lowering of cachet-lower-attention.
///
/// Which kernel (scalar, mma or mma-sync) and its tiles are chosen by the
/// pass today: the pattern asks cachet-lower-attention with its default
/// options, for the device profile of the enclosing module
/// (cachet-attach-device), so it reproduces `cachet-lower-attention` without
/// options, remarks included. The configuration will come from an attribute
/// of the op instead. Where the pass would keep the reference lowering, the
/// pattern does not match (after the same remark, once per attempt).
///
/// Under mlir::walkAndApplyPatterns the pattern gives the pass's IR byte for
/// byte. cachet-lower-attention itself walks the ops rather than running
/// this pattern greedily: a kernel is many ops, and the greedy driver (even
/// without folding) erases the dead ones and lowers the attentions of a
/// function in another order.
void populateLowerAttentionPatterns(mlir::RewritePatternSet &patterns);

} // namespace cachet

#endif // CACHET_CONVERSION_ATTENTION_H
