//===- LowerMatvec.cpp - subgroup-per-row mat-vec kernels ----------------===//

#include "cachet/Conversion/Passes.h"

#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Device/DeviceProfile.h"

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
    // The subgroup size: the option, else the profile's, else 32.
    int64_t lanes = subgroupSize;
    if (lanes == 0) {
      cachet::DeviceProfileAttr profile =
          cachet::lookupDeviceProfile(getOperation());
      lanes = profile && profile.getSubgroupSize() > 0
                  ? static_cast<int64_t>(profile.getSubgroupSize())
                  : 32;
    }
    for (linalg::MatvecOp op : ops) {
      std::string reason = whyNot(op, lanes);
      if (rowsPerBlock <= 0)
        reason = "rows-per-block must be positive";
      if (loadsPerLane <= 0)
        reason = "loads-per-lane must be positive";
      if (rowsPerSubgroup <= 0)
        reason = "rows-per-subgroup must be positive";
      if (!reason.empty()) {
        op.emitRemark("cachet-lower-matvec: generic kernel: ") << reason;
        continue;
      }
      bool folded = getZeroFill(op) != nullptr;
      int64_t rows =
          cast<MemRefType>(op.getInputs()[0].getType()).getDimSize(0);
      op.emitRemark("cachet-lower-matvec: subgroup kernel: ")
          << lanes << " lanes per row, " << rowsPerBlock.getValue()
          << " subgroups per block, " << loadsPerLane.getValue()
          << " 16-byte loads per lane in flight, "
          << (rows % rowsPerSubgroup == 0 ? rowsPerSubgroup.getValue() : 1)
          << " rows per subgroup"
          << (folded ? "; the zero fill of the result is done in the kernel"
                     : "");
      lower(op, lanes);
    }
  }

  /// Returns the `linalg.fill` of +0.0 that writes `op`'s result buffer
  /// right before it (nothing in between), or null. The kernel then stores
  /// `0.0 + sum` itself: the same value (also for a sum of -0.0) in one
  /// launch instead of two.
  static linalg::FillOp getZeroFill(linalg::MatvecOp op) {
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    if (!fill || fill.getOutputs().size() != 1 ||
        fill.getOutputs()[0] != op.getOutputs()[0])
      return {};
    auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantFloatOp>();
    if (!zero || !zero.value().isPosZero())
      return {};
    return fill;
  }

  void lower(linalg::MatvecOp op, int64_t lanes) {
    linalg::FillOp fill = getZeroFill(op);
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
    // A one-dimensional block of `rowsPerBlock` subgroups: thread t is lane
    // t % lanes of subgroup t / lanes + block * rowsPerBlock, which computes
    // the `rowsPerSubgroup` rows from subgroup * rowsPerSubgroup on.
    int64_t perSubgroup = rows % rowsPerSubgroup == 0 ? rowsPerSubgroup : 1;
    int64_t subgroups = rows / perSubgroup;
    Value one = index(b, 1);
    Value grid = index(b, llvm::divideCeil(subgroups, rowsPerBlock));
    auto launch = gpu::LaunchOp::create(
        b, loc, grid, one, one, index(b, lanes * rowsPerBlock), one, one);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value lane = arith::RemUIOp::create(kb, loc, tid, index(kb, lanes));
    Value subgroup = arith::AddIOp::create(
        kb, loc,
        arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                              index(kb, rowsPerBlock)),
        arith::DivUIOp::create(kb, loc, tid, index(kb, lanes)));
    Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                          subgroup, index(kb, subgroups));
    auto ifOp = scf::IfOp::create(kb, loc, inRange, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
    SmallVector<Value> rowIds;
    Value row0 =
        arith::MulIOp::create(ib, loc, subgroup, index(ib, perSubgroup));
    for (int64_t r = 0; r < perSubgroup; ++r)
      rowIds.push_back(arith::AddIOp::create(ib, loc, row0, index(ib, r)));
    Type f32 = ib.getF32Type();
    auto vecType = VectorType::get({width}, element);
    auto f32Vec = VectorType::get({width}, f32);
    Value zeros = arith::ConstantOp::create(
        ib, loc, f32Vec, DenseElementsAttr::get(f32Vec, 0.0f));
    // Each lane accumulates `width` partial sums per row; `loadsPerLane`
    // loads of x and of each row are issued before their products are added,
    // so that many 16-byte loads per lane and row are in flight, and each
    // load of x serves every row of the subgroup.
    auto body = [&](OpBuilder &lb, Location l, Value k0, ValueRange accs,
                    int64_t loads) -> SmallVector<Value> {
      auto load = [&](Value memref, ValueRange indices, bool weight) {
        auto v = vector::LoadOp::create(lb, l, vecType, memref, indices);
        v.setAlignment(kLoadBytes);
        if (weight)
          v->setAttr(cachet::getStreamingWeightAttrName(), lb.getUnitAttr());
        return v.getResult();
      };
      SmallVector<Value> x;
      SmallVector<SmallVector<Value>> a(perSubgroup);
      for (int64_t u = 0; u < loads; ++u) {
        Value k =
            arith::AddIOp::create(lb, l, k0, index(lb, u * width * lanes));
        x.push_back(load(vec, ValueRange{k}, /*weight=*/false));
        for (int64_t r = 0; r < perSubgroup; ++r)
          a[r].push_back(
              load(matrix, ValueRange{rowIds[r], k}, /*weight=*/true));
      }
      auto toF32 = [&](Value v) {
        return element.isF32() ? v : arith::ExtFOp::create(lb, l, f32Vec, v);
      };
      SmallVector<Value> result(accs.begin(), accs.end());
      for (int64_t u = 0; u < loads; ++u) {
        Value xv = toF32(x[u]);
        for (int64_t r = 0; r < perSubgroup; ++r)
          result[r] = arith::AddFOp::create(
              lb, l, result[r],
              arith::MulFOp::create(lb, l, toF32(a[r][u]), xv));
      }
      return result;
    };
    int64_t round = width * lanes;
    int64_t unrolled = round * loadsPerLane;
    int64_t mainCols = cols / unrolled * unrolled;
    Value start = arith::MulIOp::create(ib, loc, lane, index(ib, width));
    SmallVector<Value> accs(perSubgroup, zeros);
    if (mainCols > 0)
      accs =
          scf::ForOp::create(
              ib, loc, start, index(ib, mainCols), index(ib, unrolled), accs,
              [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
                scf::YieldOp::create(lb, l, body(lb, l, k, iter, loadsPerLane));
              })
              .getResults();
    if (mainCols < cols)
      accs = scf::ForOp::create(
                 ib, loc,
                 arith::AddIOp::create(ib, loc, start, index(ib, mainCols)),
                 index(ib, cols), index(ib, round), accs,
                 [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
                   scf::YieldOp::create(lb, l, body(lb, l, k, iter, 1));
                 })
                 .getResults();
    Value zero = arith::ConstantOp::create(ib, loc, ib.getF32FloatAttr(0));
    Value width32 =
        arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), lanes);
    SmallVector<Value> sums;
    for (Value acc : accs) {
      Value sum = vector::ReductionOp::create(
          ib, loc, vector::CombiningKind::ADD, acc, zero);
      for (int64_t offset = lanes / 2; offset > 0; offset /= 2) {
        Value o =
            arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), offset);
        auto shuffle = gpu::ShuffleOp::create(ib, loc, sum, o, width32,
                                              gpu::ShuffleMode::XOR);
        sum = arith::AddFOp::create(ib, loc, sum, shuffle.getShuffleResult());
      }
      sums.push_back(sum);
    }
    Value first = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, lane,
                                        index(ib, 0));
    auto store = scf::IfOp::create(ib, loc, first, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    for (auto [row, sum] : llvm::zip_equal(rowIds, sums)) {
      Value old = fill ? zero
                       : memref::LoadOp::create(sb, loc, out, ValueRange{row})
                             .getResult();
      memref::StoreOp::create(sb, loc, arith::AddFOp::create(sb, loc, old, sum),
                              out, ValueRange{row});
    }
    if (fill)
      fill.erase();
    kb.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(kb, loc);
    op.erase();
  }
};

} // namespace
