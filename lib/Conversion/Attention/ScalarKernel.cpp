//===- ScalarKernel.cpp - the scalar flash-attention kernel ---------------===//
//
// One thread per query row, every target: one pass of online softmax (base
// 2) over the KV tiles, P = 2^(score - max) rounded to V's element type as
// P V takes it, the output divided by the sum at the end (as the mma
// kernels do, so that the state can be carried from chunk to chunk).
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

void KernelBuilder::buildScalar(Value query, Value key, Value value, Value mask,
                                Value out, double scale, Causal causal) {
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
  Value log2e = f32(kLog2E);

  // Base-2 scores of the KV tile at `start` (staged in kTile) into the
  // thread's row of `probs`; returns their max. The dot product is
  // unrolled: llvmpipe stops a loop nest after 65535 iterations in all.
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
    Value score = arith::MulFOp::create(
        b, loc, maskedScore(dot, scale, mask, head, row, loadRow, pos, causal),
        log2e);
    memref::StoreOp::create(b, loc, score, probs, ValueRange{thread, j});
    scf::YieldOp::create(
        b, loc,
        arith::MaximumFOp::create(b, loc, scores.getRegionIterArgs()[0], score)
            .getResult());
    return scores.getResult(0);
  };

  // The state before the first key tile: the chunk's, or none seen yet.
  Value startMax = minusInf, startSum = f32Zero;
  if (chunk)
    std::tie(startMax, startSum) = loadRowState(head, loadRow);
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    Value start = f32Zero;
    if (chunk)
      start = memref::LoadOp::create(b, loc, chunk->acc,
                                     ValueRange{head, loadRow, d});
    memref::StoreOp::create(b, loc, start, acc, ValueRange{thread, d});
  });

  // One pass of online softmax (base 2) over the KV tiles: the tile's max
  // folded into the row's, P = 2^(score - max) rounded to V's element type
  // (as P V takes it), O = alpha O + P V and sum = alpha sum + sum(P).
  auto tiles = scf::ForOp::create(b, loc, zero, keyTiles, one,
                                  ValueRange{startMax, startSum});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value runningMax = tiles.getRegionIterArgs()[0];
    Value runningSum = tiles.getRegionIterArgs()[1];
    Value start = arith::MulIOp::create(b, loc, tiles.getInductionVar(),
                                        index(c.keyTile));
    gpu::BarrierOp::create(b, loc);
    loadTile(key, kTile, s.headDim, kvHead, start, thread, s.keyBlock,
             s.keyElement);
    loadTile(value, vTile, s.valueDim, kvHead, start, thread, s.valueBlock,
             s.valueElement);
    gpu::BarrierOp::create(b, loc);
    Value newMax =
        arith::MaximumFOp::create(b, loc, runningMax, scoreTile(start));
    SoftmaxRescale step =
        softmaxRescale(runningMax, newMax, minusInf, /*base2=*/true);
    auto sums = scf::ForOp::create(b, loc, zero, index(c.keyTile), one,
                                   ValueRange{f32Zero});
    {
      OpBuilder::InsertionGuard sumGuard(b);
      b.setInsertionPointToStart(sums.getBody());
      Value j = sums.getInductionVar();
      Value score =
          memref::LoadOp::create(b, loc, probs, ValueRange{thread, j});
      Value p = softmaxWeight(step.none, f32Zero,
                              arith::SubFOp::create(b, loc, score, newMax),
                              /*base2=*/true);
      Value rounded =
          castFloat(b, loc, castFloat(b, loc, p, s.valueElement), f32Type);
      memref::StoreOp::create(b, loc, rounded, probs, ValueRange{thread, j});
      scf::YieldOp::create(
          b, loc,
          arith::AddFOp::create(b, loc, sums.getRegionIterArgs()[0], rounded)
              .getResult());
    }
    forLoop(zero, index(s.valueDim), one, [&](Value d) {
      Value sum = arith::MulFOp::create(
          b, loc, memref::LoadOp::create(b, loc, acc, ValueRange{thread, d}),
          step.alpha);
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
    scf::YieldOp::create(b, loc,
                         ValueRange{newMax, rescaledSum(runningSum, step.alpha,
                                                        sums.getResult(0))});
  }
  Value rowMax = tiles.getResult(0);
  Value rowSum = tiles.getResult(1);

  // O / sum (as O times 1 / sum, the mma kernels' epilogue), or the state
  // of a chunk.
  auto store = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  if (chunk)
    storeRowState(head, row, rowMax, rowSum);
  Value inverse =
      chunk ? Value() : arith::DivFOp::create(b, loc, f32(1), rowSum);
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    Value o = memref::LoadOp::create(b, loc, acc, ValueRange{thread, d});
    if (chunk) {
      memref::StoreOp::create(b, loc, o, chunk->acc, ValueRange{head, row, d});
      return;
    }
    memref::StoreOp::create(b, loc,
                            castFloat(b, loc,
                                      arith::MulFOp::create(b, loc, o, inverse),
                                      s.resultElement),
                            out, ValueRange{head, row, d});
  });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
