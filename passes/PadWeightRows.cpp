//===- PadWeightRows.cpp - pad the rows of aliasing dense weights --------===//
//
// Pads the row stride of dense weights whose row size is a multiple of the
// device's cache-set alias stride. The matcher is cachet/Analysis/WeightRows.h,
// the decision cachet/Analysis/RowPadding.h; this file applies the rewrite
// and reports it.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/RowPadding.h"
#include "cachet/Analysis/WeightRows.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace cachet {
#define GEN_PASS_DEF_PADWEIGHTROWS
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

/// Returns `shape` with the innermost dimension grown to `pitch`.
static SmallVector<int64_t> getPaddedShape(ArrayRef<int64_t> shape,
                                           int64_t pitch) {
  SmallVector<int64_t> padded(shape);
  padded.back() = pitch;
  return padded;
}

/// The stored bytes of a constant weight: every element, or one element
/// that stands for all of them.
struct RawElements {
  ArrayRef<char> data;
  bool splat = false;
};

/// Returns the bytes of `value`, a dense or dense_resource elements
/// attribute with the row shape `shape`. Otherwise returns std::nullopt and
/// sets `reason`.
static std::optional<RawElements> getRawElements(Attribute value,
                                                 const WeightRowShape &shape,
                                                 std::string &reason) {
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value))
    return RawElements{dense.getRawData(), dense.isSplat()};
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value);
  if (!resource) {
    reason = "the value is not a dense or dense_resource elements attribute";
    return std::nullopt;
  }
  const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob) {
    reason = "the dense_resource blob is not available";
    return std::nullopt;
  }
  size_t expected = *shape.rows * shape.getRowBytes();
  if (blob->getData().size() != expected) {
    reason = "the dense_resource blob holds " +
             std::to_string(blob->getData().size()) + " B, not " +
             std::to_string(expected) + " B";
    return std::nullopt;
  }
  return RawElements{blob->getData(), /*splat=*/false};
}

/// Returns `value` (see getRawElements) laid out with rows of `pitch`
/// elements, the gaps zeroed (all-zero bits: +0.0 for f16, bf16 and f32), as
/// the same kind of attribute.
static TypedAttr padConstantRows(Attribute value, const WeightRowShape &shape,
                                 int64_t pitch) {
  std::string reason;
  RawElements raw = *getRawElements(value, shape, reason);
  auto type = cast<ShapedType>(cast<TypedAttr>(value).getType());
  auto paddedType = RankedTensorType::get(
      getPaddedShape(type.getShape(), pitch), type.getElementType());
  size_t elementBytes = shape.elementBytes;
  size_t rowBytes = shape.getRowBytes();
  size_t pitchBytes = pitch * elementBytes;
  std::vector<char> padded(*shape.rows * pitchBytes, 0);
  for (int64_t row = 0; row < *shape.rows; ++row) {
    char *dst = padded.data() + row * pitchBytes;
    if (raw.splat) {
      for (int64_t col = 0; col < shape.rowElements; ++col)
        std::memcpy(dst + col * elementBytes, raw.data.data(), elementBytes);
    } else {
      std::memcpy(dst, raw.data.data() + row * rowBytes, rowBytes);
    }
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return DenseElementsAttr::getFromRawBuffer(paddedType, padded);
  const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  return DenseResourceElementsAttr::get(
      paddedType, (resource.getRawHandle().getKey() + "_padded").str(),
      HeapAsmResourceBlob::allocateAndCopyWithAlign(padded,
                                                    blob->getDataAlignment()));
}

/// Returns zero offsets, the sizes of `shape` and unit strides, for a slice
/// that reads the unpadded elements back.
static void getUnpaddedSlice(OpBuilder &builder, ArrayRef<int64_t> shape,
                             SmallVectorImpl<OpFoldResult> &offsets,
                             SmallVectorImpl<OpFoldResult> &sizes,
                             SmallVectorImpl<OpFoldResult> &strides) {
  for (int64_t dim : shape) {
    offsets.push_back(builder.getIndexAttr(0));
    sizes.push_back(builder.getIndexAttr(dim));
    strides.push_back(builder.getIndexAttr(1));
  }
}

/// Gives `value` (a tensor now holding padded rows) back its unpadded shape
/// through a tensor.extract_slice placed right after its definition.
static void sliceBackTensor(Value value, ArrayRef<int64_t> shape) {
  OpBuilder builder(value.getContext());
  builder.setInsertionPointAfterValue(value);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  getUnpaddedSlice(builder, shape, offsets, sizes, strides);
  auto slice = tensor::ExtractSliceOp::create(builder, value.getLoc(), value,
                                              offsets, sizes, strides);
  value.replaceAllUsesExcept(slice.getResult(), slice);
}

/// Returns true if `user` reads a memref through any strided layout.
static bool acceptsStridedMemRef(Operation *user) {
  return isa<linalg::LinalgOp, bufferization::ToTensorOp, memref::LoadOp>(user);
}

/// Collects the ops that refer to `symbol` in its symbol table into `users`.
/// Returns false if they cannot be known.
static bool getSymbolUsers(Operation *symbol,
                           SmallVectorImpl<Operation *> &users) {
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(
      symbol, SymbolTable::getNearestSymbolTable(symbol));
  if (!uses)
    return false;
  for (const SymbolTable::SymbolUse &use : *uses)
    users.push_back(use.getUser());
  return true;
}

namespace {
/// Applies the padding decided for each weight, with its remarks.
struct PadWeightRowsPass final
    : public cachet::impl::PadWeightRowsBase<PadWeightRowsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Checks that `weight` can be rewritten; otherwise sets `reason`.
  bool canRewrite(const Weight &weight, const WeightRowShape &shape,
                  std::string &reason);
  /// Gives `weight` rows of `pitch` elements. canRewrite must hold.
  void rewrite(Weight &weight, const WeightRowShape &shape, int64_t pitch);
};
} // namespace

bool PadWeightRowsPass::canRewrite(const Weight &weight,
                                   const WeightRowShape &shape,
                                   std::string &reason) {
  llvm::raw_string_ostream os(reason);
  switch (weight.storage) {
  case WeightStorage::Argument: {
    auto func =
        cast<FunctionOpInterface>(weight.argument.getOwner()->getParentOp());
    if (func.getArgAttr(weight.argument.getArgNumber(),
                        getRowPitchAttrName())) {
      os << "already has " << getRowPitchAttrName();
      return false;
    }
    return true;
  }
  case WeightStorage::ArithConstant:
    return getRawElements(cast<arith::ConstantOp>(weight.definingOp).getValue(),
                          shape, reason)
        .has_value();
  case WeightStorage::MemRefGlobal:
  case WeightStorage::MLProgramGlobal:
    break;
  }

  Operation *global = weight.definingOp;
  if (SymbolTable::getSymbolVisibility(global) ==
      SymbolTable::Visibility::Public) {
    os << "the global is public: its type is visible outside the module";
    return false;
  }
  Attribute value = weight.storage == WeightStorage::MemRefGlobal
                        ? cast<memref::GlobalOp>(global).getInitialValueAttr()
                        : cast<ml_program::GlobalOp>(global).getValueAttr();
  if (!getRawElements(value, shape, reason))
    return false;
  SmallVector<Operation *> users;
  if (!getSymbolUsers(global, users)) {
    os << "the global's uses are unknown";
    return false;
  }
  for (Operation *user : users) {
    if (weight.storage == WeightStorage::MLProgramGlobal) {
      if (isa<ml_program::GlobalLoadConstOp, ml_program::GlobalLoadOp>(user))
        continue;
      os << "the global is used by " << user->getName()
         << ", which is not a load";
      return false;
    }
    if (!isa<memref::GetGlobalOp>(user)) {
      os << "the global is used by " << user->getName()
         << ", which is not memref.get_global";
      return false;
    }
    for (Operation *reader : user->getUsers()) {
      if (acceptsStridedMemRef(reader))
        continue;
      os << "a memref.get_global of it is used by " << reader->getName()
         << ", which needs the identity layout";
      return false;
    }
  }
  return true;
}

void PadWeightRowsPass::rewrite(Weight &weight, const WeightRowShape &shape,
                                int64_t pitch) {
  MLIRContext *ctx = &getContext();
  ArrayRef<int64_t> shapeDims = weight.type.getShape();
  switch (weight.storage) {
  case WeightStorage::Argument: {
    auto func =
        cast<FunctionOpInterface>(weight.argument.getOwner()->getParentOp());
    func.setArgAttr(weight.argument.getArgNumber(), getRowPitchAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 64), pitch));
    return;
  }
  case WeightStorage::ArithConstant: {
    auto constant = cast<arith::ConstantOp>(weight.definingOp);
    TypedAttr padded = padConstantRows(constant.getValue(), shape, pitch);
    OpBuilder builder(constant);
    auto paddedConstant =
        arith::ConstantOp::create(builder, constant.getLoc(), padded);
    constant.replaceAllUsesWith(paddedConstant.getResult());
    constant.erase();
    weight.definingOp = paddedConstant;
    sliceBackTensor(paddedConstant.getResult(), shapeDims);
    return;
  }
  case WeightStorage::MLProgramGlobal: {
    auto global = cast<ml_program::GlobalOp>(weight.definingOp);
    TypedAttr padded = padConstantRows(global.getValueAttr(), shape, pitch);
    global.setTypeAttr(TypeAttr::get(padded.getType()));
    global.setValueAttr(padded);
    SmallVector<Operation *> loads;
    (void)getSymbolUsers(global, loads);
    for (Operation *load : loads) {
      Value loaded = load->getResult(0);
      loaded.setType(padded.getType());
      sliceBackTensor(loaded, shapeDims);
    }
    return;
  }
  case WeightStorage::MemRefGlobal: {
    auto global = cast<memref::GlobalOp>(weight.definingOp);
    TypedAttr padded =
        padConstantRows(global.getInitialValueAttr(), shape, pitch);
    MemRefType oldType = global.getType();
    auto paddedType = MemRefType::get(
        cast<ShapedType>(padded.getType()).getShape(), oldType.getElementType(),
        MemRefLayoutAttrInterface(), oldType.getMemorySpace());
    global.setTypeAttr(TypeAttr::get(paddedType));
    global.setInitialValueAttr(padded);
    SmallVector<Operation *> users;
    (void)getSymbolUsers(global, users);
    for (Operation *user : users) {
      auto getGlobal = cast<memref::GetGlobalOp>(user);
      getGlobal.getResult().setType(paddedType);
      OpBuilder builder(ctx);
      builder.setInsertionPointAfter(getGlobal);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      getUnpaddedSlice(builder, shapeDims, offsets, sizes, strides);
      auto view = memref::SubViewOp::create(builder, getGlobal.getLoc(),
                                            getGlobal.getResult(), offsets,
                                            sizes, strides);
      getGlobal.getResult().replaceAllUsesExcept(view.getResult(), view);
    }
    return;
  }
  }
}

void PadWeightRowsPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string paramsError;
  std::optional<RowPadParams> params = resolveRowPadParams(
      lookupDeviceProfile(module), aliasStride, pad, paramsError);
  if (!params) {
    emitWarning(module.getLoc(), "cachet-pad-weight-rows: ")
        << paramsError << "; nothing padded";
    return markAllAnalysesPreserved();
  }

  SmallVector<Weight> weights = findWeights(module);
  unsigned numPadded = 0;
  int64_t bytesAdded = 0;
  for (Weight &weight : weights) {
    std::string description = weight.describe();
    auto notPadded = [&](StringRef reason) {
      emitRemark(weight.getLoc(), "cachet-pad-weight-rows: ")
          << description << ": not padded: " << reason;
    };
    if (weight.consumers.empty()) {
      notPadded("not read as the weight operand of linalg.matvec, "
                "linalg.matmul, linalg.batch_matmul, another contraction or "
                "cachet.dequantize");
      continue;
    }
    std::string reason;
    std::optional<WeightRowShape> shape =
        getPaddableRowShape(weight.type, reason);
    if (!shape) {
      notPadded(reason);
      continue;
    }
    RowPadDecision decision = decideRowPad(*params, *shape);
    if (decision.pad == 0) {
      notPadded(decision.reason);
      continue;
    }
    if (!canRewrite(weight, *shape, reason)) {
      notPadded(decision.reason + ", but " + reason);
      continue;
    }
    int64_t pitchBytes = shape->getRowBytes() + decision.pad;
    int64_t pitch = pitchBytes / shape->elementBytes;
    rewrite(weight, *shape, pitch);
    ++numPadded;
    InFlightDiagnostic remark =
        emitRemark(weight.getLoc(), "cachet-pad-weight-rows: ");
    remark << description << ": padded: " << decision.reason << "; pitch "
           << pitchBytes << " B (" << pitch << " elements), ";
    if (shape->rows) {
      int64_t added = *shape->rows * decision.pad;
      bytesAdded += added;
      remark << "+" << added << " B";
    } else {
      remark << "+" << decision.pad << " B per row (row count is dynamic)";
    }
  }
  emitRemark(module.getLoc(), "cachet-pad-weight-rows: padded ")
      << numPadded << " of " << weights.size() << " weights, +" << bytesAdded
      << " B (alias stride " << params->aliasStride << " B, pad " << params->pad
      << " B from " << params->origin << ")";
  if (numPadded == 0)
    markAllAnalysesPreserved();
}
