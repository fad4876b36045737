//===- ReturnArguments.cpp - return arguments, not clones of them ---------===//

#include "cachet/Pipelines/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace cachet {
#define GEN_PASS_DEF_RETURNARGUMENTS
#include "cachet/Pipelines/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns true if `value` is (a view of) an argument of `func`.
bool isArgumentView(Value value, func::FuncOp func) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getOwner() == &func.getBody().front();
}

struct ReturnArgumentsPass final
    : public cachet::impl::ReturnArgumentsBase<ReturnArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    func.walk([&](func::ReturnOp ret) {
      for (OpOperand &operand : ret->getOpOperands()) {
        auto clone = operand.get().getDefiningOp<bufferization::CloneOp>();
        // A clone that changes the layout stays: the result type is the
        // clone's.
        if (!clone || clone.getInput().getType() != clone.getType() ||
            !isArgumentView(clone.getInput(), func))
          continue;
        operand.set(clone.getInput());
        if (clone->use_empty())
          clone->erase();
      }
    });
  }
};
} // namespace
