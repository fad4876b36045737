//===- LowerAttention.cpp - flash-attention kernels for cachet.attention --===//
//
// Replaces cachet.attention on tensors by a flash-attention kernel, a
// gpu.launch over buffers: one workgroup per (query tile, query head), the
// KV range walked in key tiles staged through workgroup memory, an online
// softmax with a running max and sum in f32, P rounded to V's element type
// before P V. The tile sizes and the variant come from the device profile.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/FormatVariadic.h"

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
};

/// The kernel chosen for one attention.
struct KernelConfig {
  /// Query rows per workgroup (one thread per row in the scalar kernel).
  int64_t queryTile;
  /// KV positions staged in workgroup memory at a time.
  int64_t keyTile;
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

/// Converts a float `value` to `type` (extf, truncf or nothing).
Value castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

/// Builds the scalar flash-attention kernel of one attention.
class ScalarKernelBuilder {
public:
  ScalarKernelBuilder(OpBuilder &b, Location loc, const AttentionShape &s,
                      const KernelConfig &c)
      : b(b), loc(loc), s(s), c(c) {}

  /// Emits the launch reading `query`, `key`, `value` and `mask` (memrefs;
  /// mask may be null) and writing `out`.
  void build(Value query, Value key, Value value, Value mask, Value out,
             double scale, std::optional<int64_t> causal);

private:
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
                Value start, Value thread);

  OpBuilder &b;
  Location loc;
  const AttentionShape &s;
  const KernelConfig &c;
};

void ScalarKernelBuilder::loadTile(Value source, Value tile, int64_t dim,
                                   Value kvHead, Value start, Value thread) {
  Type element = cast<MemRefType>(tile.getType()).getElementType();
  forLoop(thread, index(c.keyTile * dim), index(c.queryTile), [&](Value i) {
    Value j = arith::DivUIOp::create(b, loc, i, index(dim));
    Value x = arith::RemUIOp::create(b, loc, i, index(dim));
    Value pos = arith::AddIOp::create(b, loc, start, j);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          pos, index(s.positions));
    auto ifOp = scf::IfOp::create(b, loc, element, inRange,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value v =
          memref::LoadOp::create(b, loc, source, kvIndices(kvHead, pos, x));
      scf::YieldOp::create(b, loc, castFloat(b, loc, v, element));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(
          b, loc,
          arith::ConstantOp::create(b, loc, b.getZeroAttr(element))
              .getResult());
    }
    memref::StoreOp::create(b, loc, ifOp.getResult(0), tile, ValueRange{j, x});
  });
}

void ScalarKernelBuilder::build(Value query, Value key, Value value, Value mask,
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
  Value queryTile = launch.getBlockIds().x;
  Value head = launch.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, index(s.group));
  Value tileStart =
      arith::MulIOp::create(b, loc, queryTile, index(c.queryTile));
  Value row = arith::AddIOp::create(b, loc, tileStart, thread);
  Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                         index(s.queries));
  // Rows past the end compute on the last row and store nothing.
  Value loadRow = arith::MinUIOp::create(b, loc, row, index(s.queries - 1));

  // KV positions any row of the tile sees: all, or up to the causal bound
  // of its last row.
  Value end = index(s.positions);
  if (causal) {
    Value last =
        arith::AddIOp::create(b, loc, tileStart, index(c.queryTile + *causal));
    end = arith::MinUIOp::create(b, loc, last, end);
  }
  Value keyTiles = arith::CeilDivUIOp::create(b, loc, end, index(c.keyTile));

  Value zero = index(0);
  Value f32Zero = f32(0);
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    memref::StoreOp::create(b, loc, f32Zero, acc, ValueRange{thread, d});
  });

  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  auto tiles = scf::ForOp::create(b, loc, zero, keyTiles, one,
                                  ValueRange{minusInf, f32Zero});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value runningMax = tiles.getRegionIterArgs()[0];
    Value runningSum = tiles.getRegionIterArgs()[1];
    Value start = arith::MulIOp::create(b, loc, tiles.getInductionVar(),
                                        index(c.keyTile));
    gpu::BarrierOp::create(b, loc);
    loadTile(key, kTile, s.headDim, kvHead, start, thread);
    loadTile(value, vTile, s.valueDim, kvHead, start, thread);
    gpu::BarrierOp::create(b, loc);

    // Scores of the tile, masked, and their max.
    auto scores = scf::ForOp::create(b, loc, zero, index(c.keyTile), one,
                                     ValueRange{minusInf});
    {
      OpBuilder::InsertionGuard scoreGuard(b);
      b.setInsertionPointToStart(scores.getBody());
      Value j = scores.getInductionVar();
      auto dot = scf::ForOp::create(b, loc, zero, index(s.headDim), one,
                                    ValueRange{f32Zero});
      {
        OpBuilder::InsertionGuard dotGuard(b);
        b.setInsertionPointToStart(dot.getBody());
        Value x = dot.getInductionVar();
        Value q = castFloat(
            b, loc,
            memref::LoadOp::create(b, loc, query, ValueRange{head, loadRow, x}),
            f32Type);
        Value k = castFloat(
            b, loc, memref::LoadOp::create(b, loc, kTile, ValueRange{j, x}),
            f32Type);
        Value sum = arith::AddFOp::create(b, loc, dot.getRegionIterArgs()[0],
                                          arith::MulFOp::create(b, loc, q, k));
        scf::YieldOp::create(b, loc, sum);
      }
      Value score = arith::MulFOp::create(b, loc, dot.getResult(0), f32(scale));
      Value pos = arith::AddIOp::create(b, loc, start, j);
      Value visible = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            pos, index(s.positions));
      if (mask) {
        Value maskPos =
            arith::MinUIOp::create(b, loc, pos, index(s.positions - 1));
        SmallVector<Value> indices = {loadRow, maskPos};
        if (s.maskRank == 3)
          indices.insert(indices.begin(), head);
        Value m = memref::LoadOp::create(b, loc, mask, indices);
        score =
            arith::AddFOp::create(b, loc, score, castFloat(b, loc, m, f32Type));
      }
      if (causal) {
        Value last = arith::AddIOp::create(b, loc, row, index(*causal));
        visible = arith::AndIOp::create(
            b, loc, visible,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, pos,
                                  last));
      }
      score = arith::SelectOp::create(b, loc, visible, score, minusInf);
      memref::StoreOp::create(b, loc, score, probs, ValueRange{thread, j});
      scf::YieldOp::create(b, loc,
                           arith::MaximumFOp::create(
                               b, loc, scores.getRegionIterArgs()[0], score)
                               .getResult());
    }

    // Online softmax: rescale by exp(old max - new max); while no key is
    // visible (max -inf) nothing accumulates.
    Value newMax =
        arith::MaximumFOp::create(b, loc, runningMax, scores.getResult(0));
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                       newMax, minusInf);
    Value alpha = arith::SelectOp::create(
        b, loc, none, f32(1),
        math::ExpOp::create(b, loc,
                            arith::SubFOp::create(b, loc, runningMax, newMax)));
    auto exps = scf::ForOp::create(b, loc, zero, index(c.keyTile), one,
                                   ValueRange{f32Zero});
    {
      OpBuilder::InsertionGuard expGuard(b);
      b.setInsertionPointToStart(exps.getBody());
      Value j = exps.getInductionVar();
      Value score =
          memref::LoadOp::create(b, loc, probs, ValueRange{thread, j});
      Value p = arith::SelectOp::create(
          b, loc, none, f32Zero,
          math::ExpOp::create(b, loc,
                              arith::SubFOp::create(b, loc, score, newMax)));
      // P as V's element type, the operand of P V.
      Value rounded =
          castFloat(b, loc, castFloat(b, loc, p, s.valueElement), f32Type);
      memref::StoreOp::create(b, loc, rounded, probs, ValueRange{thread, j});
      scf::YieldOp::create(
          b, loc,
          arith::AddFOp::create(b, loc, exps.getRegionIterArgs()[0], p)
              .getResult());
    }
    Value newSum = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, runningSum, alpha),
        exps.getResult(0));

    forLoop(zero, index(s.valueDim), one, [&](Value d) {
      Value old = memref::LoadOp::create(b, loc, acc, ValueRange{thread, d});
      auto pv = scf::ForOp::create(
          b, loc, zero, index(c.keyTile), one,
          ValueRange{arith::MulFOp::create(b, loc, old, alpha).getResult()});
      {
        OpBuilder::InsertionGuard pvGuard(b);
        b.setInsertionPointToStart(pv.getBody());
        Value j = pv.getInductionVar();
        Value p = memref::LoadOp::create(b, loc, probs, ValueRange{thread, j});
        Value v = castFloat(
            b, loc, memref::LoadOp::create(b, loc, vTile, ValueRange{j, d}),
            f32Type);
        scf::YieldOp::create(
            b, loc,
            arith::AddFOp::create(b, loc, pv.getRegionIterArgs()[0],
                                  arith::MulFOp::create(b, loc, p, v))
                .getResult());
      }
      memref::StoreOp::create(b, loc, pv.getResult(0), acc,
                              ValueRange{thread, d});
    });
    scf::YieldOp::create(b, loc, ValueRange{newMax, newSum});
  }

  Value sum = tiles.getResult(1);
  auto store = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  forLoop(zero, index(s.valueDim), one, [&](Value d) {
    Value o = arith::DivFOp::create(
        b, loc, memref::LoadOp::create(b, loc, acc, ValueRange{thread, d}),
        sum);
    memref::StoreOp::create(b, loc, castFloat(b, loc, o, s.resultElement), out,
                            ValueRange{head, row, d});
  });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

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

FailureOr<KernelConfig> LowerAttentionPass::choose(AttentionOp op,
                                                   const AttentionShape &s,
                                                   DeviceProfileAttr profile) {
  auto keep = [&](const Twine &why) -> FailureOr<KernelConfig> {
    op.emitRemark("cachet-lower-attention: reference lowering kept: ") << why;
    return failure();
  };
  if (variant != "auto" && variant != "scalar")
    return keep("unknown variant '" + variant + "' (auto or scalar)");
  uint64_t subgroup = profile ? profile.getSubgroupSize() : 0;
  uint64_t sharedBytes = profile ? profile.getSharedMemoryBytes() : 0;
  std::string from = profile ? ("profile " + profile.getName()).str()
                             : std::string("no profile: defaults");
  if (subgroup == 0)
    subgroup = 32;
  if (sharedBytes == 0)
    sharedBytes = 16384;
  KernelConfig c;
  // One thread per query row: two subgroups, at least 32 rows.
  c.queryTile = queryTile > 0 ? static_cast<int64_t>(queryTile)
                              : std::max<int64_t>(32, 2 * subgroup);
  // Static workgroup memory: at most the profile's, and at most 48 KiB
  // (the most a CUDA kernel gets without a dynamic opt-in).
  uint64_t budget = std::min<uint64_t>(sharedBytes, 49152);
  int64_t bytesPerPosition =
      s.headDim * (s.keyElement.getIntOrFloatBitWidth() / 8) +
      s.valueDim * (s.valueElement.getIntOrFloatBitWidth() / 8);
  // K and V tiles, the f32 accumulator rows and the f32 score rows.
  auto sharedUse = [&](int64_t t) -> uint64_t {
    return t * bytesPerPosition + 4 * c.queryTile * (s.valueDim + t);
  };
  c.keyTile = keyTile > 0 ? static_cast<int64_t>(keyTile)
                          : largestPowerOfTwo(64, [&](int64_t t) {
                              return sharedUse(t) <= budget;
                            });
  if (c.keyTile == 0 || sharedUse(c.keyTile) > budget)
    return keep(llvm::formatv(
        "query tile {0} and key tile {1} need {2} bytes of workgroup memory, "
        "the budget is {3}",
        c.queryTile, std::max<int64_t>(c.keyTile, 1),
        sharedUse(std::max<int64_t>(c.keyTile, 1)), budget));
  op.emitRemark("cachet-lower-attention: scalar flash-attention kernel: ")
      << llvm::formatv("query tile {0} (one thread per row), key tile {1} "
                       "({2} bytes of workgroup memory), {3}x{4} "
                       "workgroups, GQA {5}:1 ({6}; subgroup {7}, {8} bytes "
                       "of workgroup memory)",
                       c.queryTile, c.keyTile, sharedUse(c.keyTile),
                       llvm::divideCeil(s.queries, c.queryTile), s.queryHeads,
                       s.group, from, subgroup, sharedBytes);
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
  FailureOr<KernelConfig> config = choose(op, *shape, profile);
  if (failed(config))
    return success();

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto toBuffer = [&](Value tensor) -> Value {
    if (!tensor)
      return {};
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memref = MemRefType::get(
        type.getShape(), type.getElementType(),
        StridedLayoutAttr::get(
            b.getContext(), ShapedType::kDynamic,
            SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic)));
    return bufferization::ToBufferOp::create(b, loc, memref, tensor,
                                             /*read_only=*/true);
  };
  Value query = toBuffer(op.getQuery());
  Value key = toBuffer(op.getKey());
  Value value = toBuffer(op.getValue());
  Value mask = toBuffer(op.getMask());
  auto resultType = cast<RankedTensorType>(op.getType());
  Value out = memref::AllocOp::create(
      b, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()));
  ScalarKernelBuilder(b, loc, *shape, *config)
      .build(query, key, value, mask, out, op.getScale().convertToDouble(),
             op.getCausalOffset());
  Value result = bufferization::ToTensorOp::create(b, loc, resultType, out,
                                                   /*restrict=*/true,
                                                   /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
  return success();
}

} // namespace
