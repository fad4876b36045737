//===- LowerToLinalg.cpp - cachet ops and block types to linalg ----------===//
//
// Reference lowering of the cachet ops to linalg on tensors. Block-quantized
// tensors become their ggml bytes; dequantization decodes each value from its
// block inside a linalg.generic; attention becomes Q K^T, mask, softmax, P V.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Conversion/BlockEncoder.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace cachet {
#define GEN_PASS_DEF_LOWERTOLINALG
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

//===----------------------------------------------------------------------===//
// Small IR helpers
//===----------------------------------------------------------------------===//

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Returns a tensor.empty of `shape` x `element`, taking each dynamic size
/// from `dynamicSize(dim)`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type element, function_ref<Value(unsigned)> dynamicSize) {
  SmallVector<Value> dynamic;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      dynamic.push_back(dynamicSize(dim));
  return tensor::EmptyOp::create(b, loc, shape, element, dynamic);
}

/// Returns `value` (a ranked tensor) filled with zeros of its element type.
Value zeroFilled(OpBuilder &b, Location loc, Value empty) {
  Type element = cast<RankedTensorType>(empty.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

SmallVector<utils::IteratorType> iterators(unsigned parallel,
                                           unsigned reduction = 0);

/// Returns `tensor` with its float elements converted to `element` (itself
/// when they already are).
Value castTensor(OpBuilder &b, Location loc, Value tensor, Type element) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == element)
    return tensor;
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, tensor), element);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, type.clone(element), ValueRange{tensor}, ValueRange{init},
             {id, id}, iterators(type.getRank()),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       castFloat(nb, nloc, args[0], element));
             })
      .getResult(0);
}

SmallVector<utils::IteratorType> iterators(unsigned parallel,
                                           unsigned reduction) {
  SmallVector<utils::IteratorType> result(parallel,
                                          utils::IteratorType::parallel);
  result.append(reduction, utils::IteratorType::reduction);
  return result;
}

//===----------------------------------------------------------------------===//
// Decoding one value from ggml bytes
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct LowerToLinalgPass final
    : public cachet::impl::LowerToLinalgBase<LowerToLinalgPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult convertSignature(func::FuncOp func);
  FailureOr<Value> getBytes(OpBuilder &b, Operation *user, Value packed);
  /// Replaces `op` (a dequantize or dequant-transpose) by a linalg.generic
  /// writing `init`; `inputMap` maps the result's loops to `input`'s
  /// dimensions (in values). `bytes` is the packed input's bytes when the
  /// caller resolved them already.
  LogicalResult lowerDequant(Operation *op, Value input, Value scales,
                             Value init, AffineMap inputMap,
                             Value bytes = Value());
  LogicalResult lowerDequantize(DequantizeOp op);
  LogicalResult lowerDequantTranspose(DequantTransposeOp op);
  LogicalResult lowerQuantize(QuantizeOp op);
  LogicalResult lowerBlockEmpty(tensor::EmptyOp op);
  LogicalResult lowerBlockInsertSlice(tensor::InsertSliceOp op);
  LogicalResult
  lowerBlockMaterialize(bufferization::MaterializeInDestinationOp op);
  LogicalResult lowerReturn(func::ReturnOp op);
  /// Replaces the block-typed `value` by `bytes`, through a cast that
  /// getBytes resolves and eraseBlockCasts removes.
  void replaceWithBytes(OpBuilder &b, Value value, Value bytes);
  /// Returns the bytes of the i4 tensor `nibbles` (two values per byte,
  /// the even one in the low nibble), traced through the casts of
  /// convertSignature / convertNibbleConstants, tensor.expand_shape of the
  /// innermost dimension and tensor.extract_slice; else an error at `user`.
  FailureOr<Value> getNibbleBytes(OpBuilder &b, Operation *user, Value nibbles);
  /// Replaces every i4 tensor constant of `func` by its bytes.
  LogicalResult convertNibbleConstants(func::FuncOp func);
  /// Makes the element-wise `op` read its i4 inputs from their bytes: the
  /// innermost index halved in the map, the nibble selected by its parity.
  LogicalResult lowerNibbleGeneric(linalg::GenericOp op);
  LogicalResult lowerAttention(AttentionOp op);
  LogicalResult lowerAttentionPartial(AttentionPartialOp op);
  LogicalResult decomposeSoftmax(linalg::SoftmaxOp op);
  LogicalResult eraseBlockCasts(func::FuncOp func);

  /// Casts from the byte arguments back to their block-typed tensors, live
  /// only while the pass runs.
  DenseSet<Operation *> blockCasts;
};

/// Returns the byte tensor type that holds `type`'s blocks, or null if `type`
/// is not a block-quantized tensor.
RankedTensorType getByteType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  auto block = dyn_cast<BlockQuantizedType>(tensor.getElementType());
  if (!block)
    return {};
  SmallVector<int64_t> shape(tensor.getShape());
  if (!ShapedType::isDynamic(shape.back()))
    shape.back() *= block.getBlockBytes();
  return RankedTensorType::get(shape, IntegerType::get(type.getContext(), 8));
}

/// Returns whether `type` is a tensor of i4 values (split q4_0 weights).
bool isNibbleTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 &&
         tensor.getElementType().isSignlessInteger(4);
}

/// Returns the byte tensor type that holds the i4 tensor `type` two values
/// per byte: its innermost dimension halved.
RankedTensorType getNibbleByteType(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape.back()))
    shape.back() /= 2;
  return RankedTensorType::get(shape, IntegerType::get(type.getContext(), 8));
}

/// Returns why the i4 tensor `type` cannot be stored two values per byte,
/// or "".
std::string whyNotNibbleBytes(RankedTensorType type) {
  int64_t inner = type.getShape().back();
  if (ShapedType::isDynamic(inner) || inner % 2 != 0)
    return "an i4 tensor's innermost dimension must be static and even (two "
           "values per byte), got " +
           (ShapedType::isDynamic(inner) ? std::string("?")
                                         : std::to_string(inner));
  return "";
}

LogicalResult LowerToLinalgPass::convertSignature(func::FuncOp func) {
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    if (isNibbleTensor(type))
      return func.emitError("cachet-lower-to-linalg: result #")
             << index << " is an i4 tensor; i4 values are read (split q4_0 "
             << "weights), not returned";
  if (func.isExternal()) {
    for (Type result : func.getResultTypes())
      if (getByteType(result))
        return func.emitError("cachet-lower-to-linalg: a declaration cannot "
                              "return a block-quantized tensor");
    return success();
  }
  // Results: the bytes, marked with their format like the arguments.
  SmallVector<Type> results(func.getResultTypes());
  for (auto [index, type] : llvm::enumerate(results)) {
    RankedTensorType bytes = getByteType(type);
    if (!bytes)
      continue;
    func.setResultAttr(
        index, CachetDialect::getBlockFormatAttrName(),
        StringAttr::get(func.getContext(),
                        cast<BlockQuantizedType>(
                            cast<RankedTensorType>(type).getElementType())
                            .getFormatName()));
    type = bytes;
  }
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : entry.getArguments()) {
    // Block types become their ggml bytes; i4 values two per byte.
    Type original = arg.getType();
    RankedTensorType bytes;
    StringRef format;
    if (isNibbleTensor(original)) {
      auto nibbles = cast<RankedTensorType>(original);
      if (std::string why = whyNotNibbleBytes(nibbles); !why.empty())
        return func.emitError("cachet-lower-to-linalg: argument #")
               << arg.getArgNumber() << ": " << why;
      bytes = getNibbleByteType(nibbles);
      format = "i4";
    } else if ((bytes = getByteType(original))) {
      format = cast<BlockQuantizedType>(
                   cast<RankedTensorType>(original).getElementType())
                   .getFormatName();
    } else {
      continue;
    }
    arg.setType(bytes);
    inputs[arg.getArgNumber()] = bytes;
    auto cast = UnrealizedConversionCastOp::create(b, arg.getLoc(), original,
                                                   Value(arg));
    arg.replaceAllUsesExcept(cast.getResult(0), cast);
    blockCasts.insert(cast);
    func.setArgAttr(arg.getArgNumber(), CachetDialect::getBlockFormatAttrName(),
                    b.getStringAttr(format));
  }
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
  return success();
}

FailureOr<Value> LowerToLinalgPass::getBytes(OpBuilder &b, Operation *user,
                                             Value packed) {
  Operation *producer = packed.getDefiningOp();
  if (producer && blockCasts.contains(producer))
    return producer->getOperand(0);
  if (auto slice = dyn_cast_if_present<tensor::ExtractSliceOp>(producer)) {
    FailureOr<Value> source = getBytes(b, user, slice.getSource());
    if (failed(source))
      return failure();
    auto block = cast<BlockQuantizedType>(
        cast<RankedTensorType>(packed.getType()).getElementType());
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      return slice.emitError("cachet-lower-to-linalg: only unit-stride, "
                             "rank-preserving slices of block-quantized "
                             "tensors are supported");
    // Scale the innermost offset and size from blocks to bytes.
    auto toBytes = [&](OpFoldResult blocks) -> OpFoldResult {
      AffineExpr s0;
      bindSymbols(b.getContext(), s0);
      return affine::makeComposedFoldedAffineApply(
          b, slice.getLoc(), s0 * block.getBlockBytes(), {blocks});
    };
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    offsets.back() = toBytes(offsets.back());
    sizes.back() = toBytes(sizes.back());
    return tensor::ExtractSliceOp::create(b, slice.getLoc(), *source, offsets,
                                          sizes, slice.getMixedStrides())
        .getResult();
  }
  InFlightDiagnostic diag = user->emitError(
      "cachet-lower-to-linalg: cannot trace the block-quantized operand to a "
      "function argument");
  if (producer)
    diag << "; it is produced by '" << producer->getName() << "'";
  return failure();
}

FailureOr<Value> LowerToLinalgPass::getNibbleBytes(OpBuilder &b,
                                                   Operation *user,
                                                   Value nibbles) {
  Operation *producer = nibbles.getDefiningOp();
  if (producer && blockCasts.contains(producer))
    return producer->getOperand(0);
  auto type = cast<RankedTensorType>(nibbles.getType());
  if (std::string why = whyNotNibbleBytes(type); !why.empty())
    return user->emitError("cachet-lower-to-linalg: ") << why;
  if (auto expand = dyn_cast_if_present<tensor::ExpandShapeOp>(producer)) {
    // [..., D] to [..., D/B, B] (B even) is [..., D/2] to [..., D/B, B/2].
    FailureOr<Value> source = getNibbleBytes(b, user, expand.getSrc());
    if (failed(source))
      return failure();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(expand);
    RankedTensorType bytes = getNibbleByteType(type);
    SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
    sizes.back() = b.getIndexAttr(type.getShape().back() / 2);
    return tensor::ExpandShapeOp::create(b, expand.getLoc(), bytes, *source,
                                         expand.getReassociationIndices(),
                                         sizes)
        .getResult();
  }
  if (auto slice = dyn_cast_if_present<tensor::ExtractSliceOp>(producer)) {
    FailureOr<Value> source = getNibbleBytes(b, user, slice.getSource());
    if (failed(source))
      return failure();
    std::optional<int64_t> offset =
        getConstantIntValue(slice.getMixedOffsets().back());
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank() ||
        !offset || *offset % 2 != 0)
      return slice.emitError("cachet-lower-to-linalg: only unit-stride, "
                             "rank-preserving slices of i4 tensors that "
                             "start at an even innermost offset are "
                             "supported");
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(slice);
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    offsets.back() = b.getIndexAttr(*offset / 2);
    sizes.back() = b.getIndexAttr(type.getShape().back() / 2);
    return tensor::ExtractSliceOp::create(b, slice.getLoc(), *source, offsets,
                                          sizes, slice.getMixedStrides())
        .getResult();
  }
  InFlightDiagnostic diag = user->emitError(
      "cachet-lower-to-linalg: cannot trace the i4 operand to a function "
      "argument or a constant");
  if (producer)
    diag << "; it is produced by '" << producer->getName() << "'";
  return failure();
}

LogicalResult LowerToLinalgPass::convertNibbleConstants(func::FuncOp func) {
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp op) {
    if (isNibbleTensor(op.getType()))
      constants.push_back(op);
  });
  for (arith::ConstantOp op : constants) {
    auto type = cast<RankedTensorType>(op.getType());
    auto dense = dyn_cast<DenseIntElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError("cachet-lower-to-linalg: an i4 constant must be "
                          "dense");
    if (std::string why = whyNotNibbleBytes(type); !why.empty())
      return op.emitError("cachet-lower-to-linalg: ") << why;
    // Two values per byte, the even one in the low nibble.
    SmallVector<int8_t> bytes(type.getNumElements() / 2, 0);
    for (auto [i, value] : llvm::enumerate(dense.getValues<APInt>()))
      bytes[i / 2] |=
          static_cast<int8_t>((value.getZExtValue() & 15) << (4 * (i % 2)));
    RankedTensorType bytesType = getNibbleByteType(type);
    OpBuilder b(op);
    auto packed = arith::ConstantOp::create(
        b, op.getLoc(),
        DenseElementsAttr::get(bytesType, ArrayRef<int8_t>(bytes)));
    auto cast = UnrealizedConversionCastOp::create(b, op.getLoc(), type,
                                                   packed.getResult());
    op.getResult().replaceAllUsesWith(cast.getResult(0));
    op.erase();
    blockCasts.insert(cast);
  }
  return success();
}

/// Returns `byte` (an i8 of two i4 values) shifted right by 4 (i % 2), i
/// the index of loop `dim` of the enclosing linalg.generic: the value of
/// index i in its low nibble.
static Value shiftToNibble(OpBuilder &b, Location loc, Value byte,
                           unsigned dim) {
  Value i = linalg::IndexOp::create(b, loc, dim);
  Value shift = arith::IndexCastOp::create(
      b, loc, b.getI8Type(),
      arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, i, indexConst(b, loc, 2)),
          indexConst(b, loc, 4)));
  return arith::ShRUIOp::create(b, loc, byte, shift);
}

/// Replaces the uses of `nibble` (an i4 computed from a byte `byte` as
/// `trunci(byte >> shift)`) by integer ops on the byte where the use only
/// widens or converts it: extui / extsi / uitofp / sitofp, so that no i4
/// arithmetic is left for targets without 4-bit integers (SPIR-V).
static void widenNibbleUses(OpBuilder &b, Value nibble, Value shifted) {
  Location loc = nibble.getLoc();
  Type i8 = b.getI8Type();
  auto c8 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i8, v).getResult();
  };
  // The nibble zero- or sign-extended in i8, made where a use needs it.
  auto low = [&] { return arith::AndIOp::create(b, loc, shifted, c8(15)); };
  auto signedLow = [&] {
    return arith::ShRSIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, shifted, c8(4)), c8(4));
  };
  auto resize = [&](Value v, Type to, bool isSigned) -> Value {
    unsigned width = to.getIntOrFloatBitWidth();
    if (width == 8)
      return v;
    if (width < 8)
      return arith::TruncIOp::create(b, loc, to, v);
    return isSigned ? arith::ExtSIOp::create(b, loc, to, v).getResult()
                    : arith::ExtUIOp::create(b, loc, to, v).getResult();
  };
  for (OpOperand &use : llvm::make_early_inc_range(nibble.getUses())) {
    Operation *user = use.getOwner();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(user);
    Value replacement;
    if (auto ext = dyn_cast<arith::ExtUIOp>(user))
      replacement = resize(low(), ext.getType(), false);
    else if (auto ext = dyn_cast<arith::ExtSIOp>(user))
      replacement = resize(signedLow(), ext.getType(), true);
    else if (auto cvt = dyn_cast<arith::UIToFPOp>(user))
      replacement = arith::UIToFPOp::create(b, loc, cvt.getType(), low());
    else if (auto cvt = dyn_cast<arith::SIToFPOp>(user))
      replacement = arith::SIToFPOp::create(b, loc, cvt.getType(), signedLow());
    if (!replacement)
      continue;
    user->getResult(0).replaceAllUsesWith(replacement);
    user->erase();
  }
}

LogicalResult LowerToLinalgPass::lowerNibbleGeneric(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Block *body = op.getBody();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  Location loc = op.getLoc();
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isNibbleTensor(input->get().getType()))
      continue;
    unsigned index = input->getOperandNumber();
    AffineMap map = maps[index];
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!dim)
      return op.emitError("cachet-lower-to-linalg: the innermost index of "
                          "i4 operand #")
             << index << " is not a loop dimension (" << AffineMapAttr::get(map)
             << ")";
    OpBuilder outer(op);
    FailureOr<Value> bytes = getNibbleBytes(outer, op, input->get());
    if (failed(bytes))
      return failure();
    input->set(*bytes);
    maps[index] = map.replace(dim, dim.floorDiv(2), map.getNumDims(),
                              map.getNumSymbols());
    // The value: the byte shifted right by 4 (i % 2), its low nibble.
    BlockArgument arg = body->getArgument(index);
    arg.setType(b.getI8Type());
    Value shifted = shiftToNibble(b, loc, arg, dim.getPosition());
    auto nibble = arith::TruncIOp::create(b, loc, b.getIntegerType(4), shifted);
    arg.replaceAllUsesExcept(nibble.getResult(), shifted.getDefiningOp());
    widenNibbleUses(b, nibble.getResult(), shifted);
    if (nibble->use_empty())
      nibble->erase();
  }
  op.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  return success();
}

LogicalResult LowerToLinalgPass::lowerDequant(Operation *op, Value input,
                                              Value scales, Value init,
                                              AffineMap inputMap, Value bytes) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto resultType = cast<RankedTensorType>(init.getType());
  unsigned rank = resultType.getRank();
  Type element = resultType.getElementType();
  auto block = dyn_cast<BlockQuantizedType>(
      cast<RankedTensorType>(input.getType()).getElementType());
  bool nibbles = isNibbleTensor(input.getType());
  AffineExpr last = inputMap.getResults().back();
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  if (block && !bytes) {
    FailureOr<Value> resolved = getBytes(b, op, input);
    if (failed(resolved))
      return failure();
    bytes = *resolved;
  } else if (!block) {
    // Split q8_0: values map one to one, the scale of value d is d / 32.
    // Split q4_0: value d in byte d / 2.
    Value values = input;
    AffineMap valuesMap = inputMap;
    if (nibbles) {
      FailureOr<Value> resolved = getNibbleBytes(b, op, input);
      if (failed(resolved))
        return failure();
      values = *resolved;
      valuesMap = inputMap.replace(last, last.floorDiv(2), rank, 0);
    }
    inputs = {values, scales};
    maps = {valuesMap, inputMap.replace(last, last.floorDiv(32), rank, 0)};
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{init}, maps, iterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value value;
        if (block) {
          // The input's indices, in values: the map permutes the loops.
          SmallVector<Value> indices;
          for (AffineExpr expr : inputMap.getResults())
            indices.push_back(linalg::IndexOp::create(
                nb, nloc, cast<AffineDimExpr>(expr).getPosition()));
          ArrayRef<Value> prefix = ArrayRef<Value>(indices).drop_back();
          BlockDecoder decoder(
              nb, nloc, block, [&](OpBuilder &rb, Location rl, Value offset) {
                SmallVector<Value> at(prefix.begin(), prefix.end());
                at.push_back(offset);
                return tensor::ExtractOp::create(rb, rl, bytes, at).getResult();
              });
          value = decoder.decodeValue(indices.back());
        } else {
          Value q = args[0];
          if (nibbles) {
            // q4_0: the nibble of value d (low for even d), less 8.
            Type i8 = nb.getI8Type();
            Value nibble = arith::AndIOp::create(
                nb, nloc,
                shiftToNibble(nb, nloc, q,
                              cast<AffineDimExpr>(last).getPosition()),
                arith::ConstantIntOp::create(nb, nloc, i8, 15));
            q = arith::SubIOp::create(
                nb, nloc, nibble,
                arith::ConstantIntOp::create(nb, nloc, i8, 8));
          }
          Value qf = arith::SIToFPOp::create(nb, nloc, nb.getF32Type(), q);
          Value d = castFloat(nb, nloc, args[1], nb.getF32Type());
          value = arith::MulFOp::create(nb, nloc, qf, d);
        }
        linalg::YieldOp::create(nb, nloc, castFloat(nb, nloc, value, element));
      });
  if (block)
    generic->setAttr(isa<DequantTransposeOp>(op)
                         ? CachetDialect::getDequantTransposeAttrName()
                         : CachetDialect::getBlockDequantizeAttrName(),
                     TypeAttr::get(block));
  else if (isa<DequantizeOp>(op))
    // Split q8_0 (q4_0): the values (nibbles) and scales of q8_0 (q4_0)
    // blocks, in two buffers.
    generic->setAttr(CachetDialect::getBlockDequantizeAttrName(),
                     nibbles ? TypeAttr::get(Q4_0Type::get(b.getContext()))
                             : TypeAttr::get(Q8_0Type::get(b.getContext())));
  op->getResult(0).replaceAllUsesWith(generic.getResult(0));
  op->erase();
  return success();
}

LogicalResult LowerToLinalgPass::lowerDequantize(DequantizeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  unsigned rank = resultType.getRank();
  Value input = op.getInput();
  auto block = dyn_cast<BlockQuantizedType>(
      cast<RankedTensorType>(input.getType()).getElementType());
  // Dynamic sizes come from the input; for a packed input from its bytes
  // (the block-typed value itself goes away).
  Value source = input;
  if (block) {
    FailureOr<Value> bytes = getBytes(b, op, input);
    if (failed(bytes))
      return failure();
    source = *bytes;
  }
  Value empty = emptyTensor(
      b, loc, resultType.getShape(), resultType.getElementType(),
      [&](unsigned dim) -> Value {
        Value size = tensor::DimOp::create(b, loc, source, dim);
        if (dim + 1 < rank || !block)
          return size;
        Value blocks = arith::DivUIOp::create(
            b, loc, size, indexConst(b, loc, block.getBlockBytes()));
        return arith::MulIOp::create(
            b, loc, blocks, indexConst(b, loc, block.getBlockValues()));
      });
  return lowerDequant(op, input, op.getScales(), empty,
                      b.getMultiDimIdentityMap(rank), block ? source : Value());
}

LogicalResult LowerToLinalgPass::lowerDequantTranspose(DequantTransposeOp op) {
  // Iteration space (kv_head, pos, dim) over the head-major result; the
  // token-major input is read at (pos, kv_head, dim).
  AffineExpr h, s, d;
  bindDims(op.getContext(), h, s, d);
  return lowerDequant(op, op.getInput(), op.getScales(), op.getInit(),
                      AffineMap::get(3, 0, {s, h, d}, op.getContext()));
}

void LowerToLinalgPass::replaceWithBytes(OpBuilder &b, Value value,
                                         Value bytes) {
  auto cast = UnrealizedConversionCastOp::create(b, value.getLoc(),
                                                 value.getType(), bytes);
  blockCasts.insert(cast);
  value.replaceAllUsesWith(cast.getResult(0));
}

LogicalResult LowerToLinalgPass::lowerQuantize(QuantizeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value input = op.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  unsigned rank = inputType.getRank();
  auto block = dyn_cast<BlockQuantizedType>(
      cast<RankedTensorType>(op.getResult().getType()).getElementType());
  // The innermost size in values, and the block count.
  Value values = tensor::DimOp::create(b, loc, input, rank - 1);
  Value blocks = arith::DivUIOp::create(b, loc, values, indexConst(b, loc, 32));
  auto sizeOf = [&](RankedTensorType type, Value inner) {
    return emptyTensor(b, loc, type.getShape(), type.getElementType(),
                       [&](unsigned dim) -> Value {
                         if (dim + 1 < rank)
                           return tensor::DimOp::create(b, loc, input, dim);
                         return inner;
                       });
  };
  // Reads value `lane` of the block `blockIndex` of the row `prefix`.
  auto reader = [&](ValueRange prefix, Value blockIndex) {
    return [&, prefix = SmallVector<Value>(prefix),
            blockIndex](OpBuilder &rb, Location rl, Value lane) -> Value {
      SmallVector<Value> at(prefix);
      at.push_back(arith::AddIOp::create(
          rb, rl,
          arith::MulIOp::create(rb, rl, blockIndex, indexConst(rb, rl, 32)),
          lane));
      Value x = tensor::ExtractOp::create(rb, rl, input, at);
      return castFloat(rb, rl, x, rb.getF32Type());
    };
  };
  // One linalg.generic, so that the GPU pipeline makes it one kernel: its
  // loops run over the result and each iteration reads its block's 32 values.
  auto indices = [&](OpBuilder &nb, Location nloc) {
    SmallVector<Value> result;
    for (unsigned i = 0; i < rank; ++i)
      result.push_back(linalg::IndexOp::create(nb, nloc, i));
    return result;
  };
  if (block) {
    RankedTensorType bytesType =
        getByteType(cast<RankedTensorType>(op.getResult().getType()));
    Value init =
        sizeOf(bytesType,
               arith::MulIOp::create(
                   b, loc, blocks, indexConst(b, loc, block.getBlockBytes())));
    // One generic of bytes, each iteration scanning its block's 32 values
    // (a scan per block first, then the bytes from its results, measured
    // 1.5% slower in the 8B model's prefill: two launches of 5.5 + 10.3 us
    // per K or V on an H100 against one of 10.5; docs/BENCHMARKS.md, run
    // 146). Marked for cachet-lower-quantize, which may replace it by one
    // kernel of a thread per block (the same bytes).
    auto generic = linalg::GenericOp::create(
        b, loc, bytesType, ValueRange(), ValueRange{init},
        {b.getMultiDimIdentityMap(rank)}, iterators(rank),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> at = indices(nb, nloc);
          Value blockBytes = indexConst(nb, nloc, block.getBlockBytes());
          Value blockIndex =
              arith::DivUIOp::create(nb, nloc, at.back(), blockBytes);
          Value byte = arith::RemUIOp::create(nb, nloc, at.back(), blockBytes);
          BlockEncoder encoder(
              nb, nloc, block, op.getRounding(),
              reader(ArrayRef<Value>(at).drop_back(), blockIndex));
          linalg::YieldOp::create(nb, nloc, encoder.encodeByte(byte));
        });
    generic->setAttr(CachetDialect::getQuantizeAttrName(),
                     TypeAttr::get(block));
    generic->setAttr(CachetDialect::getQuantizeRoundingAttrName(),
                     op.getRoundingAttr());
    replaceWithBytes(b, op.getResult(), generic.getResult(0));
    op.erase();
    return success();
  }
  // Split q8_0: the quants over the values, each iteration also writing its
  // block's scale (the same value from all 32).
  auto quantsType = cast<RankedTensorType>(op.getResult().getType());
  auto scalesType = cast<RankedTensorType>(op.getScales().getType());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineExpr last = id.getResults().back();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{quantsType, scalesType}, ValueRange(),
      ValueRange{sizeOf(quantsType, values), sizeOf(scalesType, blocks)},
      {id, id.replace(last, last.floorDiv(32), rank, 0)}, iterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> at = indices(nb, nloc);
        Value c32 = indexConst(nb, nloc, 32);
        Value blockIndex = arith::DivUIOp::create(nb, nloc, at.back(), c32);
        Value lane = arith::RemUIOp::create(nb, nloc, at.back(), c32);
        BlockEncoder encoder(
            nb, nloc, Q8_0Type::get(op.getContext()), op.getRounding(),
            reader(ArrayRef<Value>(at).drop_back(), blockIndex));
        auto [q, d] = encoder.encodeQ8(lane);
        linalg::YieldOp::create(nb, nloc, ValueRange{q, d});
      });
  op.getResult().replaceAllUsesWith(generic.getResult(0));
  op.getScales().replaceAllUsesWith(generic.getResult(1));
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::lowerBlockEmpty(tensor::EmptyOp op) {
  OpBuilder b(op);
  RankedTensorType bytesType = getByteType(op.getType());
  auto block = cast<BlockQuantizedType>(op.getType().getElementType());
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  AffineExpr s0;
  bindSymbols(b.getContext(), s0);
  sizes.back() = affine::makeComposedFoldedAffineApply(
      b, op.getLoc(), s0 * block.getBlockBytes(), {sizes.back()});
  Value bytes = tensor::EmptyOp::create(b, op.getLoc(), sizes,
                                        bytesType.getElementType());
  replaceWithBytes(b, op.getResult(), bytes);
  op.erase();
  return success();
}

LogicalResult
LowerToLinalgPass::lowerBlockInsertSlice(tensor::InsertSliceOp op) {
  OpBuilder b(op);
  auto block = cast<BlockQuantizedType>(op.getDestType().getElementType());
  if (!op.hasUnitStride() ||
      op.getSourceType().getRank() != op.getDestType().getRank())
    return op.emitError("cachet-lower-to-linalg: only unit-stride, "
                        "rank-preserving insertions into block-quantized "
                        "tensors are supported");
  FailureOr<Value> source = getBytes(b, op, op.getSource());
  if (failed(source))
    return failure();
  FailureOr<Value> dest = getBytes(b, op, op.getDest());
  if (failed(dest))
    return failure();
  AffineExpr s0;
  bindSymbols(b.getContext(), s0);
  auto toBytes = [&](OpFoldResult blocks) -> OpFoldResult {
    return affine::makeComposedFoldedAffineApply(
        b, op.getLoc(), s0 * block.getBlockBytes(), {blocks});
  };
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  offsets.back() = toBytes(offsets.back());
  sizes.back() = toBytes(sizes.back());
  Value bytes = tensor::InsertSliceOp::create(
      b, op.getLoc(), *source, *dest, offsets, sizes, op.getMixedStrides());
  replaceWithBytes(b, op.getResult(), bytes);
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::lowerBlockMaterialize(
    bufferization::MaterializeInDestinationOp op) {
  OpBuilder b(op);
  FailureOr<Value> source = getBytes(b, op, op.getSource());
  if (failed(source))
    return failure();
  FailureOr<Value> dest = getBytes(b, op, op.getDest());
  if (failed(dest))
    return failure();
  Value bytes = bufferization::MaterializeInDestinationOp::create(
                    b, op.getLoc(), *source, *dest)
                    .getResult();
  replaceWithBytes(b, op.getResult(), bytes);
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::lowerReturn(func::ReturnOp op) {
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!getByteType(operand.get().getType()))
      continue;
    FailureOr<Value> bytes = getBytes(b, op, operand.get());
    if (failed(bytes))
      return failure();
    operand.set(*bytes);
  }
  return success();
}

/// The operands and attributes `cachet.attention` and
/// `cachet.attention_partial` share, and the IR both start with.
struct AttentionLowering {
  OpBuilder &b;
  Location loc;
  Value query, key, value, mask, keyOffset;
  bool tokenMajor;
  double scale;
  std::optional<int64_t> causal;
  /// The causal offset as a run-time index value (instead of `causal`).
  Value causalPosition;
  Type acc;
  int64_t group;

  MLIRContext *ctx() { return b.getContext(); }

  /// `[Hq, Sq, X]` of `acc` filled with zeros; X is the KV length (of
  /// `tensor`'s dimension `dim`).
  Value zeros(int64_t x, Value tensor, unsigned dim) {
    auto queryType = cast<RankedTensorType>(query.getType());
    return zeroFilled(
        b, loc,
        emptyTensor(b, loc,
                    {queryType.getDimSize(0), queryType.getDimSize(1), x}, acc,
                    [&](unsigned d) -> Value {
                      return tensor::DimOp::create(
                          b, loc, d < 2 ? query : tensor, d < 2 ? d : dim);
                    }));
  }

  /// The K or V map of an iteration (h, i, a, b) reading position `pos` and
  /// head dimension `dim`.
  AffineMap kvMap(AffineExpr pos, AffineExpr dim) {
    AffineExpr h = getAffineDimExpr(0, ctx()), kvHead = h.floorDiv(group);
    return tokenMajor ? AffineMap::get(4, 0, {pos, kvHead, dim}, ctx())
                      : AffineMap::get(4, 0, {kvHead, pos, dim}, ctx());
  }

  /// `acc += l * r`, both converted to `acc`.
  void multiplyAccumulate(OpBuilder &nb, Location nloc, ValueRange args) {
    Value l = castFloat(nb, nloc, args[0], acc);
    Value r = castFloat(nb, nloc, args[1], acc);
    Value product = arith::MulFOp::create(nb, nloc, l, r);
    Value sum = arith::AddFOp::create(nb, nloc, args[2], product);
    linalg::YieldOp::create(nb, nloc, sum);
  }

  /// scale * Q K^T (+ mask), causal keys masked with -inf: `[Hq, Sq, S]`.
  Value maskedScores() {
    MLIRContext *c = ctx();
    unsigned posDim = tokenMajor ? 0 : 1;
    auto keyType = cast<RankedTensorType>(key.getType());
    AffineExpr h, i, j, x;
    bindDims(c, h, i, j, x);
    Value init = zeros(keyType.getDimSize(posDim), key, posDim);
    Value scores =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{query, key}, ValueRange{init},
            {AffineMap::get(4, 0, {h, i, x}, c), kvMap(j, x),
             AffineMap::get(4, 0, {h, i, j}, c)},
            iterators(3, 1),
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              multiplyAccumulate(nb, nloc, args);
            })
            .getResult(0);

    SmallVector<Value> inputs = {scores};
    AffineMap id3 = b.getMultiDimIdentityMap(3);
    SmallVector<AffineMap> maps = {id3};
    if (mask) {
      inputs.push_back(mask);
      maps.push_back(cast<RankedTensorType>(mask.getType()).getRank() == 2
                         ? AffineMap::get(3, 0, {i, j}, c)
                         : id3);
    }
    maps.push_back(id3);
    Value maskedInit = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, scores), acc);
    return linalg::GenericOp::create(
               b, loc, scores.getType(), inputs, ValueRange{maskedInit}, maps,
               iterators(3),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value factor = arith::ConstantOp::create(
                     nb, nloc, nb.getFloatAttr(acc, scale));
                 Value result =
                     arith::MulFOp::create(nb, nloc, args[0], factor);
                 if (mask)
                   result = arith::AddFOp::create(
                       nb, nloc, result, castFloat(nb, nloc, args[1], acc));
                 if (causal || causalPosition) {
                   Value queryIndex = linalg::IndexOp::create(nb, nloc, 1);
                   Value pos = linalg::IndexOp::create(nb, nloc, 2);
                   if (keyOffset)
                     pos = arith::AddIOp::create(nb, nloc, pos, keyOffset);
                   Value last = arith::AddIOp::create(
                       nb, nloc, queryIndex,
                       causalPosition ? causalPosition
                                      : indexConst(nb, nloc, *causal));
                   Value visible = arith::CmpIOp::create(
                       nb, nloc, arith::CmpIPredicate::ule, pos, last);
                   Value minusInf = arith::ConstantOp::create(
                       nb, nloc,
                       nb.getFloatAttr(
                           acc, -std::numeric_limits<double>::infinity()));
                   result = arith::SelectOp::create(nb, nloc, visible, result,
                                                    minusInf);
                 }
                 linalg::YieldOp::create(nb, nloc, result);
               })
        .getResult(0);
  }

  /// sum_j P[h, i, j] V[g(h), j, :]: `[Hq, Sq, Dv]` of `acc`, added to
  /// `init` (zeros when null).
  Value probsTimesValue(Value probs, Value init = {}) {
    MLIRContext *c = ctx();
    AffineExpr h, i, e, pos;
    bindDims(c, h, i, e, pos);
    auto valueType = cast<RankedTensorType>(value.getType());
    if (!init)
      init = zeros(valueType.getDimSize(2), value, 2);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{probs, value},
               ValueRange{init},
               {AffineMap::get(4, 0, {h, i, pos}, c), kvMap(pos, e),
                AffineMap::get(4, 0, {h, i, e}, c)},
               iterators(3, 1),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 multiplyAccumulate(nb, nloc, args);
               })
        .getResult(0);
  }

  /// Reduces `[Hq, Sq, S]` over S into `[Hq, Sq]` of `acc`, starting from
  /// `initial` and combining with `combine`.
  Value
  reduceRows(Value tensor, double initial,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
    MLIRContext *c = ctx();
    AffineExpr h, i, j;
    bindDims(c, h, i, j);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tensor);
    sizes.pop_back();
    Value init = tensor::EmptyOp::create(b, loc, sizes, acc);
    Value start =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(acc, initial));
    init = linalg::FillOp::create(b, loc, start, init).getResult(0);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{tensor}, ValueRange{init},
               {b.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {h, i}, c)},
               {utils::IteratorType::parallel, utils::IteratorType::parallel,
                utils::IteratorType::reduction},
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value element = castFloat(nb, nloc, args[0], acc);
                 linalg::YieldOp::create(nb, nloc,
                                         combine(nb, nloc, args[1], element));
               })
        .getResult(0);
  }
};

/// Returns Hq / Hkv of an attention op, or an error if not static.
template <typename OpTy> FailureOr<int64_t> staticGroupSize(OpTy op) {
  int64_t hq = cast<RankedTensorType>(op.getQuery().getType()).getDimSize(0);
  int64_t hkv = cast<RankedTensorType>(op.getKey().getType())
                    .getDimSize(op.getKVHeadDim());
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return op.emitError("cachet-lower-to-linalg: the query and KV head counts "
                        "must be static (the GQA map needs their ratio)");
  return hq / hkv;
}

template <typename OpTy>
FailureOr<AttentionLowering> makeLowering(OpBuilder &b, OpTy op, Value mask,
                                          Value keyOffset) {
  FailureOr<int64_t> group = staticGroupSize(op);
  if (failed(group))
    return failure();
  return AttentionLowering{b,
                           op.getLoc(),
                           op.getQuery(),
                           op.getKey(),
                           op.getValue(),
                           mask,
                           keyOffset,
                           op.getKvLayout() == KVLayout::TokenMajor,
                           op.getScale().convertToDouble(),
                           op.getCausalOffset(),
                           op.getCausalPosition(),
                           op.getAccumulator().value_or(b.getF32Type()),
                           *group};
}

LogicalResult LowerToLinalgPass::lowerAttention(AttentionOp op) {
  OpBuilder b(op);
  FailureOr<AttentionLowering> lowering =
      makeLowering(b, op, op.getMask(), Value());
  if (failed(lowering))
    return failure();
  Location loc = op.getLoc();
  Value masked = lowering->maskedScores();
  Value probsInit = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, masked), lowering->acc);
  Value probs = linalg::SoftmaxOp::create(b, loc, masked.getType(), masked,
                                          probsInit, /*dimension=*/2)
                    .getResult()[0];
  Type valueElement =
      cast<RankedTensorType>(op.getValue().getType()).getElementType();
  Value out =
      lowering->probsTimesValue(castTensor(b, loc, probs, valueElement));
  Type element =
      cast<RankedTensorType>(op.getResult().getType()).getElementType();
  op.replaceAllUsesWith(castTensor(b, loc, out, element));
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::lowerAttentionPartial(AttentionPartialOp op) {
  OpBuilder b(op);
  FailureOr<AttentionLowering> lowering =
      makeLowering(b, op, Value(), op.getKeyOffset());
  if (failed(lowering))
    return failure();
  Location loc = op.getLoc();
  Type acc = lowering->acc;
  MLIRContext *ctx = b.getContext();
  AffineExpr h, i, j;
  bindDims(ctx, h, i, j);
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  AffineMap rows = AffineMap::get(3, 0, {h, i}, ctx);
  auto constant = [&](OpBuilder &nb, Location nloc, double v) -> Value {
    return arith::ConstantOp::create(nb, nloc, nb.getFloatAttr(acc, v));
  };
  auto emptyLike = [&](Value tensor, Type element) -> Value {
    return tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, tensor), element);
  };
  // Base-2 scores t = log2(e) s (-inf where masked) and their row max.
  Value masked = lowering->maskedScores();
  Value scores =
      linalg::GenericOp::create(
          b, loc, masked.getType(), ValueRange{masked},
          ValueRange{emptyLike(masked, acc)}, {id3, id3}, iterators(3),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(
                nb, nloc,
                arith::MulFOp::create(nb, nloc, args[0],
                                      constant(nb, nloc, 1.4426950408889634))
                    .getResult());
          })
          .getResult(0);
  Value chunkMax = lowering->reduceRows(
      scores, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location nloc, Value l, Value r) -> Value {
        return arith::MaximumFOp::create(nb, nloc, l, r);
      });
  // max' = max(max, chunk max); a = 2^(max - max'), 1 while max' is -inf.
  Value maxIn = castTensor(b, loc, op.getMaxIn(), acc);
  // The new state is written over the old (outs = the state in, each
  // element read before it is written), so that bufferization keeps the
  // state of a chunk loop in place.
  auto stateInit = [&](Value in) {
    return getElementTypeOrSelf(in.getType()) == acc ? in : emptyLike(in, acc);
  };
  auto stats = linalg::GenericOp::create(
      b, loc, TypeRange{chunkMax.getType(), chunkMax.getType()},
      ValueRange{maxIn, chunkMax},
      ValueRange{stateInit(op.getMaxIn()), emptyLike(chunkMax, acc)},
      {id2, id2, id2, id2}, iterators(2),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value newMax = arith::MaximumFOp::create(nb, nloc, args[0], args[1]);
        Value none = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OEQ, newMax,
            constant(nb, nloc, -std::numeric_limits<double>::infinity()));
        Value alpha = math::Exp2Op::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, args[0], newMax));
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{newMax, arith::SelectOp::create(
                                   nb, nloc, none, constant(nb, nloc, 1), alpha)
                                   .getResult()});
      });
  Value newMax = stats.getResult(0), alpha = stats.getResult(1);
  // p = 2^(t - max') rounded to the value type, 0 while max' is -inf.
  Type valueElement =
      cast<RankedTensorType>(op.getValue().getType()).getElementType();
  auto scoresType = cast<RankedTensorType>(scores.getType());
  Value probs =
      linalg::GenericOp::create(
          b, loc, scoresType.clone(valueElement), ValueRange{scores, newMax},
          ValueRange{emptyLike(scores, valueElement)}, {id3, rows, id3},
          iterators(3),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value none = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ, args[1],
                constant(nb, nloc, -std::numeric_limits<double>::infinity()));
            Value p = math::Exp2Op::create(
                nb, nloc, arith::SubFOp::create(nb, nloc, args[0], args[1]));
            p = arith::SelectOp::create(nb, nloc, none, constant(nb, nloc, 0),
                                        p);
            linalg::YieldOp::create(nb, nloc,
                                    castFloat(nb, nloc, p, valueElement));
          })
          .getResult(0);
  // sum' = a sum + sum_j p_j; acc' = a acc + sum_j p_j V_j.
  Value chunkSum = lowering->reduceRows(
      probs, 0.0, [](OpBuilder &nb, Location nloc, Value l, Value r) -> Value {
        return arith::AddFOp::create(nb, nloc, l, r);
      });
  Value sumIn = castTensor(b, loc, op.getSumIn(), acc);
  Value newSum =
      linalg::GenericOp::create(
          b, loc, chunkSum.getType(), ValueRange{sumIn, alpha, chunkSum},
          ValueRange{stateInit(op.getSumIn())}, {id2, id2, id2, id2},
          iterators(2),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value scaled = arith::MulFOp::create(nb, nloc, args[0], args[1]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, scaled, args[2]).getResult());
          })
          .getResult(0);
  Value accIn = castTensor(b, loc, op.getAcc(), acc);
  Value scaledAcc =
      linalg::GenericOp::create(
          b, loc, accIn.getType(), ValueRange{accIn, alpha},
          ValueRange{stateInit(op.getAcc())}, {id3, rows, id3}, iterators(3),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(
                nb, nloc,
                arith::MulFOp::create(nb, nloc, args[0], args[1]).getResult());
          })
          .getResult(0);
  Value out = lowering->probsTimesValue(probs, scaledAcc);
  Type f32 = b.getF32Type();
  op.getOut().replaceAllUsesWith(castTensor(b, loc, out, f32));
  op.getMax().replaceAllUsesWith(castTensor(b, loc, newMax, f32));
  op.getSum().replaceAllUsesWith(castTensor(b, loc, newSum, f32));
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::decomposeSoftmax(linalg::SoftmaxOp op) {
  OpBuilder b(op);
  FailureOr<SmallVector<Value>> decomposed =
      cast<linalg::AggregatedOpInterface>(op.getOperation())
          .decomposeOperation(b);
  if (failed(decomposed))
    return op.emitError("cachet-lower-to-linalg: cannot decompose softmax");
  op->replaceAllUsesWith(*decomposed);
  op.erase();
  return success();
}

LogicalResult LowerToLinalgPass::eraseBlockCasts(func::FuncOp func) {
  // Slices of block-quantized tensors were re-created on the bytes; the
  // originals are dead now, innermost first.
  SmallVector<Operation *> views;
  func.walk([&](Operation *op) {
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp>(op) &&
        (getByteType(op->getResult(0).getType()) ||
         isNibbleTensor(op->getResult(0).getType())))
      views.push_back(op);
  });
  for (Operation *view : llvm::reverse(views))
    if (view->use_empty())
      view->erase();
  for (Operation *cast : llvm::make_early_inc_range(blockCasts)) {
    if (cast->getParentOfType<func::FuncOp>() != func)
      continue;
    // A cast back to the bytes (the flash-attention kernels' in-kernel
    // dequantization reads them) is the bytes themselves.
    Value bytes = cast->getOperand(0);
    for (Operation *user : llvm::make_early_inc_range(cast->getUsers())) {
      auto back = dyn_cast<UnrealizedConversionCastOp>(user);
      if (back && back->getNumOperands() == 1 && back->getNumResults() == 1 &&
          back->getResult(0).getType() == bytes.getType()) {
        back->getResult(0).replaceAllUsesWith(bytes);
        back->erase();
      }
    }
    if (!cast->use_empty()) {
      Operation *user = *cast->getUsers().begin();
      return user->emitError("cachet-lower-to-linalg: '")
             << user->getName() << "' uses "
             << (isNibbleTensor(cast->getResult(0).getType())
                     ? "an i4 tensor; only cachet.dequantize, element-wise "
                       "linalg.generic ops, tensor.extract_slice and "
                       "tensor.expand_shape can"
                     : "a block-quantized tensor; only cachet.dequantize, "
                       "cachet.dequant_transpose, tensor.extract_slice, "
                       "tensor.insert_slice, "
                       "bufferization.materialize_in_destination and "
                       "func.return can");
    }
    blockCasts.erase(cast);
    cast->erase();
  }
  return success();
}

void LowerToLinalgPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Loads of immutable ml_program globals: upstream bufferizes global_load,
  // not global_load_const; for an immutable global they are the same.
  module.walk([](ml_program::GlobalLoadConstOp load) {
    OpBuilder b(load);
    auto plain = ml_program::GlobalLoadOp::create(
        b, load.getLoc(), load.getType(), load.getGlobalAttr());
    load.replaceAllUsesWith(plain.getResult());
    load.erase();
  });
  for (auto func : module.getOps<func::FuncOp>()) {
    if (failed(convertSignature(func)) || failed(convertNibbleConstants(func)))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      // Element-wise ops reading i4 tensors (not raised to a dequantize).
      if (auto generic = dyn_cast<linalg::GenericOp>(op);
          generic && llvm::any_of(generic.getDpsInputs(), [](Value v) {
            return isNibbleTensor(v.getType());
          }))
        ops.push_back(op);
      if (isa<DequantizeOp, DequantTransposeOp, QuantizeOp, AttentionOp,
              AttentionPartialOp>(op))
        ops.push_back(op);
      // Block-typed tensors a quantize fills or a function returns.
      if (isa<tensor::EmptyOp, tensor::InsertSliceOp,
              bufferization::MaterializeInDestinationOp>(op) &&
          getByteType(op->getResult(0).getType()))
        ops.push_back(op);
      if (isa<func::ReturnOp>(op) &&
          llvm::any_of(op->getOperandTypes(),
                       [](Type type) { return getByteType(type); }))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult lowered =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](DequantizeOp op) { return lowerDequantize(op); })
              .Case([&](DequantTransposeOp op) {
                return lowerDequantTranspose(op);
              })
              .Case([&](QuantizeOp op) { return lowerQuantize(op); })
              .Case([&](tensor::EmptyOp op) { return lowerBlockEmpty(op); })
              .Case([&](tensor::InsertSliceOp op) {
                return lowerBlockInsertSlice(op);
              })
              .Case([&](bufferization::MaterializeInDestinationOp op) {
                return lowerBlockMaterialize(op);
              })
              .Case([&](func::ReturnOp op) { return lowerReturn(op); })
              .Case(
                  [&](linalg::GenericOp op) { return lowerNibbleGeneric(op); })
              .Case([&](AttentionOp op) { return lowerAttention(op); })
              .Case([&](AttentionPartialOp op) {
                return lowerAttentionPartial(op);
              });
      if (failed(lowered))
        return signalPassFailure();
    }
    if (failed(eraseBlockCasts(func)))
      return signalPassFailure();
    SmallVector<linalg::SoftmaxOp> softmaxes;
    func.walk([&](linalg::SoftmaxOp op) { softmaxes.push_back(op); });
    for (linalg::SoftmaxOp op : softmaxes)
      if (failed(decomposeSoftmax(op)))
        return signalPassFailure();
  }
}

} // namespace
