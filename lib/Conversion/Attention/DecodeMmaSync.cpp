//===- DecodeMmaSync.cpp - decode steps on mma.sync
//------------------------===//
//
// The steps of the split-KV decode kernel (DecodeKernel.cpp) with its
// config's variant attention_decode_mma_sync (NVVM): the dot products and
// P V on m16n8k16 mma.sync instead of the lanes' fused multiply-adds.
//
//   lane l = 4 g + q of a subgroup (the fragments' groups and quads, PTX
//   ISA "mma.m16n8k16"); each subgroup takes 16 KV positions per matrix
//   product, `unroll` of them per step;
//   S = Q K^T (M = the workgroup's rows, up to 16, padded with zero rows;
//   N = 8 positions; K = the head dimension): Q's A operands stay in
//   registers; lane (g, q) reads D/4 values of the K row of position g of
//   the 8, in runs of the config's vector_width from column (4 m + q) run
//   (8: 16-byte loads, the quad's covering 64 consecutive bytes; whole
//   q8_0 / q4_0 blocks, decoded exactly to f16 in registers), so the head
//   dimension is permuted inside each matrix product alike for Q and K,
//   which leaves the dot products whole;
//   the scores' C fragments hold (row g (+8), positions 2q, 2q+1): the row
//   max takes two shuffles over the quad, and P (f16/bf16, as P V uses
//   it) is already the B operand of
//   O^T = V^T P^T (M = 16 values of V, N = 8 rows, K = 16 positions):
//   lane (g, q) reads value-dim / 8 values of the V rows of positions 2q,
//   2q+1, 2q+8, 2q+9 (runs of 8 from column (8 m + g) 8, or 16 or 32
//   values of one block) and pairs them across positions; which values of
//   V a lane holds only places its outputs;
//   the accumulators (value, row) are rescaled with each row's factor
//   fetched from the lane that holds the row's max. f16 and bf16 take the
//   same nvvm.mma.sync on operands packed in i32 (packedMmaSync).
//
// Blocks are decoded from the words that hold them: q8_0 bytes + 128 and
// q4_0 nibbles become the low bytes of f16 1024 + x, from which 1152 or
// 1032 is subtracted (exact), then multiplied by the block's scale in f16:
// one rounding of the exact product, as the dequant-once scratch holds it,
// so rewrites off and on compute the same bytes.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

namespace {
/// Where one piece of decodePairs' values (`per` of them from value
/// `valueAt` of a row of `block`s) lies: its block's first byte, the value
/// in the block, the aligned word before its quants' first byte and that
/// byte's offset from it (0 or 2), and how many words hold them.
struct PairPiece {
  Value blockAt, inBlock, aligned, wordOffset;
  int64_t count;
  bool q8, inOrder;
  /// Wide: the 8-byte aligned start of the span the piece's loads cover
  /// (its block's first byte where the piece is a whole block, so that the
  /// scale comes with the quants, else its quants' first byte), the span's
  /// offset from it, whether the scale is in the span, and how many 8-byte
  /// loads cover it.
  Value spanAligned, spanOffset;
  bool scaleInSpan = false;
  int64_t chunks = 0;
};
} // namespace

static PairPiece getPairPiece(OpBuilder &b, Location loc, Value valueAt,
                              int64_t per, BlockQuantizedType block,
                              bool natural) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  PairPiece p;
  p.q8 = isa<Q8_0Type>(block);
  p.blockAt = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, valueAt, index(32)),
      index(block.getBlockBytes()));
  p.inBlock = arith::RemUIOp::create(b, loc, valueAt, index(32));
  // The quants' bytes (q4_0: half as many, each two values) as words from
  // a 2-byte aligned start: aligned words, funnel-shifted by 16 bits where
  // the start is not. q4_0 in the row's order: values 16 h + i are the low
  // (h = 0) or high (h = 1) nibbles of bytes i.
  p.inOrder = !p.q8 && natural && per < 32;
  Value quantAt =
      p.q8 ? p.inBlock
      : p.inOrder
          ? arith::RemUIOp::create(b, loc, p.inBlock, index(16)).getResult()
          : arith::DivUIOp::create(b, loc, p.inBlock, index(2)).getResult();
  Value byteAt = arith::AddIOp::create(
      b, loc, p.blockAt, arith::AddIOp::create(b, loc, quantAt, index(2)));
  p.wordOffset = arith::RemUIOp::create(b, loc, byteAt, index(4));
  p.aligned = arith::SubIOp::create(b, loc, byteAt, p.wordOffset);
  p.count = (p.q8 || p.inOrder ? per : per / 2) / 4;
  // The span from a 2-byte aligned start, at most 6 bytes past an 8-byte
  // boundary.
  p.scaleInSpan = per == 32;
  Value spanStart = p.scaleInSpan ? p.blockAt : byteAt;
  p.spanOffset = arith::RemUIOp::create(b, loc, spanStart, index(8));
  p.spanAligned = arith::SubIOp::create(b, loc, spanStart, p.spanOffset);
  p.chunks = llvm::divideCeil(6 + (p.scaleInSpan ? 2 : 0) + 4 * p.count, 8);
  return p;
}

SmallVector<Value> KernelBuilder::decodePairs(Value source, RowIndices at,
                                              Value first, int64_t n,
                                              int64_t dim,
                                              BlockQuantizedType block,
                                              bool natural) {
  return pairsFromLoads(loadPairs(source, at, first, n, dim, block, natural),
                        first, n, block, natural);
}

SmallVector<Value> KernelBuilder::loadPairs(Value source, RowIndices at,
                                            Value first, int64_t n, int64_t dim,
                                            BlockQuantizedType block,
                                            bool natural, bool wide) {
  SmallVector<Value> loads;
  if (Value scales = splitScales.lookup(source)) {
    // Split q8_0: per piece of up to 16 values in one block, its f16 scale
    // and its i8 values as 32-bit words.
    int64_t per = std::min<int64_t>(n, 16);
    for (int64_t j = 0; j < n; j += per) {
      Value x = addIndex(first, j);
      loads.push_back(memref::LoadOp::create(
          b, loc, scales,
          at(arith::DivUIOp::create(b, loc, x, index(32)).getResult())));
      auto load = vector::LoadOp::create(
          b, loc, VectorType::get({per}, b.getI8Type()), source, at(x));
      load.setAlignment(per);
      Value words = vector::BitCastOp::create(
          b, loc, VectorType::get({per / 4}, b.getI32Type()), load);
      for (int64_t k = 0; k < per / 4; ++k)
        loads.push_back(vector::ExtractOp::create(b, loc, words, k));
    }
    return loads;
  }
  if (!block) {
    auto vectorType = VectorType::get({8}, half);
    for (int64_t j = 0; j < n; j += 8) {
      auto load = vector::LoadOp::create(b, loc, vectorType, source,
                                         at(addIndex(first, j)));
      load.setAlignment(16);
      loads.push_back(load);
    }
    return loads;
  }
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  int64_t rowBytes = dim / 32 * block.getBlockBytes();
  auto word = [&](Value byteAt) -> Value {
    auto load = vector::LoadOp::create(b, loc, VectorType::get({4}, i8), source,
                                       at(byteAt));
    load.setAlignment(4);
    return vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), load), 0);
  };
  auto loadScale = [&](Value blockAt) {
    auto load = vector::LoadOp::create(b, loc, VectorType::get({2}, i8), source,
                                       at(blockAt));
    load.setAlignment(2);
    loads.push_back(vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getF16Type()),
                                  load),
        0));
  };
  // One block at a time, or the part of one that the slice covers: its
  // scale, its words and the word after them (read only where misaligned,
  // else the row's last, which is in bounds).
  int64_t per = std::min<int64_t>(n, 32);
  for (int64_t j = 0; j < n; j += per) {
    PairPiece p = getPairPiece(b, loc, addIndex(first, j), per, block, natural);
    if (wide) {
      // 8-byte loads from the span's aligned start (each clamped to the
      // row's last 8 bytes: only a load past the span can be), as words;
      // the scale first where it is not in them.
      if (!p.scaleInSpan)
        loadScale(p.blockAt);
      for (int64_t k = 0; k < p.chunks; ++k) {
        Value chunkAt = arith::MinUIOp::create(
            b, loc, addIndex(p.spanAligned, 8 * k), index(rowBytes - 8));
        auto load = vector::LoadOp::create(b, loc, VectorType::get({8}, i8),
                                           source, at(chunkAt));
        load.setAlignment(8);
        Value words =
            vector::BitCastOp::create(b, loc, VectorType::get({2}, i32), load);
        for (int64_t e = 0; e < 2; ++e)
          loads.push_back(vector::ExtractOp::create(b, loc, words, e));
      }
      continue;
    }
    loadScale(p.blockAt);
    for (int64_t k = 0; k < p.count; ++k)
      loads.push_back(word(addIndex(p.aligned, 4 * k)));
    loads.push_back(word(arith::MinUIOp::create(
        b, loc, addIndex(p.aligned, 4 * p.count), index(rowBytes - 4))));
  }
  return loads;
}

SmallVector<Value> KernelBuilder::pairsFromLoads(ValueRange loads, Value first,
                                                 int64_t n,
                                                 BlockQuantizedType block,
                                                 bool natural, bool wide,
                                                 bool split) {
  // Split q8_0 values decode as q8_0 blocks do, from loadPairs' scales and
  // words.
  if (split)
    block = Q8_0Type::get(b.getContext());
  // Blocks dequantized to bf16 are decoded in f32 and rounded in pairs
  // (PTX cvt.rn.bf16x2.f32: the bf16 operand pair itself); to f16, in f16
  // pairs.
  bool bf16Blocks = block && half.isBF16();
  auto pairType =
      VectorType::get({2}, block && !bf16Blocks ? b.getF16Type() : half);
  SmallVector<Value> pairs;
  if (!block) {
    for (Value load : loads)
      for (int64_t e = 0; e < 8; e += 2)
        pairs.push_back(vector::ShuffleOp::create(b, loc, load, load,
                                                  ArrayRef<int64_t>{e, e + 1}));
    return pairs;
  }
  Type i32 = b.getI32Type(), f16 = b.getF16Type();
  bool q8 = isa<Q8_0Type>(block);
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto f16Pair = VectorType::get({2}, f16);
  Value bias = bf16Blocks
                   ? Value()
                   : arith::ConstantOp::create(
                         b, loc, f16Pair,
                         DenseElementsAttr::get(
                             f16Pair, b.getFloatAttr(f16, q8 ? 1152 : 1032)))
                         .getResult();
  // The f16 pairs (1024 + byte 0, 1024 + byte 1) and (.. 2, .. 3) of `x`,
  // less `bias` (1024 + 128 for q8_0's q + 128, 1024 + 8 for q4_0), times
  // the block's scale (a pair; bf16: the f16 scale).
  auto asPairs = [&](Value x, Value scale) {
    if (bf16Blocks) {
      // bf16(f32(u - bias) * f32(d)), as the dequantize to bf16 rounds the
      // exact f32 product (`scale` is the block's f16 scale).
      Value d = arith::ExtFOp::create(b, loc, b.getF32Type(), scale);
      SmallVector<Value> v =
          BlockDecoder::biasedBytesToF32(b, loc, x, q8 ? 128 : 8);
      for (int64_t e = 0; e < 4; e += 2)
        pairs.push_back(arith::TruncFOp::create(
            b, loc, pairType,
            vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, b.getF32Type()),
                ValueRange{arith::MulFOp::create(b, loc, v[e], d),
                           arith::MulFOp::create(b, loc, v[e + 1], d)})));
      return;
    }
    auto [low, high] = BlockDecoder::getMagicF16Pairs(b, loc, x);
    for (Value h : {low, high})
      pairs.push_back(arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, h, bias), scale));
  };
  if (split) {
    int64_t per = std::min<int64_t>(n, 16);
    for (size_t next = 0; next < loads.size(); next += 1 + per / 4) {
      Value scales =
          bf16Blocks ? loads[next]
                     : vector::BroadcastOp::create(b, loc, f16Pair, loads[next])
                           .getResult();
      for (Value w : loads.slice(next + 1, per / 4))
        asPairs(arith::XOrIOp::create(b, loc, w, constant(0x80808080)), scales);
    }
    return pairs;
  }
  int64_t per = std::min<int64_t>(n, 32);
  size_t next = 0;
  for (int64_t j = 0; j < n; j += per) {
    PairPiece p = getPairPiece(b, loc, addIndex(first, j), per, block, natural);
    Value scale;
    SmallVector<Value> words;
    // The piece's words, from a 2-byte aligned run at `offset` bytes into
    // `raw` (aligned words, funnel-shifted by 16 bits where `offset` is not
    // a multiple of 4; `offset` / 4 is 0 .. `shifts`).
    auto pickWords = [&](ValueRange raw, Value offset, int64_t shifts) {
      Value wordAt =
          shifts ? arith::DivUIOp::create(b, loc, offset, index(4)).getResult()
                 : Value();
      Value oddHalf = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::RemUIOp::create(b, loc, offset, index(4)), index(0));
      int64_t last = raw.size() - 1;
      auto rawAt = [&](int64_t k) -> Value {
        Value v = raw[std::min<int64_t>(k + shifts, last)];
        for (int64_t i = shifts - 1; i >= 0; --i)
          v = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wordAt,
                                    index(i)),
              raw[std::min<int64_t>(k + i, last)], v);
        return v;
      };
      SmallVector<Value> picked;
      for (int64_t k = 0; k <= p.count; ++k)
        picked.push_back(rawAt(k));
      for (int64_t k = 0; k < p.count; ++k) {
        Value shifted = arith::OrIOp::create(
            b, loc, arith::ShRUIOp::create(b, loc, picked[k], constant(16)),
            arith::ShLIOp::create(b, loc, picked[k + 1], constant(16)));
        words.push_back(
            arith::SelectOp::create(b, loc, oddHalf, shifted, picked[k]));
      }
    };
    if (wide) {
      if (!p.scaleInSpan)
        scale = loads[next++];
      ValueRange raw = loads.slice(next, 2 * p.chunks);
      next += 2 * p.chunks;
      Value quantOffset = p.spanOffset;
      if (p.scaleInSpan) {
        // The scale: the 16 bits at the span's offset (0, 2, 4 or 6).
        Value word = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                  p.spanOffset, index(4)),
            raw[0], raw[1]);
        Value shift = arith::IndexCastOp::create(
            b, loc, i32,
            arith::MulIOp::create(
                b, loc, arith::RemUIOp::create(b, loc, p.spanOffset, index(4)),
                index(8)));
        Value bits = arith::TruncIOp::create(
            b, loc, b.getI16Type(),
            arith::ShRUIOp::create(b, loc, word, shift));
        scale = arith::BitcastOp::create(b, loc, f16, bits);
        quantOffset = addIndex(p.spanOffset, 2);
      }
      pickWords(raw, quantOffset, p.scaleInSpan ? 2 : 1);
    } else {
      scale = loads[next];
      pickWords(loads.slice(next + 1, p.count + 1), p.wordOffset, 0);
      next += p.count + 2;
    }
    Value scales =
        bf16Blocks
            ? scale
            : vector::BroadcastOp::create(b, loc, f16Pair, scale).getResult();
    if (q8) {
      for (Value w : words)
        asPairs(arith::XOrIOp::create(b, loc, w, constant(0x80808080)), scales);
      continue;
    }
    if (p.inOrder) {
      Value shift = arith::IndexCastOp::create(
          b, loc, i32,
          arith::MulIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, p.inBlock, index(16)),
              index(4)));
      for (Value w : words)
        asPairs(arith::AndIOp::create(b, loc,
                                      arith::ShRUIOp::create(b, loc, w, shift),
                                      constant(0x0F0F0F0F)),
                scales);
      continue;
    }
    // q4_0: the low nibbles (values in byte order), then the high ones.
    for (Value w : words)
      asPairs(arith::AndIOp::create(b, loc, w, constant(0x0F0F0F0F)), scales);
    for (Value w : words)
      asPairs(arith::AndIOp::create(
                  b, loc, arith::ShRUIOp::create(b, loc, w, constant(4)),
                  constant(0x0F0F0F0F)),
              scales);
  }
  return pairs;
}

Value KernelBuilder::decodePairDim(Value first, int64_t n, int64_t slot,
                                   BlockQuantizedType block) {
  if (!block || isa<Q8_0Type>(block) || n % 32 == 0)
    return addIndex(first, slot);
  // A q4_0 half block from value 16 h: its bytes 8 h .. 8 h + 7 hold
  // values 8 h + i (low nibbles, slots 0-7) and 16 + 8 h + i (high).
  Value blockStart = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, first, index(32)), index(32));
  Value halfStart = arith::DivUIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, first, index(32)), index(2));
  return addIndex(addIndex(blockStart, halfStart), slot < 8 ? slot : slot + 8);
}

SmallVector<Value> KernelBuilder::decodeMmaSync(Value query, Value key,
                                                Value value,
                                                const DecodeFrame &f,
                                                Value count,
                                                SmallVector<DecodeAcc> &acc) {
  Type f32Type = b.getF32Type(), i32 = b.getI32Type();
  const int64_t rows = c.queryTile, unroll = c.unroll;
  const int64_t rowTiles = rows > 8 ? 2 : 1;
  const int64_t kSlice = s.headDim / 4, kSteps = s.headDim / 16;
  const int64_t vSlice = s.valueDim / 8, mTiles = s.valueDim / 16;
  auto pairType = VectorType::get({2}, half);
  auto aType = VectorType::get({4, 2}, half);
  auto bType = VectorType::get({2, 2}, half);
  auto cType = VectorType::get({2, 2}, f32Type);
  Value zeroC = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0)));
  Value zeroPair =
      arith::ConstantOp::create(b, loc, pairType, b.getZeroAttr(pairType));
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  Value zero = f32(0);
  Value g = arith::DivUIOp::create(b, loc, f.lane, index(4));
  Value quad = arith::RemUIOp::create(b, loc, f.lane, index(4));
  // Lane (g, q)'s K values: runs of kRun (c.vectorWidth) from column
  // (4 m + q) kRun; its V values: runs of 8 from (8 m + g) 8 for floats
  // (the quad's, and the eight groups', loads cover whole sectors), the
  // vSlice from g vSlice for blocks.
  // Split q8_0 V: the vSlice from g vSlice too where it is whole 16-byte
  // loads.
  const bool vBlockSlice = s.valueBlock || (isSplit(value) && vSlice % 16 == 0);
  const int64_t kRun = c.vectorWidth;
  const int64_t vRun = vBlockSlice ? vSlice : 8;
  auto kRunStart = [&](int64_t m) {
    return arith::MulIOp::create(b, loc, addIndex(quad, 4 * m), index(kRun))
        .getResult();
  };
  auto vRunStart = [&](int64_t m) {
    if (vBlockSlice)
      return arith::MulIOp::create(b, loc, g, index(vSlice)).getResult();
    return arith::MulIOp::create(b, loc, addIndex(g, 8 * m), index(8))
        .getResult();
  };
  Value quad2 = arith::MulIOp::create(b, loc, quad, index(2));

  // The lane's rows g + 8 i: their query head and query (clamped to the
  // workgroup's rows; rows past them are zeros of Q).
  SmallVector<Value> rowValid(rowTiles), heads(rowTiles), queries(rowTiles);
  for (int64_t i = 0; i < rowTiles; ++i) {
    Value r = addIndex(g, 8 * i);
    rowValid[i] = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r,
                                        index(rows));
    std::tie(heads[i], queries[i]) =
        decodeRow(f, arith::MinUIOp::create(b, loc, r, index(rows - 1)));
  }
  // Q's A operands: for the matrix product over k-step st, lane (g, q)
  // holds its K values 4 st + {0, 1} (k 2q, 2q+1) and 4 st + {2, 3} (k
  // 2q+8, 2q+9) of the run order above, of rows g and g + 8.
  SmallVector<SmallVector<Value>> qPairs(rowTiles);
  Value halfZero = arith::ConstantOp::create(b, loc, b.getZeroAttr(half));
  for (int64_t i = 0; i < rowTiles; ++i)
    for (int64_t j = 0; j < kSlice; j += 2) {
      SmallVector<Value> two;
      for (int64_t e = 0; e < 2; ++e) {
        Value x = memref::LoadOp::create(
            b, loc, query,
            ValueRange{heads[i], queries[i],
                       addIndex(kRunStart((j + e) / kRun), (j + e) % kRun)});
        two.push_back(arith::SelectOp::create(
            b, loc, rowValid[i], castFloat(b, loc, x, half), halfZero));
      }
      qPairs[i].push_back(
          vector::FromElementsOp::create(b, loc, pairType, two));
    }
  SmallVector<Value> qA;
  for (int64_t st = 0; st < kSteps; ++st) {
    auto rowPair = [&](int64_t i, int64_t p) {
      return i < rowTiles ? qPairs[i][p] : zeroPair;
    };
    qA.push_back(
        rowsOf(aType, {rowPair(0, 2 * st), rowPair(1, 2 * st),
                       rowPair(0, 2 * st + 1), rowPair(1, 2 * st + 1)}));
  }

  // The loop state: the lane's rows' running maxima (uniform over a quad)
  // and its parts of their sums, then the accumulators O^T (m-tile t,
  // row tile nt) at t rowTiles + nt.
  SmallVector<Value> init;
  init.append(rowTiles, minusInf);
  init.append(rowTiles, zero);
  init.append(mTiles * rowTiles, zeroC);
  // A step's loads, in the order the step decodes them: K rows of
  // positions 8 j + g, V rows of positions 2q, 2q+1, 2q+8, 2q+9 of each 16;
  // `sizes` gets how many values each row's runs took.
  SmallVector<size_t> sizes;
  // Blocks in 8-byte loads where the config allows and rows keep them
  // aligned.
  auto wideRows = [&](BlockQuantizedType block, int64_t dim) {
    return block && c.loadBytes >= 8 &&
           getDecodeRowBytes(dim, Type(), block) % 8 == 0;
  };
  auto stepLoads = [&](Value base) {
    Value warpBase = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, f.warp, index(16 * unroll)));
    SmallVector<Value> loads;
    sizes.clear();
    // The lane's runs of the K or V row at `pos` (clamped to the split).
    auto rowLoads = [&](Value source, Value pos, int64_t count, int64_t run,
                        function_ref<Value(int64_t)> runStart, int64_t dim,
                        BlockQuantizedType block) {
      Value readPos = arith::MinUIOp::create(b, loc, pos, f.last);
      size_t before = loads.size();
      for (int64_t m = 0; m < count / run; ++m)
        loads.append(loadPairs(
            source, [&](Value x) { return kvIndices(f.kvHead, readPos, x); },
            runStart(m), run, dim, block, /*natural=*/false,
            wideRows(block, dim)));
      sizes.push_back(loads.size() - before);
    };
    for (int64_t u = 0; u < unroll; ++u) {
      Value first = addIndex(warpBase, 16 * u);
      for (int64_t j = 0; j < 2; ++j)
        rowLoads(key, addIndex(addIndex(first, 8 * j), g), kSlice, kRun,
                 kRunStart, s.headDim, s.keyBlock);
      for (int64_t k = 0; k < 4; ++k)
        rowLoads(value,
                 addIndex(addIndex(first, quad2), (k & 1) + 8 * (k >> 1)),
                 vSlice, vRun, vRunStart, s.valueDim, s.valueBlock);
    }
    return loads;
  };
  auto step = [&](Value base, ValueRange carried, ValueRange loads) {
    Value warpBase = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, f.warp, index(16 * unroll)));
    SmallVector<Value> first(unroll);
    SmallVector<SmallVector<SmallVector<Value>>> kB(unroll);
    SmallVector<SmallVector<SmallVector<Value>>> vPairs(unroll);
    // The pairs of the next row's runs in `loads`.
    size_t cursor = 0, row = 0;
    auto rowPairs = [&](int64_t count, int64_t run,
                        function_ref<Value(int64_t)> runStart,
                        BlockQuantizedType block, int64_t dim, bool split) {
      ValueRange rowLoads = loads.slice(cursor, sizes[row]);
      cursor += sizes[row++];
      SmallVector<Value> pairs;
      size_t perRun = rowLoads.size() / (count / run);
      for (int64_t m = 0; m < count / run; ++m)
        pairs.append(pairsFromLoads(
            rowLoads.slice(m * perRun, perRun), runStart(m), run, block,
            /*natural=*/false, wideRows(block, dim), split));
      return pairs;
    };
    for (int64_t u = 0; u < unroll; ++u) {
      first[u] = addIndex(warpBase, 16 * u);
      for (int64_t j = 0; j < 2; ++j) {
        SmallVector<Value> pairs = rowPairs(kSlice, kRun, kRunStart, s.keyBlock,
                                            s.headDim, isSplit(key));
        SmallVector<Value> operands;
        for (int64_t st = 0; st < kSteps; ++st)
          operands.push_back(rowsOf(bType, {pairs[2 * st], pairs[2 * st + 1]}));
        kB[u].push_back(operands);
      }
      for (int64_t k = 0; k < 4; ++k)
        vPairs[u].push_back(rowPairs(vSlice, vRun, vRunStart, s.valueBlock,
                                     s.valueDim, isSplit(value)));
    }
    // S = Q K^T, scaled, masked, base 2; -inf past the split. Score
    // [u][j][i][e]: row g + 8 i, position first[u] + 8 j + 2q + e.
    Value log2e = f32(kLog2E);
    SmallVector<Value> scores;
    auto scoreAt = [&](int64_t u, int64_t j, int64_t i, int64_t e) -> Value & {
      return scores[((u * 2 + j) * 2 + i) * 2 + e];
    };
    scores.resize(unroll * 8);
    for (int64_t u = 0; u < unroll; ++u)
      for (int64_t j = 0; j < 2; ++j) {
        Value sFrag = zeroC;
        for (int64_t st = 0; st < kSteps; ++st)
          sFrag = packedMmaSync(qA[st], kB[u][j][st], sFrag);
        for (int64_t i = 0; i < rowTiles; ++i)
          for (int64_t e = 0; e < 2; ++e) {
            Value pos = addIndex(addIndex(first[u], quad2), 8 * j + e);
            Value score =
                maskedScore(fragmentElement(sFrag, i, e), f.scale, f.mask,
                            heads[i], queries[i], queries[i], pos, f.causal);
            Value inRange = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, pos, f.end);
            scoreAt(u, j, i, e) = arith::SelectOp::create(
                b, loc, inRange, arith::MulFOp::create(b, loc, score, log2e),
                minusInf);
          }
      }
    // The online softmax of the lane's rows over the step's positions.
    SmallVector<Value> next(carried.begin(), carried.end());
    SmallVector<Value> probs(unroll * 8, Value());
    SmallVector<Value> alpha(rowTiles);
    for (int64_t i = 0; i < rowTiles; ++i) {
      Value laneMax = minusInf;
      for (int64_t u = 0; u < unroll; ++u)
        for (int64_t j = 0; j < 2; ++j)
          for (int64_t e = 0; e < 2; ++e)
            laneMax =
                arith::MaximumFOp::create(b, loc, laneMax, scoreAt(u, j, i, e));
      SoftmaxRescale step = foldRowMax(carried[i], laneMax, /*lanes=*/4,
                                       /*width=*/32, minusInf);
      Value tileSum = zero;
      for (int64_t u = 0; u < unroll; ++u)
        for (int64_t j = 0; j < 2; ++j) {
          std::array<Value, 2> pair = roundedWeightPair(
              step.none, zero,
              ValueRange{scoreAt(u, j, i, 0), scoreAt(u, j, i, 1)}, step.newMax,
              half, tileSum);
          for (int64_t e = 0; e < 2; ++e)
            probs[((u * 2 + j) * 2 + i) * 2 + e] = pair[e];
        }
      next[i] = step.newMax;
      next[rowTiles + i] =
          rescaledSum(carried[rowTiles + i], step.alpha, tileSum);
      alpha[i] = step.alpha;
    }
    // O^T's columns are rows 8 nt + 2q + e: their factors from lane
    // 8q + 4e, which holds row 2q + e (+ 8 nt).
    Value width = arith::ConstantIntOp::create(b, loc, i32, 32);
    SmallVector<Value> laneOf(2);
    for (int64_t e = 0; e < 2; ++e)
      laneOf[e] = arith::IndexCastOp::create(
          b, loc, i32,
          addIndex(arith::MulIOp::create(b, loc, quad, index(8)), 4 * e));
    for (int64_t nt = 0; nt < rowTiles; ++nt) {
      SmallVector<Value> factor(2);
      for (int64_t e = 0; e < 2; ++e)
        factor[e] = gpu::ShuffleOp::create(b, loc, alpha[nt], laneOf[e], width,
                                           gpu::ShuffleMode::IDX)
                        .getShuffleResult();
      Value scale =
          fragmentOf(cType, {factor[0], factor[1], factor[0], factor[1]});
      for (int64_t t = 0; t < mTiles; ++t) {
        Value &o = next[2 * rowTiles + t * rowTiles + nt];
        o = arith::MulFOp::create(b, loc, o, scale);
      }
    }
    // O^T += V^T P^T: P's B operand is the scores' C layout; V's A operand
    // pairs the V values of positions 2q and 2q+1 (and 2q+8, 2q+9).
    for (int64_t u = 0; u < unroll; ++u)
      for (int64_t nt = 0; nt < rowTiles; ++nt) {
        auto pPair = [&](int64_t j) -> Value {
          return vector::FromElementsOp::create(
              b, loc, pairType,
              ValueRange{probs[((u * 2 + j) * 2 + nt) * 2],
                         probs[((u * 2 + j) * 2 + nt) * 2 + 1]});
        };
        Value pB = rowsOf(bType, {pPair(0), pPair(1)});
        for (int64_t t = 0; t < mTiles; ++t) {
          auto across = [&](int64_t k, int64_t e) -> Value {
            return vector::ShuffleOp::create(b, loc, vPairs[u][k][t],
                                             vPairs[u][k + 1][t],
                                             ArrayRef<int64_t>{e, e + 2});
          };
          Value vA = rowsOf(
              aType, {across(0, 0), across(0, 1), across(2, 0), across(2, 1)});
          Value &o = next[2 * rowTiles + t * rowTiles + nt];
          o = packedMmaSync(vA, pB, o);
        }
      }
    return next;
  };
  // Pipelined (config stages = 2), each step's loads are issued before the
  // previous step's products, and held in registers across the iteration.
  SmallVector<Value> state;
  if (c.pipelined) {
    // The first step's loads are issued in the loop's first iteration and
    // the loop carries zeros into it, not loads: LLVM's instcombine would
    // fold a phi of two loads into one load at the top of the body, which
    // undoes the pipelining.
    SmallVector<Value> carriedInit(init);
    {
      // The loads' types, from loads built and erased again.
      struct Recorder : OpBuilder::Listener {
        SmallVector<Operation *> ops;
        void notifyOperationInserted(Operation *op,
                                     OpBuilder::InsertPoint) override {
          ops.push_back(op);
        }
      } recorder;
      OpBuilder::Listener *listener = b.getListener();
      b.setListener(&recorder);
      SmallVector<Value> probe = stepLoads(f.start);
      b.setListener(listener);
      SmallVector<Type> types(probe.size());
      for (auto [type, v] : llvm::zip_equal(types, probe))
        type = v.getType();
      for (Operation *op : llvm::reverse(recorder.ops))
        op->erase();
      for (Type type : types)
        carriedInit.push_back(
            arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type)));
    }
    size_t stateSize = init.size();
    state = decodeSteps(
        f, count, c.keyTile, carriedInit, [&](Value base, ValueRange carried) {
          Value firstStep = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, base, f.start);
          ValueRange held = carried.drop_front(stateSize);
          auto current = scf::IfOp::create(b, loc, held.getTypes(), firstStep,
                                           /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(current.thenBlock());
            scf::YieldOp::create(b, loc, stepLoads(base));
            b.setInsertionPointToStart(current.elseBlock());
            scf::YieldOp::create(b, loc, held);
          }
          SmallVector<Value> loads = stepLoads(addIndex(base, c.keyTile));
          SmallVector<Value> next =
              step(base, carried.take_front(stateSize), current.getResults());
          next.append(loads);
          return next;
        });
    state.resize(stateSize);
  } else {
    state = decodeSteps(f, count, c.keyTile, init,
                        [&](Value base, ValueRange carried) {
                          return step(base, carried, stepLoads(base));
                        });
  }

  // The merge's form: each row's max and sum, uniform over the subgroup
  // (from lane 4 (r % 8), which holds row r), and the accumulator entries.
  SmallVector<Value> stats(2 * rows);
  SmallVector<Value> sums(rowTiles);
  for (int64_t i = 0; i < rowTiles; ++i)
    sums[i] = reduceAcrossLanes(state[rowTiles + i], 4, 32, LaneCombine::Sum);
  for (int64_t r = 0; r < rows; ++r) {
    stats[r] = gpu::ShuffleOp::create(b, loc, state[r / 8], 4 * (r % 8), 32,
                                      gpu::ShuffleMode::IDX)
                   .getShuffleResult();
    stats[rows + r] = gpu::ShuffleOp::create(b, loc, sums[r / 8], 4 * (r % 8),
                                             32, gpu::ShuffleMode::IDX)
                          .getShuffleResult();
  }
  SmallVector<Value> dims;
  for (int64_t slot = 0; slot < vSlice; ++slot)
    dims.push_back(
        decodePairDim(vRunStart(slot / vRun), vRun, slot % vRun, s.valueBlock));
  for (int64_t nt = 0; nt < rowTiles; ++nt)
    for (int64_t e = 0; e < 2; ++e) {
      Value row = addIndex(quad2, 8 * nt + e);
      for (int64_t t = 0; t < mTiles; ++t)
        for (int64_t i = 0; i < 2; ++i)
          acc.push_back(
              {row, dims[2 * t + i],
               fragmentElement(state[2 * rowTiles + t * rowTiles + nt], i, e)});
    }
  return stats;
}
