//===- UnitTransposesToReshapes.cpp - transposes of unit dims as reshapes -===//
//
// A linalg.transpose that moves only dimensions of extent 1 keeps every
// element in place: it becomes a collapse to one dimension and an expand to
// the result's shape, which bufferize to views.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace cachet {
#define GEN_PASS_DEF_UNITTRANSPOSESTORESHAPES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Returns true if `op` (static shapes, on tensors) keeps the dimensions of
/// its input of extent other than 1 in their order.
bool movesUnitDimsOnly(linalg::TransposeOp op) {
  auto input = dyn_cast<RankedTensorType>(op.getInput().getType());
  auto init = dyn_cast<RankedTensorType>(op.getInit().getType());
  if (!input || !init || !input.hasStaticShape() || !init.hasStaticShape() ||
      input.getRank() == 0)
    return false;
  // Result dimension i is input dimension permutation[i]: the input
  // dimensions of other extents must appear in increasing order.
  int64_t last = -1;
  for (int64_t from : op.getPermutation()) {
    if (input.getDimSize(from) == 1)
      continue;
    if (from < last)
      return false;
    last = from;
  }
  return true;
}

struct UnitTransposesToReshapesPass final
    : public cachet::impl::UnitTransposesToReshapesBase<
          UnitTransposesToReshapesPass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (op.hasPureTensorSemantics() && movesUnitDimsOnly(op))
        transposes.push_back(op);
    });
    for (linalg::TransposeOp op : transposes) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      auto input = cast<RankedTensorType>(op.getInput().getType());
      auto result = cast<RankedTensorType>(op.getResult()[0].getType());
      auto all = [](int64_t rank) {
        ReassociationIndices group;
        for (int64_t d = 0; d < rank; ++d)
          group.push_back(d);
        return SmallVector<ReassociationIndices>{group};
      };
      auto flatType = RankedTensorType::get({input.getNumElements()},
                                            input.getElementType());
      Value flat = op.getInput();
      if (input.getRank() > 1)
        flat = tensor::CollapseShapeOp::create(b, loc, flatType, flat,
                                               all(input.getRank()));
      Value reshaped = flat;
      if (result.getRank() > 1)
        reshaped = tensor::ExpandShapeOp::create(b, loc, result, flat,
                                                 all(result.getRank()));
      emitRemark(op.getLoc(),
                 "cachet-unit-transposes-to-reshapes: moves dimensions of "
                 "extent 1 only: a reshape of ")
          << input << " (no copy)";
      op.getResult()[0].replaceAllUsesWith(reshaped);
      op.erase();
    }
  }
};

} // namespace
