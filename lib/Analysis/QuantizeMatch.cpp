//===- QuantizeMatch.cpp - recognize linalg q8_0 quantization -------------===//

#include "cachet/Analysis/QuantizeMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace cachet;

/// Returns true if `value` is the f32 constant `expected`.
static bool isF32Constant(Value value, double expected) {
  FloatAttr attr;
  return value && value.getType().isF32() &&
         matchPattern(value, m_Constant(&attr)) &&
         attr.getValueAsDouble() == expected;
}

/// Returns the block argument `value` is, possibly extended to f32 first;
/// null if it is something else or not computed in f32.
static BlockArgument asF32Argument(Value value) {
  if (!value.getType().isF32())
    return {};
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    value = ext.getIn();
  return dyn_cast<BlockArgument>(value);
}

/// Returns true if `value` is `arg / 127.0` in f32 (ggml's q8_0 scale).
static bool isScaleOf(Value value, Value arg) {
  auto div = value.getDefiningOp<arith::DivFOp>();
  return div && div.getLhs() == arg && isF32Constant(div.getRhs(), 127.0);
}

/// Returns true if `map` drops the last of its dimensions and keeps the
/// others in order.
static bool dropsLastDim(AffineMap map) {
  unsigned rank = map.getNumDims();
  if (map.getNumSymbols() != 0 || map.getNumResults() + 1 != rank)
    return false;
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (expr != getAffineDimExpr(i, map.getContext()))
      return false;
  return true;
}

bool cachet::isQuantizeCandidate(linalg::GenericOp op) {
  // On tensors only: a generic on buffers (after bufferization) has no
  // result to replace.
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getResult(0).getType()).isSignlessInteger(8))
    return false;
  return llvm::any_of(op.getBody()->getOperations(), [](Operation &inner) {
    return isa<arith::FPToSIOp>(inner);
  });
}

/// Returns true if `value` is `id = d != 0 ? 1 / d : 0` with
/// `d = amax / 127`, computed from `amax` (a block argument); the select may
/// be written with either predicate polarity.
static bool isInverseScale(Value value, Value amax) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select)
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return false;
  Value inverse = select.getTrueValue(), zero = select.getFalseValue();
  switch (cmp.getPredicate()) {
  case arith::CmpFPredicate::UNE:
  case arith::CmpFPredicate::ONE:
    break;
  case arith::CmpFPredicate::OEQ:
  case arith::CmpFPredicate::UEQ:
    std::swap(inverse, zero);
    break;
  default:
    return false;
  }
  Value d = cmp.getLhs();
  if (!isF32Constant(cmp.getRhs(), 0.0)) {
    if (!isF32Constant(cmp.getLhs(), 0.0))
      return false;
    d = cmp.getRhs();
  }
  auto div = inverse.getDefiningOp<arith::DivFOp>();
  return isF32Constant(zero, 0.0) && div && isF32Constant(div.getLhs(), 1.0) &&
         div.getRhs() == d && isScaleOf(d, amax);
}

/// Checks the reduction `op`: `max(acc, |float(x)|)` over the last dim of
/// `blocks` into a fill of 0.0, f32.
static LogicalResult checkAbsMax(linalg::GenericOp op, Value blocks,
                                 std::string &reason) {
  auto fail = [&](const Twine &message) {
    reason = message.str();
    return failure();
  };
  unsigned rank = cast<RankedTensorType>(blocks.getType()).getRank();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getDpsInputs()[0] != blocks || iterators.size() != rank ||
      iterators.back() != utils::IteratorType::reduction ||
      llvm::count(iterators, utils::IteratorType::reduction) != 1 ||
      !op.getIndexingMapsArray()[0].isIdentity() ||
      !dropsLastDim(op.getIndexingMapsArray()[1]))
    return fail("the block maxima are not a reduction over the 32 values of "
                "each block");
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !isF32Constant(fill.getInputs()[0], 0.0))
    return fail("the block maxima do not start from a fill of 0.0 : f32");
  Block *body = op.getBody();
  Value yielded = body->getTerminator()->getOperand(0);
  Value acc = body->getArgument(1), candidate;
  Operation *combine = yielded.getDefiningOp();
  if (isa_and_present<arith::MaximumFOp, arith::MaxNumFOp>(combine)) {
    Value l = combine->getOperand(0), r = combine->getOperand(1);
    candidate = l == acc ? r : r == acc ? l : Value();
  } else if (auto select = dyn_cast_if_present<arith::SelectOp>(combine)) {
    // MAX(acc, a) = acc > a ? acc : a.
    auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
    if (cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT &&
        cmp.getLhs() == acc && select.getTrueValue() == acc &&
        cmp.getRhs() == select.getFalseValue())
      candidate = cmp.getRhs();
  }
  if (!candidate)
    return fail("the block maxima are not combined with arith.maximumf, "
                "arith.maxnumf or a select on 'ogt'");
  auto abs = candidate.getDefiningOp<math::AbsFOp>();
  if (!abs || asF32Argument(abs.getOperand()) != body->getArgument(0))
    return fail("the block maxima are not of |float(x)| computed in f32");
  return success();
}

/// Checks the scales generic `op`: `truncf(amax / 127)` to f16, element-wise.
static bool isScales(linalg::GenericOp op, Value absMax) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getDpsInputs()[0] != absMax ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !getElementTypeOrSelf(op.getResult(0).getType()).isF16())
    return false;
  Block *body = op.getBody();
  auto trunc =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::TruncFOp>();
  return trunc && isScaleOf(trunc.getIn(), body->getArgument(0));
}

std::optional<QuantizeMatch> cachet::matchQuantize(linalg::GenericOp quants,
                                                   std::string &reason) {
  auto fail = [&](const Twine &message) -> std::optional<QuantizeMatch> {
    reason = message.str();
    return std::nullopt;
  };
  QuantizeMatch match;
  match.quants = quants;
  if (quants.getNumDpsInputs() != 2 || quants.getNumDpsInits() != 1)
    return fail("the quants generic must read the values and the block "
                "maxima, and write one i8 tensor");
  if (quants.getNumParallelLoops() != quants.getNumLoops())
    return fail("the quants generic has a reduction loop");
  SmallVector<AffineMap> maps = quants.getIndexingMapsArray();
  if (!maps[0].isIdentity() || !maps[2].isIdentity() || !dropsLastDim(maps[1]))
    return fail("the quants generic must read value [..., b, i] and block "
                "maximum [..., b] for quant [..., b, i]");
  Value blocks = quants.getDpsInputs()[0];
  auto blocksType = cast<RankedTensorType>(blocks.getType());
  if (blocksType.getShape().back() != 32)
    return fail("the innermost dimension of the values is not a block of 32");

  // The body: fptosi(round(float(x) * id)).
  Block *body = quants.getBody();
  auto toInt =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::FPToSIOp>();
  if (!toInt)
    return fail("the quant is not converted to i8 by arith.fptosi");
  Operation *round = toInt.getIn().getDefiningOp();
  if (isa_and_present<math::RoundOp>(round))
    match.rounding = Rounding::Away;
  else if (isa_and_present<math::RoundEvenOp>(round))
    match.rounding = Rounding::Even;
  else
    return fail("the quant is not rounded by math.round or math.roundeven "
                "before arith.fptosi");
  auto mul = round->getOperand(0).getDefiningOp<arith::MulFOp>();
  if (!mul || !mul.getType().isF32())
    return fail("the rounded value is not a product x * id in f32");
  Value x = mul.getLhs(), id = mul.getRhs();
  if (asF32Argument(x) != body->getArgument(0))
    std::swap(x, id);
  if (asF32Argument(x) != body->getArgument(0))
    return fail("the rounded product does not read the value as f32");
  if (!isInverseScale(id, body->getArgument(1)))
    return fail("the quant's factor is not 'd != 0 ? 1 / d : 0' with "
                "d = amax / 127 in f32, the ggml q8_0 rule");

  // The values are a reshape of [..., D] into blocks of 32.
  match.blocks = blocks.getDefiningOp<tensor::ExpandShapeOp>();
  if (!match.blocks)
    return fail("the values are not a tensor.expand_shape into blocks of 32");
  SmallVector<ReassociationIndices> groups =
      match.blocks.getReassociationIndices();
  unsigned rank = blocksType.getRank();
  for (auto [i, group] : llvm::enumerate(groups)) {
    bool last = i + 1 == groups.size();
    if (group.size() != (last ? 2u : 1u))
      return fail("the expand_shape does not split only the innermost "
                  "dimension into [blocks, 32]");
  }
  if (groups.size() + 1 != rank)
    return fail("the expand_shape does not split only the innermost "
                "dimension into [blocks, 32]");
  match.input = match.blocks.getSrc();
  Type element = getElementTypeOrSelf(match.input.getType());
  if (!element.isF16() && !element.isBF16() && !element.isF32())
    return fail("the values are not f16, bf16 or f32");

  match.absMax = quants.getDpsInputs()[1].getDefiningOp<linalg::GenericOp>();
  if (!match.absMax)
    return fail("the block maxima are not computed by a linalg.generic");
  if (failed(checkAbsMax(match.absMax, blocks, reason)))
    return std::nullopt;

  // The scales, if the function computes them, from the same maxima.
  for (Operation *user : match.absMax->getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (generic && generic != quants &&
        isScales(generic, match.absMax.getResult(0))) {
      match.scales = generic;
      break;
    }
  }
  if (match.scales && match.scales->getBlock() != quants->getBlock())
    return fail("the scales and the quants are computed in different blocks");
  return match;
}

//===----------------------------------------------------------------------===//
// Split q8_0 dequantization
//===----------------------------------------------------------------------===//

bool cachet::isDequantizeCandidate(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  Type out = getElementTypeOrSelf(op.getResult(0).getType());
  if (!out.isF16() && !out.isBF16() && !out.isF32())
    return false;
  // i8 values converted with sitofp (split q8_0), or i4 values used at all
  // (split q4_0: converted, extended or shifted first).
  for (BlockArgument arg :
       op.getBody()->getArguments().take_front(op.getNumDpsInputs())) {
    if (arg.getType().isSignlessInteger(4) && !arg.use_empty())
      return true;
    if (arg.getType().isSignlessInteger(8) &&
        llvm::any_of(arg.getUsers(), llvm::IsaPred<arith::SIToFPOp>))
      return true;
  }
  return false;
}

/// Returns whether `v` is the float `c`.
static bool isFloatConstant(Value v, double c) {
  FloatAttr attr;
  return matchPattern(v, m_Constant(&attr)) &&
         attr.getValue().convertToDouble() == c;
}

/// Returns whether `v` is the integer `c` (a scalar constant).
static bool isIntConstant(Value v, int64_t c) {
  IntegerAttr attr;
  return matchPattern(v, m_Constant(&attr)) && attr.getInt() == c;
}

/// Returns `v` without a zero extension (arith.extui), and whether it had
/// one.
static Value stripExtUI(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtUIOp>())
    return ext.getIn();
  return v;
}

/// Checks that `v` is q4_0's value of the i4 block argument `q` in float:
/// `uitofp(q) - 8` (or `+ -8`; q zero-extended first or not) or
/// `sitofp(zext(q) - 8)`, all exact. Otherwise returns why not.
static std::string whyNotNibbleValue(Value v, Value q) {
  auto isUnsigned = [&](Value f) {
    auto cvt = f.getDefiningOp<arith::UIToFPOp>();
    return cvt && stripExtUI(cvt.getIn()) == q;
  };
  auto isSigned = [&](Value f) {
    auto cvt = f.getDefiningOp<arith::SIToFPOp>();
    if (!cvt)
      return false;
    Value in = cvt.getIn();
    if (auto ext = in.getDefiningOp<arith::ExtSIOp>())
      in = ext.getIn();
    return in == q;
  };
  if (auto sub = v.getDefiningOp<arith::SubFOp>())
    if (isUnsigned(sub.getLhs()))
      return isFloatConstant(sub.getRhs(), 8.0)
                 ? ""
                 : "the zero point subtracted from the i4 values is not the "
                   "constant 8 (q4_0's)";
  if (auto add = v.getDefiningOp<arith::AddFOp>())
    for (auto [x, c] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())})
      if (isUnsigned(x))
        return isFloatConstant(c, -8.0)
                   ? ""
                   : "the zero point added to the i4 values is not the "
                     "constant -8 (q4_0's)";
  if (auto cvt = v.getDefiningOp<arith::SIToFPOp>())
    if (auto sub = cvt.getIn().getDefiningOp<arith::SubIOp>();
        sub && isa<arith::ExtUIOp>(sub.getLhs().getDefiningOp()) &&
        stripExtUI(sub.getLhs()) == q)
      return isIntConstant(sub.getRhs(), 8)
                 ? ""
                 : "the zero point subtracted from the i4 values is not the "
                   "constant 8 (q4_0's)";
  if (isSigned(v))
    return "signed i4 values (sitofp) are not q4_0's unsigned nibbles less "
           "8; only the unsigned form is raised";
  if (isUnsigned(v))
    return "unsigned i4 values have no zero point; q4_0 subtracts 8";
  return "dequantize generic body is not (float(q) - 8) * scale for i4 "
         "values q";
}

std::optional<DequantizeMatch> cachet::matchDequantize(linalg::GenericOp op,
                                                       std::string &reason) {
  auto fail = [&](const Twine &why) -> std::optional<DequantizeMatch> {
    reason = why.str();
    return std::nullopt;
  };
  DequantizeMatch match;
  match.generic = op;
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return fail("dequantize generic is not element-wise over two inputs "
                "(values and scales) into one result");
  Block *body = op.getBody();
  if (!body->getArgument(2).use_empty())
    return fail("dequantize generic reads its output");
  auto elem = [&](unsigned i) {
    return getElementTypeOrSelf(op.getDpsInputs()[i].getType());
  };
  auto isQuant = [](Type t) {
    return t.isSignlessInteger(8) || t.isSignlessInteger(4);
  };
  unsigned qIdx = isQuant(elem(0)) ? 0 : 1, sIdx = 1 - qIdx;
  if (!isQuant(elem(qIdx)) || !elem(sIdx).isF16())
    return fail("dequantize generic does not read i8 or i4 values and f16 "
                "scales");
  match.nibbles = elem(qIdx).isSignlessInteger(4);
  unsigned rank = op.getNumLoops();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto isIdentity = [&](AffineMap map) {
    return map.isIdentity() && map.getNumDims() == rank;
  };
  if (!isIdentity(maps[qIdx]) || !isIdentity(maps[2]))
    return fail("dequantize generic does not read the values element-wise");
  // The scales: (..., d) -> (..., d floordiv B), or over blocks
  // (..., b, i) -> (..., b) or (..., b, 0) of a unit dimension.
  AffineMap blk = maps[sIdx];
  auto isDim = [](AffineExpr e, unsigned d) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return dim && dim.getPosition() == d;
  };
  bool prefix = blk.getNumSymbols() == 0 && blk.getNumResults() >= rank - 1;
  for (unsigned i = 0; prefix && i + 1 < rank; ++i)
    prefix = isDim(blk.getResult(i), i);
  auto scalesType = cast<RankedTensorType>(op.getDpsInputs()[sIdx].getType());
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  if (prefix && blk.getNumResults() == rank) {
    AffineExpr last = blk.getResult(rank - 1);
    auto div = dyn_cast<AffineBinaryOpExpr>(last);
    auto divisor = div ? dyn_cast<AffineConstantExpr>(div.getRHS()) : nullptr;
    auto zero = dyn_cast<AffineConstantExpr>(last);
    if (div && div.getKind() == AffineExprKind::FloorDiv &&
        isDim(div.getLHS(), rank - 1) && divisor) {
      match.blockValues = divisor.getValue();
    } else if (zero && zero.getValue() == 0 && rank >= 2 &&
               scalesType.getShape().back() == 1) {
      match.inBlocks = true;
      match.blockValues = resultType.getShape().back();
    }
  } else if (prefix && rank >= 2 && blk.getNumResults() == rank - 1) {
    match.inBlocks = true;
    match.blockValues = resultType.getShape().back();
  }
  if (match.blockValues == 0)
    return fail("scale is not per block: its map must be (..., d) -> (..., d "
                "floordiv 32), or over blocks (..., b, i) -> (..., b)");
  if (match.blockValues != 32)
    return fail(llvm::formatv("block size is {0}, not 32 ({1})",
                              ShapedType::isDynamic(match.blockValues)
                                  ? std::string("dynamic")
                                  : std::to_string(match.blockValues),
                              match.nibbles ? "q4_0" : "q8_0")
                    .str());
  // Body: sitofp(q) [* extf(scale)], in either order, in the result type or
  // in f32 and then truncated to it (as cachet.dequantize decodes: in f32,
  // then one rounding to the result type).
  Value q = body->getArgument(qIdx), s = body->getArgument(sIdx);
  Type outElem = resultType.getElementType();
  auto str = [](Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  };
  if (!outElem.isF16() && !outElem.isBF16() && !outElem.isF32())
    return fail("is dequantized to " + str(outElem) + ", not f16, bf16 or f32");
  Value product = body->getTerminator()->getOperand(0);
  if (auto trunc = product.getDefiningOp<arith::TruncFOp>();
      trunc && trunc.getIn().getType().isF32())
    product = trunc.getIn();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  // The product is exact in f32 (8-bit integer times an f16 scale); in f16
  // it is rounded once, like the truncation.
  if (mul && !mul.getType().isF32() && mul.getType() != outElem)
    return fail("dequantize generic multiplies in " + str(mul.getType()));
  // i4 values: q4_0's (u - 8), exact in every float type.
  std::string nibbleReason;
  auto isValue = [&](Value v) {
    if (match.nibbles) {
      std::string why = whyNotNibbleValue(v, q);
      if (nibbleReason.empty() || why.empty())
        nibbleReason = why;
      return why.empty();
    }
    auto cvt = v.getDefiningOp<arith::SIToFPOp>();
    return cvt && cvt.getIn() == q;
  };
  auto isScale = [&](Value v) {
    if (v == s)
      return true;
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn() == s;
  };
  if (!mul || !((isScale(mul.getRhs()) && isValue(mul.getLhs())) ||
                (isScale(mul.getLhs()) && isValue(mul.getRhs()))))
    return fail(match.nibbles && mul && !nibbleReason.empty() ? nibbleReason
                : match.nibbles
                    ? "dequantize generic body is not (float(q) - 8) "
                      "* scale for i4 values q"
                    : "dequantize generic body is not float(q) * "
                      "scale");
  match.values = op.getDpsInputs()[qIdx];
  match.scales = op.getDpsInputs()[sIdx];
  return match;
}
