//===- LowerAttention.cpp - flash-attention kernels for cachet.attention --===//
//
// Replaces cachet.attention on tensors by a flash-attention kernel, a
// gpu.launch over buffers: one workgroup per (query tile, query head), the
// KV range walked in key tiles staged through workgroup memory with an
// online softmax. The scalar kernel (every target) walks it twice and
// rounds the reference's normalized P; the mma kernel walks it once with
// gpu.subgroup_mma products and register accumulators. The tile sizes and
// the variant come from the device profile. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <limits>

namespace cachet {
#define GEN_PASS_DEF_LOWERATTENTION
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

/// The shapes and types of one attention, all static.
struct AttentionShape {
  int64_t queryHeads, queries, positions, kvHeads, headDim, valueDim;
  int64_t group;
  bool tokenMajor;
  Type queryElement, keyElement, valueElement, resultElement;
  /// Rank of the mask (2 or 3), 0 without one.
  int64_t maskRank = 0;
  /// The block formats K and V are decoded from inside the kernel (null
  /// when the kernel reads them as floats).
  BlockQuantizedType keyBlock, valueBlock;
};

/// The kernels cachet-lower-attention builds.
enum class Variant { Scalar, Mma };

/// The kernel chosen for one attention.
struct KernelConfig {
  Variant variant;
  /// Query rows per workgroup (one thread per row in the scalar kernel, 16
  /// per subgroup in the mma kernel).
  int64_t queryTile;
  /// KV positions staged in workgroup memory at a time.
  int64_t keyTile;
  /// Threads per workgroup.
  int64_t threads;
  /// Lanes per subgroup (mma kernel).
  int64_t subgroup;
  /// f16 elements per vector load and store of the Q, K and V tiles (mma
  /// kernel).
  int64_t vectorWidth = 1;
  /// Bytes each row of a workgroup-memory tile is padded by (mma kernel).
  int64_t padBytes = 0;
  /// Whether the mma kernel's tiles are views of dynamic workgroup memory
  /// (else static workgroup attributions).
  bool dynamicShared = false;
  /// Whether a subgroup synchronizes its private staging with
  /// nvvm.bar.warp.sync (else gpu.barrier).
  bool warpSync = false;
  /// Whether f16 K/V tiles are double buffered and filled by
  /// nvgpu.device_async_copy (else through registers).
  bool asyncCopy = false;
  /// Whether a subgroup skips rescaling its accumulators while its rows'
  /// maxima stay (needs warpSync: the branch is per subgroup).
  bool lazyRescale = false;
  /// 16-row blocks per subgroup (mma kernel): with more than one, a K or V
  /// operand loaded from workgroup memory serves all of them, and Q is read
  /// from workgroup memory per key tile instead of held in registers.
  int64_t rowBlocks = 1;
  /// Workgroups per SM the kernel's registers should allow (0: no hint),
  /// marked on its mma ops for cachet-kernel-occupancy.
  int64_t minWorkgroupsPerSM = 0;
};

/// The workgroup-memory tiles of the mma kernel, in order: Q, K, V (f16),
/// the scores (f32), P (f16), a 16-column row broadcast (f32) and, double
/// buffered, a second K and V; each row padded by `padBytes`.
struct MmaTiles {
  struct Tile {
    int64_t rows, cols, stride;
    bool f32;
    int64_t bytes() const { return rows * stride * (f32 ? 4 : 2); }
  };
  SmallVector<Tile, 8> tiles;
  /// Byte offset of each tile in one dynamic allocation (128-byte aligned).
  SmallVector<int64_t, 8> offsets;
  int64_t totalBytes = 0;

  MmaTiles(int64_t queryTile, int64_t keyTile, int64_t headDim,
           int64_t valueDim, int64_t padBytes, bool doubleBuffer = false,
           bool qReadOnce = true) {
    auto add = [&](int64_t rows, int64_t cols, bool f32, bool place = true) {
      int64_t stride = cols + padBytes / (f32 ? 4 : 2);
      tiles.push_back({rows, cols, stride, f32});
      offsets.push_back(totalBytes);
      if (place)
        totalBytes += llvm::alignTo(tiles.back().bytes(), 128);
    };
    // Double buffered, Q (read once, before the first key tile) shares the
    // second K tile's memory where it fits.
    bool shareQ = doubleBuffer && qReadOnce && queryTile <= keyTile;
    add(queryTile, headDim, false, !shareQ);
    add(keyTile, headDim, false);
    add(keyTile, valueDim, false);
    add(queryTile, keyTile, true);
    add(queryTile, keyTile, false);
    add(queryTile, 16, true);
    if (!doubleBuffer)
      return;
    add(keyTile, headDim, false);
    add(keyTile, valueDim, false);
    if (shareQ)
      offsets[0] = offsets[6];
  }
};

/// Returns the static shape of `op`, or a reason why the kernel cannot take
/// it.
FailureOr<AttentionShape> getShape(AttentionOp op, std::string &reason) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto key = cast<RankedTensorType>(op.getKey().getType());
  auto value = cast<RankedTensorType>(op.getValue().getType());
  auto result = cast<RankedTensorType>(op.getResult().getType());
  if (!query.hasStaticShape() || !key.hasStaticShape() ||
      !value.hasStaticShape()) {
    reason = "dynamic shape";
    return failure();
  }
  if (op.getAccumulator() && !op.getAccumulator()->isF32()) {
    reason = "the accumulator is not f32";
    return failure();
  }
  for (Type t : {query.getElementType(), key.getElementType(),
                 value.getElementType(), result.getElementType()})
    if (!t.isF16() && !t.isF32()) {
      reason = "element types other than f16 and f32";
      return failure();
    }
  AttentionShape s;
  s.tokenMajor = op.getKvLayout() == KVLayout::TokenMajor;
  s.queryHeads = query.getDimSize(0);
  s.queries = query.getDimSize(1);
  s.headDim = query.getDimSize(2);
  s.positions = key.getDimSize(op.getKVPosDim());
  s.kvHeads = key.getDimSize(op.getKVHeadDim());
  s.valueDim = value.getDimSize(2);
  s.group = s.queryHeads / s.kvHeads;
  s.queryElement = query.getElementType();
  s.keyElement = key.getElementType();
  s.valueElement = value.getElementType();
  s.resultElement = result.getElementType();
  if (Value mask = op.getMask())
    s.maskRank = cast<RankedTensorType>(mask.getType()).getRank();
  return s;
}

/// Builds the flash-attention kernel of one attention.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const AttentionShape &s,
                const KernelConfig &c)
      : b(b), loc(loc), s(s), c(c) {}

  /// Emits the scalar kernel reading `query`, `key`, `value` and `mask`
  /// (memrefs; mask may be null) and writing `out`.
  void buildScalar(Value query, Value key, Value value, Value mask, Value out,
                   double scale, std::optional<int64_t> causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on 16x16x16 f16
  /// subgroup matrix multiply-accumulates (gpu.subgroup_mma_*), the output
  /// accumulated in registers and rescaled per key tile.
  void buildMma(Value query, Value key, Value value, Value mask, Value out,
                double scale, std::optional<int64_t> causal);

private:
  /// Row, column and "inside the tile" of the `k`-th f16 vector that
  /// `thread` copies of a `[rows][dim]` tile.
  std::tuple<Value, Value, Value> vectorCoords(int64_t rows, int64_t dim,
                                               Value thread, int64_t k);
  /// Loads `thread`'s vectors of a `[rows][dim]` f16 tile from `source` at
  /// the indices `at(row, column)`; zeros where `rowValid(row)` is false.
  SmallVector<Value>
  loadVectors(int64_t rows, int64_t dim, Value thread,
              function_ref<Value(Value)> rowValid,
              function_ref<SmallVector<Value>(Value, Value)> at, Value source);
  /// Stores the vectors of loadVectors into the workgroup tile `tile`.
  void storeVectors(ArrayRef<Value> vectors, int64_t rows, int64_t dim,
                    Value thread, Value tile);
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// Indices of position `pos`, dimension `dim` of K or V.
  SmallVector<Value> kvIndices(Value kvHead, Value pos, Value dim) {
    if (s.tokenMajor)
      return {pos, kvHead, dim};
    return {kvHead, pos, dim};
  }
  /// `for (iv = lb; iv < ub; iv += step)` with `body(iv)`.
  void forLoop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }
  /// Copies the `[keyTile][dim]` tile of `source` (K or V) at position
  /// `start` into workgroup memory `tile`, zeros past the last position.
  void loadTile(Value source, Value tile, int64_t dim, Value kvHead,
                Value start, Value thread, BlockQuantizedType block);
  /// Returns the scaled, masked score of query `row` (`loadRow` clamped to
  /// the queries) and position `pos` from the dot product `dot`: -inf for
  /// positions past the end or after the causal bound.
  Value maskedScore(Value dot, double scale, Value mask, Value head, Value row,
                    Value loadRow, Value pos, std::optional<int64_t> causal);
  /// One online-softmax step of row `thread`: the key tile's scores are
  /// `scores[thread, 0 .. keyTile)` and `newMax` is the running max with
  /// theirs folded in. Returns the running sum rescaled to `newMax` plus
  /// the tile's sum of exp(score - newMax); nothing is summed while no key is
  /// visible (`newMax` -inf).
  Value foldTileSum(Value runningMax, Value runningSum, Value newMax,
                    Value scores, Value thread);
  /// Returns the end of the KV positions the query tile starting at
  /// `tileStart` sees.
  Value keyEnd(Value tileStart, std::optional<int64_t> causal) {
    Value end = index(s.positions);
    if (!causal)
      return end;
    Value last =
        arith::AddIOp::create(b, loc, tileStart, index(c.queryTile + *causal));
    return arith::MinUIOp::create(b, loc, last, end);
  }

  OpBuilder &b;
  Location loc;
  const AttentionShape &s;
  const KernelConfig &c;
};

void KernelBuilder::loadTile(Value source, Value tile, int64_t dim,
                             Value kvHead, Value start, Value thread,
                             BlockQuantizedType block) {
  Type element = cast<MemRefType>(tile.getType()).getElementType();
  forLoop(thread, index(c.keyTile * dim), index(c.threads), [&](Value i) {
    Value j = arith::DivUIOp::create(b, loc, i, index(dim));
    Value x = arith::RemUIOp::create(b, loc, i, index(dim));
    Value pos = arith::AddIOp::create(b, loc, start, j);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          pos, index(s.positions));
    // A clamped load and a select, not an scf.if with a result: on SPIR-V
    // that becomes a Function variable inside the loop, which lavapipe
    // allocates anew on every iteration.
    Value clamped = arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
    Value v;
    if (block) {
      // ggml bytes [pos][kv_head][block bytes]: the reference's decoding.
      BlockDecoder decoder(
          b, loc, block, [&](OpBuilder &rb, Location rl, Value offset) {
            return memref::LoadOp::create(rb, rl, source,
                                          ValueRange{clamped, kvHead, offset})
                .getResult();
          });
      v = castFloat(b, loc, decoder.decodeValue(x), element);
    } else {
      v = castFloat(
          b, loc,
          memref::LoadOp::create(b, loc, source, kvIndices(kvHead, clamped, x)),
          element);
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    memref::StoreOp::create(b, loc,
                            arith::SelectOp::create(b, loc, inRange, v, zero),
                            tile, ValueRange{j, x});
  });
}

Value KernelBuilder::maskedScore(Value dot, double scale, Value mask,
                                 Value head, Value row, Value loadRow,
                                 Value pos, std::optional<int64_t> causal) {
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
    Value last = arith::AddIOp::create(b, loc, row, index(*causal));
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, pos, last));
  }
  return arith::SelectOp::create(b, loc, visible, score, minusInf);
}

Value KernelBuilder::foldTileSum(Value runningMax, Value runningSum,
                                 Value newMax, Value scores, Value thread) {
  Value f32Zero = f32(0);
  Value none =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                            f32(-std::numeric_limits<double>::infinity()));
  Value alpha = arith::SelectOp::create(
      b, loc, none, f32(1),
      math::ExpOp::create(b, loc,
                          arith::SubFOp::create(b, loc, runningMax, newMax)));
  auto exps = scf::ForOp::create(b, loc, index(0), index(c.keyTile), index(1),
                                 ValueRange{f32Zero});
  {
    OpBuilder::InsertionGuard expGuard(b);
    b.setInsertionPointToStart(exps.getBody());
    Value score = memref::LoadOp::create(
        b, loc, scores, ValueRange{thread, exps.getInductionVar()});
    Value p = arith::SelectOp::create(
        b, loc, none, f32Zero,
        math::ExpOp::create(b, loc,
                            arith::SubFOp::create(b, loc, score, newMax)));
    scf::YieldOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, exps.getRegionIterArgs()[0], p)
            .getResult());
  }
  return arith::AddFOp::create(b, loc,
                               arith::MulFOp::create(b, loc, runningSum, alpha),
                               exps.getResult(0));
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
      MemRefType::get({c.keyTile, s.headDim}, s.keyElement, nullptr, workgroup),
      MemRefType::get({c.keyTile, s.valueDim}, s.valueElement, nullptr,
                      workgroup),
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
  Value keyTiles = arith::CeilDivUIOp::create(b, loc, keyEnd(tileStart, causal),
                                              index(c.keyTile));
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

SmallVector<Value>
KernelBuilder::loadVectors(int64_t rows, int64_t dim, Value thread,
                           function_ref<Value(Value)> rowValid,
                           function_ref<SmallVector<Value>(Value, Value)> at,
                           Value source) {
  auto vecType = VectorType::get({c.vectorWidth}, b.getF16Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, vecType,
      DenseElementsAttr::get(vecType, b.getZeroAttr(b.getF16Type())));
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
      vector::StoreOp::create(b, loc, v, tile, ValueRange{r, x})
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

void KernelBuilder::buildMma(Value query, Value key, Value value, Value mask,
                             Value out, double scale,
                             std::optional<int64_t> causal) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Type f16Type = b.getF16Type();
  Type f32Type = b.getF32Type();
  // Q, K and V tiles (f16), each subgroup's 16 rows of scores (f32) and of
  // P (f16), and a 16-column row broadcast per row (f32); rows padded so
  // that the rows of a 16x16 operand start in different banks.
  MmaTiles layout(c.queryTile, c.keyTile, s.headDim, s.valueDim, c.padBytes,
                  c.asyncCopy, c.rowBlocks == 1);
  SmallVector<Type> shared;
  for (const MmaTiles::Tile &t : layout.tiles)
    shared.push_back(MemRefType::get(
        {t.rows, t.stride}, t.f32 ? f32Type : f16Type, nullptr, workgroup));
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(s.queries, c.queryTile)),
      index(s.queryHeads), one, index(c.threads), one, one,
      /*dynamicSharedMemorySize=*/
      c.dynamicShared ? arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                                     layout.totalBytes)
                            .getResult()
                      : Value(),
      /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, c.dynamicShared ? SmallVector<Type>() : shared);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  SmallVector<Value> tiles;
  if (c.dynamicShared) {
    Value base = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                        workgroup));
    for (auto [type, offset] : llvm::zip(shared, layout.offsets))
      tiles.push_back(memref::ViewOp::create(
          b, loc, cast<MemRefType>(type), base, index(offset), ValueRange{}));
  } else {
    tiles.assign(launch.getWorkgroupAttributions().begin(),
                 launch.getWorkgroupAttributions().end());
  }
  Value qTile = tiles[0];
  Value sTile = tiles[3], pTile = tiles[4], rowTile = tiles[5];
  int64_t qLead = layout.tiles[0].stride, kLead = layout.tiles[1].stride;
  int64_t vLead = layout.tiles[2].stride, sLead = layout.tiles[3].stride;
  int64_t pLead = layout.tiles[4].stride, rowLead = layout.tiles[5].stride;
  // Between a subgroup's writes to its own rows and its lanes' reads.
  auto subgroupSync = [&]() {
    if (c.warpSync)
      NVVM::SyncWarpOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1));
    else
      gpu::BarrierOp::create(b, loc);
  };

  Value thread = launch.getThreadIds().x;
  Value head = launch.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, index(s.group));
  Value tileStart =
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(c.queryTile));
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
  Value f32Zero = f32(0);
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  auto lead = [&](int64_t n) { return b.getIndexAttr(n); };
  auto aType = gpu::MMAMatrixType::get({16, 16}, f16Type, "AOp");
  auto bType = gpu::MMAMatrixType::get({16, 16}, f16Type, "BOp");
  auto cType = gpu::MMAMatrixType::get({16, 16}, f32Type, "COp");

  // Q tile (zeros past the last query), then each subgroup's A operands.
  auto below = [&](Value base, int64_t limit) {
    return [&, base, limit](Value r) -> Value {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                   arith::AddIOp::create(b, loc, base, r),
                                   index(limit));
    };
  };
  SmallVector<Value> qVectors = loadVectors(
      c.queryTile, s.headDim, thread, below(tileStart, s.queries),
      [&](Value r, Value x) -> SmallVector<Value> {
        Value qRow = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, tileStart, r),
            index(s.queries - 1));
        return {head, qRow, x};
      },
      query);
  storeVectors(qVectors, c.queryTile, s.headDim, thread, qTile);
  gpu::BarrierOp::create(b, loc);
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

  // K and V tiles in registers: the global loads of tile t + 1 are issued
  // before tile t is multiplied (packed caches decode in the tile loop).
  auto kvVectors = [&](Value source, int64_t dim, Value start,
                       BlockQuantizedType block) -> SmallVector<Value> {
    if (block)
      return {};
    return loadVectors(
        c.keyTile, dim, thread, below(start, s.positions),
        [&](Value j, Value x) -> SmallVector<Value> {
          Value pos = arith::MinUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, start, j),
              index(s.positions - 1));
          return kvIndices(kvHead, pos, x);
        },
        source);
  };
  // Double buffered, the K and V tiles of tile t + 1 are copied
  // asynchronously (zero-filled past the last position) while tile t is
  // multiplied; returns the copies' group.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
  auto copyTiles = [&](Value start, Value kDst, Value vDst) -> Value {
    SmallVector<Value> tokens;
    for (auto [source, dim, tile] :
         {std::tuple<Value, int64_t, Value>{key, s.headDim, kDst},
          {value, s.valueDim, vDst}}) {
      int64_t perThread = c.keyTile * dim / (c.vectorWidth * c.threads);
      for (int64_t k = 0; k < perThread; ++k) {
        auto [j, x, inTile] = vectorCoords(c.keyTile, dim, thread, k);
        Value pos = arith::AddIOp::create(b, loc, start, j);
        Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            pos, index(s.positions));
        Value clamped =
            arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
        Value elements = arith::SelectOp::create(
            b, loc, valid, index(c.vectorWidth), index(0));
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, tile, ValueRange{j, x}, source,
            kvIndices(kvHead, clamped, x), b.getIndexAttr(c.vectorWidth),
            elements, c.vectorWidth == 8 ? b.getUnitAttr() : nullptr));
      }
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  SmallVector<Value> init;
  // Accumulator r * outBlocks + db: row block r, columns [16 db, 16 db + 16).
  int64_t outBlocks = s.valueDim / 16;
  int64_t accCount = blocks * outBlocks;
  Value zeroAcc =
      gpu::SubgroupMmaConstantMatrixOp::create(b, loc, cType, f32Zero);
  init.append(accCount, zeroAcc);
  init.push_back(minusInf);
  init.push_back(f32Zero);
  SmallVector<Value> kFirst, vFirst;
  if (c.asyncCopy) {
    init.push_back(copyTiles(zero, tiles[1], tiles[2]));
  } else {
    kFirst = kvVectors(key, s.headDim, zero, s.keyBlock);
    vFirst = kvVectors(value, s.valueDim, zero, s.valueBlock);
  }
  init.append(kFirst);
  init.append(vFirst);
  int64_t kCount = kFirst.size(), vCount = vFirst.size();

  Value keyTiles = arith::CeilDivUIOp::create(b, loc, keyEnd(tileStart, causal),
                                              index(c.keyTile));
  auto loop = scf::ForOp::create(b, loc, zero, keyTiles, one, init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> acc(carried.begin(), carried.begin() + accCount);
    Value runningMax = carried[accCount];
    Value runningSum = carried[accCount + 1];
    ValueRange kHeld = carried.slice(accCount + 2, kCount);
    ValueRange vHeld = carried.slice(accCount + 2 + kCount, vCount);
    Value start =
        arith::MulIOp::create(b, loc, loop.getInductionVar(), index(c.keyTile));
    Value nextStart = arith::AddIOp::create(b, loc, start, index(c.keyTile));
    SmallVector<Value> next;
    Value kTile = tiles[1], vTile = tiles[2];
    if (c.asyncCopy) {
      // Tile t is in buffer t mod 2: wait for its copies, then (after every
      // subgroup is done with tile t - 1) start tile t + 1's into the other.
      nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[accCount + 2],
                                       b.getI32IntegerAttr(0));
      gpu::BarrierOp::create(b, loc);
      Value even = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, loop.getInductionVar(), index(2)),
          zero);
      auto pick = [&](Value first, Value second) -> Value {
        return arith::SelectOp::create(b, loc, even, first, second);
      };
      kTile = pick(tiles[1], tiles[6]);
      vTile = pick(tiles[2], tiles[7]);
      next.push_back(copyTiles(nextStart, pick(tiles[6], tiles[1]),
                               pick(tiles[7], tiles[2])));
    } else {
      gpu::BarrierOp::create(b, loc);
      if (s.keyBlock)
        loadTile(key, kTile, s.headDim, kvHead, start, thread, s.keyBlock);
      else
        storeVectors(SmallVector<Value>(kHeld), c.keyTile, s.headDim, thread,
                     kTile);
      if (s.valueBlock)
        loadTile(value, vTile, s.valueDim, kvHead, start, thread, s.valueBlock);
      else
        storeVectors(SmallVector<Value>(vHeld), c.keyTile, s.valueDim, thread,
                     vTile);
      gpu::BarrierOp::create(b, loc);
      next = kvVectors(key, s.headDim, nextStart, s.keyBlock);
      next.append(kvVectors(value, s.valueDim, nextStart, s.valueBlock));
    }

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
    Value log2e = f32(1.4426950408889634);
    Value scaleLog2e = f32(scale * 1.4426950408889634);
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
    Value unmasked = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    if (!mask) {
      Value end = arith::AddIOp::create(b, loc, start, index(c.keyTile));
      unmasked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                                       index(s.positions));
      if (causal) {
        Value bound = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, tileStart, rowBlock),
            index(*causal + 1));
        unmasked = arith::AndIOp::create(
            b, loc, unmasked,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                                  bound));
      }
    }
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
    auto acrossRow = [&](Value v, bool max) {
      for (int64_t offset = 1; offset < lanesPerRow; offset *= 2) {
        Value other = gpu::ShuffleOp::create(b, loc, v, offset, c.subgroup,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        v = max ? arith::MaximumFOp::create(b, loc, v, other).getResult()
                : arith::AddFOp::create(b, loc, v, other).getResult();
      }
      return v;
    };
    Value newMax = arith::MaximumFOp::create(
        b, loc, runningMax, acrossRow(scoresMax.getResult(0), true));
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                       newMax, minusInf);
    Value alpha = arith::SelectOp::create(
        b, loc, none, f32(1),
        math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, runningMax, newMax)));
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
          Value p = arith::SelectOp::create(
              b, loc, none, f32Zero, math::Exp2Op::create(b, loc, exponent));
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
    Value newSum = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, runningSum, alpha),
        acrossRow(probabilities.getResult(0), false));
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
      Value lowest = alpha;
      for (int64_t offset = 1; offset < c.subgroup; offset *= 2)
        lowest = arith::MinimumFOp::create(
            b, loc, lowest,
            gpu::ShuffleOp::create(b, loc, lowest, offset, c.subgroup,
                                   gpu::ShuffleMode::XOR)
                .getShuffleResult());
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

  if (c.asyncCopy)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(accCount + 2),
                                     b.getI32IntegerAttr(0));
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
  if (c.minWorkgroupsPerSM > 0)
    launch.walk([&](gpu::SubgroupMmaComputeOp mma) {
      mma->setAttr(cachet::getMinWorkgroupsPerSMAttrName(),
                   b.getI64IntegerAttr(c.minWorkgroupsPerSM));
    });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

/// Iterations of one loop nest after which Mesa's llvmpipe (lavapipe) stops
/// the nest (its LP_MAX_TGSI_LOOP_ITERATIONS hang guard).
constexpr int64_t kLlvmpipeLoopIterations = 65535;

/// Returns the largest power of two `t <= limit` with `fits(t)`, or 0.
int64_t largestPowerOfTwo(int64_t limit, function_ref<bool(int64_t)> fits) {
  int64_t t = 1;
  while (t * 2 <= limit)
    t *= 2;
  for (; t >= 1; t /= 2)
    if (fits(t))
      return t;
  return 0;
}

/// Returns the cachet.dequantize producing `kv` when the kernel can decode
/// its input itself: a packed block-quantized, token-major cache that is a
/// function argument, dequantized without separate scales.
DequantizeOp getPackedDequantize(Value kv, const AttentionShape &s) {
  auto dequant = kv.getDefiningOp<DequantizeOp>();
  if (!dequant || !s.tokenMajor || dequant.getScales() ||
      !isa<BlockArgument>(dequant.getInput()))
    return {};
  auto input = cast<RankedTensorType>(dequant.getInput().getType());
  if (!isa<BlockQuantizedType>(input.getElementType()) ||
      input.getRank() != 3 || !input.hasStaticShape())
    return {};
  return dequant;
}

struct LowerAttentionPass final
    : public cachet::impl::LowerAttentionBase<LowerAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    DeviceProfileAttr profile = lookupDeviceProfile(getOperation());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      if (failed(lower(op, profile)))
        return signalPassFailure();
  }

  /// Chooses the kernel of `op` from the options and `profile`; returns
  /// failure, after a remark, when the reference lowering keeps it.
  FailureOr<KernelConfig> choose(AttentionOp op, const AttentionShape &s,
                                 DeviceProfileAttr profile);

  LogicalResult lower(AttentionOp op, DeviceProfileAttr profile);
};

/// Returns why the mma kernel cannot run `s` on `profile`, or "".
std::string whyNotMma(const AttentionShape &s, DeviceProfileAttr profile) {
  if (!profile)
    return "no device profile";
  bool has = llvm::any_of(profile.getCoopMatrix(), [](Attribute shape) {
    auto str = dyn_cast<StringAttr>(shape);
    return str && str.getValue() == "16x16x16:f16->f32";
  });
  if (!has)
    return "the profile has no 16x16x16:f16->f32 cooperative matrix";
  if (!s.queryElement.isF16() || !s.keyElement.isF16() ||
      !s.valueElement.isF16())
    return "Q, K and V are not all f16";
  if (s.headDim % 16 != 0 || s.valueDim % 16 != 0)
    return "the head dimensions are not multiples of 16";
  return "";
}

FailureOr<KernelConfig> LowerAttentionPass::choose(AttentionOp op,
                                                   const AttentionShape &s,
                                                   DeviceProfileAttr profile) {
  auto keep = [&](const Twine &why) -> FailureOr<KernelConfig> {
    op.emitRemark("cachet-lower-attention: reference lowering kept: ") << why;
    return failure();
  };
  if (variant != "auto" && variant != "scalar" && variant != "mma")
    return keep("unknown variant '" + variant + "' (auto, scalar or mma)");
  uint64_t subgroup = profile ? profile.getSubgroupSize() : 0;
  uint64_t sharedBytes = profile ? profile.getSharedMemoryBytes() : 0;
  std::string from = profile ? ("profile " + profile.getName()).str()
                             : std::string("no profile: defaults");
  if (subgroup == 0)
    subgroup = 32;
  if (sharedBytes == 0)
    sharedBytes = 16384;
  // Static workgroup memory: at most the profile's, and at most 48 KiB
  // (the most a CUDA kernel gets without a dynamic opt-in). The mma
  // kernel's dynamic workgroup memory: the profile's share of
  // resident-workgroups workgroups.
  uint64_t budget = std::min<uint64_t>(sharedBytes, 49152);
  std::string noMma = variant == "scalar" ? std::string("variant=scalar")
                                          : whyNotMma(s, profile);
  if (noMma.empty() && variant == "auto" && !allowMma)
    noMma = "allow-mma is off: the target does not run the mma kernel";
  if (noMma.empty() &&
      (subgroup < 16 || subgroup > 64 || !llvm::isPowerOf2_64(subgroup)))
    noMma = llvm::formatv("subgroups of {0} lanes (the mma kernel takes 16, "
                          "32 or 64)",
                          subgroup)
                .str();

  KernelConfig c;
  c.subgroup = subgroup;
  bool doubleBuffered = false;
  std::function<uint64_t(int64_t)> sharedUse;
  if (noMma.empty()) {
    c.variant = Variant::Mma;
    // Four subgroups of 16 rows (row-blocks blocks of them) each unless the
    // option says otherwise.
    c.rowBlocks = rowBlocks;
    if (c.rowBlocks < 1 || 16 * c.rowBlocks > int64_t(subgroup) ||
        !llvm::isPowerOf2_64(c.rowBlocks))
      return keep(llvm::formatv("row-blocks {0} is not a power of two from 1 "
                                "to subgroup / 16 ({1})",
                                c.rowBlocks, subgroup / 16));
    int64_t subgroupRows = 16 * c.rowBlocks;
    c.queryTile =
        queryTile > 0 ? static_cast<int64_t>(queryTile) : 4 * subgroupRows;
    if (c.queryTile % subgroupRows != 0)
      return keep(llvm::formatv("query-tile {0} is not a multiple of {1} (the "
                                "mma kernel's rows per subgroup)",
                                c.queryTile, subgroupRows));
    c.threads = c.queryTile / subgroupRows * subgroup;
    if (tilePadBytes < 0 || tilePadBytes % 16 != 0)
      return keep(llvm::formatv("tile-pad-bytes {0} is not a non-negative "
                                "multiple of 16",
                                tilePadBytes));
    c.padBytes = tilePadBytes;
    c.dynamicShared = dynamicShared;
    c.warpSync = warpSync;
    // Asynchronous copies need dynamic memory (the second K/V buffers). The
    // tiles are sized for them whether or not this attention's K/V are
    // decoded in the kernel (which copies nothing asynchronously): rewrites
    // off and on must pick the same tiles to give the same bytes.
    doubleBuffered = asyncCopy && dynamicShared;
    c.lazyRescale = lazyRescale && warpSync;
    if (dynamicShared) {
      if (residentWorkgroups < 1)
        return keep(llvm::formatv("resident-workgroups {0} is below 1",
                                  residentWorkgroups));
      budget = sharedBytes / residentWorkgroups;
      if (occupancyHint)
        c.minWorkgroupsPerSM = residentWorkgroups;
    }
    // Q, K, V tiles (f16), scores (f32), P (f16), the row broadcast (f32).
    sharedUse = [&](int64_t t) -> uint64_t {
      return MmaTiles(c.queryTile, t, s.headDim, s.valueDim, c.padBytes,
                      doubleBuffered, c.rowBlocks == 1)
          .totalBytes;
    };
    // The widest vector of at most vector-bytes that divides the rows.
    c.vectorWidth = std::max<int64_t>(1, vectorBytes / 2);
    while (c.vectorWidth > 1 &&
           (s.headDim % c.vectorWidth != 0 || s.valueDim % c.vectorWidth != 0))
      c.vectorWidth /= 2;
  } else {
    c.variant = Variant::Scalar;
    // One thread per query row: two subgroups, at least 32 rows.
    c.queryTile = queryTile > 0 ? static_cast<int64_t>(queryTile)
                                : std::max<int64_t>(32, 2 * subgroup);
    c.threads = c.queryTile;
    int64_t bytesPerPosition =
        s.headDim * (s.keyElement.getIntOrFloatBitWidth() / 8) +
        s.valueDim * (s.valueElement.getIntOrFloatBitWidth() / 8);
    // K and V tiles, the f32 accumulator rows and the f32 score rows.
    sharedUse = [&, bytesPerPosition](int64_t t) -> uint64_t {
      return t * bytesPerPosition + 4 * c.queryTile * (s.valueDim + t);
    };
  }
  auto chooseKeyTile = [&]() -> int64_t {
    if (keyTile > 0)
      return keyTile;
    return largestPowerOfTwo(64, [&](int64_t t) {
      return sharedUse(t) <= budget &&
             (c.variant == Variant::Scalar || t >= 16);
    });
  };
  c.keyTile = chooseKeyTile();
  // Asynchronous copies move 4, 8 or 16 bytes, the same number per thread.
  auto copiesEvenly = [&](int64_t t) {
    int64_t perCopy = c.vectorWidth * c.threads;
    return c.vectorWidth >= 2 && t * s.headDim % perCopy == 0 &&
           t * s.valueDim % perCopy == 0;
  };
  if (doubleBuffered && !copiesEvenly(c.keyTile)) {
    doubleBuffered = false;
    c.keyTile = chooseKeyTile();
  }
  // Asynchronous copies: f16 K/V, not decoded in the kernel.
  c.asyncCopy = doubleBuffered && !s.keyBlock && !s.valueBlock;
  // Without a query-tile option, the scalar kernel halves its query tile
  // (down to 32 rows) until its accumulator rows leave room for a key tile.
  while (c.variant == Variant::Scalar && queryTile <= 0 && c.queryTile > 32 &&
         (c.keyTile == 0 || sharedUse(c.keyTile) > budget)) {
    c.queryTile /= 2;
    c.threads = c.queryTile;
    c.keyTile = chooseKeyTile();
  }
  if (c.keyTile == 0 || sharedUse(c.keyTile) > budget)
    return keep(llvm::formatv(
        "query tile {0} and key tile {1} need {2} bytes of workgroup memory, "
        "the budget is {3}",
        c.queryTile, std::max<int64_t>(c.keyTile, 1),
        sharedUse(std::max<int64_t>(c.keyTile, 1)), budget));
  if (c.variant == Variant::Mma && c.keyTile % 16 != 0)
    return keep(llvm::formatv("key-tile {0} is not a multiple of 16 (the mma "
                              "kernel's column block)",
                              c.keyTile));
  if (profile && profile.getVendor() == "mesa" &&
      c.variant == Variant::Scalar) {
    // llvmpipe (lavapipe) ends a loop nest after kLlvmpipeLoopIterations
    // iterations in all, silently; the KV-tile loop nests every other loop.
    int64_t perTile =
        llvm::divideCeil(c.keyTile * (s.headDim + s.valueDim), c.threads) +
        2 * c.keyTile + s.valueDim + 1;
    int64_t iterations = llvm::divideCeil(s.positions, c.keyTile) * perTile;
    if (iterations > kLlvmpipeLoopIterations)
      return keep(llvm::formatv(
          "the scalar kernel's KV-tile loop nest runs {0} iterations, more "
          "than the {1} llvmpipe executes (profile vendor mesa)",
          iterations, kLlvmpipeLoopIterations));
  }
  std::string decoded;
  for (auto [what, block] :
       {std::pair<StringRef, BlockQuantizedType>{"K", s.keyBlock},
        {"V", s.valueBlock}})
    if (block)
      decoded += llvm::formatv("; {0} decoded from {1} blocks in the kernel",
                               what, block.getFormatName())
                     .str();
  // The workgroup memory the kernel allocates: the mma kernel's tiles were
  // sized for double buffers, which K/V decoded in the kernel do not use.
  uint64_t used =
      c.variant == Variant::Mma
          ? uint64_t(MmaTiles(c.queryTile, c.keyTile, s.headDim, s.valueDim,
                              c.padBytes, c.asyncCopy, c.rowBlocks == 1)
                         .totalBytes)
          : sharedUse(c.keyTile);
  std::string common = llvm::formatv(
      "key tile {0} ({1} bytes of workgroup memory), {2}x{3} workgroups of "
      "{4} threads, GQA {5}:1 ({6}; subgroup {7}, {8} bytes of workgroup "
      "memory)",
      c.keyTile, used, llvm::divideCeil(s.queries, c.queryTile), s.queryHeads,
      c.threads, s.group, from, subgroup, sharedBytes);
  common += decoded;
  if (c.variant == Variant::Mma)
    op.emitRemark("cachet-lower-attention: mma flash-attention kernel "
                  "(gpu.subgroup_mma 16x16x16 f16, f32 accumulate): ")
        << llvm::formatv("query tile {0} ({1} subgroups of {2} rows), ",
                         c.queryTile, c.queryTile / (16 * c.rowBlocks),
                         16 * c.rowBlocks)
        << common
        << llvm::formatv("; tile rows padded by {0} bytes, {1} workgroup "
                         "memory",
                         c.padBytes, c.dynamicShared ? "dynamic" : "static")
        << (c.dynamicShared ? llvm::formatv(" (budget: 1/{0} of the profile's)",
                                            residentWorkgroups.getValue())
                                  .str()
                            : std::string())
        << (c.minWorkgroupsPerSM > 0
                ? llvm::formatv(", registers for {0} workgroups per SM asked "
                                "for (cachet.min_workgroups_per_sm)",
                                c.minWorkgroupsPerSM)
                      .str()
                : std::string())
        << (c.asyncCopy ? ", K/V double-buffered by asynchronous copies"
                        : ", K/V through registers")
        << llvm::formatv(" ({0}-byte vectors), subgroup staging synchronized "
                         "by {1}",
                         2 * c.vectorWidth,
                         c.warpSync ? "nvvm.bar.warp.sync" : "gpu.barrier")
        << (c.lazyRescale ? ", lazy rescaling" : "");
  else
    op.emitRemark("cachet-lower-attention: scalar flash-attention kernel (")
        << noMma << "): "
        << llvm::formatv("query tile {0} (one thread per row), ", c.queryTile)
        << common;
  return c;
}

LogicalResult LowerAttentionPass::lower(AttentionOp op,
                                        DeviceProfileAttr profile) {
  std::string reason;
  FailureOr<AttentionShape> shape = getShape(op, reason);
  if (failed(shape)) {
    op.emitRemark("cachet-lower-attention: reference lowering kept: ")
        << reason;
    return success();
  }
  // K or V that is cachet.dequantize of a token-major packed cache passed
  // as a function argument is decoded inside the kernel (the in-kernel
  // dequantization that dequant-once is measured against).
  DequantizeOp keyDequant = getPackedDequantize(op.getKey(), *shape);
  DequantizeOp valueDequant = getPackedDequantize(op.getValue(), *shape);
  if (keyDequant)
    shape->keyBlock = cast<BlockQuantizedType>(
        cast<RankedTensorType>(keyDequant.getInput().getType())
            .getElementType());
  if (valueDequant)
    shape->valueBlock = cast<BlockQuantizedType>(
        cast<RankedTensorType>(valueDequant.getInput().getType())
            .getElementType());
  FailureOr<KernelConfig> config = choose(op, *shape, profile);
  if (failed(config))
    return success();

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto toBuffer = [&](Value tensor) -> Value {
    if (!tensor)
      return {};
    auto type = cast<RankedTensorType>(tensor.getType());
    // Any strides but a unit innermost one (the kernels' vector loads).
    SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
    strides.back() = 1;
    auto memref = MemRefType::get(
        type.getShape(), type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides));
    return bufferization::ToBufferOp::create(b, loc, memref, tensor,
                                             /*read_only=*/true);
  };
  // The packed cache as its ggml bytes; cachet-lower-to-linalg folds this
  // cast into the function argument it turns into bytes.
  auto bytesOf = [&](DequantizeOp dequant) -> Value {
    auto packed = cast<RankedTensorType>(dequant.getInput().getType());
    auto block = cast<BlockQuantizedType>(packed.getElementType());
    SmallVector<int64_t> shape(packed.getShape());
    shape.back() *= block.getBlockBytes();
    auto bytes = RankedTensorType::get(shape, b.getI8Type());
    return UnrealizedConversionCastOp::create(b, loc, bytes, dequant.getInput())
        .getResult(0);
  };
  Value query = toBuffer(op.getQuery());
  Value key = toBuffer(keyDequant ? bytesOf(keyDequant) : op.getKey());
  Value value = toBuffer(valueDequant ? bytesOf(valueDequant) : op.getValue());
  Value mask = toBuffer(op.getMask());
  auto resultType = cast<RankedTensorType>(op.getType());
  Value out = memref::AllocOp::create(
      b, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()));
  KernelBuilder builder(b, loc, *shape, *config);
  if (config->variant == Variant::Mma)
    builder.buildMma(query, key, value, mask, out,
                     op.getScale().convertToDouble(), op.getCausalOffset());
  else
    builder.buildScalar(query, key, value, mask, out,
                        op.getScale().convertToDouble(), op.getCausalOffset());
  Value result = bufferization::ToTensorOp::create(b, loc, resultType, out,
                                                   /*restrict=*/true,
                                                   /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
  for (DequantizeOp dequant : {keyDequant, valueDequant})
    if (dequant && dequant->use_empty())
      dequant.erase();
  return success();
}

} // namespace
