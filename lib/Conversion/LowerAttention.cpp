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
// This file chooses the kernel; Attention/ builds it (AttentionKernels.h).
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionKernels.h"

#include "cachet/Conversion/Attention.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>

namespace cachet {
#define GEN_PASS_DEF_LOWERATTENTION
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

namespace {

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
    // A walk, not the greedy driver, which would also erase the kernels'
    // dead ops and lower the attentions in another order.
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      (void)lower(rewriter, op, profile);
  }

  /// Chooses the kernel of `op` from the options and `profile`; returns
  /// failure, after a remark, when the reference lowering keeps it.
  FailureOr<KernelConfig> choose(AttentionOp op, const AttentionShape &s,
                                 DeviceProfileAttr profile);

  /// Replaces `op` by the kernel choose() picks for it; fails, after a
  /// remark, where the reference lowering keeps it (and nothing changed).
  LogicalResult lower(RewriterBase &rewriter, AttentionOp op,
                      DeviceProfileAttr profile);
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

LogicalResult LowerAttentionPass::lower(RewriterBase &rewriter, AttentionOp op,
                                        DeviceProfileAttr profile) {
  std::string reason;
  FailureOr<AttentionShape> shape = getShape(op, reason);
  if (failed(shape)) {
    op.emitRemark("cachet-lower-attention: reference lowering kept: ")
        << reason;
    return failure();
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
    return failure();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
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
  KernelBuilder(b, loc, *shape, *config)
      .build(query, key, value, mask, out, op.getScale().convertToDouble(),
             op.getCausalOffset());
  Value result = bufferization::ToTensorOp::create(b, loc, resultType, out,
                                                   /*restrict=*/true,
                                                   /*writable=*/true);
  rewriter.replaceOp(op, result);
  // K and V of one cachet.dequantize: erase it once.
  if (valueDequant == keyDequant)
    valueDequant = {};
  for (DequantizeOp dequant : {keyDequant, valueDequant})
    if (dequant && dequant->use_empty())
      rewriter.eraseOp(dequant);
  return success();
}

/// cachet.attention to the kernel cachet-lower-attention builds with its
/// default options.
struct LowerAttentionPattern final : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // The pass's choice with its default options, until the configuration
    // comes from an attribute of the op.
    LowerAttentionPass pass;
    return pass.lower(rewriter, op, lookupDeviceProfile(op));
  }
};

} // namespace

void cachet::populateLowerAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerAttentionPattern>(patterns.getContext());
}
