//===- LowerAttention.cpp - flash-attention kernels for cachet.attention --===//
//
// Replaces cachet.attention on tensors by a flash-attention kernel, a
// gpu.launch over buffers: one workgroup per (query tile, query head), the
// KV range walked in key tiles staged through workgroup memory with an
// online softmax. The scalar kernel (every target) walks it once, a thread
// per query row; the mma kernel walks it once with
// gpu.subgroup_mma products and register accumulators. The variant and its
// tiles are the op's #cachet.kernel_config (cachet-select-kernel-configs);
// this file checks it and Attention/ builds it (AttentionKernels.h). See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionKernels.h"

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Conversion/Attention.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// The builder's form of `config` for the attention `s` on `profile`.
KernelConfig getKernelConfig(KernelConfigAttr config, const AttentionShape &s,
                             DeviceProfileAttr profile) {
  KernelConfig c;
  switch (config.getVariant()) {
  case KernelVariant::AttentionMmaSync:
    c.variant = Variant::MmaSync;
    break;
  case KernelVariant::AttentionMma:
    c.variant = Variant::Mma;
    break;
  case KernelVariant::AttentionWgmma:
    c.variant = Variant::Wgmma;
    break;
  case KernelVariant::AttentionDecode:
    c.variant = Variant::Decode;
    break;
  case KernelVariant::AttentionDecodeMmaSync:
    c.variant = Variant::DecodeMmaSync;
    break;
  case KernelVariant::AttentionTiled:
    c.variant = Variant::Tiled;
    break;
  default:
    c.variant = Variant::Scalar;
    break;
  }
  ArrayRef<int64_t> tile = config.getTile();
  c.queryTile = tile[0];
  c.keyTile = tile[1];
  c.step = tile.size() > 2 ? tile[2] : 0;
  c.subgroup = config.getSubgroup();
  if (c.subgroup == 0)
    c.subgroup = profile && profile.getSubgroupSize() > 0
                     ? int64_t(profile.getSubgroupSize())
                     : 32;
  c.rowBlocks = config.getRowBlocks();
  c.threads = config.getWorkgroup();
  if (c.threads == 0)
    c.threads = c.variant == Variant::Scalar ? c.queryTile
                : c.variant == Variant::Decode
                    ? c.keyTile
                    : c.queryTile / (16 * c.rowBlocks) * c.subgroup;
  c.split = config.getSplit();
  c.stagedRows = c.variant == Variant::Decode && config.getStages() == 2;
  c.pipelined = c.variant == Variant::DecodeMmaSync && config.getStages() == 2;
  c.loadBytes = getDecodeLoadBytes(s, config);
  c.maxLoadBytes = config.getLoadBytes() ? config.getLoadBytes() : 16;
  c.vectorWidth = config.getVectorWidth();
  c.padBytes = config.getPadBytes();
  c.dynamicShared = config.getDynamicShared();
  c.warpSync = config.getWarpSync();
  c.staging = getKVStaging(s, config.getStages());
  c.kvBuffers = config.getStages() == 3 ? 3 : 2;
  c.lazyRescale = config.getLazyRescale();
  c.minWorkgroupsPerSM = config.getMinWorkgroupsPerSm();
  if (c.variant == Variant::DecodeMmaSync)
    c.unroll = c.keyTile / (16 * (c.threads / 32));
  if (c.variant == Variant::Decode && c.vectorWidth > 1) {
    c.rowLanes = s.headDim / c.vectorWidth;
    c.unroll = c.keyTile * c.rowLanes / c.threads;
  }
  return c;
}

/// A memref of `tensor`'s type with any strides but a unit innermost one
/// (the kernels' vector loads).
MemRefType getKernelBufferType(RankedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides));
}

/// Replaces the chunk `op` by the kernel of `config`: the kernel reads the
/// state `op` continues and writes the new state into the same buffers,
/// which become the results (bufferization keeps them in place).
void buildAttentionPartial(RewriterBase &rewriter, AttentionPartialOp op,
                           KernelConfigAttr config, DeviceProfileAttr profile) {
  std::string reason;
  AttentionShape shape = *getAttentionShape(op, reason);
  KernelConfig c = getKernelConfig(config, shape, profile);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  auto toBuffer = [&](Value tensor, bool readOnly) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    // The state: plain buffers, which bufferization allocates as they are
    // where it copies them.
    MemRefType memref =
        readOnly ? getKernelBufferType(type)
                 : MemRefType::get(type.getShape(), type.getElementType());
    return bufferization::ToBufferOp::create(b, loc, memref, tensor, readOnly);
  };
  ChunkState state;
  state.keyOffset = op.getKeyOffset();
  state.acc = toBuffer(op.getAcc(), /*readOnly=*/false);
  state.max = toBuffer(op.getMaxIn(), /*readOnly=*/false);
  state.sum = toBuffer(op.getSumIn(), /*readOnly=*/false);
  KernelBuilder(b, loc, shape, c)
      .build(toBuffer(op.getQuery(), true), toBuffer(op.getKey(), true),
             toBuffer(op.getValue(), true), /*mask=*/Value(), /*out=*/Value(),
             op.getScale().convertToDouble(),
             Causal(op.getCausalOffset(), op.getCausalPosition()), &state);
  SmallVector<Value> buffers = {state.acc, state.max, state.sum};
  SmallVector<Value> results;
  for (auto [buffer, result] : llvm::zip_equal(buffers, op.getResults()))
    results.push_back(
        bufferization::ToTensorOp::create(b, loc, result.getType(), buffer,
                                          /*restrict=*/true,
                                          /*writable=*/true));
  rewriter.replaceOp(op, results);
}

/// Builds the kernel of `config` (which whyNotAttentionConfig accepted on
/// `profile`) for `op` at the insertion point of `b`, writing its result
/// into the buffer `out`. The cachet.dequantize ops the kernel reads in
/// place of K or V (packed or split caches decoded in the kernel) are added
/// to `dequants`.
void buildAttentionKernel(OpBuilder &b, AttentionOp op, KernelConfigAttr config,
                          DeviceProfileAttr profile, Value out,
                          SmallVectorImpl<DequantizeOp> &dequants) {
  std::string reason;
  AttentionShape shape = *getAttentionShape(op, reason);
  KernelConfig c = getKernelConfig(config, shape, profile);
  // K or V that is cachet.dequantize of a token-major packed cache passed
  // as a function argument is decoded inside the kernel (the in-kernel
  // dequantization that dequant-once is measured against).
  DequantizeOp keyDequant = getPackedDequantize(op.getKey(), shape.tokenMajor);
  DequantizeOp valueDequant =
      getPackedDequantize(op.getValue(), shape.tokenMajor);
  // Split q8_0 K or V: the decode kernels read its values and scales; the
  // others read it dequantized (the cachet.dequantize stays).
  bool readsSplit = readsSplitKV(config.getVariant(), config.getStages());
  DequantizeOp keySplit =
      readsSplit ? getSplitDequantize(op.getKey(), shape.tokenMajor) : nullptr;
  DequantizeOp valueSplit =
      readsSplit ? getSplitDequantize(op.getValue(), shape.tokenMajor)
                 : nullptr;
  shape.keySplit = bool(keySplit);
  shape.valueSplit = bool(valueSplit);

  Location loc = op.getLoc();
  auto toBuffer = [&](Value tensor) -> Value {
    if (!tensor)
      return {};
    return bufferization::ToBufferOp::create(
        b, loc, getKernelBufferType(cast<RankedTensorType>(tensor.getType())),
        tensor, /*read_only=*/true);
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
  Value key = toBuffer(keyDequant ? bytesOf(keyDequant)
                       : keySplit ? keySplit.getInput()
                                  : op.getKey());
  Value value = toBuffer(valueDequant ? bytesOf(valueDequant)
                         : valueSplit ? valueSplit.getInput()
                                      : op.getValue());
  Value mask = toBuffer(op.getMask());
  KernelBuilder builder(b, loc, shape, c);
  if (keySplit)
    builder.withSplitScales(key, toBuffer(keySplit.getScales()));
  if (valueSplit)
    builder.withSplitScales(value, toBuffer(valueSplit.getScales()));
  builder.build(query, key, value, mask, out, op.getScale().convertToDouble(),
                Causal(op.getCausalOffset(), op.getCausalPosition()));
  for (DequantizeOp dequant : {keyDequant, valueDequant, keySplit, valueSplit})
    if (dequant && !llvm::is_contained(dequants, dequant))
      dequants.push_back(dequant);
}

/// Replaces `op` by the kernel of `config`; with a `fallback` config, by
/// both kernels in an scf.if on whether the device runs 16x16x16 f16
/// cooperative matrices (`config`'s mma kernel where it does), each writing
/// the same result buffer, allocated before it.
void buildAttention(RewriterBase &rewriter, AttentionOp op,
                    KernelConfigAttr config, KernelConfigAttr fallback,
                    DeviceProfileAttr profile) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getType());
  Value out = memref::AllocOp::create(
      rewriter, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()));
  SmallVector<DequantizeOp> dequants;
  if (!fallback) {
    buildAttentionKernel(rewriter, op, config, profile, out, dequants);
  } else {
    declareCooperativeMatrixCheck(op->getParentOfType<ModuleOp>());
    Value has = buildCooperativeMatrixCheck(rewriter, op);
    auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange(), has,
                                  /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    buildAttentionKernel(rewriter, op, config, profile, out, dequants);
    rewriter.setInsertionPointToStart(ifOp.elseBlock());
    buildAttentionKernel(rewriter, op, fallback, profile, out, dequants);
    rewriter.setInsertionPointAfter(ifOp);
  }
  Value result = bufferization::ToTensorOp::create(rewriter, loc, resultType,
                                                   out, /*restrict=*/true,
                                                   /*writable=*/true);
  rewriter.replaceOp(op, result);
  // K and V of one cachet.dequantize: erased once, when nothing reads it.
  for (DequantizeOp dequant : dequants)
    if (dequant->use_empty())
      rewriter.eraseOp(dequant);
}

/// Replaces `op`, a cachet.attention or cachet.attention_partial, by the
/// kernel of `config`.
void buildKernel(RewriterBase &rewriter, Operation *op, KernelConfigAttr config,
                 DeviceProfileAttr profile) {
  if (auto partial = dyn_cast<AttentionPartialOp>(op))
    buildAttentionPartial(rewriter, partial, config, profile);
  else
    buildAttention(rewriter, cast<AttentionOp>(op), config,
                   op->getAttrOfType<KernelConfigAttr>(
                       CachetDialect::getFallbackKernelConfigAttrName()),
                   profile);
}

/// Returns the config of `op` and whether it and its fallback, if any, can
/// be built ("" when they can); a null config when the op has none.
std::pair<KernelConfigAttr, std::string> getConfig(Operation *op,
                                                   DeviceProfileAttr profile) {
  auto config = op->getAttrOfType<KernelConfigAttr>(
      CachetDialect::getKernelConfigAttrName());
  if (!config)
    return {};
  std::string why = whyNotAttentionConfig(op, config, profile);
  auto fallback = op->getAttrOfType<KernelConfigAttr>(
      CachetDialect::getFallbackKernelConfigAttrName());
  if (why.empty() && fallback) {
    why = whyNotAttentionConfig(op, fallback, profile);
    if (!why.empty()) {
      std::string text;
      llvm::raw_string_ostream(text) << fallback;
      why = "its fallback " + text + ": " + why;
    }
  }
  return {config, why};
}

struct LowerAttentionPass final
    : public cachet::impl::LowerAttentionBase<LowerAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    DeviceProfileAttr profile = lookupDeviceProfile(getOperation());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionPartialOp>(op))
        ops.push_back(op);
    });
    // A walk, not the greedy driver, which would also erase the kernels'
    // dead ops and lower the attentions in another order.
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      auto [config, why] = getConfig(op, profile);
      if (!config)
        continue;
      if (!why.empty()) {
        op->emitError("cachet-lower-attention: cannot build ")
            << config << ": " << why;
        return signalPassFailure();
      }
      buildKernel(rewriter, op, config, profile);
    }
  }
};

/// cachet.attention or cachet.attention_partial (`OpTy`) to the kernel of
/// its #cachet.kernel_config.
template <typename OpTy>
struct LowerAttentionPattern final : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    DeviceProfileAttr profile = lookupDeviceProfile(op);
    auto [config, why] = getConfig(op, profile);
    if (!config)
      return rewriter.notifyMatchFailure(op, "no #cachet.kernel_config");
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    buildKernel(rewriter, op, config, profile);
    return success();
  }
};

} // namespace

void cachet::populateLowerAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerAttentionPattern<AttentionOp>,
               LowerAttentionPattern<AttentionPartialOp>>(
      patterns.getContext());
}
