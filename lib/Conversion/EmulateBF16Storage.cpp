//===- EmulateBF16Storage.cpp - bf16 kernel buffers as i16 ---------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cachet {
#define GEN_PASS_DEF_EMULATEBF16STORAGE
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Returns `type` with i16 elements if it is a bf16 memref, else null.
MemRefType getBitsType(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getElementType().isBF16())
    return {};
  return cast<MemRefType>(
      memref.clone(IntegerType::get(type.getContext(), 16)));
}

/// Rewrites `vector.bitcast`s from or to vectors of bf16 in `func` as
/// bitcasts of i16 vectors and element-wise `arith.bitcast`s (a bf16 pair
/// packed into a word, cachet::packBF16Pair): the arith emulation then
/// leaves no bf16 vector.
void rewriteVectorBitcasts(gpu::GPUFuncOp func) {
  OpBuilder b(func.getContext());
  func.walk([&](vector::BitCastOp cast) {
    VectorType source = cast.getSourceVectorType();
    VectorType result = cast.getResultVectorType();
    bool fromBF16 = source.getElementType().isBF16();
    bool toBF16 = result.getElementType().isBF16();
    if (!fromBF16 && !toBF16)
      return;
    b.setInsertionPoint(cast);
    Location loc = cast.getLoc();
    Value value = cast.getSource();
    if (fromBF16)
      value =
          arith::BitcastOp::create(b, loc, source.clone(b.getI16Type()), value);
    value = vector::BitCastOp::create(
        b, loc, toBF16 ? result.clone(b.getI16Type()) : result, value);
    if (toBF16)
      value = arith::BitcastOp::create(b, loc, result, value);
    cast.getResult().replaceAllUsesWith(value);
    cast.erase();
  });
}

/// extract(arith.bitcast(x), i) -> arith.bitcast(extract(x, i)): an element
/// of a bf16 vector bit cast from i16 (rewriteVectorBitcasts, a word read
/// by cachet-spirv-word-loads) taken from the i16 vector, so that no bf16
/// vector is left for the scalar emulation.
struct ExtractBeforeBitcast final : OpRewritePattern<vector::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getSource().getDefiningOp<arith::BitcastOp>();
    if (!cast || !op.getDynamicPosition().empty() ||
        isa<VectorType>(op.getType()))
      return failure();
    Value element = vector::ExtractOp::create(
        rewriter, op.getLoc(), cast.getIn(), op.getMixedPosition());
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), element);
    return success();
  }
};

/// arith.bitcast(from_elements(x...)) -> from_elements(arith.bitcast(x)...):
/// a bf16 vector built from scalars and bit cast to i16 (a store of bf16
/// values in words, rewriteVectorBitcasts) built from i16 scalars instead,
/// whose bit casts fold into the scalar emulation's; no bf16 vector is left
/// (SPIR-V, which has no bf16, would cast a 16-bit scalar to a 32-bit one).
struct BitcastOfFromElements final : OpRewritePattern<arith::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto elements = op.getIn().getDefiningOp<vector::FromElementsOp>();
    auto result = dyn_cast<VectorType>(op.getType());
    if (!elements || !result)
      return failure();
    SmallVector<Value> casts;
    for (Value element : elements.getElements())
      casts.push_back(arith::BitcastOp::create(
          rewriter, op.getLoc(), result.getElementType(), element));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, result, casts);
    return success();
  }
};

/// Rewrites the bf16 buffer arguments of `func` to i16.
LogicalResult rewriteKernel(gpu::GPUFuncOp func) {
  rewriteVectorBitcasts(func);
  RewritePatternSet patterns(func.getContext());
  patterns.add<ExtractBeforeBitcast, BitcastOfFromElements>(func.getContext());
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return func.emitError(
        "cachet-emulate-bf16-storage: the extract patterns did not converge");
  OpBuilder b(func.getContext());
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : func.getArguments()) {
    MemRefType bits = getBitsType(arg.getType());
    if (!bits)
      continue;
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      b.setInsertionPoint(user);
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        auto raw =
            memref::LoadOp::create(b, load.getLoc(), arg, load.getIndices());
        raw.getResult().setType(b.getI16Type());
        Value value = arith::BitcastOp::create(
            b, load.getLoc(), b.getBF16Type(), raw.getResult());
        load.getResult().replaceAllUsesWith(value);
        load.erase();
        continue;
      }
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getMemRef() == arg) {
        Value raw = arith::BitcastOp::create(b, store.getLoc(), b.getI16Type(),
                                             store.getValueToStore());
        memref::StoreOp::create(b, store.getLoc(), raw, arg,
                                store.getIndices());
        store.erase();
        continue;
      }
      // A vector load whose elements are only extracted: an i16 vector,
      // each extracted element bitcast.
      if (auto load = dyn_cast<vector::LoadOp>(user);
          load && llvm::all_of(load->getUsers(), [](Operation *use) {
            return isa<vector::ExtractOp>(use);
          })) {
        auto raw = vector::LoadOp::create(
            b, load.getLoc(), load.getVectorType().clone(b.getI16Type()), arg,
            load.getIndices());
        if (auto align = load.getAlignment())
          raw.setAlignment(*align);
        for (Operation *use : llvm::make_early_inc_range(load->getUsers())) {
          auto extract = cast<vector::ExtractOp>(use);
          b.setInsertionPoint(extract);
          Value bits = vector::ExtractOp::create(
              b, extract.getLoc(), raw.getResult(), extract.getMixedPosition());
          extract.getResult().replaceAllUsesWith(arith::BitcastOp::create(
              b, extract.getLoc(), extract.getType(), bits));
          extract.erase();
        }
        load.erase();
        continue;
      }
      return user->emitError("cachet-emulate-bf16-storage: '")
             << user->getName()
             << "' uses a bf16 kernel buffer; only loads and stores can";
    }
    arg.setType(bits);
    inputs[arg.getArgNumber()] = bits;
  }
  func.setFunctionType(
      FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
  return success();
}

struct EmulateBF16StoragePass final
    : public cachet::impl::EmulateBF16StorageBase<EmulateBF16StoragePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult walked = module.walk([&](gpu::GPUFuncOp func) {
      return failed(rewriteKernel(func)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    // Launch operands take the kernels' new types.
    OpBuilder b(module.getContext());
    module.walk([&](gpu::LaunchFuncOp launch) {
      for (OpOperand &operand : launch->getOpOperands()) {
        MemRefType bits = getBitsType(operand.get().getType());
        if (!bits ||
            !llvm::is_contained(launch.getKernelOperands(), operand.get()))
          continue;
        b.setInsertionPoint(launch);
        operand.set(UnrealizedConversionCastOp::create(b, launch.getLoc(), bits,
                                                       operand.get())
                        .getResult(0));
      }
    });
  }
};

} // namespace
