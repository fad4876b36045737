//===- CheckCompileInput.cpp - reject IR upstream passes crash on ---------===//

#include "cachet/Pipelines/Passes.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

namespace cachet {
#define GEN_PASS_DEF_CHECKCOMPILEINPUT
#include "cachet/Pipelines/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns the position of the first reassociation group of `reassociation`
/// that holds more than one dynamic size of `expandedShape`, if any.
std::optional<unsigned>
findMultiDynamicGroup(ArrayRef<ReassociationIndices> reassociation,
                      ArrayRef<int64_t> expandedShape) {
  for (auto [position, group] : llvm::enumerate(reassociation)) {
    int64_t numDynamic = llvm::count_if(group, [&](int64_t dim) {
      return ShapedType::isDynamic(expandedShape[dim]);
    });
    if (numDynamic > 1)
      return position;
  }
  return std::nullopt;
}

/// Emits the error of an expand_shape whose group `position` expands into
/// more than one dynamic size.
void emitMultiDynamicGroupError(Operation *op, unsigned position) {
  op->emitError("'")
      << op->getName() << "' is not supported by cachet-compile: group "
      << position
      << " of its reassociation expands into more than one dynamic size, "
         "whose strides expand-strided-metadata cannot compute";
}

/// Walks the module and emits an error on each op that an upstream pass of
/// cachet-compile is known to crash on.
struct CheckCompileInputPass final
    : public cachet::impl::CheckCompileInputBase<CheckCompileInputPass> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](Operation *op) {
      if (auto global = dyn_cast<ml_program::GlobalOp>(op)) {
        if (!isa<RankedTensorType>(global.getType())) {
          global.emitError("'")
              << global->getName() << "' of type " << global.getType()
              << " is not supported by cachet-compile: one-shot-bufferize "
                 "bufferizes ranked tensor globals only";
          failed = true;
        }
        return;
      }
      std::optional<unsigned> group;
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        group = findMultiDynamicGroup(expand.getReassociationIndices(),
                                      expand.getResultType().getShape());
      else if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
        group = findMultiDynamicGroup(expand.getReassociationIndices(),
                                      expand.getResultType().getShape());
      if (group) {
        emitMultiDynamicGroupError(op, *group);
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
