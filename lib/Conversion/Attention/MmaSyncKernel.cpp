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

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

Value KernelBuilder::bf16MmaSync(Value a, Value bOp, Value acc) {
  Type i32 = b.getI32Type();
  auto pairs = [&](Value fragment) {
    SmallVector<Value> words;
    auto type = cast<VectorType>(fragment.getType());
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      Value pair =
          vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{i});
      Value word =
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair);
      words.push_back(
          vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
    }
    return words;
  };
  SmallVector<Value> accumulator;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t e = 0; e < 2; ++e)
      accumulator.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i, e}));
  Type f32Type = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  SmallVector<Value> aWords = pairs(a), bWords = pairs(bOp);
  Value d = NVVM::MmaOp::create(
      b, loc, Type(resultType), ValueRange(aWords), ValueRange(bWords),
      ValueRange(accumulator), ArrayRef<int64_t>{16, 8, 16},
      std::optional<NVVM::MMAB1Op>(), std::optional<NVVM::MMAIntOverflow>(),
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  auto cType = VectorType::get({2, 2}, f32Type);
  Value result = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0)));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t e = 0; e < 2; ++e)
      result = vector::InsertOp::create(
          b, loc, LLVM::ExtractValueOp::create(b, loc, d, 2 * i + e), result,
          ArrayRef<int64_t>{i, e});
  return result;
}

void KernelBuilder::buildMmaSync(Value query, Value key, Value value,
                                 Value mask, Value out, double scale,
                                 std::optional<int64_t> causal) {
  Type halfType = half;
  Type f32Type = b.getF32Type();
  // Q, K and V tiles only: the scores never leave registers.
  MmaTiles layout(c.queryTile, c.keyTile, s.headDim, s.valueDim, c.padBytes,
                  c.asyncCopy, c.rowBlocks == 1, /*stagedSoftmax=*/false);
  OpBuilder::InsertionGuard guard(b);
  MmaFrame f = beginMma(layout, mask, scale, causal);
  Value qTile = f.tiles[MmaTiles::Q];

  // m16n8k16 fragments (PTX ISA, "mma.m16n8k16"): lane l = 4 g + t holds
  // A (16x16) as [row g, k 2t..2t+1], [row g+8, k 2t..], [row g, k 2t+8..],
  // [row g+8, k 2t+8..]; B (16x8) as [k 2t.., col g], [k 2t+8.., col g];
  // C (16x8, f32) as [row g, col 2t..2t+1], [row g+8, col 2t..].
  Value lane = arith::RemUIOp::create(b, loc, f.thread, index(32));
  Value g = arith::DivUIOp::create(b, loc, lane, index(4));
  Value t = arith::RemUIOp::create(b, loc, lane, index(4));
  // ldmatrix rows: lane l gives the address of row l % 8 of matrix l / 8.
  Value lane8 = arith::RemUIOp::create(b, loc, lane, index(8));
  Value lane16 = arith::RemUIOp::create(b, loc, lane, index(16));
  Value half = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index(16)), index(8));
  Value quarter = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, index(8)), index(2)),
      index(8));
  auto add = [&](Value x, int64_t y) -> Value {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(y)).getResult();
  };
  auto addv = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  int64_t blocks = c.rowBlocks;
  // Subgroup w owns rows [16 R w, 16 R (w + 1)) of the tile; the lane's
  // rows are rowBase(r) + g + 8 i, i = 0, 1.
  Value warpRows = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, f.thread, index(32)),
      index(16 * blocks));
  auto tileRowOf = [&](int64_t r, int64_t i) {
    return add(addv(warpRows, g), 16 * r + 8 * i);
  };
  auto aType = VectorType::get({4, 2}, halfType);
  auto cType = VectorType::get({2, 2}, f32Type);
  Value zeroC = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0)));
  Value f32Zero = f32(0);
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  auto ldmatrix = [&](Value tile, Value row, Value col, bool transpose) {
    return nvgpu::LdMatrixOp::create(b, loc, aType, tile, ValueRange{row, col},
                                     transpose, /*numTiles=*/4)
        .getResult();
  };
  // The two B operands in an ldmatrix result (matrices 0-1 and 2-3).
  // (Row by row: the NVVM lowering takes neither n-D strided slices nor
  // n-D from_elements.)
  auto bType = VectorType::get({2, 2}, halfType);
  auto rowsOf = [&](VectorType type, ArrayRef<Value> rows) -> Value {
    Value v = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
    for (auto [i, row] : llvm::enumerate(rows))
      v = vector::InsertOp::create(b, loc, row, v,
                                   ArrayRef<int64_t>{int64_t(i)});
    return v;
  };
  auto halves = [&](Value v) -> std::pair<Value, Value> {
    auto row = [&](int64_t i) -> Value {
      return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
    };
    return {rowsOf(bType, {row(0), row(1)}), rowsOf(bType, {row(2), row(3)})};
  };
  // A 2-D fragment from its scalars, row-major, `width` per row.
  auto fragment = [&](VectorType type, ArrayRef<Value> scalars) -> Value {
    int64_t width = type.getDimSize(1);
    auto rowType = VectorType::get({width}, type.getElementType());
    SmallVector<Value> rows;
    for (int64_t i = 0; i < type.getDimSize(0); ++i)
      rows.push_back(vector::FromElementsOp::create(
          b, loc, rowType, scalars.slice(i * width, width)));
    return rowsOf(type, rows);
  };
  auto mma = [&](Value a, Value bOp, Value acc) -> Value {
    if (halfType.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bOp, acc,
                                      ArrayRef<int64_t>{16, 8, 16});
    return bf16MmaSync(a, bOp, acc);
  };
  auto element = [&](Value v, int64_t i, int64_t e) -> Value {
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i, e});
  };
  // A operand r, column block kb of Q (rows 16 r.., columns 16 kb..).
  auto loadQ = [&](int64_t r, int64_t kb) {
    return ldmatrix(qTile, add(addv(warpRows, lane16), 16 * r),
                    add(half, 16 * kb), false);
  };

  // Reduces `v` over the 4 lanes of a quad (the lanes of one row).
  auto acrossQuad = [&](Value v, LaneCombine combine) {
    return reduceAcrossLanes(v, 4, 32, combine);
  };
  stageQuery(query, f);
  int64_t qBlocks = s.headDim / 16;
  SmallVector<Value> qOperands;
  if (blocks == 1)
    for (int64_t kb = 0; kb < qBlocks; ++kb)
      qOperands.push_back(loadQ(0, kb));

  // Iteration arguments: the output accumulators (row block r, 8 columns
  // each), then per row block and half the running max and the lane's part
  // of the running sum, then the K/V tiles'.
  int64_t outBlocks = s.valueDim / 8;
  int64_t accCount = blocks * outBlocks;
  int64_t rowCount = 2 * blocks;
  SmallVector<Value> init(accCount, zeroC);
  init.append(rowCount, minusInf);
  init.append(rowCount, f32Zero);
  init.append(kvInit(key, value, f));
  Value keyTiles = keyTileCount(f.tileStart, causal);
  auto loop = scf::ForOp::create(b, loc, index(0), keyTiles, index(1), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> acc(carried.take_front(accCount));
    ValueRange runningMax = carried.slice(accCount, rowCount);
    ValueRange runningSum = carried.slice(accCount + rowCount, rowCount);
    Value start =
        arith::MulIOp::create(b, loc, loop.getInductionVar(), index(c.keyTile));
    SmallVector<Value> next;
    auto [kTile, vTile] =
        kvStage(key, value, f, carried.drop_front(accCount + 2 * rowCount),
                loop.getInductionVar(), next);

    // S = Q K^T: one ldmatrix of K gives the B operands of two 8-key
    // blocks, each serving every row block.
    int64_t keyBlocks = c.keyTile / 8;
    SmallVector<Value> scores(blocks * keyBlocks, zeroC);
    for (int64_t kb = 0; kb < qBlocks; ++kb) {
      SmallVector<Value> q;
      for (int64_t r = 0; r < blocks; ++r)
        q.push_back(blocks == 1 ? qOperands[kb] : loadQ(r, kb));
      for (int64_t jb = 0; jb < keyBlocks; jb += 2) {
        auto [k0, k1] = halves(ldmatrix(kTile, add(addv(lane8, half), 8 * jb),
                                        add(quarter, 16 * kb), false));
        for (int64_t r = 0; r < blocks; ++r) {
          Value &s0 = scores[r * keyBlocks + jb];
          Value &s1 = scores[r * keyBlocks + jb + 1];
          s0 = mma(q[r], k0, s0);
          s1 = mma(q[r], k1, s1);
        }
      }
    }

    // Base-2 scores: unscaled products times scale log2(e) where no row of
    // the subgroup needs masking (no mask operand, no position past the end
    // or after the causal bound of the subgroup's first row), else masked
    // element by element.
    Value log2e = f32(kLog2E);
    Value scaleLog2e = f32(scale * kLog2E);
    Value unmasked = unmaskedTile(start, f.tileStart, warpRows, bool(mask),
                                  causal, /*syncOrder=*/true);
    SmallVector<Type> scoreTypes(scores.size(), cType);
    auto scaled = scf::IfOp::create(b, loc, scoreTypes, unmasked,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(scaled.thenBlock());
      Value factor = vector::BroadcastOp::create(b, loc, cType, scaleLog2e);
      SmallVector<Value> results;
      for (Value v : scores)
        results.push_back(arith::MulFOp::create(b, loc, v, factor));
      scf::YieldOp::create(b, loc, results);
      b.setInsertionPointToStart(scaled.elseBlock());
      results.clear();
      for (int64_t r = 0; r < blocks; ++r) {
        Value rows[2];
        Value loadRows[2];
        for (int64_t i = 0; i < 2; ++i) {
          rows[i] = addv(f.tileStart, tileRowOf(r, i));
          loadRows[i] =
              arith::MinUIOp::create(b, loc, rows[i], index(s.queries - 1));
        }
        for (int64_t jb = 0; jb < keyBlocks; ++jb) {
          Value v = scores[r * keyBlocks + jb];
          Value column = add(start, 8 * jb);
          column = addv(column, arith::MulIOp::create(b, loc, t, index(2)));
          SmallVector<Value> elements;
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t e = 0; e < 2; ++e)
              elements.push_back(arith::MulFOp::create(
                  b, loc,
                  maskedScore(element(v, i, e), scale, mask, f.head, rows[i],
                              loadRows[i], add(column, e), causal),
                  log2e));
          results.push_back(fragment(cType, elements));
        }
      }
      scf::YieldOp::create(b, loc, results);
    }

    // Per row: the max over the lane's scores and the 3 other lanes of its
    // quad, alpha = exp2(oldMax - max), P = exp2(s - max) rounded to f16;
    // the lane sums its own P as rounded (the quad's parts add up at the
    // end).
    SmallVector<Value> newMax, newSum, alpha;
    // probs[(r * keyBlocks + jb) * 4 + 2 i + e], f16.
    SmallVector<Value> probs(scores.size() * 4);
    for (int64_t r = 0; r < blocks; ++r) {
      for (int64_t i = 0; i < 2; ++i) {
        int64_t k = 2 * r + i;
        // The lane's scores of the row, (jb, e) in order.
        SmallVector<Value> rowScores;
        for (int64_t jb = 0; jb < keyBlocks; ++jb)
          for (int64_t e = 0; e < 2; ++e)
            rowScores.push_back(
                element(scaled.getResult(r * keyBlocks + jb), i, e));
        Value m = minusInf;
        for (Value score : rowScores)
          m = arith::MaximumFOp::create(b, loc, m, score);
        Value rowMax = arith::MaximumFOp::create(
            b, loc, runningMax[k], acrossQuad(m, LaneCombine::Max));
        SoftmaxRescale step =
            softmaxRescale(runningMax[k], rowMax, minusInf, /*base2=*/true);
        alpha.push_back(step.alpha);
        Value sum = f32Zero;
        for (int64_t jb = 0; jb < keyBlocks; ++jb)
          for (int64_t e = 0; e < 2; ++e) {
            Value p = softmaxWeight(
                step.none, f32Zero,
                arith::SubFOp::create(b, loc, rowScores[2 * jb + e], rowMax),
                /*base2=*/true);
            Value rounded = castFloat(b, loc, p, halfType);
            probs[(r * keyBlocks + jb) * 4 + 2 * i + e] = rounded;
            sum = arith::AddFOp::create(b, loc, sum,
                                        castFloat(b, loc, rounded, f32Type));
          }
        newMax.push_back(rowMax);
        newSum.push_back(rescaledSum(runningSum[k], alpha.back(), sum));
      }
      // O = alpha O, row by row.
      Value alphas = fragment(cType, {alpha[2 * r], alpha[2 * r],
                                      alpha[2 * r + 1], alpha[2 * r + 1]});
      for (int64_t db = 0; db < outBlocks; ++db) {
        Value &o = acc[r * outBlocks + db];
        o = arith::MulFOp::create(b, loc, o, alphas);
      }
    }

    // O += P V: the C fragments of two 8-key blocks of P are the A operand
    // of their 16 keys; one transposed ldmatrix of V gives the B operands
    // of two 8-column blocks.
    for (int64_t jb = 0; jb < keyBlocks; jb += 2) {
      SmallVector<Value> p;
      for (int64_t r = 0; r < blocks; ++r) {
        auto at = [&](int64_t block, int64_t i, int64_t e) {
          return probs[(r * keyBlocks + block) * 4 + 2 * i + e];
        };
        p.push_back(
            fragment(aType, {at(jb, 0, 0), at(jb, 0, 1), at(jb, 1, 0),
                             at(jb, 1, 1), at(jb + 1, 0, 0), at(jb + 1, 0, 1),
                             at(jb + 1, 1, 0), at(jb + 1, 1, 1)}));
      }
      for (int64_t db = 0; db < outBlocks; db += 2) {
        auto [v0, v1] = halves(ldmatrix(
            vTile, add(addv(lane8, quarter), 8 * jb), add(half, 8 * db), true));
        for (int64_t r = 0; r < blocks; ++r) {
          Value &o0 = acc[r * outBlocks + db];
          Value &o1 = acc[r * outBlocks + db + 1];
          o0 = mma(p[r], v0, o0);
          o1 = mma(p[r], v1, o1);
        }
      }
    }
    SmallVector<Value> yielded(acc);
    yielded.append(newMax);
    yielded.append(newSum);
    yielded.append(next);
    scf::YieldOp::create(b, loc, yielded);
  }
  kvFinish(loop.getResults().drop_front(accCount + 2 * rowCount));

  // O / sum, each lane storing its two columns of each 8-column block.
  Value column = arith::MulIOp::create(b, loc, t, index(2));
  for (int64_t r = 0; r < blocks; ++r)
    for (int64_t i = 0; i < 2; ++i) {
      Value sum = acrossQuad(loop.getResult(accCount + rowCount + 2 * r + i),
                             LaneCombine::Sum);
      Value inverse = arith::DivFOp::create(b, loc, f32(1), sum);
      Value row = addv(f.tileStart, tileRowOf(r, i));
      auto store = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                index(s.queries)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard storeGuard(b);
      b.setInsertionPointToStart(store.thenBlock());
      for (int64_t db = 0; db < outBlocks; ++db) {
        Value o = loop.getResult(r * outBlocks + db);
        SmallVector<Value> pair;
        for (int64_t e = 0; e < 2; ++e)
          pair.push_back(castFloat(
              b, loc, arith::MulFOp::create(b, loc, element(o, i, e), inverse),
              s.resultElement));
        vector::StoreOp::create(
            b, loc,
            vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, s.resultElement), pair),
            out, ValueRange{f.head, row, add(column, 8 * db)})
            .setAlignment(s.resultElement.getIntOrFloatBitWidth() / 4);
      }
    }
  markOccupancy(f.launch);
  b.setInsertionPointToEnd(&f.launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
