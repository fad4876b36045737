//===- AttentionMatch.cpp - recognize linalg attention over a quantized KV ===//

#include "cachet/Analysis/AttentionMatch.h"
#include "cachet/Analysis/QuantizeMatch.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cachet;

namespace {
/// A failed match: converts to failure() or std::nullopt.
struct MatchFailure {
  operator LogicalResult() const { return failure(); }
  template <typename T> operator FailureOr<T>() const { return failure(); }
  template <typename T> operator std::optional<T>() const {
    return std::nullopt;
  }
};

/// Records the condition that failed in a match.
class Matcher {
public:
  explicit Matcher(std::string &reason) : reason(reason) {}

  /// Records `message` as the failed condition.
  MatchFailure fail(const Twine &message) {
    reason = message.str();
    return {};
  }

private:
  std::string &reason;
};
} // namespace

/// Prints `type` for a message.
static std::string str(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// Returns true if `map` is the identity on `rank` dimensions.
static bool isIdentity(AffineMap map, unsigned rank) {
  return map.isIdentity() && map.getNumDims() == rank;
}

/// Returns true if every loop of `op` is parallel.
static bool allParallel(linalg::GenericOp op) {
  return llvm::all_of(op.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// Returns true if the init (outs) block arguments of `op` are unused, that
/// is the result does not depend on the initial contents of the outputs.
static bool initsUnused(linalg::GenericOp op) {
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingBlockArgument(&init).use_empty())
      return false;
  return true;
}

/// Returns the value `yield` of the single-result generic `op` yields.
static Value yieldedValue(linalg::GenericOp op) {
  return op.getBody()->getTerminator()->getOperand(0);
}

/// Returns true if `value` is `linalg.index dim`.
static bool isIndex(Value value, unsigned dim) {
  auto index = value.getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == dim;
}

/// Returns true if `value` is a constant float equal to -inf.
static bool isNegInf(Value value) {
  APFloat f(0.0);
  return matchPattern(value, m_ConstantFloat(&f)) && f.isInfinity() &&
         f.isNegative();
}

/// Matches a single-input elementwise conversion generic (`truncf`, `extf`,
/// or a plain copy) on identity maps. Returns its input.
static Value matchConversion(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !allParallel(op) || !initsUnused(op))
    return {};
  unsigned rank = op.getNumLoops();
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [&](AffineMap m) { return isIdentity(m, rank); }))
    return {};
  Value in = op.getBody()->getArgument(0);
  Value yielded = yieldedValue(op);
  if (yielded == in)
    return op.getDpsInputOperand(0)->get();
  Operation *def = yielded.getDefiningOp();
  if (!def || def->getBlock() != op.getBody() ||
      !isa<arith::TruncFOp, arith::ExtFOp>(def) || def->getOperand(0) != in)
    return {};
  return op.getDpsInputOperand(0)->get();
}

/// Matches `linalg.fill` of a constant zero; returns true on success.
static bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// Matches a batch matmul with the default maps into a zero fill.
static LogicalResult matchBatchMatmul(Matcher &m, Value value, StringRef what,
                                      linalg::BatchMatmulOp &matmul) {
  matmul = value.getDefiningOp<linalg::BatchMatmulOp>();
  if (!matmul)
    return m.fail(llvm::formatv("{0} is not a linalg.batch_matmul", what));
  if (matmul.hasUserDefinedMaps())
    return m.fail(llvm::formatv("{0} batch_matmul has non-default indexing "
                                "maps (transposed operand)",
                                what));
  if (!isZeroFill(matmul.getDpsInits()[0]))
    return m.fail(llvm::formatv("{0} batch_matmul does not accumulate into a "
                                "zero linalg.fill",
                                what));
  return success();
}

/// Matches a GQA broadcast generic: the input `[S][Hkv][D]` read at
/// `(out[sDim], out[hDim] floordiv G, out[dDim])` for every output index, or
/// for G = 1 the equivalent `linalg.transpose`.
/// Sets `group` and returns the input.
static FailureOr<Value> matchHeadBroadcast(Matcher &m, Value value,
                                           StringRef what, unsigned hDim,
                                           unsigned dDim, unsigned sDim,
                                           int64_t &group,
                                           SmallVectorImpl<Operation *> &ops) {
  // Without GQA (G = 1) the broadcast is a plain transpose.
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>()) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (perm.size() != 3 || perm[hDim] != 1 || perm[dDim] != 2 ||
        perm[sDim] != 0)
      return m.fail(llvm::formatv("{0} linalg.transpose does not map the "
                                  "token-major [s, h, d] to {1}",
                                  what, sDim == 2 ? "[h, d, s]" : "[h, s, d]"));
    group = 1;
    ops.push_back(transpose);
    return transpose.getInput();
  }
  auto op = value.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3)
    return m.fail(llvm::formatv("{0} is not a single-input 3-d "
                                "linalg.generic (GQA broadcast)",
                                what));
  if (!allParallel(op) || !initsUnused(op) ||
      yieldedValue(op) != op.getBody()->getArgument(0))
    return m.fail(llvm::formatv("{0} generic is not a pure copy (GQA "
                                "broadcast)",
                                what));
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[1].isPermutation())
    return m.fail(llvm::formatv("{0} generic output map is not a "
                                "permutation",
                                what));
  // The input map in terms of the output coordinates.
  AffineMap in = maps[0].compose(inversePermutation(maps[1]));
  if (in.getNumResults() != 3)
    return m.fail(llvm::formatv("{0} generic input is not 3-d", what));
  auto isDim = [](AffineExpr e, unsigned d) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return dim && dim.getPosition() == d;
  };
  if (!isDim(in.getResult(0), sDim) || !isDim(in.getResult(2), dDim))
    return m.fail(llvm::formatv("{0} broadcast is not a GQA head map: "
                                "expected {1}",
                                what,
                                sDim == 2 ? "kT[h, d, s] = k[s, h floordiv "
                                            "G, d]"
                                          : "vB[h, s, d] = v[s, h floordiv "
                                            "G, d]"));
  AffineExpr head = in.getResult(1);
  if (isDim(head, hDim)) {
    group = 1;
  } else {
    auto div = dyn_cast<AffineBinaryOpExpr>(head);
    auto rhs = div ? dyn_cast<AffineConstantExpr>(div.getRHS()) : nullptr;
    if (!div || div.getKind() != AffineExprKind::FloorDiv ||
        !isDim(div.getLHS(), hDim) || !rhs || rhs.getValue() < 1)
      return m.fail(llvm::formatv("{0} broadcast is not a GQA head map: KV "
                                  "head index must be h floordiv G",
                                  what));
    group = rhs.getValue();
  }
  auto inType = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  int64_t hq = outType.getDimSize(hDim), hkv = inType.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq != group * hkv)
    return m.fail(llvm::formatv("{0} broadcast reads KV head h floordiv {1} "
                                "but query heads ({2}) != {1} x KV heads "
                                "({3})",
                                what, group, hq, hkv));
  ops.push_back(op);
  return op.getDpsInputs()[0];
}

/// Matches the dequantization of one KV cache: a `cachet.dequantize` of a
/// rank-3 cache, or the split q8_0 generic `float(q) * scale[block of 32]`.
static LogicalResult matchKVDequantize(Matcher &m, Value value, StringRef what,
                                       QuantizedKVSource &source) {
  source.dequantized = value;
  if (auto dq = value.getDefiningOp<DequantizeOp>()) {
    if (cast<RankedTensorType>(dq.getInput().getType()).getRank() != 3)
      return m.fail(llvm::formatv("{0} cachet.dequantize input is not a "
                                  "token-major [pos][kv_head][dim] cache",
                                  what));
    if (cast<RankedTensorType>(dq.getInput().getType())
            .getElementType()
            .isSignlessInteger(4))
      return m.fail(what + " is a split q4_0 cache (i4 values): KV caches "
                           "take split q8_0 or packed blocks");
    if (auto block = dyn_cast<BlockQuantizedType>(
            cast<RankedTensorType>(dq.getInput().getType()).getElementType());
        block && block.getBlockValues() != 32)
      return m.fail(llvm::formatv("{0} is a {1} cache: KV caches take the "
                                  "32-value formats, not {2}-value "
                                  "super-blocks",
                                  what, block.getFormatName(),
                                  block.getBlockValues()));
    source.values = dq.getInput();
    source.scales = dq.getScales();
    source.dequantOp = dq;
    return success();
  }
  auto op = value.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || !allParallel(op) || !initsUnused(op))
    return m.fail(llvm::formatv("{0} is not dequantized from a "
                                "block-quantized cache (expected a 2-input "
                                "dequantize generic or cachet.dequantize)",
                                what));
  std::string reason;
  std::optional<DequantizeMatch> split = cachet::matchDequantize(op, reason);
  if (!split)
    return m.fail(what + " " + reason);
  if (split->nibbles)
    return m.fail(what + " is a split q4_0 cache (i4 values): KV caches "
                         "take split q8_0 or packed blocks");
  // Over blocks of 32 is the flat form where the head dimension is one
  // block and the scales are [pos][kv_head][1].
  if (split->inBlocks &&
      cast<RankedTensorType>(split->scales.getType()).getRank() != 3)
    return m.fail(what + " is dequantized in blocks of 32, not as a "
                         "token-major [pos][kv_head][dim] cache");
  source.values = split->values;
  source.scales = split->scales;
  source.dequantOp = op;
  return success();
}

/// Returns the predicate `p'` with `b p' a` equivalent to `a p b`.
static arith::CmpIPredicate swapOperands(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::ult:
    return P::ugt;
  case P::ule:
    return P::uge;
  case P::ugt:
    return P::ult;
  case P::uge:
    return P::ule;
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  default:
    return pred;
  }
}

/// Matches the score generic: `x * scale`, optionally masked with
/// `select(j <= i + N, x * scale, -inf)` (any equivalent comparison).
static LogicalResult matchScoreGeneric(Matcher &m, linalg::GenericOp op,
                                       AttentionMatch &match) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || !allParallel(op) || !initsUnused(op) ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return isIdentity(map, 3); }))
    return m.fail("score generic is not an element-wise map of the scores");
  Value x = op.getBody()->getArgument(0);
  auto matchScaled = [&](Value v) -> bool {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return false;
    Value other = mul.getLhs() == x   ? mul.getRhs()
                  : mul.getRhs() == x ? mul.getLhs()
                                      : Value();
    APFloat c(0.0);
    if (!other || !matchPattern(other, m_ConstantFloat(&c)))
      return false;
    bool lost;
    c.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    match.scale = c.convertToDouble();
    return true;
  };
  Value yielded = yieldedValue(op);
  if (matchScaled(yielded))
    return success();
  auto select = yielded.getDefiningOp<arith::SelectOp>();
  if (!select)
    return m.fail("score generic is neither x * scale nor a causal "
                  "select(j <= i + N, x * scale, -inf)");
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return m.fail("causal mask condition is not an arith.cmpi");
  // Query position: linalg.index 1 [+ N], N a constant or an index value
  // defined above the generic (known at run time).
  Value position;
  auto queryPos = [&](Value v, int64_t &n) -> bool {
    if (isIndex(v, 1)) {
      n = 0;
      return true;
    }
    auto add = v.getDefiningOp<arith::AddIOp>();
    if (!add)
      return false;
    APInt c;
    Value other = isIndex(add.getLhs(), 1)   ? add.getRhs()
                  : isIndex(add.getRhs(), 1) ? add.getLhs()
                                             : Value();
    if (!other)
      return false;
    if (matchPattern(other, m_ConstantInt(&c))) {
      n = c.getSExtValue();
      return true;
    }
    if (!other.getType().isIndex() ||
        !other.getParentRegion()->isProperAncestor(&op.getRegion()))
      return false;
    n = 0;
    position = other;
    return true;
  };
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  int64_t n = 0;
  if (isIndex(cmp.getLhs(), 2) && queryPos(cmp.getRhs(), n)) {
  } else if (isIndex(cmp.getRhs(), 2) && queryPos(cmp.getLhs(), n)) {
    pred = swapOperands(pred);
  } else {
    return m.fail("causal mask does not compare the key index (linalg.index "
                  "2) with the query index (linalg.index 1) + a constant or "
                  "an index value defined above the score generic");
  }
  bool visibleWhenTrue;
  switch (pred) {
  case P::ule:
  case P::sle: // j <= i + n
    visibleWhenTrue = true;
    break;
  case P::ult:
  case P::slt: // j < i + n
    visibleWhenTrue = true;
    --n;
    break;
  case P::ugt:
  case P::sgt: // masked when j > i + n
    visibleWhenTrue = false;
    break;
  case P::uge:
  case P::sge: // masked when j >= i + n
    visibleWhenTrue = false;
    --n;
    break;
  default:
    return m.fail("causal mask predicate is not an ordering of key and "
                  "query positions");
  }
  if (position && n != 0)
    return m.fail("causal mask with a run-time offset %n is not written "
                  "j <= i + %n (or its negation j > i + %n)");
  if (n < 0)
    return m.fail(llvm::formatv("causal mask offset {0} is negative", n));
  Value kept = visibleWhenTrue ? select.getTrueValue() : select.getFalseValue();
  Value dropped =
      visibleWhenTrue ? select.getFalseValue() : select.getTrueValue();
  if (!isNegInf(dropped))
    return m.fail("causal mask does not replace hidden scores by -inf");
  if (!matchScaled(kept))
    return m.fail("masked score is not x * constant scale");
  if (position)
    match.causalPosition = position;
  else
    match.causalOffset = n;
  return success();
}

std::optional<AttentionMatch> cachet::matchAttention(linalg::SoftmaxOp softmax,
                                                     std::string &reason) {
  Matcher m(reason);
  AttentionMatch match;
  match.softmax = softmax;
  auto inType = dyn_cast<RankedTensorType>(softmax.getInput().getType());
  if (!inType || softmax->getNumResults() != 1)
    return m.fail("softmax is not on ranked tensors");
  if (inType.getRank() != 3)
    return m.fail("softmax input is not 3-d [head][query][key]");
  if (softmax.getDimension() != 2)
    return m.fail(llvm::formatv("softmax over dimension {0}, not the key "
                                "dimension 2",
                                softmax.getDimension()));

  // Backward: the scores.
  SmallVector<Operation *> backward;
  Value scores = softmax.getInput();
  if (auto scoreOp = scores.getDefiningOp<linalg::GenericOp>()) {
    if (failed(matchScoreGeneric(m, scoreOp, match)))
      return std::nullopt;
    backward.push_back(scoreOp);
    scores = scoreOp.getDpsInputs()[0];
  }
  linalg::BatchMatmulOp qk;
  if (failed(matchBatchMatmul(m, scores, "Q K^T", qk)))
    return std::nullopt;
  backward.push_back(qk);
  match.accumulator = getElementTypeOrSelf(qk.getResult(0).getType());
  if (!match.accumulator.isF32() && !match.accumulator.isF16())
    return m.fail(llvm::formatv("Q K^T accumulates in {0}, not f32 or f16",
                                str(match.accumulator)));
  if (getElementTypeOrSelf(inType) != match.accumulator)
    return m.fail("softmax input type differs from the Q K^T accumulator");
  match.query = qk.getDpsInputs()[0];
  Type queryElem = getElementTypeOrSelf(match.query.getType());
  if (!queryElem.isF16() && !queryElem.isBF16() && !queryElem.isF32())
    return m.fail(llvm::formatv("query element type {0} is not f16, bf16 or "
                                "f32",
                                str(queryElem)));
  int64_t keyGroup = 0;
  FailureOr<Value> key = matchHeadBroadcast(m, qk.getDpsInputs()[1], "K^T",
                                            /*hDim=*/0, /*dDim=*/1,
                                            /*sDim=*/2, keyGroup, backward);
  if (failed(key) || failed(matchKVDequantize(m, *key, "K", match.key)))
    return std::nullopt;
  backward.push_back(match.key.dequantOp);

  // Forward: probabilities, P V, the final conversion.
  SmallVector<Operation *> forward;
  Value probs = softmax.getResult()[0];
  if (!probs.hasOneUse())
    return m.fail("softmax result has more than one use");
  Operation *user = *probs.getUsers().begin();
  if (auto convert = dyn_cast<linalg::GenericOp>(user)) {
    if (!matchConversion(convert))
      return m.fail("softmax result is not converted element-wise before "
                    "P V");
    forward.push_back(convert);
    probs = convert.getResult(0);
    if (!probs.hasOneUse())
      return m.fail("converted probabilities have more than one use");
    user = *probs.getUsers().begin();
  }
  auto pv = dyn_cast<linalg::BatchMatmulOp>(user);
  if (!pv || pv.getDpsInputs()[0] != probs)
    return m.fail("probabilities do not feed a P V linalg.batch_matmul");
  linalg::BatchMatmulOp pvCheck;
  if (failed(matchBatchMatmul(m, pv.getResult(0), "P V", pvCheck)))
    return std::nullopt;
  forward.push_back(pv);
  if (getElementTypeOrSelf(pv.getResult(0).getType()) != match.accumulator)
    return m.fail("P V and Q K^T accumulate in different types");
  int64_t valueGroup = 0;
  FailureOr<Value> value =
      matchHeadBroadcast(m, pv.getDpsInputs()[1], "V", /*hDim=*/0,
                         /*dDim=*/2, /*sDim=*/1, valueGroup, forward);
  if (failed(value) || failed(matchKVDequantize(m, *value, "V", match.value)))
    return std::nullopt;
  forward.push_back(match.value.dequantOp);
  if (keyGroup != valueGroup)
    return m.fail(llvm::formatv("K and V broadcasts use different GQA "
                                "ratios ({0} and {1})",
                                keyGroup, valueGroup));
  match.groupSize = keyGroup;
  if (getElementTypeOrSelf(probs.getType()) !=
      getElementTypeOrSelf(match.value.dequantized.getType()))
    return m.fail("probabilities are not converted to the V element type");

  match.result = pv.getResult(0);
  if (match.result.hasOneUse())
    if (auto convert =
            dyn_cast<linalg::GenericOp>(*match.result.getUsers().begin()))
      if (matchConversion(convert)) {
        forward.push_back(convert);
        match.result = convert.getResult(0);
      }
  Type resultElem = getElementTypeOrSelf(match.result.getType());
  if (!resultElem.isF16() && !resultElem.isBF16() && !resultElem.isF32())
    return m.fail(llvm::formatv("result element type {0} is not f16, bf16 or "
                                "f32",
                                str(resultElem)));

  // Users first, producers last: the order in which dead ops are erased.
  match.ops.append(forward.rbegin(), forward.rend());
  match.ops.push_back(softmax);
  match.ops.append(backward.begin(), backward.end());
  return match;
}
