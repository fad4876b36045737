//===- KernelBuilder.cpp - pieces every attention kernel uses -------------===//
//
// The parts of KernelBuilder that the scalar, mma and mma-sync kernels
// share: K/V tile staging, masked scores, the online-softmax step, lane
// reductions, and the mma kernels' launch, query staging, K/V vectors,
// key-tile loop and rounded P.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

void KernelBuilder::build(Value query, Value key, Value value, Value mask,
                          Value out, double scale, Causal causal,
                          const ChunkState *chunkState) {
  chunk = chunkState;
  assert((!chunk || c.variant == Variant::Scalar ||
          c.variant == Variant::Tiled || c.variant == Variant::MmaSync ||
          c.variant == Variant::Wgmma) &&
         "a chunk's state is carried by the scalar, tiled and mma-sync "
         "kernels");
  switch (c.variant) {
  case Variant::MmaSync:
  case Variant::Wgmma:
    return buildMmaSync(query, key, value, mask, out, scale, causal);
  case Variant::Mma:
    return buildMma(query, key, value, mask, out, scale, causal);
  case Variant::Scalar:
    return buildScalar(query, key, value, mask, out, scale, causal);
  case Variant::Tiled:
    return buildTiled(query, key, value, mask, out, scale, causal);
  case Variant::Decode:
  case Variant::DecodeMmaSync:
    return buildDecode(query, key, value, mask, out, scale, causal);
  }
  llvm_unreachable("unknown attention kernel variant");
}

void KernelBuilder::forLoop(Value lb, Value ub, Value step,
                            function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

Value KernelBuilder::absolutePosition(Value pos) {
  if (!chunk)
    return pos;
  return arith::AddIOp::create(b, loc, pos, chunk->keyOffset);
}

std::pair<Value, Value> KernelBuilder::loadRowState(Value head, Value row) {
  return {memref::LoadOp::create(b, loc, chunk->max, ValueRange{head, row}),
          memref::LoadOp::create(b, loc, chunk->sum, ValueRange{head, row})};
}

void KernelBuilder::storeRowState(Value head, Value row, Value max, Value sum) {
  memref::StoreOp::create(b, loc, max, chunk->max, ValueRange{head, row});
  memref::StoreOp::create(b, loc, sum, chunk->sum, ValueRange{head, row});
}

Value KernelBuilder::keyEnd(Value tileStart, Causal causal) {
  Value end = index(s.positions);
  if (!causal)
    return end;
  Value last = arith::AddIOp::create(b, loc, tileStart,
                                     causalBound(causal, c.queryTile));
  if (chunk) {
    // The chunk's positions before the absolute bound: none when the
    // bound is at or before the chunk's first key.
    Value before = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                         last, chunk->keyOffset);
    Value local = arith::SubIOp::create(b, loc, last, chunk->keyOffset);
    last = arith::SelectOp::create(b, loc, before, index(0), local);
  }
  return arith::MinUIOp::create(b, loc, last, end);
}

Value KernelBuilder::keyTileCount(Value tileStart, Causal causal) {
  return arith::CeilDivUIOp::create(b, loc, keyEnd(tileStart, causal),
                                    index(c.keyTile));
}

void KernelBuilder::markOccupancy(gpu::LaunchOp launch) {
  if (c.minWorkgroupsPerSM <= 0)
    return;
  launch.walk([&](Operation *op) {
    if (isa<gpu::SubgroupMmaComputeOp, nvgpu::MmaSyncOp, NVVM::MmaOp,
            nvgpu::DeviceAsyncCopyOp>(op))
      op->setAttr(CachetDialect::getMinWorkgroupsPerSMAttrName(),
                  b.getI64IntegerAttr(c.minWorkgroupsPerSM));
  });
}

void KernelBuilder::loadTile(Value source, Value tile, int64_t dim,
                             Value kvHead, Value start, Value thread,
                             BlockQuantizedType block, Type kvElement) {
  Type element = cast<MemRefType>(tile.getType()).getElementType();
  forLoop(thread, index(c.keyTile * dim), index(c.threads), [&](Value i) {
    Value j = arith::DivUIOp::create(b, loc, i, index(dim));
    Value x = arith::RemUIOp::create(b, loc, i, index(dim));
    memref::StoreOp::create(b, loc,
                            loadKV(source, kvHead,
                                   arith::AddIOp::create(b, loc, start, j), x,
                                   block, kvElement, element),
                            tile, tileIndices(tile, j, x));
  });
}

Value KernelBuilder::loadKV(Value source, Value kvHead, Value pos, Value x,
                            BlockQuantizedType block, Type kvElement,
                            Type element) {
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos,
                                        index(s.positions));
  // A clamped load and a select, not an scf.if with a result: on SPIR-V
  // that becomes a Function variable inside the loop, which lavapipe
  // allocates anew on every iteration.
  Value clamped = arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
  Value v;
  if (!block) {
    v = castFloat(
        b, loc,
        memref::LoadOp::create(b, loc, source, kvIndices(kvHead, clamped, x)),
        element);
  } else {
    // ggml bytes [pos][kv_head][block bytes]: the reference's decoding.
    BlockDecoder decoder(
        b, loc, block, [&](OpBuilder &rb, Location rl, Value offset) {
          return memref::LoadOp::create(rb, rl, source,
                                        ValueRange{clamped, kvHead, offset})
              .getResult();
        });
    Value decoded = decoder.decodeValue(x);
    // Rounded to the K/V type as the dequant-once scratch stores it; an f16
    // widened by integer arithmetic, so that no driver folds the rounding
    // away (roundToF16).
    v = kvElement.isF16() && element.isF32()
            ? roundToF16(b, loc, decoded)
            : castFloat(b, loc, castFloat(b, loc, decoded, kvElement), element);
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return arith::SelectOp::create(b, loc, inRange, v, zero);
}

Value KernelBuilder::maskedScore(Value dot, double scale, Value mask,
                                 Value head, Value row, Value loadRow,
                                 Value pos, Causal causal) {
  Type f32Type = b.getF32Type();
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  Value score = arith::MulFOp::create(b, loc, dot, f32(scale));
  Value visible = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos,
                                        index(s.positions));
  if (mask) {
    Value maskPos = arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
    SmallVector<Value> indices = {loadRow, maskPos};
    if (s.maskRank == 3)
      indices.insert(indices.begin(), head);
    Value m = memref::LoadOp::create(b, loc, mask, indices);
    score = arith::AddFOp::create(b, loc, score, castFloat(b, loc, m, f32Type));
  }
  if (causal) {
    Value last = arith::AddIOp::create(b, loc, row, causalBound(causal, 0));
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                              absolutePosition(pos), last));
  }
  return arith::SelectOp::create(b, loc, visible, score, minusInf);
}

KernelBuilder::SoftmaxRescale KernelBuilder::softmaxRescale(Value runningMax,
                                                            Value newMax,
                                                            Value minusInf,
                                                            bool base2) {
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                     minusInf);
  Value exponent = arith::SubFOp::create(b, loc, runningMax, newMax);
  Value factor = base2 ? math::Exp2Op::create(b, loc, exponent).getResult()
                       : math::ExpOp::create(b, loc, exponent).getResult();
  Value alpha = arith::SelectOp::create(b, loc, none, f32(1), factor);
  return {none, alpha, newMax};
}

KernelBuilder::SoftmaxRescale
KernelBuilder::foldRowMax(Value runningMax, Value laneMax, int64_t lanes,
                          int64_t width, Value minusInf) {
  Value tileMax = reduceAcrossLanes(laneMax, lanes, width, LaneCombine::Max);
  Value newMax = arith::MaximumFOp::create(b, loc, runningMax, tileMax);
  return softmaxRescale(runningMax, newMax, minusInf, /*base2=*/true);
}

Value KernelBuilder::softmaxWeight(Value none, Value zero, Value exponent,
                                   bool base2) {
  Value p = base2 ? math::Exp2Op::create(b, loc, exponent).getResult()
                  : math::ExpOp::create(b, loc, exponent).getResult();
  return arith::SelectOp::create(b, loc, none, zero, p);
}

Value KernelBuilder::roundedWeight(Value none, Value zero, Value exponent,
                                   Type type, Value &sum) {
  Value p = softmaxWeight(none, zero, exponent, /*base2=*/true);
  Value rounded = castFloat(b, loc, p, type);
  sum = arith::AddFOp::create(b, loc, sum,
                              castFloat(b, loc, rounded, b.getF32Type()));
  return rounded;
}

std::array<Value, 2> KernelBuilder::roundedWeightPair(Value none, Value zero,
                                                      ValueRange scores,
                                                      Value max, Type type,
                                                      Value &sum) {
  auto exponent = [&](int64_t e) -> Value {
    return arith::SubFOp::create(b, loc, scores[e], max);
  };
  // f16 keeps a conversion per weight: ptxas makes each an F2FP on the
  // ALU pipe already, and the paired form's order cost the f16 wgmma
  // attention 15% on an H200 (0.729 against 0.634 ms, run 136).
  if (!type.isBF16()) {
    Value w0 = roundedWeight(none, zero, exponent(0), type, sum);
    return {w0, roundedWeight(none, zero, exponent(1), type, sum)};
  }
  Value e0 = exponent(0), e1 = exponent(1);
  Value p0 = softmaxWeight(none, zero, e0, /*base2=*/true);
  Value p1 = softmaxWeight(none, zero, e1, /*base2=*/true);
  Value word = packBF16Pair(b, loc, p0, p1);
  auto [w0, w1] = widenBF16Pair(b, loc, word);
  sum = arith::AddFOp::create(b, loc, sum, w0);
  sum = arith::AddFOp::create(b, loc, sum, w1);
  Value pair = vector::BitCastOp::create(
      b, loc, VectorType::get({2}, type),
      vector::BroadcastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                  word));
  return {vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{0}),
          vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{1})};
}

Value KernelBuilder::rescaledSum(Value runningSum, Value alpha, Value tileSum) {
  Value rescaled = arith::MulFOp::create(b, loc, runningSum, alpha);
  return arith::AddFOp::create(b, loc, rescaled, tileSum);
}

Value KernelBuilder::reduceAcrossLanes(Value v, int64_t lanes, int64_t width,
                                       LaneCombine combine) {
  for (int64_t offset = 1; offset < lanes; offset *= 2) {
    Value other =
        gpu::ShuffleOp::create(b, loc, v, offset, width, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    switch (combine) {
    case LaneCombine::Max:
      v = arith::MaximumFOp::create(b, loc, v, other);
      break;
    case LaneCombine::Min:
      v = arith::MinimumFOp::create(b, loc, v, other);
      break;
    case LaneCombine::Sum:
      v = arith::AddFOp::create(b, loc, v, other);
      break;
    }
  }
  return v;
}

Value KernelBuilder::unmaskedTile(Value start, Value tileStart,
                                  Value subgroupRow, bool hasMask,
                                  Causal causal, bool syncOrder) {
  Value unmasked = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  auto tileEnd = [&]() -> Value {
    return arith::AddIOp::create(b, loc, start, index(c.keyTile));
  };
  Value end = syncOrder ? tileEnd() : Value();
  if (hasMask)
    return unmasked;
  if (!end)
    end = tileEnd();
  unmasked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                                   index(s.positions));
  if (!causal)
    return unmasked;
  // The causal bound of the subgroup's first row: the last position it sees
  // plus one.
  Value offset = syncOrder ? Value() : causalBound(causal, 1);
  Value firstRow = arith::AddIOp::create(b, loc, tileStart, subgroupRow);
  if (syncOrder)
    offset = causalBound(causal, 1);
  Value bound = arith::AddIOp::create(b, loc, firstRow, offset);
  return arith::AndIOp::create(
      b, loc, unmasked,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                            absolutePosition(end), bound));
}

SmallVector<Value>
KernelBuilder::loadVectors(int64_t rows, int64_t dim, Value thread,
                           function_ref<Value(Value)> rowValid,
                           function_ref<SmallVector<Value>(Value, Value)> at,
                           Value source) {
  auto vecType = VectorType::get({c.vectorWidth}, half);
  Value zeros = arith::ConstantOp::create(
      b, loc, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(half)));
  int64_t total = rows * dim;
  int64_t perThread = llvm::divideCeil(total, c.vectorWidth * c.threads);
  SmallVector<Value> vectors;
  for (int64_t k = 0; k < perThread; ++k) {
    auto [r, x, inTile] = vectorCoords(rows, dim, thread, k);
    Value valid = arith::AndIOp::create(b, loc, inTile, rowValid(r));
    auto v = vector::LoadOp::create(b, loc, vecType, source, at(r, x));
    v.setAlignment(2 * c.vectorWidth);
    vectors.push_back(arith::SelectOp::create(b, loc, valid, v, zeros));
  }
  return vectors;
}

void KernelBuilder::storeVectors(ArrayRef<Value> vectors, int64_t rows,
                                 int64_t dim, Value thread, Value tile) {
  for (auto [k, v] : llvm::enumerate(vectors)) {
    auto [r, x, inTile] = vectorCoords(rows, dim, thread, k);
    auto store = [&]() {
      vector::StoreOp::create(b, loc, v, tile, tileIndices(tile, r, x))
          .setAlignment(2 * c.vectorWidth);
    };
    if (rows * dim % (c.vectorWidth * c.threads) == 0) {
      store();
      continue;
    }
    auto guard = scf::IfOp::create(b, loc, inTile, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(guard.thenBlock());
    store();
  }
}

std::tuple<Value, Value, Value> KernelBuilder::vectorCoords(int64_t rows,
                                                            int64_t dim,
                                                            Value thread,
                                                            int64_t k) {
  // Element i = (k threads + thread) width, clamped to the last vector.
  int64_t total = rows * dim;
  Value i = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, thread, index(k * c.threads)),
      index(c.vectorWidth));
  Value inTile =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, index(total));
  Value clamped =
      arith::MinUIOp::create(b, loc, i, index(total - c.vectorWidth));
  Value r = arith::DivUIOp::create(b, loc, clamped, index(dim));
  Value x = arith::RemUIOp::create(b, loc, clamped, index(dim));
  return {r, x, inTile};
}

KernelBuilder::MmaFrame KernelBuilder::beginMma(const MmaTiles &layout,
                                                Value mask, double scale,
                                                Causal causal) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<Type> shared;
  SmallVector<int64_t> kinds;
  for (int64_t kind = 0; kind < MmaTiles::Count; ++kind) {
    const MmaTiles::Tile &t = layout.tiles[kind];
    if (!t.rows)
      continue;
    kinds.push_back(kind);
    Type element = t.elementBytes == 4   ? b.getF32Type()
                   : t.elementBytes == 1 ? Type(b.getI8Type())
                                         : half;
    if (layout.swizzled && t.elementBytes == 2)
      shared.push_back(MemRefType::get({t.cols / 64, t.rows, 64}, element,
                                       nullptr, workgroup));
    else
      shared.push_back(
          MemRefType::get({t.rows, t.stride}, element, nullptr, workgroup));
  }
  Value one = index(1);
  MmaFrame f;
  f.launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(s.queries, c.queryTile)),
      index(s.queryHeads), one, index(c.threads), one, one,
      /*dynamicSharedMemorySize=*/
      c.dynamicShared ? arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                                     layout.totalBytes)
                            .getResult()
                      : Value(),
      /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, c.dynamicShared ? SmallVector<Type>() : shared);
  b.setInsertionPointToStart(&f.launch.getBody().front());
  f.tiles.assign(MmaTiles::Count, Value());
  Value base;
  if (c.dynamicShared)
    base = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                        workgroup));
  // Swizzled tiles start at the first 1024-byte boundary of the dynamic
  // workgroup memory (the swizzle's 8-row atoms are aligned to it).
  Value first = index(0);
  if (layout.swizzled)
    first = arith::AndIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, index(0),
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base)),
        index(1023));
  for (auto [i, kind] : llvm::enumerate(kinds))
    f.tiles[kind] =
        c.dynamicShared
            ? memref::ViewOp::create(b, loc, cast<MemRefType>(shared[i]), base,
                                     layout.swizzled
                                         ? addIndex(first, layout.offsets[kind])
                                         : index(layout.offsets[kind]),
                                     ValueRange{})
                  .getResult()
            : Value(f.launch.getWorkgroupAttributions()[i]);
  f.thread = f.launch.getThreadIds().x;
  f.head = f.launch.getBlockIds().y;
  f.kvHead = arith::DivUIOp::create(b, loc, f.head, index(s.group));
  f.tileStart = arith::MulIOp::create(b, loc, f.launch.getBlockIds().x,
                                      index(c.queryTile));
  f.mask = mask;
  f.scale = scale;
  f.causal = causal;
  return f;
}

void KernelBuilder::stageQuery(Value query, const MmaFrame &f) {
  SmallVector<Value> qVectors = loadVectors(
      c.queryTile, s.headDim, f.thread,
      [&](Value r) -> Value {
        return arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult,
            arith::AddIOp::create(b, loc, f.tileStart, r), index(s.queries));
      },
      [&](Value r, Value x) -> SmallVector<Value> {
        Value qRow = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, f.tileStart, r),
            index(s.queries - 1));
        return {f.head, qRow, x};
      },
      query);
  storeVectors(qVectors, c.queryTile, s.headDim, f.thread,
               f.tiles[MmaTiles::Q]);
  tilesWritten();
}

SmallVector<Value> KernelBuilder::kvVectors(Value source, int64_t dim,
                                            Value start,
                                            BlockQuantizedType block,
                                            const MmaFrame &f) {
  if (block)
    return {};
  return loadVectors(
      c.keyTile, dim, f.thread,
      [&](Value j) -> Value {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     arith::AddIOp::create(b, loc, start, j),
                                     index(s.positions));
      },
      [&](Value j, Value x) -> SmallVector<Value> {
        Value pos = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, start, j),
            index(s.positions - 1));
        return kvIndices(f.kvHead, pos, x);
      },
      source);
}

Value KernelBuilder::copyTiles(Value key, Value value, Value start, Value kDst,
                               Value vDst, const MmaFrame &f) {
  SmallVector<Value> tokens;
  for (auto [source, dim, tile] :
       {std::tuple<Value, int64_t, Value>{key, s.headDim, kDst},
        {value, s.valueDim, vDst}}) {
    int64_t perThread = c.keyTile * dim / (c.vectorWidth * c.threads);
    for (int64_t k = 0; k < perThread; ++k) {
      auto [j, x, inTile] = vectorCoords(c.keyTile, dim, f.thread, k);
      Value pos = arith::AddIOp::create(b, loc, start, j);
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          pos, index(s.positions));
      Value clamped =
          arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
      Value elements = arith::SelectOp::create(b, loc, valid,
                                               index(c.vectorWidth), index(0));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tile, tileIndices(tile, j, x), source,
          kvIndices(f.kvHead, clamped, x), b.getIndexAttr(c.vectorWidth),
          elements, c.vectorWidth == 8 ? b.getUnitAttr() : nullptr));
    }
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

std::pair<Value, Value> KernelBuilder::tilePiece(int64_t k, int64_t perRow,
                                                 int64_t width, Value thread) {
  // Piece i = thread + k threads: row i / perRow, column (i % perRow)
  // width. Where the pieces do not divide among the threads, the last is
  // repeated (the same bytes to the same place).
  int64_t total = c.keyTile * perRow;
  Value i = addIndex(thread, k * c.threads);
  if ((k + 1) * c.threads > total)
    i = arith::MinUIOp::create(b, loc, i, index(total - 1));
  Value row = arith::DivUIOp::create(b, loc, i, index(perRow));
  Value column = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, i, index(perRow)), index(width));
  return {row, column};
}

Value KernelBuilder::copyPackedTiles(Value key, Value value, Value start,
                                     Value buffer, const MmaFrame &f) {
  SmallVector<Value> tokens;
  Value firstRow = arith::MulIOp::create(b, loc, buffer, index(c.keyTile));
  for (auto [source, rowBytes, tile] :
       {std::tuple<Value, int64_t, Value>{
            key, getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock),
            f.tiles[MmaTiles::KP]},
        {value, getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock),
         f.tiles[MmaTiles::VP]}}) {
    int64_t width = getPackedCopyBytes(rowBytes);
    int64_t perRow = rowBytes / width;
    int64_t pieces = llvm::divideCeil(c.keyTile * perRow, c.threads);
    for (int64_t k = 0; k < pieces; ++k) {
      auto [j, x] = tilePiece(k, perRow, width, f.thread);
      Value pos = addIndex(start, j);
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          pos, index(s.positions));
      Value clamped =
          arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
      Value elements =
          arith::SelectOp::create(b, loc, valid, index(width), index(0));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tile, ValueRange{addIndex(firstRow, j), x}, source,
          ValueRange{clamped, f.kvHead, x}, b.getIndexAttr(width), elements,
          width == 16 ? b.getUnitAttr() : nullptr));
    }
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

void KernelBuilder::decodePackedTile(Value packed, Value buffer, Value tile,
                                     int64_t dim, BlockQuantizedType block,
                                     const MmaFrame &f) {
  Type element = cast<MemRefType>(tile.getType()).getElementType();
  Value firstRow = arith::MulIOp::create(b, loc, buffer, index(c.keyTile));
  // q8_0 / q4_0 into f16 from the words that hold them, exactly
  // (decodePairs): a whole q8_0 block per piece, or eight q4_0 values in the
  // row's order. On the H200 (run 74, pp512 @ d32768 decoded in the kernel)
  // whole blocks took q8_0 from 1.58 to 1.51 ms but q4_0 from 1.37 to 1.48.
  // Other blocks: eight values of one block per piece, value by value.
  bool words = element.isF16() && isa<Q8_0Type, Q4_0Type>(block);
  int64_t width = words && isa<Q8_0Type>(block) ? 32 : 8;
  int64_t perRow = dim / width;
  int64_t pieces = llvm::divideCeil(c.keyTile * perRow, c.threads);
  for (int64_t k = 0; k < pieces; ++k) {
    auto [j, column] = tilePiece(k, perRow, width, f.thread);
    Value row = addIndex(firstRow, j);
    SmallVector<Value> eights;
    if (words) {
      SmallVector<Value> pairs = decodePairs(
          packed,
          [&](Value x) -> SmallVector<Value> {
            return {row, x};
          },
          column, width, dim, block, /*natural=*/true);
      auto join = [&](int64_t p) -> Value {
        return vector::ShuffleOp::create(b, loc, pairs[p], pairs[p + 1],
                                         ArrayRef<int64_t>{0, 1, 2, 3});
      };
      for (int64_t p = 0; p < int64_t(pairs.size()); p += 4)
        eights.push_back(vector::ShuffleOp::create(
            b, loc, join(p), join(p + 2),
            ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    } else {
      Value blockOffset = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, column, index(32)),
          index(block.getBlockBytes()));
      Value lane = arith::RemUIOp::create(b, loc, column, index(32));
      BlockDecoder decoder(b, loc, block,
                           [&](OpBuilder &rb, Location rl, Value offset) {
                             return memref::LoadOp::create(
                                        rb, rl, packed, ValueRange{row, offset})
                                 .getResult();
                           });
      SmallVector<Value> values;
      for (int64_t e = 0; e < 8; ++e)
        values.push_back(castFloat(
            b, loc, decoder.decode(blockOffset, addIndex(lane, e)), element));
      eights.push_back(vector::FromElementsOp::create(
          b, loc, VectorType::get({8}, element), values));
    }
    for (auto [v, values] : llvm::enumerate(eights))
      vector::StoreOp::create(b, loc, values, tile,
                              tileIndices(tile, j, addIndex(column, 8 * v)))
          .setAlignment(8 * element.getIntOrFloatBitWidth() / 8);
  }
}

SmallVector<Value> KernelBuilder::kvInit(Value key, Value value,
                                         const MmaFrame &f) {
  Value zero = index(0);
  if (c.staging == KVStaging::AsyncPacked) {
    // Q may share the blocks' buffers: every subgroup has read it first.
    gpu::BarrierOp::create(b, loc);
    return {copyPackedTiles(key, value, zero, zero, f)};
  }
  if (c.staging == KVStaging::AsyncCopy)
    return {copyTiles(key, value, zero, f.tiles[MmaTiles::K],
                      f.tiles[MmaTiles::V], f)};
  SmallVector<Value> init = kvVectors(key, s.headDim, zero, s.keyBlock, f);
  init.append(kvVectors(value, s.valueDim, zero, s.valueBlock, f));
  return init;
}

std::pair<Value, Value> KernelBuilder::kvStage(Value key, Value value,
                                               const MmaFrame &f,
                                               ValueRange carried, Value iv,
                                               SmallVector<Value> &next) {
  Value start = arith::MulIOp::create(b, loc, iv, index(c.keyTile));
  Value nextStart = arith::AddIOp::create(b, loc, start, index(c.keyTile));
  Value kTile = f.tiles[MmaTiles::K], vTile = f.tiles[MmaTiles::V];
  if (c.staging == KVStaging::AsyncPacked) {
    // Tile t's blocks are in buffer t mod 2: wait for their copies, then
    // (after every subgroup is done with tile t - 1, whose buffer is the
    // other) start tile t + 1's and decode tile t's into K and V.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[0],
                                     b.getI32IntegerAttr(0));
    gpu::BarrierOp::create(b, loc);
    Value buffer = arith::RemUIOp::create(b, loc, iv, index(2));
    Value other = arith::SubIOp::create(b, loc, index(1), buffer);
    next.push_back(copyPackedTiles(key, value, nextStart, other, f));
    decodePackedTile(f.tiles[MmaTiles::KP], buffer, kTile, s.headDim,
                     s.keyBlock, f);
    decodePackedTile(f.tiles[MmaTiles::VP], buffer, vTile, s.valueDim,
                     s.valueBlock, f);
    tilesWritten();
    return {kTile, vTile};
  }
  if (c.staging == KVStaging::AsyncCopy) {
    // Tile t is in buffer t mod 2: wait for its copies, then (after every
    // subgroup is done with tile t - 1) start tile t + 1's into the other.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[0],
                                     b.getI32IntegerAttr(0));
    tilesWritten();
    Value even = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, iv, index(2)), index(0));
    auto pick = [&](Value first, Value second) -> Value {
      return arith::SelectOp::create(b, loc, even, first, second);
    };
    Value kOther = f.tiles[MmaTiles::K2], vOther = f.tiles[MmaTiles::V2];
    next.push_back(copyTiles(key, value, nextStart, pick(kOther, kTile),
                             pick(vOther, vTile), f));
    return {pick(kTile, kOther), pick(vTile, vOther)};
  }
  // K and V tiles in registers: the global loads of tile t + 1 are issued
  // before tile t is multiplied (packed caches decode in the tile loop).
  int64_t kCount = s.keyBlock ? 0
                              : llvm::divideCeil(c.keyTile * s.headDim,
                                                 c.vectorWidth * c.threads);
  gpu::BarrierOp::create(b, loc);
  if (s.keyBlock)
    loadTile(key, kTile, s.headDim, f.kvHead, start, f.thread, s.keyBlock,
             s.keyElement);
  else
    storeVectors(SmallVector<Value>(carried.take_front(kCount)), c.keyTile,
                 s.headDim, f.thread, kTile);
  if (s.valueBlock)
    loadTile(value, vTile, s.valueDim, f.kvHead, start, f.thread, s.valueBlock,
             s.valueElement);
  else
    storeVectors(SmallVector<Value>(carried.drop_front(kCount)), c.keyTile,
                 s.valueDim, f.thread, vTile);
  tilesWritten();
  next.append(kvVectors(key, s.headDim, nextStart, s.keyBlock, f));
  next.append(kvVectors(value, s.valueDim, nextStart, s.valueBlock, f));
  return {kTile, vTile};
}

void KernelBuilder::kvFinish(ValueRange results) {
  if (c.staging != KVStaging::Registers)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, results[0],
                                     b.getI32IntegerAttr(0));
}

SmallVector<Value> KernelBuilder::mmaKeyLoop(
    Value key, Value value, const MmaFrame &f, Value lb, Value ub, Value step,
    ValueRange state, ValueRange kvArgs,
    function_ref<SmallVector<Value>(ValueRange, Value, Value, Value)> body) {
  SmallVector<Value> init(state);
  init.append(kvArgs.begin(), kvArgs.end());
  auto loop = scf::ForOp::create(b, loc, lb, ub, step, init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    Value start =
        arith::MulIOp::create(b, loc, loop.getInductionVar(), index(c.keyTile));
    SmallVector<Value> next;
    auto [kTile, vTile] =
        kvStage(key, value, f, carried.drop_front(state.size()),
                loop.getInductionVar(), next);
    SmallVector<Value> yielded =
        body(carried.take_front(state.size()), start, kTile, vTile);
    yielded.append(next);
    scf::YieldOp::create(b, loc, yielded);
  }
  kvFinish(loop.getResults().drop_front(state.size()));
  return SmallVector<Value>(loop.getResults().take_front(state.size()));
}

SmallVector<Value> KernelBuilder::tileIndices(Value tile, Value row,
                                              Value col) {
  if (cast<MemRefType>(tile.getType()).getRank() == 2)
    return {row, col};
  // The 16-byte piece p of a row's 64 values at piece p ^ (row % 8).
  Value swizzle = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, row, index(8)), index(8));
  return {arith::DivUIOp::create(b, loc, col, index(64)), row,
          arith::XOrIOp::create(
              b, loc, arith::RemUIOp::create(b, loc, col, index(64)), swizzle)};
}

void KernelBuilder::tilesWritten() {
  if (c.variant == Variant::Wgmma)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(b, loc);
}

void KernelBuilder::endMma(gpu::LaunchOp launch) {
  markOccupancy(launch);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
