//===- LowerMatvec.cpp - subgroup-per-row mat-vec kernels ----------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace cachet {
#define GEN_PASS_DEF_LOWERMATVEC
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Bytes each lane loads at a time.
constexpr int64_t kLoadBytes = 16;

/// Returns why `op` cannot use the subgroup kernel, or an empty string.
std::string whyNot(linalg::MatvecOp op, int64_t lanes) {
  auto a = dyn_cast<MemRefType>(op.getInputs()[0].getType());
  auto x = dyn_cast<MemRefType>(op.getInputs()[1].getType());
  auto y = dyn_cast<MemRefType>(op.getOutputs()[0].getType());
  if (!a || !x || !y)
    return "not on memrefs (run after bufferization)";
  if (!a.hasStaticShape() || !x.hasStaticShape() || !y.hasStaticShape())
    return "dynamic shape";
  Type element = a.getElementType();
  if (!(element.isF16() || element.isBF16() || element.isF32()) ||
      x.getElementType() != element || !y.getElementType().isF32())
    return "element types are not f16/bf16/f32 with an f32 result";
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(a.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      (strides[0] * elementBytes) % kLoadBytes != 0 ||
      (offset * elementBytes) % kLoadBytes != 0)
    return "the weight's rows are not unit-stride and 16-byte aligned";
  if (!x.getLayout().isIdentity() || !y.getLayout().isIdentity())
    return "x or y is not contiguous";
  if (a.getDimSize(1) % (kLoadBytes / elementBytes) != 0)
    return "the row length is not a multiple of 16 bytes";
  if (lanes <= 0 || !llvm::isPowerOf2_64(lanes))
    return "subgroup-size is not a power of two";
  return "";
}

struct LowerMatvecPass final
    : public cachet::impl::LowerMatvecBase<LowerMatvecPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::MatvecOp> ops;
    getOperation().walk([&](linalg::MatvecOp op) { ops.push_back(op); });
    for (linalg::MatvecOp op : ops) {
      std::string reason = whyNot(op, subgroupSize);
      if (rowsPerBlock <= 0)
        reason = "rows-per-block must be positive";
      if (!reason.empty()) {
        op.emitRemark("cachet-lower-matvec: generic kernel: ") << reason;
        continue;
      }
      lower(op);
    }
  }

  void lower(linalg::MatvecOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value matrix = op.getInputs()[0], vec = op.getInputs()[1],
          out = op.getOutputs()[0];
    auto type = cast<MemRefType>(matrix.getType());
    Type element = type.getElementType();
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    int64_t width = kLoadBytes / (element.getIntOrFloatBitWidth() / 8);
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    Value one = index(b, 1);
    Value grid = index(b, llvm::divideCeil(rows, rowsPerBlock));
    auto launch =
        gpu::LaunchOp::create(b, loc, grid, one, one, index(b, subgroupSize),
                              index(b, rowsPerBlock), one);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value lane = launch.getThreadIds().x;
    Value row = arith::AddIOp::create(
        kb, loc,
        arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                              index(kb, rowsPerBlock)),
        launch.getThreadIds().y);
    Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                          row, index(kb, rows));
    auto ifOp = scf::IfOp::create(kb, loc, inRange, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
    Type f32 = ib.getF32Type();
    auto vecType = VectorType::get({width}, element);
    auto f32Vec = VectorType::get({width}, f32);
    Value zero = arith::ConstantOp::create(ib, loc, ib.getF32FloatAttr(0));
    Value start = arith::MulIOp::create(ib, loc, lane, index(ib, width));
    auto loop = scf::ForOp::create(
        ib, loc, start, index(ib, cols), index(ib, width * subgroupSize),
        ValueRange{zero},
        [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
          auto load = [&](Value memref, ValueRange indices) -> Value {
            auto v = vector::LoadOp::create(lb, l, vecType, memref, indices);
            v.setAlignment(kLoadBytes);
            if (element.isF32())
              return v.getResult();
            return arith::ExtFOp::create(lb, l, f32Vec, v.getResult());
          };
          Value a = load(matrix, ValueRange{row, k});
          Value x = load(vec, ValueRange{k});
          Value product = arith::MulFOp::create(lb, l, a, x);
          Value sum = vector::ReductionOp::create(
              lb, l, vector::CombiningKind::ADD, product, iter[0]);
          scf::YieldOp::create(lb, l, sum);
        });
    Value sum = loop.getResult(0);
    Value lanes =
        arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), subgroupSize);
    for (int64_t offset = subgroupSize / 2; offset > 0; offset /= 2) {
      Value o = arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), offset);
      auto shuffle =
          gpu::ShuffleOp::create(ib, loc, sum, o, lanes, gpu::ShuffleMode::XOR);
      sum = arith::AddFOp::create(ib, loc, sum, shuffle.getShuffleResult());
    }
    Value first = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, lane,
                                        index(ib, 0));
    auto store = scf::IfOp::create(ib, loc, first, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    Value old = memref::LoadOp::create(sb, loc, out, ValueRange{row});
    memref::StoreOp::create(sb, loc, arith::AddFOp::create(sb, loc, old, sum),
                            out, ValueRange{row});
    kb.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(kb, loc);
    op.erase();
  }
};

} // namespace
