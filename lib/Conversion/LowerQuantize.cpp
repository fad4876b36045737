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

/// Replaces `op` by the kernel: a thread per block scans its values once,
/// then computes and stores each byte.
void buildKernel(RewriterBase &rewriter, linalg::GenericOp op,
                 const QuantizeShape &s, int64_t threads) {
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  auto bytesType = cast<MemRefType>(s.bytes.getType());
  int64_t rank = bytesType.getRank();
  int64_t blockBytes = s.block.getBlockBytes();
  // The iteration space: the rows (every dimension but the innermost) and
  // the blocks of a row, the blocks fastest.
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < rank; ++i)
    sizes.push_back(bytesType.isDynamicDim(i)
                        ? memref::DimOp::create(b, loc, s.bytes, i).getResult()
                        : index(b, bytesType.getDimSize(i)));
  sizes.back() =
      arith::DivUIOp::create(b, loc, sizes.back(), index(b, blockBytes));
  Value total = sizes.front();
  for (Value size : ArrayRef<Value>(sizes).drop_front())
    total = arith::MulIOp::create(b, loc, total, size);
  Value grid = arith::CeilDivUIOp::create(b, loc, total, index(b, threads));
  Value one = index(b, 1);
  // A run-time size of 0 launches nothing (an empty grid is no launch).
  if (!bytesType.hasStaticShape()) {
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, total,
                                      index(b, 0));
    auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifAny.thenBlock());
  }
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, index(b, threads),
                                      one, one);
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value id = arith::AddIOp::create(kb, loc,
                                   arith::MulIOp::create(kb, loc,
                                                         launch.getBlockIds().x,
                                                         index(kb, threads)),
                                   launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, id, total);
  auto guard = scf::IfOp::create(kb, loc, inRange, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(kb, loc);

  OpBuilder tb = OpBuilder::atBlockTerminator(guard.thenBlock());
  // The thread's row and block, from the innermost dimension out.
  SmallVector<Value> at(rank);
  Value rest = id;
  for (int64_t i = rank - 1; i > 0; --i) {
    at[i] = arith::RemUIOp::create(tb, loc, rest, sizes[i]);
    rest = arith::DivUIOp::create(tb, loc, rest, sizes[i]);
  }
  at[0] = rest;
  Value blockIndex = at.back();
  Value firstValue = arith::MulIOp::create(tb, loc, blockIndex, index(tb, 32));
  Value firstByte =
      arith::MulIOp::create(tb, loc, blockIndex, index(tb, blockBytes));
  BlockEncoder encoder(tb, loc, s.block, s.rounding,
                       [&](OpBuilder &rb, Location rl, Value lane) -> Value {
                         SmallVector<Value> where(at);
                         where.back() =
                             arith::AddIOp::create(rb, rl, firstValue, lane);
                         Value x =
                             memref::LoadOp::create(rb, rl, s.values, where);
                         return castFloat(rb, rl, x, rb.getF32Type());
                       });
  SmallVector<Value> params = encoder.getBlockParams();
  for (int64_t byte = 0; byte < blockBytes; ++byte) {
    Value value = encoder.encodeByte(index(tb, byte), params);
    SmallVector<Value> where(at);
    where.back() = arith::AddIOp::create(tb, loc, firstByte, index(tb, byte));
    memref::StoreOp::create(tb, loc, value, s.bytes, where);
  }

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
      buildKernel(rewriter, op, *shape, config.getWorkgroup());
    }
  }
};

} // namespace
