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
// It also recognizes the inverse, the split q8_0 dequantization of weights
// or caches, `float(q) * scale[block of 32]` (see
// test/Passes/raise-dequantize.mlir), for cachet-raise-dequantize and the
// attention matcher.
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

/// A recognized split q8_0 or q4_0 dequantization: a `linalg.generic`
/// computing `float(q) * scale` with one f16 scale per 32 i8 values along
/// the innermost dimension (or `(float(q) - 8) * scale` for i4 values read
/// unsigned: `uitofp(q) - 8`, `uitofp(q) + -8` or `sitofp(zext(q) - 8)`),
/// each value what `cachet.dequantize %q scales %s` computes (the exact
/// product rounded once to the result type):
///
///  * flat: over `[..., D]`, q read with the identity, the scales
///    `[..., D/32]` with `(..., d floordiv 32)`;
///  * in blocks: over `[..., D/32, 32]`, q read with the identity, the
///    scales `[..., D/32]` with `(..., b)` (or `[..., D/32, 1]` with
///    `(..., b, 0)`).
struct DequantizeMatch {
  mlir::linalg::GenericOp generic;
  /// The i8 values and the f16 scales the generic reads.
  mlir::Value values, scales;
  /// The block size (32 when the match succeeds; set when the scale map has
  /// the right form, for the message).
  int64_t blockValues = 0;
  /// Whether the generic iterates in blocks (`[..., D/32, 32]`).
  bool inBlocks = false;
  /// Whether the values are i4 (split q4_0: `(float(q) - 8) * scale`, q
  /// read as unsigned nibbles) rather than i8 (split q8_0).
  bool nibbles = false;
};

/// Returns true if `op` looks like a split dequantization on tensors: all
/// loops parallel, one f16 / bf16 / f32 result, an i8 input converted with
/// arith.sitofp or an i4 input. The ops the dequantize matcher explains.
bool isDequantizeCandidate(mlir::linalg::GenericOp op);

/// Matches the split q8_0 or q4_0 dequantization `op`. On failure returns
/// std::nullopt and stores the condition that failed in `reason` (a short
/// sentence without a subject, e.g. "block size is 16, not 32 (q8_0)").
std::optional<DequantizeMatch> matchDequantize(mlir::linalg::GenericOp op,
                                               std::string &reason);

} // namespace cachet

#endif // CACHET_ANALYSIS_QUANTIZEMATCH_H
