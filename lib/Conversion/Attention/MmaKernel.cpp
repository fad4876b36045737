//===- MmaKernel.cpp - the gpu.subgroup_mma flash-attention kernel --------===//
//
// One pass over the KV tiles: `Q K^T` and `P V` on 16x16x16 f16 subgroup
// matrix multiply-accumulates, the scores and P staged in workgroup memory
// for the online softmax (the fragments' layout is opaque), the output
// accumulated in registers and rescaled per key tile.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

/// What every step of the mma kernel uses: the launch (with its tiles, ids
/// and masking), the rows of the query tile the thread's subgroup
/// multiplies and the part of one of them its lane takes in the softmax.
struct KernelBuilder::MmaSubgroup {
  MmaFrame f;
  /// The Q tile (f16), the subgroups' 16 rows of scores (f32) and of P
  /// (f16), the 16-column row broadcast (f32), and the row strides of
  /// those and of the K and V tiles, in elements.
  Value qTile, sTile, pTile, rowTile;
  int64_t qLead, kLead, vLead, sLead, pLead, rowLead;
  /// Subgroup w multiplies rows [16 R w, 16 R (w + 1)) of the tile, R =
  /// `blocks` blocks of 16 (`rowBlock` the first row, `rowBlockStarts`
  /// each block's); in the softmax, `lanesPerRow` consecutive lanes share
  /// one of those rows (`tileRow`, query `row`, read as `loadRow`, clamped
  /// to the queries), lane `part` of them taking `chunksPerLane` chunks of
  /// `chunk` of its scores and `broadcastPerLane` of its 16 broadcast
  /// columns.
  int64_t blocks, lanesPerRow, chunk, chunksPerLane, broadcastPerLane;
  Value rowBlock;
  SmallVector<Value> rowBlockStarts;
  Value tileRow, part, row, loadRow;
  /// Accumulator r * outBlocks + db: row block r, columns [16 db, 16 db +
  /// 16); `accCount` of them.
  int64_t outBlocks, accCount;
  Value zero, one, f32Zero, minusInf;
  gpu::MMAMatrixType aType, bType, cType;
  /// The zero accumulator (made once Q is staged).
  Value zeroAcc;
  /// Q's A operands of each column block, loaded once with one row block
  /// (else per key tile).
  SmallVector<Value> qOperands;
};

void KernelBuilder::buildMma(Value query, Value key, Value value, Value mask,
                             Value out, double scale, Causal causal) {
  // Q, K and V tiles (f16), each subgroup's 16 rows of scores (f32) and of
  // P (f16), and a 16-column row broadcast per row (f32); rows padded so
  // that the rows of a 16x16 operand start in different banks.
  MmaTiles layout = getMmaTiles(s, KernelVariant::AttentionMma, c.queryTile,
                                c.keyTile, c.padBytes, c.rowBlocks, c.staging);
  OpBuilder::InsertionGuard guard(b);
  MmaSubgroup g = beginMmaSubgroup(layout, mask, scale, causal);
  loadMmaQuery(query, g);

  // The accumulators, the row's running max and sum, then the K/V tiles'.
  g.zeroAcc =
      gpu::SubgroupMmaConstantMatrixOp::create(b, loc, g.cType, g.f32Zero);
  SmallVector<Value> state(g.accCount, g.zeroAcc);
  state.push_back(g.minusInf);
  state.push_back(g.f32Zero);
  SmallVector<Value> kvArgs = kvInit(key, value, g.f);
  Value keyTiles = keyTileCount(g.f.tileStart, causal);
  SmallVector<Value> results = mmaKeyLoop(
      key, value, g.f, g.zero, keyTiles, g.one, state, kvArgs,
      [&](ValueRange carried, Value start, Value kTile, Value vTile) {
        return mmaKeyTile(g, carried, start, kTile, vTile);
      });
  writeMmaOutput(g, results, out);
  endMma(g.f.launch);
}

KernelBuilder::MmaSubgroup
KernelBuilder::beginMmaSubgroup(const MmaTiles &layout, Value mask,
                                double scale, Causal causal) {
  MmaSubgroup g;
  g.f = beginMma(layout, mask, scale, causal);
  g.qTile = g.f.tiles[MmaTiles::Q];
  g.sTile = g.f.tiles[MmaTiles::Scores];
  g.pTile = g.f.tiles[MmaTiles::Probs];
  g.rowTile = g.f.tiles[MmaTiles::Rows];
  g.qLead = layout.tiles[MmaTiles::Q].stride;
  g.kLead = layout.tiles[MmaTiles::K].stride;
  g.vLead = layout.tiles[MmaTiles::V].stride;
  g.sLead = layout.tiles[MmaTiles::Scores].stride;
  g.pLead = layout.tiles[MmaTiles::Probs].stride;
  g.rowLead = layout.tiles[MmaTiles::Rows].stride;

  Value thread = g.f.thread;
  g.blocks = c.rowBlocks;
  g.lanesPerRow = c.subgroup / (16 * g.blocks);
  int64_t columnsPerLane = c.keyTile / g.lanesPerRow;
  g.chunk = columnsPerLane % 4 == 0 ? 4 : columnsPerLane % 2 == 0 ? 2 : 1;
  g.chunksPerLane = columnsPerLane / g.chunk;
  g.broadcastPerLane = 16 / g.lanesPerRow;
  Value lane = arith::RemUIOp::create(b, loc, thread, index(c.subgroup));
  g.rowBlock = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, thread, index(c.subgroup)),
      index(16 * g.blocks));
  for (int64_t r = 0; r < g.blocks; ++r)
    g.rowBlockStarts.push_back(
        r == 0 ? g.rowBlock
               : arith::AddIOp::create(b, loc, g.rowBlock, index(16 * r))
                     .getResult());
  g.tileRow = arith::AddIOp::create(
      b, loc, g.rowBlock,
      arith::DivUIOp::create(b, loc, lane, index(g.lanesPerRow)));
  g.part = arith::RemUIOp::create(b, loc, lane, index(g.lanesPerRow));
  g.row = arith::AddIOp::create(b, loc, g.f.tileStart, g.tileRow);
  g.loadRow = arith::MinUIOp::create(b, loc, g.row, index(s.queries - 1));
  g.zero = index(0);
  g.one = index(1);
  g.f32Zero = f32(0);
  g.minusInf = f32(-std::numeric_limits<double>::infinity());
  Type f16Type = b.getF16Type();
  g.aType = gpu::MMAMatrixType::get({16, 16}, f16Type, "AOp");
  g.bType = gpu::MMAMatrixType::get({16, 16}, f16Type, "BOp");
  g.cType = gpu::MMAMatrixType::get({16, 16}, b.getF32Type(), "COp");
  g.outBlocks = s.valueDim / 16;
  g.accCount = g.blocks * g.outBlocks;
  return g;
}

void KernelBuilder::loadMmaQuery(Value query, MmaSubgroup &g) {
  // Q tile (zeros past the last query), then each subgroup's A operands.
  stageQuery(query, g.f);
  if (g.blocks == 1)
    for (int64_t kb = 0; kb < s.headDim; kb += 16)
      g.qOperands.push_back(mmaQOperand(g, 0, kb));
}

Value KernelBuilder::mmaQOperand(const MmaSubgroup &g, int64_t r, int64_t kb) {
  return gpu::SubgroupMmaLoadMatrixOp::create(
      b, loc, g.aType, g.qTile, ValueRange{g.rowBlockStarts[r], index(kb)},
      b.getIndexAttr(g.qLead), /*transpose=*/nullptr);
}

void KernelBuilder::syncSubgroup() {
  if (c.warpSync)
    NVVM::SyncWarpOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1));
  else
    gpu::BarrierOp::create(b, loc);
}

SmallVector<Value> KernelBuilder::mmaKeyTile(const MmaSubgroup &g,
                                             ValueRange carried, Value start,
                                             Value kTile, Value vTile) {
  SmallVector<Value> acc(carried.take_front(g.accCount));
  Value runningMax = carried[g.accCount];
  Value runningSum = carried[g.accCount + 1];
  mmaScores(g, kTile);

  // Online softmax in base 2: the lane's scores, the row's max over its
  // lanes, P = exp2(s - max) as f16, alpha = exp2(oldMax - max).
  Value log2e = f32(kLog2E);
  Value scaleLog2e = f32(g.f.scale * kLog2E);
  // A tile every row of the subgroup sees whole (no mask operand, no
  // position past the end or after the causal bound of the subgroup's
  // first row) skips the masking: the scores stay unscaled in sTile and
  // are scaled where they are used.
  Value unmasked =
      unmaskedTile(start, g.f.tileStart, g.rowBlock, bool(g.f.mask), g.f.causal,
                   /*syncOrder=*/false);
  Value laneMax = mmaLaneMax(g, start, unmasked, log2e, scaleLog2e);
  SoftmaxRescale step =
      foldRowMax(runningMax, laneMax, g.lanesPerRow, c.subgroup, g.minusInf);
  Value laneSum = mmaProbabilities(g, unmasked, step, scaleLog2e);
  Value newSum = rescaledSum(
      runningSum, step.alpha,
      reduceAcrossLanes(laneSum, g.lanesPerRow, c.subgroup, LaneCombine::Sum));
  mmaRescale(g, step.alpha, acc);
  mmaAccumulate(g, vTile, acc);
  SmallVector<Value> next(acc);
  next.push_back(step.newMax);
  next.push_back(newSum);
  return next;
}

void KernelBuilder::mmaScores(const MmaSubgroup &g, Value kTile) {
  // S = Q K^T for the subgroup's rows (K's rows read transposed as the B
  // operand, each serving every row block).
  int64_t keyBlocks = c.keyTile / 16;
  SmallVector<Value> scores(g.blocks * keyBlocks, g.zeroAcc);
  for (int64_t kb = 0; kb < s.headDim; kb += 16) {
    SmallVector<Value> q;
    for (int64_t r = 0; r < g.blocks; ++r)
      q.push_back(g.blocks == 1 ? g.qOperands[kb / 16] : mmaQOperand(g, r, kb));
    for (int64_t jb = 0; jb < keyBlocks; ++jb) {
      Value k = gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, g.bType, kTile, ValueRange{index(16 * jb), index(kb)},
          b.getIndexAttr(g.kLead), b.getUnitAttr());
      for (int64_t r = 0; r < g.blocks; ++r)
        scores[r * keyBlocks + jb] = gpu::SubgroupMmaComputeOp::create(
            b, loc, g.cType, q[r], k, scores[r * keyBlocks + jb], nullptr,
            b.getUnitAttr());
    }
  }
  for (int64_t r = 0; r < g.blocks; ++r)
    for (int64_t jb = 0; jb < keyBlocks; ++jb)
      gpu::SubgroupMmaStoreMatrixOp::create(
          b, loc, scores[r * keyBlocks + jb], g.sTile,
          ValueRange{g.rowBlockStarts[r], index(16 * jb)},
          b.getIndexAttr(g.sLead), nullptr);
  syncSubgroup();
}

Value KernelBuilder::mmaChunkColumn(const MmaSubgroup &g, int64_t i) {
  return arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, g.part, index(i * g.lanesPerRow)),
      index(g.chunk));
}

SmallVector<Value> KernelBuilder::mmaLoadChunk(const MmaSubgroup &g,
                                               Value column) {
  Value v =
      vector::LoadOp::create(b, loc, VectorType::get({g.chunk}, b.getF32Type()),
                             g.sTile, ValueRange{g.tileRow, column});
  SmallVector<Value> elements;
  for (int64_t e = 0; e < g.chunk; ++e)
    elements.push_back(vector::ExtractOp::create(b, loc, v, e));
  return elements;
}

void KernelBuilder::mmaStoreChunk(const MmaSubgroup &g, ArrayRef<Value> values,
                                  Value tile, Value column) {
  vector::StoreOp::create(
      b, loc,
      vector::FromElementsOp::create(
          b, loc, VectorType::get({g.chunk}, values.front().getType()), values),
      tile, ValueRange{g.tileRow, column});
}

Value KernelBuilder::mmaLaneMax(const MmaSubgroup &g, Value start,
                                Value unmasked, Value log2e, Value scaleLog2e) {
  Type f32Type = b.getF32Type();
  auto laneMax = scf::IfOp::create(b, loc, TypeRange{f32Type}, unmasked,
                                   /*withElseRegion=*/true);
  OpBuilder::InsertionGuard ifGuard(b);
  b.setInsertionPointToStart(laneMax.thenBlock());
  Value tileMax = g.minusInf;
  for (int64_t i = 0; i < g.chunksPerLane; ++i)
    for (Value dot : mmaLoadChunk(g, mmaChunkColumn(g, i)))
      tileMax = arith::MaximumFOp::create(
          b, loc, tileMax, arith::MulFOp::create(b, loc, dot, scaleLog2e));
  scf::YieldOp::create(b, loc, tileMax);
  // The masked path writes the masked base-2 scores back.
  b.setInsertionPointToStart(laneMax.elseBlock());
  tileMax = g.minusInf;
  for (int64_t i = 0; i < g.chunksPerLane; ++i) {
    Value column = mmaChunkColumn(g, i);
    SmallVector<Value> scores;
    for (auto [e, dot] : llvm::enumerate(mmaLoadChunk(g, column))) {
      Value pos = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, start, column), index(e));
      Value score =
          arith::MulFOp::create(b, loc,
                                maskedScore(dot, g.f.scale, g.f.mask, g.f.head,
                                            g.row, g.loadRow, pos, g.f.causal),
                                log2e);
      scores.push_back(score);
      tileMax = arith::MaximumFOp::create(b, loc, tileMax, score);
    }
    mmaStoreChunk(g, scores, g.sTile, column);
  }
  scf::YieldOp::create(b, loc, tileMax);
  return laneMax.getResult(0);
}

Value KernelBuilder::mmaProbabilities(const MmaSubgroup &g, Value unmasked,
                                      const SoftmaxRescale &step,
                                      Value scaleLog2e) {
  Type f16Type = b.getF16Type();
  Type f32Type = b.getF32Type();
  auto probabilities = scf::IfOp::create(b, loc, TypeRange{f32Type}, unmasked,
                                         /*withElseRegion=*/true);
  for (bool scaled : {true, false}) {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(scaled ? probabilities.thenBlock()
                                      : probabilities.elseBlock());
    Value tileSum = g.f32Zero;
    for (int64_t i = 0; i < g.chunksPerLane; ++i) {
      Value column = mmaChunkColumn(g, i);
      SmallVector<Value> rounded;
      for (Value score : mmaLoadChunk(g, column)) {
        Value exponent =
            scaled
                ? arith::SubFOp::create(
                      b, loc, arith::MulFOp::create(b, loc, score, scaleLog2e),
                      step.newMax)
                      .getResult()
                : arith::SubFOp::create(b, loc, score, step.newMax).getResult();
        rounded.push_back(
            roundedWeight(step.none, g.f32Zero, exponent, f16Type, tileSum));
      }
      mmaStoreChunk(g, rounded, g.pTile, column);
    }
    scf::YieldOp::create(b, loc, tileSum);
  }
  return probabilities.getResult(0);
}

void KernelBuilder::mmaRescale(const MmaSubgroup &g, Value alpha,
                               SmallVector<Value> &acc) {
  // O = alpha O: alpha to the row broadcast, multiplied elementwise.
  auto rescale = [&]() {
    Value broadcastStart =
        arith::MulIOp::create(b, loc, g.part, index(g.broadcastPerLane));
    for (int64_t i = 0; i < g.broadcastPerLane; ++i)
      memref::StoreOp::create(
          b, loc, alpha, g.rowTile,
          ValueRange{g.tileRow,
                     arith::AddIOp::create(b, loc, broadcastStart, index(i))});
    syncSubgroup();
    for (int64_t r = 0; r < g.blocks; ++r) {
      Value alphas = gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, g.cType, g.rowTile, ValueRange{g.rowBlockStarts[r], g.zero},
          b.getIndexAttr(g.rowLead), nullptr);
      for (int64_t db = 0; db < g.outBlocks; ++db) {
        Value &o = acc[r * g.outBlocks + db];
        o = gpu::SubgroupMmaElementwiseOp::create(b, loc, g.cType,
                                                  ValueRange{o, alphas},
                                                  gpu::MMAElementwiseOp::MULF);
      }
    }
  };
  if (!c.lazyRescale) {
    rescale();
    return;
  }
  // With lazy-rescale a subgroup skips it while no row's max moved (alpha 1
  // in all its rows), as in long contexts after the first tiles.
  Value lowest =
      reduceAcrossLanes(alpha, c.subgroup, c.subgroup, LaneCombine::Min);
  Value moved =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, lowest, f32(1));
  SmallVector<Type> accTypes(g.accCount, g.cType);
  auto scaled = scf::IfOp::create(b, loc, accTypes, moved,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(scaled.elseBlock());
    scf::YieldOp::create(b, loc, acc);
    b.setInsertionPointToStart(scaled.thenBlock());
    rescale();
    scf::YieldOp::create(b, loc, acc);
  }
  acc.assign(scaled.getResults().begin(), scaled.getResults().end());
}

void KernelBuilder::mmaAccumulate(const MmaSubgroup &g, Value vTile,
                                  SmallVector<Value> &acc) {
  // O += P V (each V operand serving every row block).
  for (int64_t jb = 0; jb < c.keyTile; jb += 16) {
    SmallVector<Value> p;
    for (int64_t r = 0; r < g.blocks; ++r)
      p.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, g.aType, g.pTile, ValueRange{g.rowBlockStarts[r], index(jb)},
          b.getIndexAttr(g.pLead), nullptr));
    for (int64_t db = 0; db < g.outBlocks; ++db) {
      Value v = gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, g.bType, vTile, ValueRange{index(jb), index(db * 16)},
          b.getIndexAttr(g.vLead), nullptr);
      for (int64_t r = 0; r < g.blocks; ++r) {
        Value &o = acc[r * g.outBlocks + db];
        o = gpu::SubgroupMmaComputeOp::create(b, loc, g.cType, p[r], v, o,
                                              nullptr, nullptr);
      }
    }
  }
}

void KernelBuilder::writeMmaOutput(const MmaSubgroup &g, ValueRange results,
                                   Value out) {
  // O / sum, 16 columns at a time through the subgroup's score rows.
  Value rowSum = results[g.accCount + 1];
  Value inverse = arith::DivFOp::create(b, loc, f32(1), rowSum);
  Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         g.row, index(s.queries));
  Value broadcastStart =
      arith::MulIOp::create(b, loc, g.part, index(g.broadcastPerLane));
  for (int64_t db = 0; db < g.outBlocks; ++db) {
    syncSubgroup();
    for (int64_t r = 0; r < g.blocks; ++r)
      gpu::SubgroupMmaStoreMatrixOp::create(
          b, loc, results[r * g.outBlocks + db], g.sTile,
          ValueRange{g.rowBlockStarts[r], g.zero}, b.getIndexAttr(g.sLead),
          nullptr);
    syncSubgroup();
    auto store = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard storeGuard(b);
    b.setInsertionPointToStart(store.thenBlock());
    for (int64_t i = 0; i < g.broadcastPerLane; ++i) {
      Value column = arith::AddIOp::create(b, loc, broadcastStart, index(i));
      Value o = arith::MulFOp::create(
          b, loc,
          memref::LoadOp::create(b, loc, g.sTile,
                                 ValueRange{g.tileRow, column}),
          inverse);
      memref::StoreOp::create(
          b, loc, castFloat(b, loc, o, s.resultElement), out,
          ValueRange{g.f.head, g.row,
                     arith::AddIOp::create(b, loc, column, index(db * 16))});
    }
  }
}
