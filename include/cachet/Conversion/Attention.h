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

/// Adds a pattern that replaces a cachet.attention on static tensors that
/// carries a `#cachet.kernel_config` (cachet-select-kernel-configs, or written
/// by the caller) by that flash-attention kernel: a gpu.launch over buffers,
/// its result a bufferization.to_tensor, the lowering of
/// cachet-lower-attention. An op without a config, or whose config the kernel
/// cannot serve (whyNotAttentionConfig in cachet/Analysis/AttentionConfig.h),
/// does not match.
///
/// Under mlir::walkAndApplyPatterns the pattern gives the pass's IR byte for
/// byte. cachet-lower-attention itself walks the ops rather than running
/// this pattern greedily: a kernel is many ops, and the greedy driver (even
/// without folding) erases the dead ones and lowers the attentions of a
/// function in another order.
void populateLowerAttentionPatterns(mlir::RewritePatternSet &patterns);

} // namespace cachet

#endif // CACHET_CONVERSION_ATTENTION_H
