//===- SinkViewsIntoKernels.cpp - views at run-time offsets in kernels ---===//
//
// SPIR-V kernels cannot take a memref with a dynamic offset; this pass
// builds such views inside the gpu.launch bodies that use them, so the
// kernels take their root buffers and offsets. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace cachet {
#define GEN_PASS_DEF_SINKVIEWSINTOKERNELS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Whether `op` is a memref view whose result has a dynamic offset or
/// stride (a kernel argument SPIR-V cannot lower).
bool isDynamicView(Operation *op) {
  if (!isa<memref::SubViewOp, memref::ReinterpretCastOp, memref::CastOp,
           memref::ExpandShapeOp, memref::CollapseShapeOp>(op))
    return false;
  auto type = dyn_cast<MemRefType>(op->getResult(0).getType());
  if (!type)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return true;
  return ShapedType::isDynamic(offset) ||
         llvm::any_of(strides, ShapedType::isDynamic);
}

/// Clones the dynamic view `value` (and the dynamic views it is a view of)
/// at `b`'s insertion point; returns the clone's result.
Value cloneView(OpBuilder &b, Value value, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *op = value.getDefiningOp();
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp(); def && isDynamicView(def))
      cloneView(b, operand, mapping);
  Operation *clone = b.clone(*op, mapping);
  return clone->getResult(0);
}

struct SinkViewsIntoKernelsPass final
    : public cachet::impl::SinkViewsIntoKernelsBase<SinkViewsIntoKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      SetVector<Value> above;
      getUsedValuesDefinedAbove(body, above);
      OpBuilder b(launch.getContext());
      b.setInsertionPointToStart(&body.front());
      IRMapping mapping;
      for (Value value : above) {
        Operation *def = value.getDefiningOp();
        if (!def || !isDynamicView(def))
          continue;
        Value inside = cloneView(b, value, mapping);
        value.replaceUsesWithIf(inside, [&](OpOperand &use) {
          return body.isAncestor(use.getOwner()->getParentRegion());
        });
      }
    });
  }
};

} // namespace
