//===- RaiseDequantize.cpp - split dequantization to cachet.dequantize ---===//
//
// Replaces the split q8_0 / q4_0 dequantization front ends write in linalg
// (i8 values times one f16 scale per 32, or i4 values less 8 times one, see
// cachet/Analysis/QuantizeMatch.h) by
// `cachet.dequantize %q scales %s`, so that the blocks can be read where the
// values are used (cachet's mat-vec kernel decodes them in registers).
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/QuantizeMatch.h"
#include "cachet/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_RAISEDEQUANTIZE
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

/// Returns the flat `[..., D]` values `blocks` was reshaped from (a
/// tensor.expand_shape splitting only the innermost dimension into
/// `[D/32, 32]`), or null.
Value getFlatValues(Value blocks) {
  auto expand = blocks.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return {};
  auto source = expand.getSrcType();
  int64_t rank = source.getRank();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (expand.getResultType().getRank() != rank + 1 ||
      static_cast<int64_t>(groups.size()) != rank)
    return {};
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (groups[i].size() != 1)
      return {};
  return groups.back().size() == 2 ? expand.getSrc() : Value();
}

/// Returns the collapses of `result` back to `[..., D]` if they are all its
/// uses, else an empty list.
SmallVector<tensor::CollapseShapeOp> getFlatUses(Value result) {
  SmallVector<tensor::CollapseShapeOp> collapses;
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  for (Operation *user : result.getUsers()) {
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    if (!collapse || collapse.getResultType().getRank() != rank - 1)
      return {};
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t i = 0; i + 2 < rank; ++i)
      if (groups[i].size() != 1)
        return {};
    if (groups.back().size() != 2)
      return {};
    collapses.push_back(collapse);
  }
  return collapses;
}

/// Builds the `cachet.dequantize` of `match` and replaces the generic's
/// uses (or the collapses of its result) by it; the generic stays.
DequantizeOp raiseGeneric(RewriterBase &rewriter,
                          const DequantizeMatch &match) {
  linalg::GenericOp op = match.generic;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  Value values = match.values, scales = match.scales;
  auto scalesType = cast<RankedTensorType>(scales.getType());
  if (match.inBlocks) {
    Value flat = getFlatValues(values);
    SmallVector<tensor::CollapseShapeOp> uses = getFlatUses(op.getResult(0));
    bool unitScales = scalesType.getRank() == resultType.getRank();
    if (flat && !uses.empty() && !unitScales) {
      // [..., D/32, 32] from [..., D] and back: dequantize [..., D].
      auto dequantize = DequantizeOp::create(
          rewriter, loc, uses.front().getResultType(), flat, scales);
      for (tensor::CollapseShapeOp collapse : uses)
        rewriter.replaceOp(collapse, dequantize.getResult());
      return dequantize;
    }
    if (!unitScales) {
      // Over blocks: the scales take a unit innermost dimension.
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i + 1 < scalesType.getRank(); ++i)
        groups.push_back({i});
      groups.push_back({scalesType.getRank() - 1, scalesType.getRank()});
      SmallVector<int64_t> shape(scalesType.getShape());
      shape.push_back(1);
      scales = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, rewriter.getF16Type()),
          scales, groups);
    }
  }
  auto dequantize =
      DequantizeOp::create(rewriter, loc, resultType, values, scales);
  rewriter.replaceAllUsesWith(op.getResult(0), dequantize.getResult());
  return dequantize;
}

/// Replaces the matched dequantization by a `cachet.dequantize` and erases
/// what it leaves dead (the generic, its init, a reshape of the values).
DequantizeOp raise(RewriterBase &rewriter, const DequantizeMatch &match) {
  linalg::GenericOp op = match.generic;
  DequantizeOp dequantize = raiseGeneric(rewriter, match);
  Operation *init = op.getDpsInits()[0].getDefiningOp();
  Operation *expand = match.values.getDefiningOp<tensor::ExpandShapeOp>();
  rewriter.eraseOp(op);
  for (Operation *dead : {init, expand})
    if (dead && isOpTriviallyDead(dead))
      rewriter.eraseOp(dead);
  return dequantize;
}

/// Raises every recognized split dequantization to cachet.dequantize
/// and explains every decision with a remark.
struct RaiseDequantizePass final
    : public cachet::impl::RaiseDequantizeBase<RaiseDequantizePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isDequantizeCandidate(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      std::string reason;
      std::optional<DequantizeMatch> match = matchDequantize(op, reason);
      if (!match) {
        emitRemark(op.getLoc(), "cachet-raise-dequantize: not raised: ")
            << reason;
        continue;
      }
      bool inBlocks = match->inBlocks;
      Type matched = match->values.getType();
      DequantizeOp dequantize = raise(rewriter, *match);
      auto input = cast<RankedTensorType>(dequantize.getInput().getType());
      auto result = cast<RankedTensorType>(dequantize.getResult().getType());
      InFlightDiagnostic diag = emitRemark(
          dequantize.getLoc(),
          "cachet-raise-dequantize: raised to cachet.dequantize: split ");
      diag << (match->nibbles ? "q4_0" : "q8_0") << " of ";
      diag << input << " to " << result.getElementType();
      if (inBlocks)
        diag << (Type(input) == matched
                     ? ", over blocks of 32"
                     : ", flat (the reshapes into blocks of 32 and back go "
                       "away)");
    }
  }
};

} // namespace
