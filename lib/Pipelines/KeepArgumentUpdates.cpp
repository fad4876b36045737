//===- KeepArgumentUpdates.cpp - whole-argument insert_slice as an update -===//

#include "cachet/Pipelines/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace cachet {
#define GEN_PASS_DEF_KEEPARGUMENTUPDATES
#include "cachet/Pipelines/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns the argument of `func` whose buffer `tensor` is written into,
/// following the destinations of insert_slices and destination-style ops.
BlockArgument getUpdatedArgument(Value tensor, func::FuncOp func) {
  while (tensor) {
    if (auto argument = dyn_cast<BlockArgument>(tensor))
      return argument.getOwner() == &func.getBody().front() ? argument
                                                            : BlockArgument();
    Operation *def = tensor.getDefiningOp();
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      tensor = insert.getDest();
    } else if (auto materialize =
                   dyn_cast<bufferization::MaterializeInDestinationOp>(def)) {
      tensor = materialize.getDest();
    } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      tensor = dps.getTiedOpOperand(cast<OpResult>(tensor))->get();
    } else {
      return {};
    }
  }
  return {};
}

/// Returns true when `insert` writes its whole destination: the folder of
/// tensor.insert_slice would replace it by its source.
bool coversDestination(tensor::InsertSliceOp insert) {
  RankedTensorType sourceType = insert.getSourceType();
  RankedTensorType destType = insert.getDestType();
  if (sourceType != destType || !destType.hasStaticShape())
    return false;
  for (auto [offset, size, stride, extent] :
       llvm::zip_equal(insert.getStaticOffsets(), insert.getStaticSizes(),
                       insert.getStaticStrides(), destType.getShape()))
    if (offset != 0 || size != extent || stride != 1)
      return false;
  return true;
}

struct KeepArgumentUpdatesPass final
    : public cachet::impl::KeepArgumentUpdatesBase<KeepArgumentUpdatesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<tensor::InsertSliceOp> inserts;
    func.walk([&](tensor::InsertSliceOp insert) {
      if (coversDestination(insert))
        inserts.push_back(insert);
    });
    for (tensor::InsertSliceOp insert : inserts) {
      BlockArgument argument = getUpdatedArgument(insert.getDest(), func);
      if (!argument)
        continue;
      OpBuilder builder(insert);
      auto materialize = bufferization::MaterializeInDestinationOp::create(
          builder, insert.getLoc(), insert.getSource(), insert.getDest());
      emitRemark(insert.getLoc(),
                 "cachet-keep-argument-updates: the slice covers all "
                 "of argument ")
          << argument.getArgNumber()
          << ": kept as an update of that argument "
             "(bufferization.materialize_in_destination), not folded to "
             "its source";
      insert.replaceAllUsesWith(materialize.getResult());
      insert.erase();
    }
  }
};
} // namespace
