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

void KernelBuilder::buildMma(Value query, Value key, Value value, Value mask,
                             Value out, double scale,
                             std::optional<int64_t> causal) {
  Type f16Type = b.getF16Type();
  Type f32Type = b.getF32Type();
  // Q, K and V tiles (f16), each subgroup's 16 rows of scores (f32) and of
  // P (f16), and a 16-column row broadcast per row (f32); rows padded so
  // that the rows of a 16x16 operand start in different banks.
  MmaTiles layout(c.queryTile, c.keyTile, s.headDim, s.valueDim, c.padBytes,
                  c.asyncCopy, c.rowBlocks == 1);
  OpBuilder::InsertionGuard guard(b);
  MmaFrame f = beginMma(layout);
  gpu::LaunchOp launch = f.launch;
  Value qTile = f.tiles[MmaTiles::Q];
  Value sTile = f.tiles[MmaTiles::Scores], pTile = f.tiles[MmaTiles::Probs];
  Value rowTile = f.tiles[MmaTiles::Rows];
  int64_t qLead = layout.tiles[MmaTiles::Q].stride;
  int64_t kLead = layout.tiles[MmaTiles::K].stride;
  int64_t vLead = layout.tiles[MmaTiles::V].stride;
  int64_t sLead = layout.tiles[MmaTiles::Scores].stride;
  int64_t pLead = layout.tiles[MmaTiles::Probs].stride;
  int64_t rowLead = layout.tiles[MmaTiles::Rows].stride;
  // Between a subgroup's writes to its own rows and its lanes' reads.
  auto subgroupSync = [&]() {
    if (c.warpSync)
      NVVM::SyncWarpOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1));
    else
      gpu::BarrierOp::create(b, loc);
  };

  Value thread = f.thread;
  Value head = f.head;
  Value tileStart = f.tileStart;
  // Subgroup w multiplies rows [16 R w, 16 R (w + 1)) of the tile, R =
  // rowBlocks blocks of 16; in the softmax, `lanesPerRow` consecutive lanes
  // share one of those rows, each taking `keyTile / lanesPerRow` of its
  // scores.
  int64_t blocks = c.rowBlocks;
  int64_t lanesPerRow = c.subgroup / (16 * blocks);
  int64_t columnsPerLane = c.keyTile / lanesPerRow;
  int64_t chunk = columnsPerLane % 4 == 0 ? 4 : columnsPerLane % 2 == 0 ? 2 : 1;
  int64_t chunksPerLane = columnsPerLane / chunk;
  int64_t broadcastPerLane = 16 / lanesPerRow;
  Value lane = arith::RemUIOp::create(b, loc, thread, index(c.subgroup));
  Value rowBlock = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, thread, index(c.subgroup)),
      index(16 * blocks));
  SmallVector<Value> rowBlockStarts;
  for (int64_t r = 0; r < blocks; ++r)
    rowBlockStarts.push_back(
        r == 0 ? rowBlock
               : arith::AddIOp::create(b, loc, rowBlock, index(16 * r))
                     .getResult());
  Value tileRow = arith::AddIOp::create(
      b, loc, rowBlock,
      arith::DivUIOp::create(b, loc, lane, index(lanesPerRow)));
  Value part = arith::RemUIOp::create(b, loc, lane, index(lanesPerRow));
  Value row = arith::AddIOp::create(b, loc, tileStart, tileRow);
  Value loadRow = arith::MinUIOp::create(b, loc, row, index(s.queries - 1));
  Value zero = index(0);
  Value one = index(1);
  Value f32Zero = f32(0);
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  auto lead = [&](int64_t n) { return b.getIndexAttr(n); };
  auto aType = gpu::MMAMatrixType::get({16, 16}, f16Type, "AOp");
  auto bType = gpu::MMAMatrixType::get({16, 16}, f16Type, "BOp");
  auto cType = gpu::MMAMatrixType::get({16, 16}, f32Type, "COp");

  // Q tile (zeros past the last query), then each subgroup's A operands.
  stageQuery(query, f);
  // Q's A operand of row block r and column block kb: loaded once here with
  // one row block, else where it is used.
  auto loadQ = [&](int64_t r, int64_t kb) -> Value {
    return gpu::SubgroupMmaLoadMatrixOp::create(
        b, loc, aType, qTile, ValueRange{rowBlockStarts[r], index(kb)},
        lead(qLead), /*transpose=*/nullptr);
  };
  SmallVector<Value> qOperands;
  if (blocks == 1)
    for (int64_t kb = 0; kb < s.headDim; kb += 16)
      qOperands.push_back(loadQ(0, kb));

  SmallVector<Value> init;
  // Accumulator r * outBlocks + db: row block r, columns [16 db, 16 db + 16).
  int64_t outBlocks = s.valueDim / 16;
  int64_t accCount = blocks * outBlocks;
  Value zeroAcc =
      gpu::SubgroupMmaConstantMatrixOp::create(b, loc, cType, f32Zero);
  init.append(accCount, zeroAcc);
  init.push_back(minusInf);
  init.push_back(f32Zero);
  init.append(kvInit(key, value, f));

  Value keyTiles = keyTileCount(tileStart, causal);
  auto loop = scf::ForOp::create(b, loc, zero, keyTiles, one, init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> acc(carried.begin(), carried.begin() + accCount);
    Value runningMax = carried[accCount];
    Value runningSum = carried[accCount + 1];
    Value start =
        arith::MulIOp::create(b, loc, loop.getInductionVar(), index(c.keyTile));
    SmallVector<Value> next;
    auto [kTile, vTile] =
        kvStage(key, value, f, carried.drop_front(accCount + 2),
                loop.getInductionVar(), next);

    // S = Q K^T for the subgroup's rows (K's rows read transposed as the B
    // operand, each serving every row block).
    int64_t keyBlocks = c.keyTile / 16;
    SmallVector<Value> scores(blocks * keyBlocks, zeroAcc);
    for (int64_t kb = 0; kb < s.headDim; kb += 16) {
      SmallVector<Value> q;
      for (int64_t r = 0; r < blocks; ++r)
        q.push_back(blocks == 1 ? qOperands[kb / 16] : loadQ(r, kb));
      for (int64_t jb = 0; jb < keyBlocks; ++jb) {
        Value k = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, bType, kTile, ValueRange{index(16 * jb), index(kb)},
            lead(kLead), b.getUnitAttr());
        for (int64_t r = 0; r < blocks; ++r)
          scores[r * keyBlocks + jb] = gpu::SubgroupMmaComputeOp::create(
              b, loc, cType, q[r], k, scores[r * keyBlocks + jb], nullptr,
              b.getUnitAttr());
      }
    }
    for (int64_t r = 0; r < blocks; ++r)
      for (int64_t jb = 0; jb < keyBlocks; ++jb)
        gpu::SubgroupMmaStoreMatrixOp::create(
            b, loc, scores[r * keyBlocks + jb], sTile,
            ValueRange{rowBlockStarts[r], index(16 * jb)}, lead(sLead),
            nullptr);
    subgroupSync();

    // Online softmax in base 2: the lane's scores, the row's max over its
    // lanes, P = exp2(s - max) as f16, alpha = exp2(oldMax - max). A lane
    // takes chunks of `chunk` consecutive scores, chunk i of the row at
    // column (i lanesPerRow + part) chunk, read and written as vectors.
    Value log2e = f32(kLog2E);
    Value scaleLog2e = f32(scale * kLog2E);
    auto chunkType = VectorType::get({chunk}, f32Type);
    auto chunkColumn = [&](int64_t i) -> Value {
      return arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, part, index(i * lanesPerRow)),
          index(chunk));
    };
    auto loadChunk = [&](Value column) -> SmallVector<Value> {
      Value v = vector::LoadOp::create(b, loc, chunkType, sTile,
                                       ValueRange{tileRow, column});
      SmallVector<Value> elements;
      for (int64_t e = 0; e < chunk; ++e)
        elements.push_back(vector::ExtractOp::create(b, loc, v, e));
      return elements;
    };
    // A tile every row of the subgroup sees whole (no mask operand, no
    // position past the end or after the causal bound of the subgroup's
    // first row) skips the masking: the scores stay unscaled in sTile and
    // are scaled where they are used.
    Value unmasked = unmaskedTile(start, tileStart, rowBlock, bool(mask),
                                  causal, /*syncOrder=*/false);
    auto scoresMax = scf::IfOp::create(b, loc, TypeRange{f32Type}, unmasked,
                                       /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(scoresMax.thenBlock());
      Value tileMax = minusInf;
      for (int64_t i = 0; i < chunksPerLane; ++i)
        for (Value dot : loadChunk(chunkColumn(i)))
          tileMax = arith::MaximumFOp::create(
              b, loc, tileMax, arith::MulFOp::create(b, loc, dot, scaleLog2e));
      scf::YieldOp::create(b, loc, tileMax);
      // The masked path writes the masked base-2 scores back.
      b.setInsertionPointToStart(scoresMax.elseBlock());
      tileMax = minusInf;
      for (int64_t i = 0; i < chunksPerLane; ++i) {
        Value column = chunkColumn(i);
        SmallVector<Value> scores;
        for (auto [e, dot] : llvm::enumerate(loadChunk(column))) {
          Value pos = arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, start, column), index(e));
          Value score = arith::MulFOp::create(
              b, loc,
              maskedScore(dot, scale, mask, head, row, loadRow, pos, causal),
              log2e);
          scores.push_back(score);
          tileMax = arith::MaximumFOp::create(b, loc, tileMax, score);
        }
        vector::StoreOp::create(
            b, loc, vector::FromElementsOp::create(b, loc, chunkType, scores),
            sTile, ValueRange{tileRow, column});
      }
      scf::YieldOp::create(b, loc, tileMax);
    }
    // The row's max over its lanes.
    Value newMax = arith::MaximumFOp::create(
        b, loc, runningMax,
        reduceAcrossLanes(scoresMax.getResult(0), lanesPerRow, c.subgroup,
                          LaneCombine::Max));
    SoftmaxRescale step =
        softmaxRescale(runningMax, newMax, minusInf, /*base2=*/true);
    Value none = step.none, alpha = step.alpha;
    // P and the lane's sum of it (as rounded), from the unscaled scores
    // (unmasked tile) or the masked base-2 ones.
    auto probabilities = scf::IfOp::create(b, loc, TypeRange{f32Type}, unmasked,
                                           /*withElseRegion=*/true);
    for (bool scaled : {true, false}) {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(scaled ? probabilities.thenBlock()
                                        : probabilities.elseBlock());
      Value tileSum = f32Zero;
      for (int64_t i = 0; i < chunksPerLane; ++i) {
        Value column = chunkColumn(i);
        SmallVector<Value> rounded;
        for (Value score : loadChunk(column)) {
          Value exponent =
              scaled ? arith::SubFOp::create(
                           b, loc,
                           arith::MulFOp::create(b, loc, score, scaleLog2e),
                           newMax)
                           .getResult()
                     : arith::SubFOp::create(b, loc, score, newMax).getResult();
          Value p = softmaxWeight(none, f32Zero, exponent, /*base2=*/true);
          rounded.push_back(castFloat(b, loc, p, f16Type));
          tileSum = arith::AddFOp::create(
              b, loc, tileSum, castFloat(b, loc, rounded.back(), f32Type));
        }
        vector::StoreOp::create(
            b, loc,
            vector::FromElementsOp::create(
                b, loc, VectorType::get({chunk}, f16Type), rounded),
            pTile, ValueRange{tileRow, column});
      }
      scf::YieldOp::create(b, loc, tileSum);
    }
    Value newSum =
        rescaledSum(runningSum, alpha,
                    reduceAcrossLanes(probabilities.getResult(0), lanesPerRow,
                                      c.subgroup, LaneCombine::Sum));
    // O = alpha O: alpha to the row broadcast, multiplied elementwise. With
    // lazy-rescale a subgroup skips it while no row's max moved (alpha 1 in
    // all its rows), as in long contexts after the first tiles.
    auto rescale = [&]() {
      Value broadcastStart =
          arith::MulIOp::create(b, loc, part, index(broadcastPerLane));
      for (int64_t i = 0; i < broadcastPerLane; ++i)
        memref::StoreOp::create(
            b, loc, alpha, rowTile,
            ValueRange{tileRow, arith::AddIOp::create(b, loc, broadcastStart,
                                                      index(i))});
      subgroupSync();
      for (int64_t r = 0; r < blocks; ++r) {
        Value alphas = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, cType, rowTile, ValueRange{rowBlockStarts[r], zero},
            lead(rowLead), nullptr);
        for (int64_t db = 0; db < outBlocks; ++db) {
          Value &o = acc[r * outBlocks + db];
          o = gpu::SubgroupMmaElementwiseOp::create(
              b, loc, cType, ValueRange{o, alphas},
              gpu::MMAElementwiseOp::MULF);
        }
      }
    };
    if (c.lazyRescale) {
      Value lowest =
          reduceAcrossLanes(alpha, c.subgroup, c.subgroup, LaneCombine::Min);
      Value moved = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                          lowest, f32(1));
      SmallVector<Type> accTypes(accCount, cType);
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
    } else {
      rescale();
    }

    // O += P V (each V operand serving every row block).
    for (int64_t jb = 0; jb < c.keyTile; jb += 16) {
      SmallVector<Value> p;
      for (int64_t r = 0; r < blocks; ++r)
        p.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, aType, pTile, ValueRange{rowBlockStarts[r], index(jb)},
            lead(pLead), nullptr));
      for (int64_t db = 0; db < outBlocks; ++db) {
        Value v = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, bType, vTile, ValueRange{index(jb), index(db * 16)},
            lead(vLead), nullptr);
        for (int64_t r = 0; r < blocks; ++r) {
          Value &o = acc[r * outBlocks + db];
          o = gpu::SubgroupMmaComputeOp::create(b, loc, cType, p[r], v, o,
                                                nullptr, nullptr);
        }
      }
    }
    SmallVector<Value> yielded(acc);
    yielded.push_back(newMax);
    yielded.push_back(newSum);
    yielded.append(next);
    scf::YieldOp::create(b, loc, yielded);
  }

  kvFinish(loop.getResults().drop_front(accCount + 2));
  // O / sum, 16 columns at a time through the subgroup's score rows.
  Value rowSum = loop.getResult(accCount + 1);
  Value inverse = arith::DivFOp::create(b, loc, f32(1), rowSum);
  Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                         index(s.queries));
  Value broadcastStart =
      arith::MulIOp::create(b, loc, part, index(broadcastPerLane));
  for (int64_t db = 0; db < outBlocks; ++db) {
    subgroupSync();
    for (int64_t r = 0; r < blocks; ++r)
      gpu::SubgroupMmaStoreMatrixOp::create(
          b, loc, loop.getResult(r * outBlocks + db), sTile,
          ValueRange{rowBlockStarts[r], zero}, lead(sLead), nullptr);
    subgroupSync();
    auto store = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard storeGuard(b);
    b.setInsertionPointToStart(store.thenBlock());
    for (int64_t i = 0; i < broadcastPerLane; ++i) {
      Value column = arith::AddIOp::create(b, loc, broadcastStart, index(i));
      Value o = arith::MulFOp::create(
          b, loc,
          memref::LoadOp::create(b, loc, sTile, ValueRange{tileRow, column}),
          inverse);
      memref::StoreOp::create(
          b, loc, castFloat(b, loc, o, s.resultElement), out,
          ValueRange{head, row,
                     arith::AddIOp::create(b, loc, column, index(db * 16))});
    }
  }
  markOccupancy(launch);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
