//===- PitchedWeights.cpp - padded weight arguments as pitched buffers ---===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace cachet {
#define GEN_PASS_DEF_PITCHEDWEIGHTS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

struct PitchedWeightsPass final
    : public cachet::impl::PitchedWeightsBase<PitchedWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    for (BlockArgument arg : func.getArguments()) {
      auto pitch = func.getArgAttrOfType<IntegerAttr>(
          arg.getArgNumber(), cachet::CachetDialect::getRowPitchAttrName());
      if (!pitch)
        continue;
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getRank() < 2)
        return func.emitError("cachet-pitched-weights: argument ")
               << arg.getArgNumber()
               << " has a row pitch but is not a statically shaped, "
                  "identity-layout memref of rank >= 2: "
               << arg.getType();
      int64_t cols = type.getShape().back();
      if (pitch.getInt() < cols)
        return func.emitError("cachet-pitched-weights: argument ")
               << arg.getArgNumber() << " has row pitch " << pitch.getInt()
               << ", less than its " << cols << " columns";
      SmallVector<int64_t> padded(type.getShape());
      padded.back() = pitch.getInt();
      Location loc = arg.getLoc();
      auto buffer = memref::AllocOp::create(
          b, loc, MemRefType::get(padded, type.getElementType()));
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      Value view =
          memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
      auto copy = memref::CopyOp::create(b, loc, arg, view);
      copy->setAttr(cachet::CachetDialect::getPitchedUploadAttrName(),
                    b.getUnitAttr());
      arg.replaceAllUsesExcept(view, copy);
    }
    return success();
  }
};

} // namespace
