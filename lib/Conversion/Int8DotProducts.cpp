//===- Int8DotProducts.cpp - 4-way int8 dot products as NVVM dp4a --------===//
//
// Rewrites the portable 4-way dot product of signed bytes kernels write
// (extsi, muli, vector.reduction <add>) into nvvm.dot.accumulate.4way.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace cachet {
#define GEN_PASS_DEF_INT8DOTPRODUCTS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Returns the vector<4xi8> that `value` sign-extends, or null.
Value getSignedBytes(Value value) {
  auto ext = value.getDefiningOp<arith::ExtSIOp>();
  auto type = ext ? dyn_cast<VectorType>(ext.getIn().getType()) : nullptr;
  if (!type || type.getRank() != 1 || type.getNumElements() != 4 ||
      !type.getElementType().isInteger(8))
    return {};
  return ext.getIn();
}

struct Int8DotProductsPass final
    : public cachet::impl::Int8DotProductsBase<Int8DotProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      SmallVector<vector::ReductionOp> dots;
      func.walk([&](vector::ReductionOp op) {
        auto mul = op.getVector().getDefiningOp<arith::MulIOp>();
        if (op.getKind() == vector::CombiningKind::ADD && mul &&
            op.getType().isInteger(32) && getSignedBytes(mul.getLhs()) &&
            getSignedBytes(mul.getRhs()))
          dots.push_back(op);
      });
      for (vector::ReductionOp op : dots) {
        OpBuilder b(op);
        auto mul = op.getVector().getDefiningOp<arith::MulIOp>();
        Value acc = op.getAcc();
        if (!acc)
          acc = arith::ConstantIntOp::create(b, op.getLoc(), b.getI32Type(), 0);
        auto signedType = NVVM::DotAccumulateType::SIGNED;
        Value dot = NVVM::DotAccumulate4WayOp::create(
            b, op.getLoc(), b.getI32Type(), getSignedBytes(mul.getLhs()),
            signedType, getSignedBytes(mul.getRhs()), signedType, acc);
        op.replaceAllUsesWith(dot);
        op.erase();
        if (mul->use_empty()) {
          Operation *lhs = mul.getLhs().getDefiningOp();
          Operation *rhs = mul.getRhs().getDefiningOp();
          mul.erase();
          for (Operation *ext : {lhs, rhs})
            if (ext && ext->use_empty())
              ext->erase();
        }
      }
      if (!dots.empty())
        emitRemark(func.getLoc(), "cachet-int8-dot-products: ")
            << dots.size() << " 4-way int8 dot products as dp4a";
    }
  }
};

} // namespace
