//===- LowerQuantize.cpp - one kernel for cachet.quantize to blocks -------===//

#include "cachet/Analysis/QuantizeConfig.h"
#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Conversion/BlockEncoder.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>

namespace cachet {
#define GEN_PASS_DEF_LOWERQUANTIZE
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

/// The quantize config on `op` (a marked byte generic), or null.
KernelConfigAttr getConfig(linalg::GenericOp op) {
  if (!op->hasAttr(CachetDialect::getQuantizeAttrName()))
    return {};
  auto config = op->getAttrOfType<KernelConfigAttr>(
      CachetDialect::getKernelConfigAttrName());
  return config && config.isQuantize() ? config : KernelConfigAttr();
}

/// The launch of a quantize kernel over the blocks of `s.bytes`: the rows
/// (every dimension but the innermost) and the blocks of a row, the blocks
/// fastest, `blocksPerGroup` blocks per workgroup of `threads`.
struct BlockLaunch {
  gpu::LaunchOp launch;
  /// The sizes of the rows' dimensions and the blocks of a row, and their
  /// product, the block count.
  SmallVector<Value> sizes;
  Value total;
};

BlockLaunch createBlockLaunch(OpBuilder &b, Location loc,
                              const QuantizeShape &s, int64_t blocksPerGroup,
                              int64_t threads) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto bytesType = cast<MemRefType>(s.bytes.getType());
  BlockLaunch l;
  for (int64_t i = 0; i < bytesType.getRank(); ++i)
    l.sizes.push_back(
        bytesType.isDynamicDim(i)
            ? memref::DimOp::create(b, loc, s.bytes, i).getResult()
            : index(bytesType.getDimSize(i)));
  l.sizes.back() = arith::DivUIOp::create(b, loc, l.sizes.back(),
                                          index(s.block.getBlockBytes()));
  l.total = l.sizes.front();
  for (Value size : ArrayRef<Value>(l.sizes).drop_front())
    l.total = arith::MulIOp::create(b, loc, l.total, size);
  Value grid =
      arith::CeilDivUIOp::create(b, loc, l.total, index(blocksPerGroup));
  Value one = index(1);
  // A run-time size of 0 launches nothing (an empty grid is no launch).
  if (!bytesType.hasStaticShape()) {
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, l.total,
                                      index(0));
    auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifAny.thenBlock());
  }
  l.launch =
      gpu::LaunchOp::create(b, loc, grid, one, one, index(threads), one, one);
  return l;
}

/// The coordinates of block `id` (its row's, then its index in the row),
/// from the innermost dimension out.
SmallVector<Value> getBlockCoordinates(OpBuilder &b, Location loc,
                                       ArrayRef<Value> sizes, Value id) {
  SmallVector<Value> at(sizes.size());
  Value rest = id;
  for (int64_t i = int64_t(sizes.size()) - 1; i > 0; --i) {
    at[i] = arith::RemUIOp::create(b, loc, rest, sizes[i]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[i]);
  }
  at[0] = rest;
  return at;
}

/// Replaces `op` by the subgroup kernel: `lanes` consecutive lanes of a
/// subgroup of `width` hold a block (value lane + lanes * k in slot k),
/// scan it through shuffles and store its bytes, each byte one lane's.
/// Every lane runs the shuffles: a lane past the last block reads the last
/// block again and stores nothing.
void buildSubgroupKernel(RewriterBase &rewriter, linalg::GenericOp op,
                         const QuantizeShape &s, int64_t threads,
                         int64_t width) {
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  int64_t lanes = std::min<int64_t>(width, 32);
  int64_t blocksPerGroup = threads / lanes;
  int64_t blockBytes = s.block.getBlockBytes();
  BlockLaunch l = createBlockLaunch(b, loc, s, blocksPerGroup, threads);
  gpu::LaunchOp launch = l.launch;
  Value total = l.total;
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  Value block = arith::AddIOp::create(
      kb, loc,
      arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                            index(kb, blocksPerGroup)),
      arith::DivUIOp::create(kb, loc, tid, index(kb, lanes)));
  Value inRange =
      arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, block, total);
  Value last = arith::SubIOp::create(kb, loc, total, index(kb, 1));
  Value read = arith::MinUIOp::create(kb, loc, block, last);
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastUIOp::create(kb, loc, kb.getI32Type(), v);
  };
  Value laneIndex = arith::RemUIOp::create(kb, loc, tid, index(kb, lanes));
  Value lane = toI32(laneIndex);
  Value first = toI32(arith::SubIOp::create(
      kb, loc, arith::RemUIOp::create(kb, loc, tid, index(kb, width)),
      laneIndex));
  // The block's row, and its index in the row.
  SmallVector<Value> at = getBlockCoordinates(kb, loc, l.sizes, read);
  Value blockIndex = at.back();
  BlockEncoder::LaneValues values;
  values.lane = lane;
  values.first = first;
  values.lanes = lanes;
  values.width = width;
  Value firstValue = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, blockIndex, index(kb, 32)),
      laneIndex);
  for (int64_t k = 0; k < 32 / lanes; ++k) {
    SmallVector<Value> where(at);
    where.back() =
        arith::AddIOp::create(kb, loc, firstValue, index(kb, lanes * k));
    Value x = memref::LoadOp::create(kb, loc, s.values, where);
    values.slots.push_back(castFloat(kb, loc, x, kb.getF32Type()));
  }
  BlockEncoder encoder(kb, loc, s.block, s.rounding, values);
  SmallVector<BlockEncoder::LaneByte> bytes = encoder.encodeLaneBytes();
  Value firstByte =
      arith::MulIOp::create(kb, loc, blockIndex, index(kb, blockBytes));
  for (const BlockEncoder::LaneByte &byte : bytes) {
    Value stores = arith::AndIOp::create(kb, loc, byte.stores, inRange);
    auto guard = scf::IfOp::create(kb, loc, stores, /*withElseRegion=*/false);
    OpBuilder sb = OpBuilder::atBlockTerminator(guard.thenBlock());
    SmallVector<Value> where(at);
    where.back() = arith::AddIOp::create(sb, loc, firstByte, byte.offset);
    memref::StoreOp::create(sb, loc, byte.value, s.bytes, where);
  }
  gpu::TerminatorOp::create(kb, loc);
  rewriter.eraseOp(op);
}

struct LowerQuantizePass final
    : public cachet::impl::LowerQuantizeBase<LowerQuantizePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (getConfig(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      KernelConfigAttr config = getConfig(op);
      std::string why;
      std::optional<QuantizeShape> shape = getQuantizeShape(op, why);
      if (!shape) {
        op.emitError("cachet-lower-quantize: cannot build ")
            << config << ": " << why;
        return signalPassFailure();
      }
      buildSubgroupKernel(rewriter, op, *shape, config.getWorkgroup(),
                          config.getSubgroup());
    }
  }
};

} // namespace
