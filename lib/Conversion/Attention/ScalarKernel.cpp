//===- ScalarKernel.cpp - the scalar flash-attention kernel ---------------===//
//
// One thread per query row, every target: pass 1 walks the KV tiles for the
// row's max and sum of exp(score - max) (online softmax), pass 2 walks them
// again with the reference's normalized P rounded to V's element type.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

Value KernelBuilder::foldTileSum(Value runningMax, Value runningSum,
                                 Value newMax, Value scores, Value thread) {
  Value f32Zero = f32(0);
  SoftmaxRescale step = softmaxRescale(
      runningMax, newMax, f32(-std::numeric_limits<double>::infinity()),
      /*base2=*/false);
  auto exps = scf::ForOp::create(b, loc, index(0), index(c.keyTile), index(1),
                                 ValueRange{f32Zero});
  {
    OpBuilder::InsertionGuard expGuard(b);
    b.setInsertionPointToStart(exps.getBody());
    Value score = memref::LoadOp::create(
        b, loc, scores, ValueRange{thread, exps.getInductionVar()});
    Value p = softmaxWeight(step.none, f32Zero,
                            arith::SubFOp::create(b, loc, score, newMax),
                            /*base2=*/false);
    scf::YieldOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, exps.getRegionIterArgs()[0], p)
            .getResult());
  }
  return rescaledSum(runningSum, step.alpha, exps.getResult(0));
}

void KernelBuilder::buildScalar(Value query, Value key, Value value, Value mask,
                                Value out, double scale,
                                std::optional<int64_t> causal) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Type f32Type = b.getF32Type();
  // K and V tiles; each thread's row of the f32 output accumulator and of
  // the tile's scores / probabilities.
  SmallVector<Type> shared = {
      MemRefType::get({c.keyTile, s.headDim},
                      getScalarTileElement(s.keyElement), nullptr, workgroup),
      MemRefType::get({c.keyTile, s.valueDim},
                      getScalarTileElement(s.valueElement), nullptr, workgroup),
      MemRefType::get({c.queryTile, s.valueDim}, f32Type, nullptr, workgroup),
      MemRefType::get({c.queryTile, c.keyTile}, f32Type, nullptr, workgroup)};
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(s.queries, c.queryTile)),
      index(s.queryHeads), one, index(c.queryTile), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, shared);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value kTile = launch.getWorkgroupAttributions()[0];
  Value vTile = launch.getWorkgroupAttributions()[1];
  Value acc = launch.getWorkgroupAttributions()[2];
  Value probs = launch.getWorkgroupAttributions()[3];

  Value thread = launch.getThreadIds().x;
  Value head = launch.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, index(s.group));
  Value tileStart =
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(c.queryTile));
  Value row = arith::AddIOp::create(b, loc, tileStart, thread);
  Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                         index(s.queries));
  // Rows past the end compute on the last row and store nothing.
  Value loadRow = arith::MinUIOp::create(b, loc, row, index(s.queries - 1));
  Value keyTiles = keyTileCount(tileStart, causal);
  Value zero = index(0);
  Value f32Zero = f32(0);
  Value minusInf = f32(-std::numeric_limits<double>::infinity());

  // Scores of KV tile `t` (staged in kTile) into the thread's row of
  // `probs`; returns their max. The dot product is unrolled: llvmpipe stops
  // a loop nest after 65535 iterations in all.
  auto scoreTile = [&](Value start) -> Value {
    auto scores = scf::ForOp::create(b, loc, zero, index(c.keyTile), one,
                                     ValueRange{minusInf});
    OpBuilder::InsertionGuard scoreGuard(b);
    b.setInsertionPointToStart(scores.getBody());
    Value j = scores.getInductionVar();
    Value dot = f32Zero;
    for (int64_t x = 0; x < s.headDim; ++x) {
      Value q =
          castFloat(b, loc,
                    memref::LoadOp::create(b, loc, query,
                                           ValueRange{head, loadRow, index(x)}),
                    f32Type);
      Value k = castFloat(
          b, loc,
          memref::LoadOp::create(b, loc, kTile, ValueRange{j, index(x)}),
          f32Type);
      dot = arith::AddFOp::create(b, loc, dot,
                                  arith::MulFOp::create(b, loc, q, k));
    }
    Value pos = arith::AddIOp::create(b, loc, start, j);
    Value score =
        maskedScore(dot, scale, mask, head, row, loadRow, pos, causal);
    memref::StoreOp::create(b, loc, score, probs, ValueRange{thread, j});
    scf::YieldOp::create(
        b, loc,
        arith::MaximumFOp::create(b, loc, scores.getRegionIterArgs()[0], score)
            .getResult());
    return scores.getResult(0);
  };

  // Pass 1: the row's max and sum of exp(score - max), online over the KV
  // tiles.
  auto stats = scf::ForOp::create(b, loc, zero, keyTiles, one,
                                  ValueRange{minusInf, f32Zero});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(stats.getBody());
    Value runningMax = stats.getRegionIterArgs()[0];
    Value runningSum = stats.getRegionIterArgs()[1];
    Value start = arith::MulIOp::create(b, loc, stats.getInductionVar(),
                                        index(c.keyTile));
    gpu::BarrierOp::create(b, loc);
    loadTile(key, kTile, s.headDim, kvHead, start, thread, s.keyBlock);
    gpu::BarrierOp::create(b, loc);
    Value newMax =
        arith::MaximumFOp::create(b, loc, runningMax, scoreTile(start));
    Value newSum = foldTileSum(runningMax, runningSum, newMax, probs, thread);
    scf::YieldOp::create(b, loc, ValueRange{newMax, newSum});
  }
  Value rowMax = stats.getResult(0);
  Value rowSum = stats.getResult(1);

  // Pass 2: P = exp(score - max) / sum rounded to V's element type (the
  // reference's softmax and rounding), O += P V.
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    memref::StoreOp::create(b, loc, f32Zero, acc, ValueRange{thread, d});
  });
  forLoop(zero, keyTiles, one, [&](Value t) {
    Value start = arith::MulIOp::create(b, loc, t, index(c.keyTile));
    gpu::BarrierOp::create(b, loc);
    loadTile(key, kTile, s.headDim, kvHead, start, thread, s.keyBlock);
    loadTile(value, vTile, s.valueDim, kvHead, start, thread, s.valueBlock);
    gpu::BarrierOp::create(b, loc);
    scoreTile(start);
    forLoop(zero, index(c.keyTile), one, [&](Value j) {
      Value score =
          memref::LoadOp::create(b, loc, probs, ValueRange{thread, j});
      Value p = arith::DivFOp::create(
          b, loc,
          math::ExpOp::create(b, loc,
                              arith::SubFOp::create(b, loc, score, rowMax)),
          rowSum);
      Value rounded =
          castFloat(b, loc, castFloat(b, loc, p, s.valueElement), f32Type);
      memref::StoreOp::create(b, loc, rounded, probs, ValueRange{thread, j});
    });
    forLoop(zero, index(s.valueDim), one, [&](Value d) {
      Value sum = memref::LoadOp::create(b, loc, acc, ValueRange{thread, d});
      for (int64_t j = 0; j < c.keyTile; ++j) {
        Value p =
            memref::LoadOp::create(b, loc, probs, ValueRange{thread, index(j)});
        Value v = castFloat(
            b, loc,
            memref::LoadOp::create(b, loc, vTile, ValueRange{index(j), d}),
            f32Type);
        sum = arith::AddFOp::create(b, loc, sum,
                                    arith::MulFOp::create(b, loc, p, v));
      }
      memref::StoreOp::create(b, loc, sum, acc, ValueRange{thread, d});
    });
  });

  auto store = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    Value o = memref::LoadOp::create(b, loc, acc, ValueRange{thread, d});
    memref::StoreOp::create(b, loc, castFloat(b, loc, o, s.resultElement), out,
                            ValueRange{head, row, d});
  });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
