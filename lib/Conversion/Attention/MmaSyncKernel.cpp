//===- MmaSyncKernel.cpp - the mma.sync flash-attention kernel ------------===//
//
// One pass over the KV tiles: `Q K^T` and `P V` on m16n8k16 mma.sync
// (nvgpu.mma.sync for f16, nvvm.mma.sync for bf16) with nvgpu.ldmatrix
// operands, NVVM only. The fragments' layout is known, so the scores, the
// online softmax and P stay in registers.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "../MmaSync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

Value KernelBuilder::packedMmaSync(Value a, Value bOp, Value acc) {
  return emitPackedMmaSync(b, loc, a, bOp, acc);
}

Value KernelBuilder::mmaSync(Value a, Value bOp, Value acc) {
  if (half.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bOp, acc,
                                    ArrayRef<int64_t>{16, 8, 16});
  return packedMmaSync(a, bOp, acc);
}

Value KernelBuilder::addIndex(Value x, int64_t y) {
  return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(y)).getResult();
}

Value KernelBuilder::addIndex(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}

Value KernelBuilder::ldMatrix(Value tile, Value row, Value col,
                              bool transpose) {
  return nvgpu::LdMatrixOp::create(b, loc, VectorType::get({4, 2}, half), tile,
                                   ValueRange{row, col}, transpose,
                                   /*numTiles=*/4)
      .getResult();
}

Value KernelBuilder::rowsOf(VectorType type, ArrayRef<Value> rows) {
  Value v = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (auto [i, row] : llvm::enumerate(rows))
    v = vector::InsertOp::create(b, loc, row, v, ArrayRef<int64_t>{int64_t(i)});
  return v;
}

std::pair<Value, Value> KernelBuilder::bOperands(Value v) {
  auto bType = VectorType::get({2, 2}, half);
  auto row = [&](int64_t i) -> Value {
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
  };
  return {rowsOf(bType, {row(0), row(1)}), rowsOf(bType, {row(2), row(3)})};
}

Value KernelBuilder::fragmentOf(VectorType type, ArrayRef<Value> scalars) {
  int64_t width = type.getDimSize(1);
  auto rowType = VectorType::get({width}, type.getElementType());
  SmallVector<Value> rows;
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    rows.push_back(vector::FromElementsOp::create(
        b, loc, rowType, scalars.slice(i * width, width)));
  return rowsOf(type, rows);
}

Value KernelBuilder::fragmentElement(Value v, int64_t i, int64_t e) {
  return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i, e});
}

void KernelBuilder::buildMmaSync(Value query, Value key, Value value,
                                 Value mask, Value out, double scale,
                                 Causal causal) {
  // Q, K and V tiles only: the scores never leave registers. The wgmma
  // kernel (Variant::Wgmma) is this one with its tiles swizzled and its
  // products on warpgroup MMA (WgmmaKernel.cpp), which reads Q from its
  // tile.
  bool wgmma = c.variant == Variant::Wgmma;
  MmaTiles layout = getMmaTiles(
      s,
      wgmma ? KernelVariant::AttentionWgmma : KernelVariant::AttentionMmaSync,
      c.queryTile, c.keyTile, c.padBytes, c.rowBlocks, c.staging, c.kvBuffers);
  OpBuilder::InsertionGuard guard(b);
  MmaSyncWarp w = beginMmaSyncWarp(layout, mask, scale, causal);
  if (wgmma)
    stageQuery(query, w.f);
  else
    loadMmaSyncQuery(query, w);

  // Iteration arguments: the output accumulators (row block r, 8 columns
  // each), then per row block and half the running max and sum (the same
  // in the quad's four lanes), then the K/V tiles'; a chunk's from its
  // state.
  SmallVector<Value> state = chunk ? loadMmaSyncState(w) : SmallVector<Value>();
  if (!chunk) {
    state.assign(w.accCount, w.zeroC);
    state.append(w.rowCount, w.minusInf);
    state.append(w.rowCount, w.f32Zero);
  }
  SmallVector<Value> results;
  if (wgmma && c.kvBuffers == 3) {
    results = wgmmaPipelinedLoop(key, value, w,
                                 keyTileCount(w.f.tileStart, causal), state);
  } else {
    SmallVector<Value> kvArgs = kvInit(key, value, w.f);
    Value keyTiles = keyTileCount(w.f.tileStart, causal);
    Value step = index(1);
    Value lb = index(0);
    results = mmaKeyLoop(
        key, value, w.f, lb, keyTiles, step, state, kvArgs,
        [&](ValueRange carried, Value start, Value kTile, Value vTile) {
          return mmaSyncKeyTile(w, carried, start, kTile, vTile);
        });
  }
  if (chunk)
    storeMmaSyncState(w, results);
  else
    writeMmaSyncOutput(w, results, out);
  endMma(w.f.launch);
}

void KernelBuilder::beginIfRowValid(Value row) {
  auto store =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              row, index(s.queries)),
                        /*withElseRegion=*/false);
  b.setInsertionPointToStart(store.thenBlock());
}

SmallVector<Value> KernelBuilder::loadMmaSyncState(const MmaSyncWarp &w) {
  // The lane's accumulator fragments, then its rows' running maxima and
  // sums, from the rows it holds (clamped to the queries).
  SmallVector<Value> acc(w.accCount), max(w.rowCount), sum(w.rowCount);
  Value column = arith::MulIOp::create(b, loc, w.t, index(2));
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t r = 0; r < w.blocks; ++r) {
    Value loadRows[2];
    for (int64_t i = 0; i < 2; ++i) {
      Value row = addIndex(w.f.tileStart, mmaSyncTileRow(w, r, i));
      loadRows[i] = arith::MinUIOp::create(b, loc, row, index(s.queries - 1));
      std::tie(max[2 * r + i], sum[2 * r + i]) =
          loadRowState(w.f.head, loadRows[i]);
    }
    for (int64_t db = 0; db < w.outBlocks; ++db) {
      SmallVector<Value> pairs;
      for (int64_t i = 0; i < 2; ++i)
        pairs.push_back(vector::LoadOp::create(
            b, loc, pairType, chunk->acc,
            ValueRange{w.f.head, loadRows[i], addIndex(column, 8 * db)}));
      acc[r * w.outBlocks + db] = rowsOf(w.cType, pairs);
    }
  }
  SmallVector<Value> state(acc);
  state.append(max);
  state.append(sum);
  return state;
}

void KernelBuilder::storeMmaSyncState(const MmaSyncWarp &w,
                                      ValueRange results) {
  // Each lane its accumulator fragments; the first lane of each quad its
  // rows' max and sum (the quad's lanes hold the same).
  Value column = arith::MulIOp::create(b, loc, w.t, index(2));
  Value firstOfQuad =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w.t, index(0));
  for (int64_t r = 0; r < w.blocks; ++r)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = addIndex(w.f.tileStart, mmaSyncTileRow(w, r, i));
      OpBuilder::InsertionGuard storeGuard(b);
      beginIfRowValid(row);
      for (int64_t db = 0; db < w.outBlocks; ++db)
        vector::StoreOp::create(
            b, loc,
            vector::ExtractOp::create(b, loc, results[r * w.outBlocks + db],
                                      ArrayRef<int64_t>{i}),
            chunk->acc, ValueRange{w.f.head, row, addIndex(column, 8 * db)});
      whenTrue(firstOfQuad, [&] {
        storeRowState(w.f.head, row, results[w.accCount + 2 * r + i],
                      results[w.accCount + w.rowCount + 2 * r + i]);
      });
    }
}

KernelBuilder::MmaSyncWarp
KernelBuilder::beginMmaSyncWarp(const MmaTiles &layout, Value mask,
                                double scale, Causal causal) {
  MmaSyncWarp w;
  w.f = beginMma(layout, mask, scale, causal);
  w.qTile = w.f.tiles[MmaTiles::Q];
  Value lane = arith::RemUIOp::create(b, loc, w.f.thread, index(32));
  w.g = arith::DivUIOp::create(b, loc, lane, index(4));
  w.t = arith::RemUIOp::create(b, loc, lane, index(4));
  w.lane8 = arith::RemUIOp::create(b, loc, lane, index(8));
  w.lane16 = arith::RemUIOp::create(b, loc, lane, index(16));
  w.half = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index(16)), index(8));
  w.quarter = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, index(8)), index(2)),
      index(8));
  w.blocks = c.rowBlocks;
  w.warpRows = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, w.f.thread, index(32)),
      index(16 * w.blocks));
  Type f32Type = b.getF32Type();
  w.aType = VectorType::get({4, 2}, half);
  w.bType = VectorType::get({2, 2}, half);
  w.cType = VectorType::get({2, 2}, f32Type);
  w.zeroC = arith::ConstantOp::create(
      b, loc, w.cType, DenseElementsAttr::get(w.cType, b.getF32FloatAttr(0)));
  w.f32Zero = f32(0);
  w.minusInf = f32(-std::numeric_limits<double>::infinity());
  w.qBlocks = s.headDim / 16;
  w.outBlocks = s.valueDim / 8;
  w.accCount = w.blocks * w.outBlocks;
  w.rowCount = 2 * w.blocks;
  w.keyBlocks = c.keyTile / 8;
  return w;
}

void KernelBuilder::loadMmaSyncQuery(Value query, MmaSyncWarp &w) {
  stageQuery(query, w.f);
  if (w.blocks == 1)
    for (int64_t kb = 0; kb < w.qBlocks; ++kb)
      w.qOperands.push_back(mmaSyncQOperand(w, 0, kb));
}

Value KernelBuilder::mmaSyncQOperand(const MmaSyncWarp &w, int64_t r,
                                     int64_t kb) {
  return ldMatrix(w.qTile, addIndex(addIndex(w.warpRows, w.lane16), 16 * r),
                  addIndex(w.half, 16 * kb), false);
}

Value KernelBuilder::mmaSyncTileRow(const MmaSyncWarp &w, int64_t r,
                                    int64_t i) {
  return addIndex(addIndex(w.warpRows, w.g), 16 * r + 8 * i);
}

SmallVector<Value> KernelBuilder::mmaSyncKeyTile(const MmaSyncWarp &w,
                                                 ValueRange carried,
                                                 Value start, Value kTile,
                                                 Value vTile) {
  return mmaSyncSoftmaxStep(w, carried,
                            c.variant == Variant::Wgmma
                                ? wgmmaScores(w, kTile)
                                : mmaSyncScores(w, kTile),
                            start, vTile);
}

SmallVector<Value>
KernelBuilder::mmaSyncSoftmaxStep(const MmaSyncWarp &w, ValueRange carried,
                                  ArrayRef<Value> scores, Value start,
                                  Value vTile, SmallVector<Value> *inFlight) {
  SmallVector<Value> acc(carried.take_front(w.accCount));
  ValueRange runningMax = carried.slice(w.accCount, w.rowCount);
  ValueRange runningSum = carried.slice(w.accCount + w.rowCount, w.rowCount);
  ValueRange scaled = mmaSyncBase2Scores(w, scores, start);
  SmallVector<Value> newMax, newSum;
  SmallVector<Value> probs =
      mmaSyncSoftmax(w, scaled, runningMax, runningSum, acc, newMax, newSum);
  if (c.variant == Variant::Wgmma)
    wgmmaAccumulate(w, probs, vTile, acc, inFlight);
  else
    mmaSyncAccumulate(w, probs, vTile, acc);
  SmallVector<Value> next(acc);
  next.append(newMax);
  next.append(newSum);
  return next;
}

void KernelBuilder::mmaSyncPairs(const MmaSyncWarp &w, ArrayRef<Value> a,
                                 Value bMatrices, SmallVector<Value> &acc,
                                 int64_t stride, int64_t first) {
  auto [b0, b1] = bOperands(bMatrices);
  for (int64_t r = 0; r < w.blocks; ++r) {
    Value &c0 = acc[r * stride + first];
    Value &c1 = acc[r * stride + first + 1];
    c0 = mmaSync(a[r], b0, c0);
    c1 = mmaSync(a[r], b1, c1);
  }
}

SmallVector<Value> KernelBuilder::mmaSyncScores(const MmaSyncWarp &w,
                                                Value kTile) {
  // S = Q K^T: one ldmatrix of K gives the B operands of two 8-key
  // blocks, each serving every row block.
  SmallVector<Value> scores(w.blocks * w.keyBlocks, w.zeroC);
  for (int64_t kb = 0; kb < w.qBlocks; ++kb) {
    SmallVector<Value> q;
    for (int64_t r = 0; r < w.blocks; ++r)
      q.push_back(w.blocks == 1 ? w.qOperands[kb] : mmaSyncQOperand(w, r, kb));
    for (int64_t jb = 0; jb < w.keyBlocks; jb += 2)
      mmaSyncPairs(w, q,
                   ldMatrix(kTile, addIndex(addIndex(w.lane8, w.half), 8 * jb),
                            addIndex(w.quarter, 16 * kb), false),
                   scores, w.keyBlocks, jb);
  }
  return scores;
}

ValueRange KernelBuilder::mmaSyncBase2Scores(const MmaSyncWarp &w,
                                             ArrayRef<Value> scores,
                                             Value start) {
  // Base-2 scores: unscaled products times scale log2(e) where no row of
  // the subgroup needs masking (no mask operand, no position past the end
  // or after the causal bound of the subgroup's first row), else masked
  // element by element.
  Value log2e = f32(kLog2E);
  Value scaleLog2e = f32(w.f.scale * kLog2E);
  Value unmasked = unmaskedTile(start, w.f.tileStart, w.warpRows,
                                bool(w.f.mask), w.f.causal, /*syncOrder=*/true);
  SmallVector<Type> scoreTypes(scores.size(), w.cType);
  auto scaled = scf::IfOp::create(b, loc, scoreTypes, unmasked,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard ifGuard(b);
  b.setInsertionPointToStart(scaled.thenBlock());
  Value factor = vector::BroadcastOp::create(b, loc, w.cType, scaleLog2e);
  SmallVector<Value> results;
  for (Value v : scores)
    results.push_back(arith::MulFOp::create(b, loc, v, factor));
  scf::YieldOp::create(b, loc, results);
  b.setInsertionPointToStart(scaled.elseBlock());
  results.clear();
  for (int64_t r = 0; r < w.blocks; ++r) {
    Value rows[2];
    Value loadRows[2];
    for (int64_t i = 0; i < 2; ++i) {
      rows[i] = addIndex(w.f.tileStart, mmaSyncTileRow(w, r, i));
      loadRows[i] =
          arith::MinUIOp::create(b, loc, rows[i], index(s.queries - 1));
    }
    for (int64_t jb = 0; jb < w.keyBlocks; ++jb) {
      Value v = scores[r * w.keyBlocks + jb];
      Value column = addIndex(start, 8 * jb);
      column = addIndex(column, arith::MulIOp::create(b, loc, w.t, index(2)));
      SmallVector<Value> elements;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t e = 0; e < 2; ++e)
          elements.push_back(arith::MulFOp::create(
              b, loc,
              maskedScore(fragmentElement(v, i, e), w.f.scale, w.f.mask,
                          w.f.head, rows[i], loadRows[i], addIndex(column, e),
                          w.f.causal),
              log2e));
      results.push_back(fragmentOf(w.cType, elements));
    }
  }
  scf::YieldOp::create(b, loc, results);
  return scaled.getResults();
}

SmallVector<Value> KernelBuilder::mmaSyncSoftmax(
    const MmaSyncWarp &w, ValueRange scores, ValueRange runningMax,
    ValueRange runningSum, SmallVector<Value> &acc, SmallVector<Value> &newMax,
    SmallVector<Value> &newSum) {
  // Per row: the max over the lane's scores and the 3 other lanes of its
  // quad, alpha = exp2(oldMax - max), P = exp2(s - max) rounded to 16
  // bits; the lane sums its own P as rounded (the quad's parts add up at
  // the end).
  SmallVector<Value> alpha;
  // probs[(r * keyBlocks + jb) * 4 + 2 i + e], 16-bit.
  SmallVector<Value> probs(scores.size() * 4);
  for (int64_t r = 0; r < w.blocks; ++r) {
    for (int64_t i = 0; i < 2; ++i) {
      int64_t k = 2 * r + i;
      // The lane's scores of the row, (jb, e) in order.
      SmallVector<Value> rowScores;
      for (int64_t jb = 0; jb < w.keyBlocks; ++jb)
        for (int64_t e = 0; e < 2; ++e)
          rowScores.push_back(
              fragmentElement(scores[r * w.keyBlocks + jb], i, e));
      Value m = w.minusInf;
      for (Value score : rowScores)
        m = arith::MaximumFOp::create(b, loc, m, score);
      SoftmaxRescale step =
          foldRowMax(runningMax[k], m, /*lanes=*/4, /*width=*/32, w.minusInf);
      alpha.push_back(step.alpha);
      Value sum = w.f32Zero;
      for (int64_t jb = 0; jb < w.keyBlocks; ++jb) {
        std::array<Value, 2> pair = roundedWeightPair(
            step.none, w.f32Zero,
            ValueRange{rowScores[2 * jb], rowScores[2 * jb + 1]}, step.newMax,
            half, sum);
        for (int64_t e = 0; e < 2; ++e)
          probs[(r * w.keyBlocks + jb) * 4 + 2 * i + e] = pair[e];
      }
      // The quad's sum of the tile, so that every lane holds the row's
      // running sum (the state a chunk hands on).
      newMax.push_back(step.newMax);
      newSum.push_back(
          rescaledSum(runningSum[k], alpha.back(),
                      reduceAcrossLanes(sum, 4, 32, LaneCombine::Sum)));
    }
    // O = alpha O, row by row.
    Value alphas = fragmentOf(w.cType, {alpha[2 * r], alpha[2 * r],
                                        alpha[2 * r + 1], alpha[2 * r + 1]});
    for (int64_t db = 0; db < w.outBlocks; ++db) {
      Value &o = acc[r * w.outBlocks + db];
      o = arith::MulFOp::create(b, loc, o, alphas);
    }
  }
  return probs;
}

void KernelBuilder::mmaSyncAccumulate(const MmaSyncWarp &w,
                                      ArrayRef<Value> probs, Value vTile,
                                      SmallVector<Value> &acc) {
  // O += P V: the C fragments of two 8-key blocks of P are the A operand
  // of their 16 keys; one transposed ldmatrix of V gives the B operands
  // of two 8-column blocks.
  for (int64_t jb = 0; jb < w.keyBlocks; jb += 2) {
    SmallVector<Value> p;
    for (int64_t r = 0; r < w.blocks; ++r) {
      auto at = [&](int64_t block, int64_t i, int64_t e) {
        return probs[(r * w.keyBlocks + block) * 4 + 2 * i + e];
      };
      p.push_back(
          fragmentOf(w.aType, {at(jb, 0, 0), at(jb, 0, 1), at(jb, 1, 0),
                               at(jb, 1, 1), at(jb + 1, 0, 0), at(jb + 1, 0, 1),
                               at(jb + 1, 1, 0), at(jb + 1, 1, 1)}));
    }
    for (int64_t db = 0; db < w.outBlocks; db += 2)
      mmaSyncPairs(w, p,
                   ldMatrix(vTile,
                            addIndex(addIndex(w.lane8, w.quarter), 8 * jb),
                            addIndex(w.half, 8 * db), true),
                   acc, w.outBlocks, db);
  }
}

void KernelBuilder::writeMmaSyncOutput(const MmaSyncWarp &w, ValueRange results,
                                       Value out) {
  // O / sum, each lane storing its two columns of each 8-column block.
  Value column = arith::MulIOp::create(b, loc, w.t, index(2));
  for (int64_t r = 0; r < w.blocks; ++r)
    for (int64_t i = 0; i < 2; ++i) {
      Value sum = results[w.accCount + w.rowCount + 2 * r + i];
      Value inverse = arith::DivFOp::create(b, loc, f32(1), sum);
      Value row = addIndex(w.f.tileStart, mmaSyncTileRow(w, r, i));
      OpBuilder::InsertionGuard storeGuard(b);
      beginIfRowValid(row);
      for (int64_t db = 0; db < w.outBlocks; ++db) {
        Value o = results[r * w.outBlocks + db];
        SmallVector<Value> pair;
        for (int64_t e = 0; e < 2; ++e)
          pair.push_back(castFloat(
              b, loc,
              arith::MulFOp::create(b, loc, fragmentElement(o, i, e), inverse),
              s.resultElement));
        vector::StoreOp::create(
            b, loc,
            vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, s.resultElement), pair),
            out, ValueRange{w.f.head, row, addIndex(column, 8 * db)})
            .setAlignment(s.resultElement.getIntOrFloatBitWidth() / 4);
      }
    }
}
