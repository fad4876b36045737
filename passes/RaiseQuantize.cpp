//===- RaiseQuantize.cpp - linalg q8_0 quantization to cachet.quantize ----===//
//
// Replaces the split q8_0 quantization front ends write in linalg (see
// cachet/Analysis/QuantizeMatch.h) by `cachet.quantize`, whose lowering is
// one kernel that writes the quants and scales (in place, when they are
// inserted into a cache).
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/QuantizeMatch.h"
#include "cachet/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_RAISEQUANTIZE
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

/// Replaces the matched quantization by a `cachet.quantize` and erases what
/// it leaves dead.
static QuantizeOp raise(RewriterBase &rewriter, QuantizeMatch match) {
  Operation *first = match.quants;
  if (match.scales && match.scales->isBeforeInBlock(first))
    first = match.scales;
  rewriter.setInsertionPoint(first);
  Location loc = match.quants.getLoc();
  auto input = cast<RankedTensorType>(match.input.getType());
  auto scalesType = cast<RankedTensorType>(match.absMax.getResult(0).getType())
                        .clone(rewriter.getF16Type());
  auto quantize = QuantizeOp::create(
      rewriter, loc, input.clone(rewriter.getI8Type()), scalesType, match.input,
      RoundingAttr::get(rewriter.getContext(), match.rounding));
  // The quants in blocks of 32, as the generic wrote them (canonicalization
  // folds this reshape into a collapse_shape that follows).
  Value blocks = tensor::ExpandShapeOp::create(
      rewriter, loc, match.quants.getResult(0).getType(), quantize.getResult(),
      match.blocks.getReassociationIndices(),
      match.blocks.getMixedOutputShape());
  rewriter.replaceOp(match.quants, blocks);
  if (match.scales)
    rewriter.replaceOp(match.scales, quantize.getScales());
  for (Operation *op : {match.absMax.getOperation(),
                        match.absMax.getDpsInits()[0].getDefiningOp(),
                        match.blocks.getOperation()})
    if (op && isOpTriviallyDead(op))
      rewriter.eraseOp(op);
  return quantize;
}

namespace {
/// Raises every recognized linalg q8_0 quantization to cachet.quantize and
/// explains every decision with a remark.
struct RaiseQuantizePass final
    : public cachet::impl::RaiseQuantizeBase<RaiseQuantizePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isQuantizeCandidate(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      std::string reason;
      std::optional<QuantizeMatch> match = matchQuantize(op, reason);
      if (!match) {
        emitRemark(op.getLoc(), "cachet-raise-quantize: not raised: ")
            << reason;
        continue;
      }
      bool scales = static_cast<bool>(match->scales);
      Type input = match->input.getType();
      QuantizeOp quantize = raise(rewriter, *match);
      emitRemark(quantize.getLoc(),
                 "cachet-raise-quantize: raised to cachet.quantize: "
                 "split q8_0 of ")
          << input << ", rounding <"
          << stringifyRounding(quantize.getRounding()) << ">"
          << (scales ? ""
                     : "; the function computes no scales, so the "
                       "scales result is unused");
    }
  }
};
} // namespace
