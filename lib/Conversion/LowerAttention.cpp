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
enum class Variant { Scalar, Mma, MmaSync };

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

/// The workgroup-memory tiles of the mma kernels: Q, K, V (f16) and, for
/// the kernel that stages its softmax (wmma), the scores (f32), P (f16) and a
/// 16-column row broadcast (f32); double buffered, a second K and V. Each
/// row is padded by `padBytes`.
struct MmaTiles {
  enum Kind { Q, K, V, Scores, Probs, Rows, K2, V2, Count };
  struct Tile {
    int64_t rows = 0, cols = 0, stride = 0;
    bool f32 = false;
    int64_t bytes() const { return rows * stride * (f32 ? 4 : 2); }
  };
  /// Indexed by Kind; tiles the kernel does not use have no rows.
  Tile tiles[Count];
  /// Byte offset of each tile in one dynamic allocation (128-byte aligned).
  int64_t offsets[Count] = {};
  int64_t totalBytes = 0;

  MmaTiles(int64_t queryTile, int64_t keyTile, int64_t headDim,
           int64_t valueDim, int64_t padBytes, bool doubleBuffer = false,
           bool qReadOnce = true, bool stagedSoftmax = true) {
    auto add = [&](Kind kind, int64_t rows, int64_t cols, bool f32,
                   bool place = true) {
      int64_t stride = cols + padBytes / (f32 ? 4 : 2);
      tiles[kind] = {rows, cols, stride, f32};
      offsets[kind] = totalBytes;
      if (place)
        totalBytes += llvm::alignTo(tiles[kind].bytes(), 128);
    };
    // Double buffered, Q (read once, before the first key tile) shares the
    // second K tile's memory where it fits.
    bool shareQ = doubleBuffer && qReadOnce && queryTile <= keyTile;
    add(Q, queryTile, headDim, false, !shareQ);
    add(K, keyTile, headDim, false);
    add(V, keyTile, valueDim, false);
    if (stagedSoftmax) {
      add(Scores, queryTile, keyTile, true);
      add(Probs, queryTile, keyTile, false);
      add(Rows, queryTile, 16, true);
    }
    if (!doubleBuffer)
      return;
    add(K2, keyTile, headDim, false);
    add(V2, keyTile, valueDim, false);
    if (shareQ)
      offsets[Q] = offsets[K2];
  }
  bool has(Kind kind) const { return tiles[kind].rows > 0; }
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
    if (!t.isF16() && !t.isBF16() && !t.isF32()) {
      reason = "element types other than f16, bf16 and f32";
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

/// The element type of the scalar kernel's K and V tiles: the data's, except
/// that bf16 is staged as f32 (exact; Vulkan devices have no bf16 workgroup
/// memory, and every product is taken in f32 anyway).
Type getScalarTileElement(Type element) {
  return element.isBF16() ? Float32Type::get(element.getContext()) : element;
}

/// Builds the flash-attention kernel of one attention.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const AttentionShape &s,
                const KernelConfig &c)
      : b(b), loc(loc), s(s), c(c),
        half(s.queryElement.isBF16() ? Type(b.getBF16Type())
                                     : Type(b.getF16Type())) {}

  /// Emits the scalar kernel reading `query`, `key`, `value` and `mask`
  /// (memrefs; mask may be null) and writing `out`.
  void buildScalar(Value query, Value key, Value value, Value mask, Value out,
                   double scale, std::optional<int64_t> causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on 16x16x16 f16
  /// subgroup matrix multiply-accumulates (gpu.subgroup_mma_*), the output
  /// accumulated in registers and rescaled per key tile.
  void buildMma(Value query, Value key, Value value, Value mask, Value out,
                double scale, std::optional<int64_t> causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on m16n8k16
  /// nvgpu.mma.sync and nvgpu.ldmatrix (NVVM): fragments of a known layout,
  /// so the scores, the softmax and P stay in registers.
  void buildMmaSync(Value query, Value key, Value value, Value mask, Value out,
                    double scale, std::optional<int64_t> causal);

private:
  /// The launch of an mma kernel, its workgroup-memory tiles (indexed by
  /// MmaTiles::Kind, null where the layout has none) and the ids every part
  /// of it uses.
  struct MmaFrame {
    gpu::LaunchOp launch;
    SmallVector<Value> tiles;
    Value thread, head, kvHead, tileStart;
  };
  /// Creates the launch of an mma kernel over `layout`'s tiles and moves the
  /// insertion point into its body (the caller guards it).
  MmaFrame beginMma(const MmaTiles &layout);
  /// Stages the query tile in workgroup memory, zeros past the last query.
  void stageQuery(Value query, const MmaFrame &f);
  /// The iteration arguments of the K/V tiles before the first key tile:
  /// the first tiles' asynchronous copies, or their f16 vectors.
  SmallVector<Value> kvInit(Value key, Value value, const MmaFrame &f);
  /// At the top of key tile `iv`, whose K/V iteration arguments are
  /// `carried`: makes the tile's K and V visible in workgroup memory,
  /// returns those tiles and appends the next tile's arguments to `next`.
  std::pair<Value, Value> kvStage(Value key, Value value, const MmaFrame &f,
                                  ValueRange carried, Value iv,
                                  SmallVector<Value> &next);
  /// After the key tiles: waits for copies still in flight.
  void kvFinish(ValueRange results);
  /// Marks the matrix products of `launch` with the workgroups per SM its
  /// registers should allow (cachet-kernel-occupancy), where asked for.
  void markOccupancy(gpu::LaunchOp launch) {
    if (c.minWorkgroupsPerSM <= 0)
      return;
    launch.walk([&](Operation *op) {
      if (isa<gpu::SubgroupMmaComputeOp, nvgpu::MmaSyncOp>(op))
        op->setAttr(CachetDialect::getMinWorkgroupsPerSMAttrName(),
                    b.getI64IntegerAttr(c.minWorkgroupsPerSM));
    });
  }
  /// The f16 vectors `thread` loads of the `[keyTile][dim]` tile of K or V
  /// at `start` (none when the kernel decodes the tile from `block`s).
  SmallVector<Value> kvVectors(Value source, int64_t dim, Value start,
                               BlockQuantizedType block, const MmaFrame &f);
  /// Starts the asynchronous copies of the K and V tiles at `start` into
  /// `kDst` and `vDst` (zero-filled past the last position); returns their
  /// group.
  Value copyTiles(Value key, Value value, Value start, Value kDst, Value vDst,
                  const MmaFrame &f);
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
  /// nvgpu.mma.sync of LLVM 22 deduces no PTX type for bf16: the same
  /// m16n8k16 multiply-accumulate as nvvm.mma.sync on the fragments' bf16
  /// pairs packed into i32 (A vector<4x2xbf16>, B vector<2x2xbf16>, C and
  /// the result vector<2x2xf32>).
  Value bf16MmaSync(Value a, Value bOp, Value acc);
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
  /// The 16-bit type of the tensor-core tiles and fragments: bf16 when Q, K
  /// and V are bf16 (mma-sync only), f16 otherwise.
  Type half;
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

KernelBuilder::MmaFrame KernelBuilder::beginMma(const MmaTiles &layout) {
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
    shared.push_back(MemRefType::get(
        {t.rows, t.stride}, t.f32 ? b.getF32Type() : half, nullptr, workgroup));
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
  for (auto [i, kind] : llvm::enumerate(kinds))
    f.tiles[kind] =
        c.dynamicShared
            ? memref::ViewOp::create(b, loc, cast<MemRefType>(shared[i]), base,
                                     index(layout.offsets[kind]), ValueRange{})
                  .getResult()
            : Value(f.launch.getWorkgroupAttributions()[i]);
  f.thread = f.launch.getThreadIds().x;
  f.head = f.launch.getBlockIds().y;
  f.kvHead = arith::DivUIOp::create(b, loc, f.head, index(s.group));
  f.tileStart = arith::MulIOp::create(b, loc, f.launch.getBlockIds().x,
                                      index(c.queryTile));
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
  gpu::BarrierOp::create(b, loc);
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
          b, loc, tile, ValueRange{j, x}, source,
          kvIndices(f.kvHead, clamped, x), b.getIndexAttr(c.vectorWidth),
          elements, c.vectorWidth == 8 ? b.getUnitAttr() : nullptr));
    }
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

SmallVector<Value> KernelBuilder::kvInit(Value key, Value value,
                                         const MmaFrame &f) {
  Value zero = index(0);
  if (c.asyncCopy)
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
  if (c.asyncCopy) {
    // Tile t is in buffer t mod 2: wait for its copies, then (after every
    // subgroup is done with tile t - 1) start tile t + 1's into the other.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[0],
                                     b.getI32IntegerAttr(0));
    gpu::BarrierOp::create(b, loc);
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
    loadTile(key, kTile, s.headDim, f.kvHead, start, f.thread, s.keyBlock);
  else
    storeVectors(SmallVector<Value>(carried.take_front(kCount)), c.keyTile,
                 s.headDim, f.thread, kTile);
  if (s.valueBlock)
    loadTile(value, vTile, s.valueDim, f.kvHead, start, f.thread, s.valueBlock);
  else
    storeVectors(SmallVector<Value>(carried.drop_front(kCount)), c.keyTile,
                 s.valueDim, f.thread, vTile);
  gpu::BarrierOp::create(b, loc);
  next.append(kvVectors(key, s.headDim, nextStart, s.keyBlock, f));
  next.append(kvVectors(value, s.valueDim, nextStart, s.valueBlock, f));
  return {kTile, vTile};
}

void KernelBuilder::kvFinish(ValueRange results) {
  if (c.asyncCopy)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, results[0],
                                     b.getI32IntegerAttr(0));
}

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

void KernelBuilder::buildMmaSync(Value query, Value key, Value value,
                                 Value mask, Value out, double scale,
                                 std::optional<int64_t> causal) {
  Type halfType = half;
  Type f32Type = b.getF32Type();
  // Q, K and V tiles only: the scores never leave registers.
  MmaTiles layout(c.queryTile, c.keyTile, s.headDim, s.valueDim, c.padBytes,
                  c.asyncCopy, c.rowBlocks == 1, /*stagedSoftmax=*/false);
  OpBuilder::InsertionGuard guard(b);
  MmaFrame f = beginMma(layout);
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
  auto acrossQuad = [&](Value v, bool max) {
    for (int64_t offset = 1; offset < 4; offset *= 2) {
      Value other =
          gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      v = max ? arith::MaximumFOp::create(b, loc, v, other).getResult()
              : arith::AddFOp::create(b, loc, v, other).getResult();
    }
    return v;
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
  Value keyTiles = arith::CeilDivUIOp::create(
      b, loc, keyEnd(f.tileStart, causal), index(c.keyTile));
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
    Value log2e = f32(1.4426950408889634);
    Value scaleLog2e = f32(scale * 1.4426950408889634);
    Value unmasked = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    Value end = add(start, c.keyTile);
    if (!mask) {
      unmasked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                                       index(s.positions));
      if (causal)
        unmasked = arith::AndIOp::create(
            b, loc, unmasked,
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ule, end,
                add(addv(f.tileStart, warpRows), *causal + 1)));
    }
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
        Value rowMax = arith::MaximumFOp::create(b, loc, runningMax[k],
                                                 acrossQuad(m, true));
        Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           rowMax, minusInf);
        alpha.push_back(arith::SelectOp::create(
            b, loc, none, f32(1),
            math::Exp2Op::create(
                b, loc, arith::SubFOp::create(b, loc, runningMax[k], rowMax))));
        Value sum = f32Zero;
        for (int64_t jb = 0; jb < keyBlocks; ++jb)
          for (int64_t e = 0; e < 2; ++e) {
            Value p = arith::SelectOp::create(
                b, loc, none, f32Zero,
                math::Exp2Op::create(
                    b, loc,
                    arith::SubFOp::create(b, loc, rowScores[2 * jb + e],
                                          rowMax)));
            Value rounded = castFloat(b, loc, p, halfType);
            probs[(r * keyBlocks + jb) * 4 + 2 * i + e] = rounded;
            sum = arith::AddFOp::create(b, loc, sum,
                                        castFloat(b, loc, rounded, f32Type));
          }
        newMax.push_back(rowMax);
        newSum.push_back(arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, runningSum[k], alpha.back()),
            sum));
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
      Value sum =
          acrossQuad(loop.getResult(accCount + rowCount + 2 * r + i), false);
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
/// `allowBF16`: the kernel also takes bf16 Q, K and V (mma-sync).
std::string whyNotMma(const AttentionShape &s, DeviceProfileAttr profile,
                      bool allowBF16) {
  if (!profile)
    return "no device profile";
  bool has = llvm::any_of(profile.getCoopMatrix(), [](Attribute shape) {
    auto str = dyn_cast<StringAttr>(shape);
    return str && str.getValue() == "16x16x16:f16->f32";
  });
  if (!has)
    return "the profile has no 16x16x16:f16->f32 cooperative matrix";
  bool f16 =
      s.queryElement.isF16() && s.keyElement.isF16() && s.valueElement.isF16();
  bool bf16 = s.queryElement.isBF16() && s.keyElement.isBF16() &&
              s.valueElement.isBF16();
  if (!f16 && !(allowBF16 && bf16))
    return allowBF16 ? "Q, K and V are not all f16 or all bf16"
                     : "Q, K and V are not all f16";
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
  if (variant != "auto" && variant != "scalar" && variant != "mma" &&
      variant != "mma-sync")
    return keep("unknown variant '" + variant +
                "' (auto, scalar, mma or mma-sync)");
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
  // Why each tensor-core kernel cannot run ("" when it can): mma takes f16,
  // mma-sync f16 or bf16.
  std::string noMma, noSync;
  for (bool sync : {false, true}) {
    std::string &why = sync ? noSync : noMma;
    why = variant == "scalar" ? std::string("variant=scalar")
                              : whyNotMma(s, profile, /*allowBF16=*/sync);
    if (why.empty() && variant == "auto" && !allowMma)
      why = "allow-mma is off: the target does not run the mma kernel";
    if (why.empty() &&
        (subgroup < 16 || subgroup > 64 || !llvm::isPowerOf2_64(subgroup)))
      why = llvm::formatv("subgroups of {0} lanes (the mma kernel takes 16, "
                          "32 or 64)",
                          subgroup)
                .str();
  }

  // mma-sync: the same tensor cores through PTX's mma.sync, whose fragment
  // layout is known (NVVM only: allow-mma-sync or variant=mma-sync).
  if (noSync.empty() && subgroup != 32)
    noSync =
        llvm::formatv("subgroups of {0} lanes (mma.sync takes 32)", subgroup)
            .str();
  if (noSync.empty() && variant == "auto" && !allowMmaSync)
    noSync = "allow-mma-sync is off";
  if (variant == "mma-sync" && !noSync.empty())
    return keep("variant=mma-sync: " + noSync);

  KernelConfig c;
  c.subgroup = subgroup;
  bool doubleBuffered = false;
  std::function<uint64_t(int64_t)> sharedUse;
  bool useSync = variant != "mma" && noSync.empty();
  if (useSync || noMma.empty()) {
    c.variant = useSync ? Variant::MmaSync : Variant::Mma;
    bool staged = c.variant == Variant::Mma;
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
    sharedUse = [&, staged](int64_t t) -> uint64_t {
      return MmaTiles(c.queryTile, t, s.headDim, s.valueDim, c.padBytes,
                      doubleBuffered, c.rowBlocks == 1, staged)
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
        s.headDim *
            (getScalarTileElement(s.keyElement).getIntOrFloatBitWidth() / 8) +
        s.valueDim *
            (getScalarTileElement(s.valueElement).getIntOrFloatBitWidth() / 8);
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
  if (c.variant != Variant::Scalar && c.keyTile % 16 != 0)
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
      c.variant != Variant::Scalar
          ? uint64_t(MmaTiles(c.queryTile, c.keyTile, s.headDim, s.valueDim,
                              c.padBytes, c.asyncCopy, c.rowBlocks == 1,
                              c.variant == Variant::Mma)
                         .totalBytes)
          : sharedUse(c.keyTile);
  std::string common = llvm::formatv(
      "key tile {0} ({1} bytes of workgroup memory), {2}x{3} workgroups of "
      "{4} threads, GQA {5}:1 ({6}; subgroup {7}, {8} bytes of workgroup "
      "memory)",
      c.keyTile, used, llvm::divideCeil(s.queries, c.queryTile), s.queryHeads,
      c.threads, s.group, from, subgroup, sharedBytes);
  common += decoded;
  if (c.variant != Variant::Scalar) {
    // The tensor-core kernels: the rows, the tiles' memory and staging.
    std::string tiles =
        llvm::formatv("query tile {0} ({1} subgroups of {2} rows), ",
                      c.queryTile, c.queryTile / (16 * c.rowBlocks),
                      16 * c.rowBlocks)
            .str() +
        common +
        llvm::formatv("; tile rows padded by {0} bytes, {1} workgroup memory",
                      c.padBytes, c.dynamicShared ? "dynamic" : "static")
            .str();
    if (c.dynamicShared)
      tiles += llvm::formatv(" (budget: 1/{0} of the profile's)",
                             residentWorkgroups.getValue());
    if (c.minWorkgroupsPerSM > 0)
      tiles += llvm::formatv(", registers for {0} workgroups per SM asked "
                             "for (cachet.min_workgroups_per_sm)",
                             c.minWorkgroupsPerSM);
    tiles += c.asyncCopy ? ", K/V double-buffered by asynchronous copies"
                         : ", K/V through registers";
    tiles += llvm::formatv(" ({0}-byte vectors)", 2 * c.vectorWidth);
    if (c.variant == Variant::MmaSync)
      op.emitRemark("cachet-lower-attention: mma-sync flash-attention kernel "
                    "(")
          << (s.queryElement.isBF16() ? "nvvm.mma.sync m16n8k16 bf16"
                                      : "nvgpu.mma.sync m16n8k16 f16")
          << ", f32 accumulate, softmax in registers): " << tiles;
    else
      op.emitRemark("cachet-lower-attention: mma flash-attention kernel "
                    "(gpu.subgroup_mma 16x16x16 f16, f32 accumulate): ")
          << tiles
          << llvm::formatv(", subgroup staging synchronized by {0}",
                           c.warpSync ? "nvvm.bar.warp.sync" : "gpu.barrier")
          << (c.lazyRescale ? ", lazy rescaling" : "");
  } else {
    op.emitRemark("cachet-lower-attention: scalar flash-attention kernel (")
        << noMma << "): "
        << llvm::formatv("query tile {0} (one thread per row), ", c.queryTile)
        << common;
  }
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
  if (config->variant == Variant::MmaSync)
    builder.buildMmaSync(query, key, value, mask, out,
                         op.getScale().convertToDouble(), op.getCausalOffset());
  else if (config->variant == Variant::Mma)
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
