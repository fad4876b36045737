//===- CachetOps.cpp - cachet operation verifiers ------------------------===//

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace cachet;

/// Parses the optional causal bound of the attention ops: `causal N` (an
/// integer, `causal_offset`) or `causal %n` (an index operand,
/// `causal_position`).
static ParseResult
parseCausal(OpAsmParser &parser, IntegerAttr &offset,
            std::optional<OpAsmParser::UnresolvedOperand> &position) {
  if (failed(parser.parseOptionalKeyword("causal")))
    return success();
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult parsed = parser.parseOptionalOperand(operand);
  if (parsed.has_value()) {
    if (failed(*parsed))
      return failure();
    position = operand;
    return success();
  }
  int64_t n = 0;
  if (parser.parseInteger(n))
    return failure();
  offset = parser.getBuilder().getI64IntegerAttr(n);
  return success();
}

/// Prints what parseCausal reads.
static void printCausal(OpAsmPrinter &printer, Operation *, IntegerAttr offset,
                        Value position) {
  if (position)
    printer << "causal " << position;
  else if (offset)
    printer << "causal " << offset.getInt();
}

/// Returns true if two dimension sizes can be equal (either is dynamic).
static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Returns the number of values one element of `type` stands for along the
/// innermost dimension: a block type's block size, 1 otherwise.
static int64_t valuesPerElement(Type type) {
  if (auto block = dyn_cast<BlockQuantizedType>(type))
    return block.getBlockValues();
  return 1;
}

/// Checks the quantized operands shared by `cachet.dequantize` and
/// `cachet.dequant_transpose`: the packed form (block-typed `input`, no
/// scales) or the split q8_0 / q4_0 form (`i8` / `i4` input and one `f16`
/// scale per 32 values). On success `dims` holds the input shape with the
/// innermost dimension counted in values.
static LogicalResult verifyQuantizedInput(Operation *op, RankedTensorType input,
                                          RankedTensorType scales,
                                          SmallVectorImpl<int64_t> &dims) {
  if (input.getRank() < 1)
    return op->emitOpError("operand 'input' must have rank >= 1");
  dims.assign(input.getShape().begin(), input.getShape().end());
  Type element = input.getElementType();
  int64_t inner = input.getShape().back();
  if (!scales) {
    if (!isa<BlockQuantizedType>(element))
      return op->emitOpError("operand 'input' must have a block-quantized "
                             "element type (or i8 / i4 with 'scales'), got ")
             << element;
    if (!ShapedType::isDynamic(inner))
      dims.back() = inner * valuesPerElement(element);
    else
      dims.back() = ShapedType::kDynamic;
    return success();
  }
  if (!element.isSignlessInteger(8) && !element.isSignlessInteger(4))
    return op->emitOpError("operand 'input' must have element type i8 (split "
                           "q8_0 form) or i4 (split q4_0 form) when 'scales' "
                           "is given, got ")
           << element;
  if (!scales.getElementType().isF16())
    return op->emitOpError("operand 'scales' must have element type f16, got ")
           << scales.getElementType();
  if (scales.getRank() != input.getRank())
    return op->emitOpError("operand 'scales' must have the rank of 'input' (")
           << input.getRank() << "), got " << scales.getRank();
  if (!ShapedType::isDynamic(inner) && inner % 32 != 0)
    return op->emitOpError("innermost dimension of 'input' (")
           << inner << ") must be a multiple of 32, the "
           << (element.isSignlessInteger(4) ? "q4_0" : "q8_0") << " block size";
  for (int64_t i = 0, e = input.getRank() - 1; i < e; ++i)
    if (!dimsCompatible(input.getDimSize(i), scales.getDimSize(i)))
      return op->emitOpError("dimension ")
             << i << " of 'scales' (" << scales.getDimSize(i)
             << ") must match 'input' (" << input.getDimSize(i) << ")";
  int64_t blocks = scales.getShape().back();
  if (!ShapedType::isDynamic(inner) && !ShapedType::isDynamic(blocks) &&
      blocks * 32 != inner)
    return op->emitOpError("innermost dimension of 'scales' (")
           << blocks << ") must be the innermost dimension of 'input' ("
           << inner << ") divided by 32";
  return success();
}

/// Checks that `type` is a float type cachet computes in.
static bool isComputeFloat(Type type) {
  return type.isF16() || type.isBF16() || type.isF32();
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto scales = cast_if_present<RankedTensorType>(
      getScales() ? getScales().getType() : Type());
  auto result = cast<RankedTensorType>(getResult().getType());
  SmallVector<int64_t> dims;
  if (failed(verifyQuantizedInput(*this, input, scales, dims)))
    return failure();
  if (!isComputeFloat(result.getElementType()))
    return emitOpError("result element type must be f16, bf16 or f32, got ")
           << result.getElementType();
  if (result.getRank() != input.getRank())
    return emitOpError("result rank (")
           << result.getRank() << ") must equal the rank of 'input' ("
           << input.getRank() << ")";
  for (int64_t i = 0, e = result.getRank(); i < e; ++i)
    if (!dimsCompatible(dims[i], result.getDimSize(i)))
      return emitOpError("result dimension ")
             << i << " (" << result.getDimSize(i) << ") must be " << dims[i]
             << (i + 1 == e && !scales
                     ? ", " +
                           std::to_string(
                               valuesPerElement(input.getElementType())) +
                           " values per block of 'input'"
                     : std::string(", the size of 'input' in values"));
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  auto scales = cast_if_present<RankedTensorType>(
      getScales() ? getScales().getType() : Type());
  if (input.getRank() < 1)
    return emitOpError("operand 'input' must have rank >= 1");
  if (!isComputeFloat(input.getElementType()))
    return emitOpError("operand 'input' must have element type f16, bf16 or "
                       "f32, got ")
           << input.getElementType();
  int64_t inner = input.getShape().back();
  if (!ShapedType::isDynamic(inner) && inner % 32 != 0)
    return emitOpError("innermost dimension of 'input' (")
           << inner << ") must be a multiple of 32, the block size";
  if (result.getRank() != input.getRank())
    return emitOpError("result rank (")
           << result.getRank() << ") must equal the rank of 'input' ("
           << input.getRank() << ")";
  Type element = result.getElementType();
  auto block = dyn_cast<BlockQuantizedType>(element);
  if (block && scales)
    return emitOpError("a block-quantized result takes no 'scales' result "
                       "(only the split q8_0 form, i8 quants, has one)");
  if (!block && !element.isSignlessInteger(8))
    return emitOpError("result must have a block-quantized element type, or "
                       "i8 with a 'scales' result (split q8_0 form), got ")
           << element;
  if (!block && !scales)
    return emitOpError("the split q8_0 form (i8 result) needs a 'scales' "
                       "result, one f16 per 32 values");
  if (block && block.getBlockValues() != 32)
    return emitOpError("cachet.quantize writes the 32-value formats (q8_0, "
                       "q4_0, q4_1, q5_0, q5_1, iq4_nl), not ")
           << block.getFormatName() << " (a weight format of "
           << block.getBlockValues() << "-value super-blocks)";
  if (getRounding() != Rounding::Away && block && !isa<Q8_0Type>(block))
    return emitOpError("rounding <")
           << stringifyRounding(getRounding()) << "> is for q8_0 only; "
           << block.getFormatName() << " rounds as ggml's reference does";
  for (int64_t i = 0, e = input.getRank() - 1; i < e; ++i)
    if (!dimsCompatible(input.getDimSize(i), result.getDimSize(i)))
      return emitOpError("result dimension ")
             << i << " (" << result.getDimSize(i) << ") must match 'input' ("
             << input.getDimSize(i) << ")";
  int64_t blocks = ShapedType::isDynamic(inner) ? inner : inner / 32;
  if (block) {
    if (!dimsCompatible(blocks, result.getShape().back()))
      return emitOpError("innermost result dimension (")
             << result.getShape().back() << ") must be " << blocks
             << ", one block per 32 values of 'input'";
    return success();
  }
  if (!dimsCompatible(inner, result.getShape().back()))
    return emitOpError("innermost result dimension (")
           << result.getShape().back() << ") must be " << inner
           << ", one i8 quant per value of 'input'";
  if (!scales.getElementType().isF16())
    return emitOpError("result 'scales' must have element type f16, got ")
           << scales.getElementType();
  if (scales.getRank() != input.getRank())
    return emitOpError("result 'scales' must have the rank of 'input' (")
           << input.getRank() << "), got " << scales.getRank();
  for (int64_t i = 0, e = input.getRank() - 1; i < e; ++i)
    if (!dimsCompatible(input.getDimSize(i), scales.getDimSize(i)))
      return emitOpError("dimension ")
             << i << " of 'scales' (" << scales.getDimSize(i)
             << ") must match 'input' (" << input.getDimSize(i) << ")";
  if (!dimsCompatible(blocks, scales.getShape().back()))
    return emitOpError("innermost dimension of 'scales' (")
           << scales.getShape().back() << ") must be " << blocks
           << ", one scale per 32 values of 'input'";
  return success();
}

//===----------------------------------------------------------------------===//
// DequantTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantTransposeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto scales = cast_if_present<RankedTensorType>(
      getScales() ? getScales().getType() : Type());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.getRank() != 3)
    return emitOpError("operand 'input' must be a token-major KV cache "
                       "[pos][kv_head][dim], got rank ")
           << input.getRank();
  SmallVector<int64_t> dims;
  if (failed(verifyQuantizedInput(*this, input, scales, dims)))
    return failure();
  if (input.getElementType().isSignlessInteger(4))
    return emitOpError("KV caches take split q8_0 (i8 values), not split "
                       "q4_0 (i4 values); store a 4-bit cache as "
                       "!cachet.q4_0 blocks");
  if (auto block = dyn_cast<BlockQuantizedType>(input.getElementType());
      block && block.getBlockValues() != 32)
    return emitOpError("KV caches take the 32-value formats (q8_0, q4_0, "
                       "q4_1, q5_0, q5_1, iq4_nl), not ")
           << block.getFormatName() << " (a weight format of "
           << block.getBlockValues() << "-value super-blocks)";
  if (!result.getElementType().isF16() && !result.getElementType().isBF16() &&
      !result.getElementType().isF32())
    return emitOpError("result element type must be f16, bf16 or f32, got ")
           << result.getElementType();
  if (result.getRank() != 3)
    return emitOpError("result must be head-major [kv_head][pos][dim], got "
                       "rank ")
           << result.getRank();
  // Token-major [S][H][D] becomes head-major [H][S][D].
  int64_t expected[3] = {dims[1], dims[0], dims[2]};
  static const char *const names[3] = {"kv_head", "pos", "dim"};
  for (int64_t i = 0; i < 3; ++i)
    if (!dimsCompatible(expected[i], result.getDimSize(i)))
      return emitOpError("result dimension ")
             << i << " (" << names[i] << ") is " << result.getDimSize(i)
             << ", expected " << expected[i]
             << " from the token-major input [pos][kv_head][dim]";
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getGroupSize() {
  int64_t hq = cast<RankedTensorType>(getQuery().getType()).getDimSize(0);
  int64_t hkv =
      cast<RankedTensorType>(getKey().getType()).getDimSize(getKVHeadDim());
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv) || hkv == 0)
    return ShapedType::kDynamic;
  return hq / hkv;
}

/// Checks what `cachet.attention` and `cachet.attention_partial` share: the
/// query, key and value shapes and types, the `[Hq, Sq, Dv]` shape of
/// `result`, the causal offset and the accumulator.
static LogicalResult
verifyAttentionCommon(Operation *op, RankedTensorType query,
                      RankedTensorType key, RankedTensorType value,
                      RankedTensorType result, KVLayout layout,
                      std::optional<int64_t> causalOffset, Value causalPosition,
                      std::optional<Type> accumulator) {
  StringRef layoutName = stringifyKVLayout(layout);
  StringRef layoutShape = layout == KVLayout::TokenMajor
                              ? "[pos][kv_head][dim]"
                              : "[kv_head][pos][dim]";

  if (query.getRank() != 3)
    return op->emitOpError("operand 'query' must be [q_head][query][dim], got "
                           "rank ")
           << query.getRank();
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"key", key}, {"value", value}})
    if (type.getRank() != 3)
      return op->emitOpError("operand '")
             << name << "' must be " << layoutShape << " for layout "
             << layoutName << ", got rank " << type.getRank();
  if (result.getRank() != 3)
    return op->emitOpError("result must be [q_head][query][dim], got rank ")
           << result.getRank();

  for (auto [name, type] :
       {std::pair<StringRef, Type>{"query", query.getElementType()},
        {"key", key.getElementType()},
        {"value", value.getElementType()},
        {"result", result.getElementType()}})
    if (!isComputeFloat(type))
      return op->emitOpError("element type of '")
             << name << "' must be f16, bf16 or f32, got " << type;

  unsigned headDim = layout == KVLayout::TokenMajor ? 1 : 0;
  unsigned posDim = 1 - headDim;
  int64_t hq = query.getDimSize(0), sq = query.getDimSize(1);
  int64_t hkv = key.getDimSize(headDim), s = key.getDimSize(posDim);
  if (!dimsCompatible(value.getDimSize(headDim), hkv) ||
      !dimsCompatible(value.getDimSize(posDim), s))
    return op->emitOpError("operands 'key' ")
           << key << " and 'value' " << value
           << " must have the same kv_head and pos sizes in layout "
           << layoutName << " " << layoutShape;
  if (!dimsCompatible(key.getDimSize(2), query.getDimSize(2)))
    return op->emitOpError("head dim of 'key' (")
           << key.getDimSize(2) << ") must equal the head dim of 'query' ("
           << query.getDimSize(2) << ")";
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || hq % hkv != 0))
    return op->emitOpError("bad head ratio: query heads (")
           << hq << ") must be a multiple of KV heads (" << hkv
           << ") in layout " << layoutName << " " << layoutShape;
  if (!dimsCompatible(result.getDimSize(0), hq) ||
      !dimsCompatible(result.getDimSize(1), sq) ||
      !dimsCompatible(result.getDimSize(2), value.getDimSize(2)))
    return op->emitOpError("result shape ")
           << result << " must be [" << hq << ", " << sq << ", "
           << value.getDimSize(2) << "] ([q_head][query][value dim])";
  if (causalOffset && causalPosition)
    return op->emitOpError("takes a constant 'causal_offset' or a "
                           "'causal_position' operand, not both");
  if (causalOffset && *causalOffset < 0)
    return op->emitOpError("'causal_offset' must be >= 0 (positions cached "
                           "before the first query), got ")
           << *causalOffset;
  if (accumulator && !accumulator->isF16() && !accumulator->isF32())
    return op->emitOpError("'accumulator' must be f16 or f32, got ")
           << *accumulator;
  return success();
}

LogicalResult AttentionOp::verify() {
  auto query = cast<RankedTensorType>(getQuery().getType());
  auto key = cast<RankedTensorType>(getKey().getType());
  auto value = cast<RankedTensorType>(getValue().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyAttentionCommon(*this, query, key, value, result,
                                   getKvLayout(), getCausalOffset(),
                                   getCausalPosition(), getAccumulator())))
    return failure();
  if (Value mask = getMask()) {
    int64_t hq = query.getDimSize(0), sq = query.getDimSize(1);
    int64_t s = key.getDimSize(getKVPosDim());
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (!isComputeFloat(maskType.getElementType()))
      return emitOpError("element type of 'mask' must be f16, bf16 or f32, "
                         "got ")
             << maskType.getElementType();
    ArrayRef<int64_t> shape = maskType.getShape();
    bool ok = false;
    if (shape.size() == 2)
      ok = dimsCompatible(shape[0], sq) && dimsCompatible(shape[1], s);
    else if (shape.size() == 3)
      ok = dimsCompatible(shape[0], hq) && dimsCompatible(shape[1], sq) &&
           dimsCompatible(shape[2], s);
    if (!ok)
      return emitOpError("operand 'mask' ")
             << maskType << " must be [query][pos] or [q_head][query][pos] ("
             << "[" << sq << ", " << s << "] or [" << hq << ", " << sq << ", "
             << s << "])";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionPartialOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionPartialOp::verify() {
  auto query = cast<RankedTensorType>(getQuery().getType());
  auto out = cast<RankedTensorType>(getOut().getType());
  if (failed(verifyAttentionCommon(
          *this, query, cast<RankedTensorType>(getKey().getType()),
          cast<RankedTensorType>(getValue().getType()), out, getKvLayout(),
          getCausalOffset(), getCausalPosition(), getAccumulator())))
    return failure();
  if (!out.getElementType().isF32())
    return emitOpError("result 'out' must have element type f32, got ")
           << out.getElementType();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"max", getMax()}, {"sum", getSum()}}) {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.getElementType().isF32() || type.getRank() != 2 ||
        !dimsCompatible(type.getDimSize(0), query.getDimSize(0)) ||
        !dimsCompatible(type.getDimSize(1), query.getDimSize(1)))
      return emitOpError("result '")
             << name << "' " << type << " must be f32 [" << query.getDimSize(0)
             << ", " << query.getDimSize(1) << "] ([q_head][query])";
  }
  return success();
}

#define GET_OP_CLASSES
#include "cachet/Dialect/CachetOps.cpp.inc"
