//===- TiledKernel.cpp - flash attention on f32 register tiles ------------===//
//
// For targets without matrix instructions the attention can use (bf16 on
// NVIDIA's Vulkan, devices without cooperative matrices, ROCDL): the
// scalar kernel's online softmax (base 2, P rounded to V's element type as
// P V takes it, the output divided by the sum at the end) with the
// products blocked in registers, as the tiled GEMM blocks its sums.
//
//   A workgroup takes `queryTile` query rows of one query head. Its threads
//   form groups of `rowThreads` sharing 4 rows: thread (group g, lane t)
//   sums the scores of rows 4g..4g+3 at the key tile's positions t,
//   t + rowThreads, ... and the outputs of those rows at the value columns
//   t, t + rowThreads, ...
//   S = Q K^T: per step of `step` head-dim columns, Q's and K's columns are
//   staged transposed in workgroup memory (f32; K decoded from blocks as
//   the dequant-once scratch holds it) and each thread adds step x 4 x J
//   fused multiply-adds.
//   The rows' maxima and sums over the key tile: each thread's partial
//   values through workgroup memory, folded in the threads' order, so every
//   thread of a group holds the same state and a chunk
//   (cachet.attention_partial) carries it as the scalar kernel does.
//   O = alpha O + P V: P in workgroup memory, V staged a step of positions
//   at a time.
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

void KernelBuilder::buildTiled(Value query, Value key, Value value, Value mask,
                               Value out, double scale, Causal causal) {
  MLIRContext *ctx = b.getContext();
  Type f32Type = b.getF32Type();
  TiledAttentionLayout l(c.queryTile, c.keyTile, c.step, c.threads, s.valueDim);
  constexpr int64_t rows = 4;
  int64_t keys = c.keyTile / l.rowThreads;
  int64_t columns = s.valueDim / l.rowThreads;
  int64_t step = c.step;
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(s.queries, c.queryTile)),
      index(s.queryHeads), one, index(c.threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{},
      TypeRange{MemRefType::get({l.total}, f32Type, nullptr, workgroup)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value smem = launch.getWorkgroupAttributions()[0];

  auto mulC = [&](Value a, int64_t v) -> Value {
    return arith::MulIOp::create(b, loc, a, index(v));
  };
  auto load = [&](Value at) -> Value {
    return memref::LoadOp::create(b, loc, smem, ValueRange{at});
  };
  auto store = [&](Value v, Value at) {
    memref::StoreOp::create(b, loc, v, smem, ValueRange{at});
  };
  auto fma = [&](Value x, Value y, Value acc) -> Value {
    return math::FmaOp::create(b, loc, x, y, acc);
  };
  auto barrier = [&]() { gpu::BarrierOp::create(b, loc); };
  // acc[i][j] += a[i] * c[j] for the thread's register block.
  auto outerProduct = [&](MutableArrayRef<Value> acc, ArrayRef<Value> a,
                          ArrayRef<Value> c) {
    for (auto [i, x] : llvm::enumerate(a))
      for (auto [j, y] : llvm::enumerate(c))
        acc[i * c.size() + j] = fma(x, y, acc[i * c.size() + j]);
  };

  Value thread = launch.getThreadIds().x;
  Value head = launch.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, index(s.group));
  Value tileStart = mulC(launch.getBlockIds().x, c.queryTile);
  Value lane = arith::RemUIOp::create(b, loc, thread, index(l.rowThreads));
  Value rowBase =
      mulC(arith::DivUIOp::create(b, loc, thread, index(l.rowThreads)), rows);
  SmallVector<Value> row, loadRow, rowValid;
  for (int64_t i = 0; i < rows; ++i) {
    row.push_back(addIndex(tileStart, addIndex(rowBase, i)));
    rowValid.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             row.back(), index(s.queries)));
    // Rows past the end compute on the last row and store nothing.
    loadRow.push_back(
        arith::MinUIOp::create(b, loc, row.back(), index(s.queries - 1)));
  }
  // The thread's value columns (and, from the key tile's start, positions).
  SmallVector<Value> column;
  for (int64_t j = 0; j < std::max(keys, columns); ++j)
    column.push_back(addIndex(lane, j * l.rowThreads));
  Value zero = index(0);
  Value f32Zero = f32(0);
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  Value log2e = f32(kLog2E);

  // Workgroup memory offsets of this thread's rows: P's and the reduction's.
  SmallVector<Value> pRow, redRow;
  for (int64_t i = 0; i < rows; ++i) {
    pRow.push_back(mulC(addIndex(rowBase, i), l.pStride));
    redRow.push_back(
        addIndex(mulC(addIndex(rowBase, i), l.redStride), l.region));
  }

  // The state before the first key tile: the chunk's, or none seen yet.
  SmallVector<Value> init;
  for (int64_t i = 0; i < rows; ++i) {
    Value m = minusInf, sum = f32Zero;
    if (chunk)
      std::tie(m, sum) = loadRowState(head, loadRow[i]);
    init.push_back(m);
    init.push_back(sum);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j)
      init.push_back(chunk ? memref::LoadOp::create(
                                 b, loc, chunk->acc,
                                 ValueRange{head, loadRow[i], column[j]})
                                 .getResult()
                           : f32Zero);

  // The values of a staged region (`count` in all) the thread takes:
  // `body(i)` for i = thread, thread + threads, ... below `count`.
  auto staged = [&](int64_t count, function_ref<void(Value)> body) {
    for (int64_t first = 0; first < count; first += c.threads) {
      Value i = addIndex(thread, first);
      if (first + c.threads <= count) {
        body(i);
        continue;
      }
      auto inRange = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                index(count)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inRangeGuard(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      body(i);
    }
  };
  // Folds the values the threads of each of this thread's row groups wrote
  // for its rows (in lane order): `combine` over `partial`.
  auto acrossLanes = [&](ArrayRef<Value> partial, bool sum) {
    barrier();
    for (int64_t i = 0; i < rows; ++i)
      store(partial[i], addIndex(redRow[i], lane));
    barrier();
    SmallVector<Value> folded;
    for (int64_t i = 0; i < rows; ++i) {
      Value v = load(redRow[i]);
      for (int64_t t = 1; t < l.rowThreads; ++t) {
        Value other = load(addIndex(redRow[i], t));
        v = sum ? arith::AddFOp::create(b, loc, v, other).getResult()
                : arith::MaximumFOp::create(b, loc, v, other).getResult();
      }
      folded.push_back(v);
    }
    return folded;
  };

  auto tiles = scf::ForOp::create(b, loc, zero, keyTileCount(tileStart, causal),
                                  one, init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    ValueRange carried = tiles.getRegionIterArgs();
    Value start = mulC(tiles.getInductionVar(), c.keyTile);

    // S = Q K^T, a step of head-dim columns at a time.
    SmallVector<Value> scoreInit(rows * keys, f32Zero);
    auto dots = scf::ForOp::create(b, loc, zero, index(s.headDim / step), one,
                                   scoreInit);
    {
      OpBuilder::InsertionGuard dotGuard(b);
      b.setInsertionPointToStart(dots.getBody());
      Value first = mulC(dots.getInductionVar(), step);
      barrier();
      staged(step * c.queryTile, [&](Value i) {
        Value r = arith::DivUIOp::create(b, loc, i, index(step));
        Value x = arith::RemUIOp::create(b, loc, i, index(step));
        Value q = arith::MinUIOp::create(b, loc, addIndex(tileStart, r),
                                         index(s.queries - 1));
        Value v = castFloat(
            b, loc,
            memref::LoadOp::create(b, loc, query,
                                   ValueRange{head, q, addIndex(first, x)}),
            f32Type);
        store(v, addIndex(addIndex(mulC(x, l.qStride), l.region), r));
      });
      staged(step * c.keyTile, [&](Value i) {
        Value j = arith::DivUIOp::create(b, loc, i, index(step));
        Value x = arith::RemUIOp::create(b, loc, i, index(step));
        store(loadKV(key, kvHead, addIndex(start, j), addIndex(first, x),
                     s.keyBlock, s.keyElement, f32Type),
              addIndex(addIndex(mulC(x, l.kStride), l.kOffset), j));
      });
      barrier();
      SmallVector<Value> acc(dots.getRegionIterArgs());
      Value qAt = addIndex(rowBase, l.region), kAt = addIndex(lane, l.kOffset);
      for (int64_t x = 0; x < step; ++x) {
        SmallVector<Value> q, k;
        for (int64_t i = 0; i < rows; ++i)
          q.push_back(load(addIndex(qAt, x * l.qStride + i)));
        for (int64_t j = 0; j < keys; ++j)
          k.push_back(load(addIndex(kAt, x * l.kStride + j * l.rowThreads)));
        outerProduct(acc, q, k);
      }
      scf::YieldOp::create(b, loc, acc);
    }

    // The online-softmax step of each row: the tile's max folded into the
    // row's, P = 2^(score - max) rounded to V's element type (as P V takes
    // it) into workgroup memory, sum = alpha sum + sum(P).
    SmallVector<Value> scores, laneMax;
    for (int64_t i = 0; i < rows; ++i) {
      Value m = minusInf;
      for (int64_t j = 0; j < keys; ++j) {
        Value score = arith::MulFOp::create(
            b, loc,
            maskedScore(dots.getResult(i * keys + j), scale, mask, head, row[i],
                        loadRow[i], addIndex(start, column[j]), causal),
            log2e);
        scores.push_back(score);
        m = arith::MaximumFOp::create(b, loc, m, score);
      }
      laneMax.push_back(m);
    }
    SmallVector<Value> tileMax = acrossLanes(laneMax, /*sum=*/false);
    SmallVector<Value> laneSum, alpha, next;
    for (int64_t i = 0; i < rows; ++i) {
      Value runningMax = carried[2 * i];
      SoftmaxRescale rescale = softmaxRescale(
          runningMax, arith::MaximumFOp::create(b, loc, runningMax, tileMax[i]),
          minusInf, /*base2=*/true);
      Value sum = f32Zero;
      for (int64_t j = 0; j < keys; ++j) {
        Value p = softmaxWeight(
            rescale.none, f32Zero,
            arith::SubFOp::create(b, loc, scores[i * keys + j], rescale.newMax),
            /*base2=*/true);
        Value rounded =
            castFloat(b, loc, castFloat(b, loc, p, s.valueElement), f32Type);
        store(rounded, addIndex(pRow[i], column[j]));
        sum = arith::AddFOp::create(b, loc, sum, rounded);
      }
      laneSum.push_back(sum);
      alpha.push_back(rescale.alpha);
      next.push_back(rescale.newMax);
    }
    SmallVector<Value> tileSum = acrossLanes(laneSum, /*sum=*/true);
    SmallVector<Value> results;
    for (int64_t i = 0; i < rows; ++i) {
      results.push_back(next[i]);
      results.push_back(rescaledSum(carried[2 * i + 1], alpha[i], tileSum[i]));
    }

    // O = alpha O + P V, a step of positions at a time.
    SmallVector<Value> accInit;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j)
        accInit.push_back(arith::MulFOp::create(
            b, loc, carried[2 * rows + i * columns + j], alpha[i]));
    auto products =
        scf::ForOp::create(b, loc, zero, index(c.keyTile / step), one, accInit);
    {
      OpBuilder::InsertionGuard productGuard(b);
      b.setInsertionPointToStart(products.getBody());
      Value first = mulC(products.getInductionVar(), step);
      barrier();
      staged(step * s.valueDim, [&](Value i) {
        Value j = arith::DivUIOp::create(b, loc, i, index(s.valueDim));
        Value x = arith::RemUIOp::create(b, loc, i, index(s.valueDim));
        store(loadKV(value, kvHead, addIndex(start, addIndex(first, j)), x,
                     s.valueBlock, s.valueElement, f32Type),
              addIndex(i, l.region));
      });
      barrier();
      SmallVector<Value> acc(products.getRegionIterArgs());
      SmallVector<Value> pAt;
      for (int64_t i = 0; i < rows; ++i)
        pAt.push_back(addIndex(pRow[i], first));
      Value vAt = addIndex(lane, l.region);
      for (int64_t k = 0; k < step; ++k) {
        SmallVector<Value> p, v;
        for (int64_t i = 0; i < rows; ++i)
          p.push_back(load(addIndex(pAt[i], k)));
        for (int64_t j = 0; j < columns; ++j)
          v.push_back(load(addIndex(vAt, k * s.valueDim + j * l.rowThreads)));
        outerProduct(acc, p, v);
      }
      scf::YieldOp::create(b, loc, acc);
    }
    llvm::append_range(results, products.getResults());
    scf::YieldOp::create(b, loc, results);
  }

  // O / sum (as O times 1 / sum, the other kernels' epilogue), or the state
  // of a chunk (its max and sum stored by the group's first lane).
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  for (int64_t i = 0; i < rows; ++i) {
    auto valid = scf::IfOp::create(b, loc, rowValid[i],
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard storeGuard(b);
    b.setInsertionPointToStart(valid.thenBlock());
    Value rowMax = tiles.getResult(2 * i);
    Value rowSum = tiles.getResult(2 * i + 1);
    if (chunk) {
      auto owner = scf::IfOp::create(b, loc, firstLane,
                                     /*withElseRegion=*/false);
      b.setInsertionPointToStart(owner.thenBlock());
      storeRowState(head, row[i], rowMax, rowSum);
      b.setInsertionPointAfter(owner);
    }
    Value inverse =
        chunk ? Value() : arith::DivFOp::create(b, loc, f32(1), rowSum);
    for (int64_t j = 0; j < columns; ++j) {
      Value o = tiles.getResult(2 * rows + i * columns + j);
      if (chunk) {
        memref::StoreOp::create(b, loc, o, chunk->acc,
                                ValueRange{head, row[i], column[j]});
        continue;
      }
      memref::StoreOp::create(
          b, loc,
          castFloat(b, loc, arith::MulFOp::create(b, loc, o, inverse),
                    s.resultElement),
          out, ValueRange{head, row[i], column[j]});
    }
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
