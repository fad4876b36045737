//===- RaiseAttention.cpp - linalg attention to cachet.attention ----------===//
//
// Replaces the linalg attention chain over a block-quantized KV cache (see
// cachet/Analysis/AttentionMatch.h) by `cachet.dequantize` of the token-major
// cache feeding `cachet.attention ... layout <token_major>`.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/AttentionMatch.h"
#include "cachet/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/Support/FormatVariadic.h"

namespace cachet {
#define GEN_PASS_DEF_RAISEATTENTION
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

/// Describes the quantized source of one KV operand for a remark.
static std::string describeSource(const QuantizedKVSource &source) {
  if (source.scales)
    return "split q8_0";
  Type elem = getElementTypeOrSelf(source.values.getType());
  if (auto block = dyn_cast<BlockQuantizedType>(elem))
    return block.getFormatName().str();
  return "quantized";
}

/// Prints dimension `i` of `type` for a remark, `?` when dynamic.
static std::string dim(RankedTensorType type, unsigned i) {
  return type.isDynamicDim(i) ? "?" : std::to_string(type.getDimSize(i));
}

/// Returns `source` dequantized as a `cachet.dequantize`, creating one at the
/// builder's insertion point when the source is a linalg generic.
static Value getOrCreateDequantize(RewriterBase &rewriter, Location loc,
                                   const QuantizedKVSource &source) {
  if (isa<DequantizeOp>(source.dequantOp))
    return source.dequantized;
  return DequantizeOp::create(rewriter, loc, source.dequantized.getType(),
                              source.values, source.scales);
}

/// Erases the operations of `ops`, and the producers they leave dead, that
/// have no uses and no side effects; adds them to `erased`.
static void eraseDeadOps(RewriterBase &rewriter, ArrayRef<Operation *> ops,
                         llvm::SmallPtrSetImpl<Operation *> &erased) {
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  for (size_t i = 0; i < worklist.size(); ++i) {
    Operation *op = worklist[i];
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value operand : llvm::concat<Value>(op->getOperands(), captured))
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}

/// Replaces the matched chain by cachet.dequantize + cachet.attention; adds
/// the operations it erases to `erased`.
static AttentionOp raise(RewriterBase &rewriter, AttentionMatch &match,
                         llvm::SmallPtrSetImpl<Operation *> &erased) {
  Operation *last = match.result.getDefiningOp();
  Location loc = match.softmax.getLoc();
  rewriter.setInsertionPoint(last);
  Value key = getOrCreateDequantize(rewriter, loc, match.key);
  Value value = getOrCreateDequantize(rewriter, loc, match.value);
  MLIRContext *context = rewriter.getContext();
  auto attention = AttentionOp::create(
      rewriter, loc, match.result.getType(), match.query, key, value,
      /*mask=*/Value(), match.causalPosition,
      KVLayoutAttr::get(context, KVLayout::TokenMajor),
      rewriter.getF32FloatAttr(static_cast<float>(match.scale)),
      match.causalOffset ? rewriter.getI64IntegerAttr(*match.causalOffset)
                         : IntegerAttr(),
      match.accumulator.isF32() ? TypeAttr()
                                : TypeAttr::get(match.accumulator));
  rewriter.replaceAllUsesWith(match.result, attention.getResult());
  eraseDeadOps(rewriter, match.ops, erased);
  return attention;
}

namespace {
/// Raises every recognized linalg attention chain to cachet.attention and
/// explains every decision with a remark.
struct RaiseAttentionPass final
    : public cachet::impl::RaiseAttentionBase<RaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([](AttentionOp op) {
      emitRemark(op.getLoc(),
                 "cachet-raise-attention: already cachet.attention, "
                 "nothing to raise");
    });
    SmallVector<linalg::SoftmaxOp> softmaxes;
    getOperation()->walk(
        [&](linalg::SoftmaxOp op) { softmaxes.push_back(op); });
    IRRewriter rewriter(&getContext());
    llvm::SmallPtrSet<Operation *, 32> erased;
    for (linalg::SoftmaxOp softmax : softmaxes) {
      // A chain raised before may have taken this softmax with it.
      if (erased.contains(softmax))
        continue;
      std::string reason;
      std::optional<AttentionMatch> match = matchAttention(softmax, reason);
      if (!match) {
        emitRemark(softmax.getLoc(), "cachet-raise-attention: not raised: ")
            << reason;
        continue;
      }
      auto query = cast<RankedTensorType>(match->query.getType());
      auto key = cast<RankedTensorType>(match->key.dequantized.getType());
      auto value = cast<RankedTensorType>(match->value.dequantized.getType());
      std::string causal =
          match->causalPosition ? std::string("causal offset known at run time")
          : match->causalOffset
              ? llvm::formatv("causal offset {0}", *match->causalOffset).str()
              : std::string("no mask");
      std::string accumulator;
      llvm::raw_string_ostream(accumulator) << match->accumulator;
      std::string keyFormat = describeSource(match->key);
      std::string valueFormat = describeSource(match->value);
      AttentionOp attention = raise(rewriter, *match, erased);
      auto diag =
          emitRemark(attention.getLoc(), "cachet-raise-attention: raised to "
                                         "cachet.attention: ");
      diag << "Hq=" << dim(query, 0) << ", Hkv=" << dim(key, 1) << " (GQA "
           << match->groupSize << "), Sq=" << dim(query, 1)
           << ", S=" << dim(key, 0) << ", D=" << dim(key, 2)
           << ", Dv=" << dim(value, 2) << ", K " << keyFormat << ", V "
           << valueFormat << ", " << causal << ", " << accumulator
           << " accumulation";
    }
  }
};
} // namespace
