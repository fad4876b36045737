//===- DequantOnceKV.cpp - dequantize a quantized KV cache once per layer -===//
//
// Rewrites cachet.attention over token-major block-quantized K/V into
// cachet.dequant_transpose into a head-major f16 scratch plus a head-major
// attention, where the cost function of cachet/Analysis/DequantOnceCost.h
// says it pays. With a capped scratch the KV range is processed in chunks,
// each continuing the online-softmax state of the ones before
// (cachet.attention_partial). See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Analysis/DequantOnceCost.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <numeric>

namespace cachet {
#define GEN_PASS_DEF_DEQUANTONCEKV
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

/// Positions a chunk is a multiple of: the largest default key tile of the
/// attention kernels; lcm(64, key tile) where the kernel the attention gets
/// has another (decide).
static constexpr int64_t kChunkAlign = 64;

/// Copies the kernel decisions already in the IR on `from` (a config
/// written by hand or by an earlier pipeline) to the attention that
/// replaces it, so that rewrites off and on run the same kernel.
static void copyKernelConfigs(Operation *from, Operation *to) {
  for (StringRef name : {CachetDialect::getKernelConfigAttrName(),
                         CachetDialect::getFallbackKernelConfigAttrName()})
    if (Attribute config = from->getAttr(name))
      to->setAttr(name, config);
}

/// The unit attribute marking the function-level KV scratch.
static constexpr StringLiteral kScratchAttrName =
    CachetDialect::getKVScratchAttrName();

namespace {
/// One attention the pass rewrites, with its shapes.
struct Candidate {
  AttentionOp op;
  DequantizeOp key, value;
  KVAttentionShape shape;
  /// Positions per chunk; `shape.positions` when the range is not split.
  int64_t chunk = 0;
  /// Unsplit: whether a causal bound keeps the attention from reading every
  /// position (only those it reads are dequantized, getReadPositions).
  bool bounded = false;

  /// The element type of the scratch: that of the dequantized K (and V).
  Type elementType() const {
    return getElementTypeOrSelf(key->getResult(0).getType());
  }
  /// Scratch elements one chunk of K+V needs.
  int64_t scratchElements() const {
    return shape.kvHeads * chunk * (shape.headDim + shape.valueDim);
  }
};
} // namespace

/// Returns the bytes of the quantized cache `dequantize` reads.
static int64_t getQuantizedBytes(DequantizeOp dequantize) {
  auto input = cast<RankedTensorType>(dequantize.getInput().getType());
  int64_t bytes = input.getNumElements();
  if (auto block = dyn_cast<BlockQuantizedType>(input.getElementType()))
    bytes *= block.getBlockBytes();
  if (Value scales = dequantize.getScales())
    bytes += 2 * cast<RankedTensorType>(scales.getType()).getNumElements();
  return bytes;
}

/// Checks that `value` is a `cachet.dequantize` to f16 or bf16 of a static
/// token-major cache; returns it, or null with `reason` set.
static DequantizeOp getTokenMajorDequantize(Value value, StringRef what,
                                            std::string &reason) {
  auto dequantize = value.getDefiningOp<DequantizeOp>();
  if (!dequantize) {
    reason = (what + " is not cachet.dequantize of a quantized cache").str();
    return {};
  }
  auto input = cast<RankedTensorType>(dequantize.getInput().getType());
  auto result = cast<RankedTensorType>(dequantize.getResult().getType());
  if (input.getRank() != 3) {
    reason = (what + " cache is not token-major [pos][kv_head][dim]").str();
    return {};
  }
  if (!result.getElementType().isF16() && !result.getElementType().isBF16()) {
    std::string type;
    llvm::raw_string_ostream(type) << result.getElementType();
    reason = (what + " is dequantized to " + type +
              "; a 16-bit scratch would change its values")
                 .str();
    return {};
  }
  if (!input.hasStaticShape() || !result.hasStaticShape()) {
    reason = (what + " has a dynamic shape").str();
    return {};
  }
  return dequantize;
}

/// Returns a `[dims]` view of `elements` scratch elements at `offset`.
static Value getScratchView(OpBuilder &b, Location loc, Value scratch,
                            int64_t offset, ArrayRef<int64_t> dims) {
  int64_t elements = 1;
  for (int64_t d : dims)
    elements *= d;
  Value flat = tensor::ExtractSliceOp::create(
      b, loc, scratch, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(elements)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  auto type = RankedTensorType::get(
      dims, cast<RankedTensorType>(scratch.getType()).getElementType());
  return tensor::ExpandShapeOp::create(
      b, loc, type, flat, ArrayRef<ReassociationIndices>{{0, 1, 2}});
}

/// Emits `cachet.dequant_transpose` of `dequantize`'s cache, restricted to
/// `size` positions from `start` when `start` is set, into `init`.
static Value emitDequantTranspose(OpBuilder &b, Location loc,
                                  DequantizeOp dequantize, OpFoldResult start,
                                  OpFoldResult size, Value init) {
  auto slice = [&](Value v) -> Value {
    if (!v || !start)
      return v;
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<OpFoldResult> offsets = {start, b.getIndexAttr(0),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {size, b.getIndexAttr(type.getDimSize(1)),
                                       b.getIndexAttr(type.getDimSize(2))};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
  };
  return DequantTransposeOp::create(b, loc, init.getType(),
                                    slice(dequantize.getInput()),
                                    slice(dequantize.getScales()), init);
}

/// The positions an attention with the static causal offset `offset` reads:
/// every key it sees (to offset + queries) and the rest of the key tile
/// that holds the last one (kMaxKeyTile past it), in whole 64-position
/// groups.
static int64_t getStaticReadPositions(int64_t offset, int64_t queries) {
  return llvm::alignTo(offset + queries + kMaxKeyTile, 64);
}

/// The same for `op`, whose causal bound `decide` found below its
/// `positions`: a constant, or min(positions, ...) computed where a
/// run-time causal position is known.
static OpFoldResult getReadPositions(OpBuilder &b, AttentionOp op,
                                     int64_t queries, int64_t positions) {
  if (std::optional<int64_t> offset = op.getCausalOffset())
    return b.getIndexAttr(getStaticReadPositions(*offset, queries));
  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value end = arith::AddIOp::create(b, loc, op.getCausalPosition(),
                                    index(queries + kMaxKeyTile + 63));
  Value group = index(64);
  Value aligned = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, end, group), group);
  return arith::MinUIOp::create(b, loc, aligned, index(positions)).getResult();
}

/// Returns why the kernels cannot dequant-transpose a run-time number of
/// positions of `dequantize`'s cache (`what`: K or V), or "": the staged
/// kernel takes packed blocks whose positions are whole 32-bit words.
static std::string whyNotRunTimeBound(DequantizeOp dequantize, StringRef what) {
  if (dequantize.getScales())
    return (what + " is the split form (values and scales apart), whose "
                   "kernel takes a static number of positions")
        .str();
  auto input = cast<RankedTensorType>(dequantize.getInput().getType());
  auto block = dyn_cast<BlockQuantizedType>(input.getElementType());
  int64_t bytes = input.getDimSize(1) * input.getDimSize(2) *
                  (block ? block.getBlockBytes() : 1);
  if (!block || bytes % 4)
    return llvm::formatv("one position of {0} is {1} bytes, no whole number "
                         "of 32-bit words",
                         what, bytes)
        .str();
  return "";
}

/// Emits `cachet.dequant_transpose` of the first `size` positions of
/// `dequantize`'s cache into those of the head-major `init`; returns `init`
/// with them written (the other positions are not read).
static Value emitBoundedDequantTranspose(OpBuilder &b, Location loc,
                                         DequantizeOp dequantize,
                                         OpFoldResult size, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)), size,
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  Value into =
      tensor::ExtractSliceOp::create(b, loc, init, offsets, sizes, strides);
  Value written =
      emitDequantTranspose(b, loc, dequantize, b.getIndexAttr(0), size, into);
  return tensor::InsertSliceOp::create(b, loc, written, init, offsets, sizes,
                                       strides);
}

/// Returns a `tensor.empty` of `shape` f32 filled with `value`.
static Value createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          double value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value cst = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  return linalg::FillOp::create(b, loc, cst, empty).getResult(0);
}

/// Emits `out * (1 / sum)` converted to `resultType`: the attention
/// kernels' own epilogue, so that chunks give the bytes of one pass.
static Value emitNormalize(OpBuilder &b, Location loc, Value out, Value sum,
                           RankedTensorType resultType) {
  MLIRContext *context = b.getContext();
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, context);
  AffineMap rows = AffineMap::get(
      3, 0, {getAffineDimExpr(0, context), getAffineDimExpr(1, context)},
      context);
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  Type elem = resultType.getElementType();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{out, sum},
             ValueRange{init}, SmallVector<AffineMap>{id3, rows, id3},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [elem](OpBuilder &nb, Location nl, ValueRange args) {
               Value one =
                   arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1));
               Value inverse = arith::DivFOp::create(nb, nl, one, args[1]);
               Value r = arith::MulFOp::create(nb, nl, args[0], inverse);
               if (!elem.isF32())
                 r = arith::TruncFOp::create(nb, nl, elem, r);
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// Rewrites `c` to read the head-major scratch; returns the new result.
static Value rewriteCandidate(OpBuilder &b, const Candidate &c, Value scratch,
                              bool unroll) {
  AttentionOp op = c.op;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  const KVAttentionShape &s = c.shape;
  auto headMajor = KVLayoutAttr::get(b.getContext(), KVLayout::HeadMajor);
  // K and V views of `size` positions in the scratch.
  auto views = [&](int64_t size) -> std::pair<Value, Value> {
    return {getScratchView(b, loc, scratch, 0, {s.kvHeads, size, s.headDim}),
            getScratchView(b, loc, scratch, s.kvHeads * size * s.headDim,
                           {s.kvHeads, size, s.valueDim})};
  };

  if (c.chunk == s.positions) {
    auto [kInit, vInit] = views(s.positions);
    Value key, value;
    if (c.bounded) {
      // Only the positions the kernel reads.
      OpFoldResult read = getReadPositions(b, op, s.queries, s.positions);
      key = emitBoundedDequantTranspose(b, loc, c.key, read, kInit);
      value = emitBoundedDequantTranspose(b, loc, c.value, read, vInit);
    } else {
      key = emitDequantTranspose(b, loc, c.key, {}, {}, kInit);
      value = emitDequantTranspose(b, loc, c.value, {}, {}, vInit);
    }
    auto rewritten = AttentionOp::create(
        b, loc, op.getType(), op.getQuery(), key, value, op.getMask(),
        op.getCausalPosition(), headMajor, op.getScaleAttr(),
        op.getCausalOffsetAttr(), op.getAccumulatorAttr());
    copyKernelConfigs(op, rewritten);
    return rewritten.getResult();
  }

  // One chunk of `size` positions from `start`: K and V dequantized into
  // `kInit` and `vInit`, then the online softmax carried on from `state`
  // (accumulator, max, sum) over the chunk's keys. Returns K, V and the
  // new state.
  auto resultType = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> rowShape = {s.queryHeads, s.queries};
  auto step = [&](OpBuilder &sb, OpFoldResult start, int64_t size, Value kInit,
                  Value vInit, ValueRange state) -> SmallVector<Value> {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(sb.getInsertionBlock(), sb.getInsertionPoint());
    Value key =
        emitDequantTranspose(b, loc, c.key, start, b.getIndexAttr(size), kInit);
    Value value = emitDequantTranspose(b, loc, c.value, start,
                                       b.getIndexAttr(size), vInit);
    Value offset = getValueOrCreateConstantIndexOp(b, loc, start);
    auto partial = AttentionPartialOp::create(
        b, loc, state[0].getType(), state[1].getType(), state[2].getType(),
        op.getQuery(), key, value, offset, state[0], state[1], state[2],
        op.getCausalPosition(), headMajor, op.getScaleAttr(),
        op.getCausalOffsetAttr(), op.getAccumulatorAttr());
    copyKernelConfigs(op, partial);
    SmallVector<Value> next = {key, value};
    next.append(partial.getResults().begin(), partial.getResults().end());
    return next;
  };
  SmallVector<Value> state = {
      createFilled(b, loc, {s.queryHeads, s.queries, s.valueDim}, 0.0),
      createFilled(b, loc, rowShape, -std::numeric_limits<double>::infinity()),
      createFilled(b, loc, rowShape, 0.0)};
  int64_t full = s.positions / c.chunk;
  int64_t rest = s.positions % c.chunk;
  // The loop carries the chunk's K and V views of the scratch, so that
  // every chunk writes them in place (bufferization copies a tensor defined
  // outside a loop and written inside it).
  if (unroll) {
    // One chunk after the other, at static offsets.
    for (int64_t i = 0; i < full; ++i) {
      auto [kChunk, vChunk] = views(c.chunk);
      SmallVector<Value> next =
          step(b, b.getIndexAttr(i * c.chunk), c.chunk, kChunk, vChunk, state);
      state.assign(next.begin() + 2, next.end());
    }
  } else {
    auto [kView, vView] = views(c.chunk);
    SmallVector<Value> iterArgs = {kView, vView};
    iterArgs.append(state);
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, full * c.chunk);
    Value stepSize = arith::ConstantIndexOp::create(b, loc, c.chunk);
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, stepSize, iterArgs,
        [&](OpBuilder &lbld, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(
              lbld, loc,
              step(lbld, iv, c.chunk, args[0], args[1], args.drop_front(2)));
        });
    state.assign(loop.getResults().begin() + 2, loop.getResults().end());
  }
  if (rest > 0) {
    auto [kRest, vRest] = views(rest);
    SmallVector<Value> next =
        step(b, b.getIndexAttr(full * c.chunk), rest, kRest, vRest, state);
    state.assign(next.begin() + 2, next.end());
  }
  return emitNormalize(b, loc, state[0], state[2], resultType);
}

namespace {
/// Decides, for every cachet.attention over a token-major quantized KV
/// cache, whether dequantizing K/V once into a head-major f16 scratch pays,
/// and rewrites the ones where it does.
struct DequantOnceKVPass final
    : public cachet::impl::DequantOnceKVBase<DequantOnceKVPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    FailureOr<AttentionConfigOptions> options =
        parseSelectAttentionOptions(selectOptions, error);
    if (failed(options)) {
      getOperation().emitError("cachet-dequant-once-kv: bad select-options: ")
          << error;
      return signalPassFailure();
    }
    attentionOptions = *options;
    DeviceProfileAttr profile = lookupDeviceProfile(getOperation());
    getOperation()->walk(
        [&](func::FuncOp func) { runOnFunction(func, profile); });
  }

  /// cachet-select-kernel-configs' attention options (select-options).
  AttentionConfigOptions attentionOptions;

  /// Returns the candidate for `op`, or std::nullopt after a remark saying
  /// why `op` is left as it is.
  std::optional<Candidate> decide(AttentionOp op, DeviceProfileAttr profile);

  /// Decides every attention of `func` and rewrites the candidates around
  /// one scratch sized for the largest.
  void runOnFunction(func::FuncOp func, DeviceProfileAttr profile);
};
} // namespace

std::optional<Candidate> DequantOnceKVPass::decide(AttentionOp op,
                                                   DeviceProfileAttr profile) {
  auto skip = [&](const Twine &why) -> std::optional<Candidate> {
    emitRemark(op.getLoc(), "cachet-dequant-once-kv: not rewritten: ") << why;
    return std::nullopt;
  };
  if (op.getKvLayout() != KVLayout::TokenMajor)
    return skip("K/V are already read head-major");
  std::string reason;
  Candidate c;
  c.op = op;
  c.key = getTokenMajorDequantize(op.getKey(), "K", reason);
  if (!c.key)
    return skip(reason);
  c.value = getTokenMajorDequantize(op.getValue(), "V", reason);
  if (!c.value)
    return skip(reason);
  if (getElementTypeOrSelf(c.value.getResult().getType()) != c.elementType())
    return skip("K and V are dequantized to different element types");
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  if (!query.hasStaticShape())
    return skip("the query has a dynamic shape");
  if (!profile)
    return skip("no device profile (cachet.device); run "
                "cachet-attach-device first");

  auto key = cast<RankedTensorType>(c.key.getResult().getType());
  auto value = cast<RankedTensorType>(c.value.getResult().getType());
  KVAttentionShape &s = c.shape;
  s.queryHeads = query.getDimSize(0);
  s.queries = query.getDimSize(1);
  s.positions = key.getDimSize(0);
  s.kvHeads = key.getDimSize(1);
  s.headDim = key.getDimSize(2);
  s.valueDim = value.getDimSize(2);
  s.quantizedBytes = getQuantizedBytes(c.key) + getQuantizedBytes(c.value);
  DequantOnceEstimate e = estimateDequantOnce(profile, s, dequantCost);

  std::string numbers = llvm::formatv(
      "queries per KV head {0} (G={1} x Sq={2}), tile {3} -> {4} passes; "
      "in-kernel dequant {5:f2} us vs dequant-once {6:f2} us (profile {7}: "
      "dram {8} GB/s, strided-read penalty {9}, coop matrix {10}, dequant "
      "cost {11})",
      e.queriesPerKVHead, s.queryHeads / s.kvHeads, s.queries, e.tile, e.passes,
      e.inKernelMicros, e.onceMicros, profile.getName(),
      profile.getDramGbps().convertToDouble(), e.penalty,
      e.coopMatrix ? "yes" : "no", e.dequantCost);
  if (!force && e.queriesPerKVHead < minQueries)
    return skip(llvm::formatv("decode-shaped: {0} < min-queries {1}; {2}",
                              e.queriesPerKVHead, minQueries, numbers));
  if (!force && !e.pays())
    return skip("in-kernel dequant is cheaper: " + numbers);

  c.chunk = s.positions;
  int64_t bytesPerPosition = 2 * s.kvHeads * (s.headDim + s.valueDim);
  if (maxScratchBytes > 0 &&
      static_cast<uint64_t>(e.f16Bytes) > maxScratchBytes) {
    // Whole key tiles per chunk of the kernel the attention gets (a config
    // in the IR, or cachet-select-kernel-configs' choice), so that the
    // chunks' kernels walk the tiles of one pass. No kernel: the reference
    // lowering's softmax over all positions at once, which chunks merged
    // online cannot reproduce bit for bit.
    auto config = op->getAttrOfType<KernelConfigAttr>(
        CachetDialect::getKernelConfigAttrName());
    if (!config) {
      AttentionDecision d =
          selectAttentionConfig(op, profile, attentionOptions);
      if (!d.config)
        return skip("max-scratch-bytes would chunk it, and the attention "
                    "gets no kernel (cachet-select-kernel-configs: " +
                    d.remark +
                    "): the reference lowering's softmax over all positions "
                    "is not what chunks merged online give");
      config = d.config;
    }
    int64_t keyTile = !config.isDecode() && config.getTile().size() > 1
                          ? config.getTile()[1]
                          : 0;
    int64_t align = keyTile > 0 ? std::lcm(kChunkAlign, keyTile) : kChunkAlign;
    c.chunk = static_cast<int64_t>(maxScratchBytes) / bytesPerPosition / align *
              align;
    if (c.chunk == 0)
      return skip(llvm::formatv("max-scratch-bytes {0} is below {1} "
                                "positions' f16 K+V ({2} bytes; chunks are "
                                "multiples of {1} positions: whole key tiles "
                                "of the attention kernels)",
                                maxScratchBytes, align,
                                align * bytesPerPosition));
    if (op.getMask())
      return skip("chunking an attention with an additive mask is not "
                  "supported");
  }
  std::string bound;
  if (c.chunk == s.positions) {
    int64_t past = s.queries + kMaxKeyTile;
    if (std::optional<int64_t> offset = op.getCausalOffset()) {
      int64_t n = getStaticReadPositions(*offset, s.queries);
      c.bounded = n < s.positions;
      if (c.bounded)
        bound = llvm::formatv("; K/V dequantized at positions 0..{0} only "
                              "(causal {1} + {2} queries + {3}, in groups "
                              "of 64: the attention reads no further)",
                              n - 1, *offset, s.queries, kMaxKeyTile)
                    .str();
    } else if (op.getCausalPosition() && s.positions > past) {
      std::string why = whyNotRunTimeBound(c.key, "K");
      if (why.empty())
        why = whyNotRunTimeBound(c.value, "V");
      c.bounded = why.empty();
      bound = c.bounded
                  ? llvm::formatv("; K/V dequantized at positions below "
                                  "min({0}, N + {1} + {2} rounded up to 64) "
                                  "only, N the run-time causal position (the "
                                  "attention reads no further)",
                                  s.positions, s.queries, kMaxKeyTile)
                        .str()
                  : "; every position dequantized, though the run-time "
                    "causal position may leave most unread: " +
                        why;
    }
  }
  int64_t scratchBytes = c.chunk * bytesPerPosition;
  std::string chunks =
      c.chunk == s.positions
          ? std::string()
          : llvm::formatv(", {0} KV chunks of {1} positions (max-scratch-bytes "
                          "{2}), merged with online softmax",
                          (s.positions + c.chunk - 1) / c.chunk, c.chunk,
                          maxScratchBytes)
                .str();
  emitRemark(op.getLoc(), "cachet-dequant-once-kv: rewritten")
      << (force ? " (forced)" : "") << ": " << numbers << "; scratch "
      << scratchBytes << " bytes, "
      << llvm::formatv("{0:f2}", static_cast<double>(scratchBytes) /
                                     static_cast<double>(s.quantizedBytes))
      << "x the " << s.quantizedBytes << "-byte quantized K+V" << chunks
      << bound;
  return c;
}

void DequantOnceKVPass::runOnFunction(func::FuncOp func,
                                      DeviceProfileAttr profile) {
  SmallVector<Candidate> candidates;
  func.walk([&](AttentionOp op) {
    if (std::optional<Candidate> c = decide(op, profile))
      candidates.push_back(*c);
  });
  if (candidates.empty() || func.isExternal())
    return;

  // One scratch per element type of the dequantized K/V (f16 or bf16: the
  // scratch holds exactly the values cachet.dequantize gives), sized for
  // the largest candidate of that type.
  llvm::MapVector<Type, int64_t> elements;
  for (const Candidate &c : candidates) {
    int64_t &n = elements[c.elementType()];
    n = std::max(n, c.scratchElements());
  }
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&func.getBody().front());
  DenseMap<Type, Value> scratches;
  for (auto [type, count] : elements) {
    auto scratch = bufferization::AllocTensorOp::create(
        b, func.getLoc(), RankedTensorType::get({count}, type), ValueRange{});
    scratch->setAttr(kScratchAttrName, b.getUnitAttr());
    scratches[type] = scratch;
  }

  IRRewriter rewriter(func.getContext());
  for (const Candidate &c : candidates) {
    Value result =
        rewriteCandidate(b, c, scratches.lookup(c.elementType()), unrollChunks);
    rewriter.replaceOp(c.op, result);
    if (c.key->use_empty())
      rewriter.eraseOp(c.key);
    if (c.value != c.key && c.value->use_empty())
      rewriter.eraseOp(c.value);
  }
}
