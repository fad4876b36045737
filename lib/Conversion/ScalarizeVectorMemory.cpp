//===- ScalarizeVectorMemory.cpp - Scalar loads and stores for SPIR-V ----===//
//
// Vector loads and stores on memrefs of their element type become one
// scalar access per element, which SPIR-V's Logical addressing can express
// without pointer casts. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cachet {
#define GEN_PASS_DEF_SCALARIZEVECTORMEMORY
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns true if an access of `type` to `memref` is one this pass splits:
/// a 1-D vector of several elements of the memref's element type.
bool isSplit(VectorType type, MemRefType memref) {
  return type.getRank() == 1 && !type.isScalable() &&
         type.getNumElements() > 1 && memref.getRank() > 0 &&
         type.getElementType() == memref.getElementType();
}

/// Returns `indices` with the innermost one advanced by `offset`.
SmallVector<Value> elementIndices(OpBuilder &b, Location loc,
                                  ValueRange indices, int64_t offset) {
  SmallVector<Value> at(indices);
  if (offset != 0)
    at.back() = arith::AddIOp::create(
        b, loc, at.back(), arith::ConstantIndexOp::create(b, loc, offset));
  return at;
}

/// vector.load -> memref.load per element + vector.from_elements.
struct SplitVectorLoad final : OpRewritePattern<vector::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::LoadOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isSplit(type, op.getMemRefType()))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      elements.push_back(memref::LoadOp::create(
          rewriter, loc, op.getBase(),
          elementIndices(rewriter, loc, op.getIndices(), i)));
    // Slices and single elements of the vector are taken from the scalars
    // directly: a vector wider than SPIR-V's (more than 4 values) that is
    // only used in such pieces never exists.
    for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
      rewriter.setInsertionPoint(user);
      if (auto slice = dyn_cast<vector::ExtractStridedSliceOp>(user);
          slice && !slice.hasNonUnitStrides()) {
        int64_t offset = cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
        int64_t size = cast<IntegerAttr>(slice.getSizes()[0]).getInt();
        rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
            slice, slice.getType(),
            ArrayRef<Value>(elements).slice(offset, size));
        continue;
      }
      if (auto extract = dyn_cast<vector::ExtractOp>(user);
          extract && extract.getDynamicPosition().empty() &&
          !isa<VectorType>(extract.getType())) {
        rewriter.replaceOp(extract, elements[extract.getStaticPosition()[0]]);
        continue;
      }
    }
    if (op->use_empty()) {
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.setInsertionPoint(op);
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, elements);
    return success();
  }
};

/// vector.store -> vector.extract + memref.store per element.
struct SplitVectorStore final : OpRewritePattern<vector::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::StoreOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getVectorType();
    if (!isSplit(type, op.getMemRefType()))
      return failure();
    Location loc = op.getLoc();
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      Value element = vector::ExtractOp::create(
          rewriter, loc, op.getValueToStore(), ArrayRef<int64_t>{i});
      memref::StoreOp::create(
          rewriter, loc, element, op.getBase(),
          elementIndices(rewriter, loc, op.getIndices(), i));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// Splits the vector loads and stores of a gpu.module's kernels.
struct ScalarizeVectorMemoryPass final
    : public cachet::impl::ScalarizeVectorMemoryBase<
          ScalarizeVectorMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitVectorLoad, SplitVectorStore>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
