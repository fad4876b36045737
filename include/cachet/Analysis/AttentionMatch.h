//===- AttentionMatch.h - recognize linalg attention over a quantized KV -===//
//
// Recognizes the linalg-on-tensors form of scaled dot-product attention over a
// block-quantized KV cache that ML front ends emit (see
// test/Passes/raise-attention.mlir):
//
//   K, V  = dequantize generics, f = float(i8) * scale[block of 32]
//           (or cachet.dequantize of any block-quantized cache)
//   kT    = generic kT[h, d, s] = K[s, h floordiv G, d]   (GQA broadcast)
//   vB    = generic vB[h, s, d] = V[s, h floordiv G, d]
//           (for G = 1 also linalg.transpose)
//   S     = linalg.batch_matmul(Q, kT) into linalg.fill(0)
//   S'    = generic: S * scale, optionally select(j <= i + N, ., -inf)
//   P     = linalg.softmax dimension(2) S', optionally converted (truncf)
//   O     = linalg.batch_matmul(P, vB) into linalg.fill(0)
//   R     = optional conversion generic of O (truncf / extf)
//
// The matcher is separate from any rewrite so that it can be tested and
// reused; cachet-raise-attention turns a match into cachet.attention.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_ATTENTIONMATCH_H
#define CACHET_ANALYSIS_ATTENTIONMATCH_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace cachet {

/// One dequantized KV operand: the token-major quantized cache it comes from.
struct QuantizedKVSource {
  /// The quantized cache: `i8 [S][Hkv][D]` (split q8_0) or a packed
  /// block-typed `[S][Hkv][D/32]` tensor.
  mlir::Value values;
  /// The split form's `f16 [S][Hkv][D/32]` scales; null for a packed cache.
  mlir::Value scales;
  /// The dequantized tensor `[S][Hkv][D]` (the result of `dequantOp`).
  mlir::Value dequantized;
  /// The dequantize generic or `cachet.dequantize` producing `dequantized`.
  mlir::Operation *dequantOp = nullptr;
};

/// A recognized attention chain.
struct AttentionMatch {
  /// The anchor of the chain.
  mlir::linalg::SoftmaxOp softmax;
  /// The query, `[Hq][Sq][D]`.
  mlir::Value query;
  /// Where K and V come from.
  QuantizedKVSource key, value;
  /// Query heads per KV head (Hq / Hkv), 1 included.
  int64_t groupSize = 1;
  /// The score scale (1 when the scores are not scaled).
  double scale = 1.0;
  /// `N` of the causal mask `j <= i + N`; none when no mask is applied.
  std::optional<int64_t> causalOffset;
  /// `N` of the causal mask as an index value defined outside the score
  /// generic (a position known at run time); null when constant or absent.
  mlir::Value causalPosition;
  /// Element type both batch matmuls accumulate in (f32 or f16).
  mlir::Type accumulator;
  /// The value the chain computes, `[Hq][Sq][Dv]`: what a rewrite replaces.
  mlir::Value result;
  /// The operations of the chain, from the result back to the dequantizes.
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Matches the attention chain around `softmax`. On failure returns
/// std::nullopt and stores the condition that failed in `reason` (a short
/// sentence, suitable for a remark on `softmax`).
std::optional<AttentionMatch> matchAttention(mlir::linalg::SoftmaxOp softmax,
                                             std::string &reason);

} // namespace cachet

#endif // CACHET_ANALYSIS_ATTENTIONMATCH_H
