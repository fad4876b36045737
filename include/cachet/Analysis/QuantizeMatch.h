//===- QuantizeMatch.h - recognize linalg q8_0 quantization ----*- C++ -*-===//
//
// Recognizes the split q8_0 quantization ML front ends emit in linalg on
// tensors (see test/Passes/raise-quantize.mlir):
//
//   xb    = tensor.expand_shape x: [..., D] -> [..., D/32, 32]
//   amax  = generic reduction over the last dim of xb into linalg.fill(0.0):
//           max(acc, |float(xb)|)                           (f32)
//   q     = generic over xb and amax:
//           fptosi(round(float(xb) * (d != 0 ? 1 / d : 0)))  (i8)
//           with d = amax / 127 and round = math.round or math.roundeven
//   s     = optional generic over amax: truncf(amax / 127)  (f16)
//
// Every step must compute the value cachet.quantize computes, so that a
// raise never changes a byte. The matcher is separate from the rewrite
// (cachet-raise-quantize) so that it can be tested and reused.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_QUANTIZEMATCH_H
#define CACHET_ANALYSIS_QUANTIZEMATCH_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace cachet {

/// A recognized split q8_0 quantization.
struct QuantizeMatch {
  /// The values, `[..., D]` of f16, bf16 or f32.
  mlir::Value input;
  /// The reshape of `input` into blocks, `[..., D/32, 32]`.
  mlir::tensor::ExpandShapeOp blocks;
  /// The per-block absolute maximum, f32 `[..., D/32]`.
  mlir::linalg::GenericOp absMax;
  /// The quants, i8 `[..., D/32, 32]`.
  mlir::linalg::GenericOp quants;
  /// The f16 scales `[..., D/32]`; null when the function computes none.
  mlir::linalg::GenericOp scales;
  /// How the quants are rounded (math.round: away, math.roundeven: even).
  Rounding rounding = Rounding::Away;
};

/// Returns true if `op` looks like the quants of a quantization (an i8
/// result computed with arith.fptosi): the ops the matcher explains.
bool isQuantizeCandidate(mlir::linalg::GenericOp op);

/// Matches the quantization whose quants `quants` computes. On failure
/// returns std::nullopt and stores the condition that failed in `reason` (a
/// short sentence, suitable for a remark on `quants`).
std::optional<QuantizeMatch> matchQuantize(mlir::linalg::GenericOp quants,
                                           std::string &reason);

} // namespace cachet

#endif // CACHET_ANALYSIS_QUANTIZEMATCH_H
