//===- WeightRows.cpp - find the weights of mat-vec and mat-mul ops ------===//

#include "cachet/Analysis/WeightRows.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cachet;

//===----------------------------------------------------------------------===//
// Weight
//===----------------------------------------------------------------------===//

Location Weight::getLoc() const {
  return definingOp ? definingOp->getLoc() : argument.getLoc();
}

std::string Weight::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (storage) {
  case WeightStorage::Argument: {
    auto func = cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    os << "argument #" << argument.getArgNumber() << " of @"
       << func.getNameAttr().getValue();
    break;
  }
  case WeightStorage::ArithConstant:
    os << "arith.constant";
    if (auto func = definingOp->getParentOfType<FunctionOpInterface>())
      os << " in @" << func.getNameAttr().getValue();
    break;
  case WeightStorage::MemRefGlobal:
  case WeightStorage::MLProgramGlobal:
    os << definingOp->getName() << " @"
       << SymbolTable::getSymbolName(definingOp).getValue();
    break;
  }
  os << " (" << type << ")";
  return text;
}

//===----------------------------------------------------------------------===//
// Weight operands
//===----------------------------------------------------------------------===//

/// Returns true if `maps` are the (optionally batched) mat-mul maps whose
/// right-hand side is read as (k, n) or, with `transposedB`, as (n, k).
static bool isMatmulMaps(ArrayRef<AffineMap> maps, bool batched,
                         bool transposedB) {
  if (maps.size() != 3)
    return false;
  MLIRContext *ctx = maps.front().getContext();
  unsigned batch = batched ? 1 : 0;
  AffineExpr m = getAffineDimExpr(batch, ctx);
  AffineExpr n = getAffineDimExpr(batch + 1, ctx);
  AffineExpr k = getAffineDimExpr(batch + 2, ctx);
  auto makeMap = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> exprs;
    if (batched)
      exprs.push_back(getAffineDimExpr(0, ctx));
    exprs.append({a, b});
    return AffineMap::get(batch + 3, 0, exprs, ctx);
  };
  AffineMap rhs = transposedB ? makeMap(n, k) : makeMap(k, n);
  return maps[0] == makeMap(m, k) && maps[1] == rhs && maps[2] == makeMap(m, n);
}

/// Returns true if `op` reads its operands with the default maps or with
/// transposed-B maps.
static bool hasSupportedMatmulMaps(linalg::LinalgOp op, bool batched) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return isMatmulMaps(maps, batched, /*transposedB=*/false) ||
         isMatmulMaps(maps, batched, /*transposedB=*/true);
}

SmallVector<OpOperand *> cachet::getWeightOperands(Operation *op) {
  OpOperand *named =
      llvm::TypeSwitch<Operation *, OpOperand *>(op)
          .Case([](linalg::MatvecOp matvec) {
            return matvec.getDpsInputOperand(0);
          })
          .Case([](linalg::MatmulOp matmul) -> OpOperand * {
            if (!hasSupportedMatmulMaps(matmul, /*batched=*/false))
              return nullptr;
            return matmul.getDpsInputOperand(1);
          })
          .Case([](linalg::BatchMatmulOp matmul) -> OpOperand * {
            if (!hasSupportedMatmulMaps(matmul, /*batched=*/true))
              return nullptr;
            return matmul.getDpsInputOperand(1);
          })
          .Case([](DequantizeOp dequantize) {
            return &dequantize.getInputMutable();
          })
          .Default([](Operation *) { return nullptr; });
  if (named)
    return {named};
  // Any other contraction (a linalg.generic as IREE and torch-mlir emit
  // after generalization, transposed or not): either input of rank >= 2 may
  // be the weight; the caller keeps those whose storage is one.
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp ||
      isa<linalg::MatvecOp, linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !linalg::isaContractionOpInterface(linalgOp))
    return {};
  SmallVector<OpOperand *> operands;
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    if (auto type = dyn_cast<ShapedType>(input->get().getType());
        type && type.hasRank() && type.getRank() >= 2)
      operands.push_back(input);
  return operands;
}

//===----------------------------------------------------------------------===//
// Finding weights
//===----------------------------------------------------------------------===//

/// Returns true if `arg` is an entry-block argument of a function and marked
/// {cachet.weight}.
static bool isMarkedWeightArgument(BlockArgument arg) {
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return false;
  return static_cast<bool>(
      func.getArgAttr(arg.getArgNumber(), CachetDialect::getWeightAttrName()));
}

/// Returns the memref.global constant that `getGlobal` reads, or null.
static memref::GlobalOp lookupConstantGlobal(memref::GetGlobalOp getGlobal) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  return global && global.getConstant() ? global : memref::GlobalOp();
}

/// Returns the immutable ml_program.global named `symbol`, or null.
static ml_program::GlobalOp lookupImmutableGlobal(Operation *from,
                                                  SymbolRefAttr symbol) {
  auto global =
      SymbolTable::lookupNearestSymbolFrom<ml_program::GlobalOp>(from, symbol);
  return global && !global.getIsMutable() ? global : ml_program::GlobalOp();
}

namespace {
/// Collects weights keyed by their storage, keeping first-seen order.
class WeightCollector {
public:
  /// Records `consumer` as a reader of the storage behind `value`, if that
  /// storage is a weight.
  void addUse(Value value, Operation *consumer) {
    if (Weight *weight = lookupStorage(value))
      if (!llvm::is_contained(weight->consumers, consumer))
        weight->consumers.push_back(consumer);
  }

  /// Records a marked argument, read or not.
  void addArgument(BlockArgument arg) {
    Weight &weight = getOrCreate(arg.getAsOpaquePointer());
    weight.storage = WeightStorage::Argument;
    weight.argument = arg;
    weight.type = cast<ShapedType>(arg.getType());
  }

  SmallVector<Weight> takeWeights() {
    return llvm::to_vector(llvm::make_second_range(weights.takeVector()));
  }

private:
  Weight &getOrCreate(const void *key) { return weights[key]; }

  /// Follows `value` back through loads of globals and to_tensor to its
  /// storage; returns the weight record, or null if it is not a weight.
  Weight *lookupStorage(Value value) {
    while (true) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (!isMarkedWeightArgument(arg) || !isa<ShapedType>(arg.getType()))
          return nullptr;
        addArgument(arg);
        return &getOrCreate(arg.getAsOpaquePointer());
      }
      Operation *def = value.getDefiningOp();
      if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def)) {
        value = toTensor.getBuffer();
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
        auto type = dyn_cast<ShapedType>(constant.getType());
        if (!type)
          return nullptr;
        return &getOrCreateOp(def, WeightStorage::ArithConstant, type);
      }
      if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(def)) {
        memref::GlobalOp global = lookupConstantGlobal(getGlobal);
        if (!global)
          return nullptr;
        return &getOrCreateOp(global, WeightStorage::MemRefGlobal,
                              global.getType());
      }
      SymbolRefAttr symbol =
          llvm::TypeSwitch<Operation *, SymbolRefAttr>(def)
              .Case<ml_program::GlobalLoadConstOp, ml_program::GlobalLoadOp>(
                  [](auto load) { return load.getGlobalAttr(); })
              .Default([](Operation *) { return SymbolRefAttr(); });
      if (!symbol)
        return nullptr;
      ml_program::GlobalOp global = lookupImmutableGlobal(def, symbol);
      if (!global)
        return nullptr;
      auto type = dyn_cast<ShapedType>(global.getType());
      if (!type)
        return nullptr;
      return &getOrCreateOp(global, WeightStorage::MLProgramGlobal, type);
    }
  }

  Weight &getOrCreateOp(Operation *op, WeightStorage storage, ShapedType type) {
    Weight &weight = getOrCreate(op);
    weight.storage = storage;
    weight.definingOp = op;
    weight.type = type;
    return weight;
  }

  llvm::MapVector<const void *, Weight> weights;
};
} // namespace

SmallVector<Weight> cachet::findWeights(ModuleOp module) {
  WeightCollector collector;
  module.walk([&](FunctionOpInterface func) {
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments())
      if (isMarkedWeightArgument(arg) && isa<ShapedType>(arg.getType()))
        collector.addArgument(arg);
  });
  module.walk([&](Operation *op) {
    for (OpOperand *operand : getWeightOperands(op))
      collector.addUse(operand->get(), op);
  });
  return collector.takeWeights();
}

//===----------------------------------------------------------------------===//
// Eligibility
//===----------------------------------------------------------------------===//

std::optional<WeightRowShape> cachet::getPaddableRowShape(ShapedType type,
                                                          std::string &reason) {
  llvm::raw_string_ostream os(reason);
  if (!type.hasRank()) {
    os << "unranked weight";
    return std::nullopt;
  }
  if (type.getRank() < 2) {
    os << "rank-" << type.getRank() << " weight has no row stride";
    return std::nullopt;
  }
  Type elementType = type.getElementType();
  if (isa<BlockQuantizedType>(elementType)) {
    os << "quantized element type " << elementType
       << ": quantized weights are never padded (kernels derive block "
          "offsets from the stride)";
    return std::nullopt;
  }
  if (isa<IntegerType, IndexType>(elementType)) {
    os << "integer element type " << elementType
       << ": integer and sub-byte weights are never padded (kernels derive "
          "element offsets from the stride)";
    return std::nullopt;
  }
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32()) {
    os << "element type " << elementType
       << " is not a dense f16, bf16 or f32 type";
    return std::nullopt;
  }
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && !memref.getLayout().isIdentity()) {
    os << "memref already has a non-identity layout " << memref.getLayout();
    return std::nullopt;
  }
  ArrayRef<int64_t> shape = type.getShape();
  if (ShapedType::isDynamic(shape.back())) {
    os << "row length (innermost dimension) is dynamic";
    return std::nullopt;
  }
  WeightRowShape rowShape;
  rowShape.rowElements = shape.back();
  rowShape.elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  if (!ShapedType::isDynamicShape(shape.drop_back())) {
    int64_t rows = 1;
    for (int64_t dim : shape.drop_back())
      rows *= dim;
    rowShape.rows = rows;
  }
  return rowShape;
}
