//===- SinkIntoLaunches.cpp - each launch's own constants ----------------===//
//
// Clones the constants and index computations a gpu.launch uses into its
// body, as gpu-launch-sink-index-computations does, renaming the operands
// in one walk of each body instead of visiting every use of each value in
// the function per launch. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace cachet {
#define GEN_PASS_DEF_SINKINTOLAUNCHES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The values worth recomputing in a kernel rather than passing in (the
/// upstream pass's default choice).
bool isIndexComputation(Operation *op) {
  return matchPattern(op, m_Constant()) ||
         isa<memref::DimOp, arith::SelectOp, arith::CmpIOp>(op);
}

/// Adds `op` to `sunk` (after the ops that define its operands) when it is
/// an index computation whose operands are each either sunk too or used by
/// the launch anyway (`used`), so that copying it adds no kernel argument.
/// `available` holds the results of the ops in `sunk`.
bool collect(Operation *op, const llvm::SetVector<Value> &used,
             llvm::SetVector<Operation *> &sunk,
             llvm::SmallPtrSetImpl<Value> &available) {
  if (sunk.contains(op))
    return true;
  if (!isIndexComputation(op))
    return false;
  for (Value operand : op->getOperands()) {
    if (available.contains(operand))
      continue;
    Operation *def = operand.getDefiningOp();
    bool copied = def && collect(def, used, sunk, available);
    if (!copied && !used.contains(operand))
      return false;
  }
  sunk.insert(op);
  available.insert(op->result_begin(), op->result_end());
  return true;
}

struct SinkIntoLaunchesPass final
    : public cachet::impl::SinkIntoLaunchesBase<SinkIntoLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    int64_t launches = 0, copies = 0;
    func.walk([&](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      llvm::SetVector<Value> used;
      getUsedValuesDefinedAbove(body, used);
      llvm::SetVector<Operation *> sunk;
      llvm::SmallPtrSet<Value, 16> available;
      for (Value value : used)
        if (Operation *def = value.getDefiningOp())
          collect(def, used, sunk, available);
      if (sunk.empty())
        return;
      // The copies at the top of the body, in dependence order.
      OpBuilder builder = OpBuilder::atBlockBegin(&body.front());
      IRMapping copiesOf;
      for (Operation *op : sunk)
        builder.clone(*op, copiesOf);
      // Every use inside the body reads the copy: one walk of the body.
      body.walk([&](Operation *op) {
        for (OpOperand &operand : op->getOpOperands())
          if (Value copy = copiesOf.lookupOrNull(operand.get()))
            operand.set(copy);
      });
      ++launches;
      copies += static_cast<int64_t>(sunk.size());
    });
    if (launches > 0)
      emitRemark(func.getLoc())
          << "cachet-sink-into-launches: copied " << copies
          << " constant and index computations into " << launches
          << " gpu.launch bodies (each launch its own copy)";
  }
};

} // namespace
