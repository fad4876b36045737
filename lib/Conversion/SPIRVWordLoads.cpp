//===- SPIRVWordLoads.cpp - Kernel buffers in 32-bit words for SPIR-V ----===//
//
// A kernel buffer that is only read (or written) by aligned vector loads
// (stores) of 4, 8 or 16 bytes becomes a buffer of i32 / vector<2xi32> /
// vector<4xi32> words, so that each access is one SPIR-V access of a word
// type instead of one per element. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace cachet {
#define GEN_PASS_DEF_SPIRVWORDLOADS
#define GEN_PASS_DEF_SPIRVWORDLAUNCHOPERANDS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// How a kernel buffer argument is read in words.
struct WordPlan {
  /// Elements per load, and the word type of one load (i32, vector<2xi32>
  /// or vector<4xi32>).
  int64_t elements = 0;
  Type word;
  MemRefType type;
};

/// The word type of a `bytes`-byte load, or null.
Type getWordType(MLIRContext *ctx, int64_t bytes) {
  auto i32 = IntegerType::get(ctx, 32);
  switch (bytes) {
  case 4:
    return i32;
  case 8:
    return VectorType::get({2}, i32);
  case 16:
    return VectorType::get({4}, i32);
  default:
    return {};
  }
}

/// Returns true if `value` (a vector of more than four elements loaded
/// from a buffer) is used only in pieces of at most four elements that
/// start and end on 32-bit words: `vector.bitcast`s to such vectors,
/// `vector.extract_strided_slice`s of them, and single-element
/// `vector.extract`s. The bit-cast patterns then leave no wider vector,
/// which SPIR-V could not hold.
bool isUsedInWordPieces(Value value, int64_t bits) {
  int64_t perWord = 32 / bits;
  for (Operation *user : value.getUsers()) {
    if (auto cast = dyn_cast<vector::BitCastOp>(user)) {
      if (cast.getResultVectorType().getNumElements() > 4)
        return false;
      continue;
    }
    if (auto slice = dyn_cast<vector::ExtractStridedSliceOp>(user)) {
      if (slice.getType().getRank() != 1 || slice.hasNonUnitStrides())
        return false;
      int64_t offset = cast<IntegerAttr>(slice.getOffsets()[0]).getInt();
      int64_t size = cast<IntegerAttr>(slice.getSizes()[0]).getInt();
      if (offset % perWord != 0 || size % perWord != 0 || size > 4)
        return false;
      continue;
    }
    if (auto extract = dyn_cast<vector::ExtractOp>(user)) {
      if (!extract.getDynamicPosition().empty())
        return false;
      continue;
    }
    return false;
  }
  return true;
}

/// Returns how `arg` can be read (and written) in words; else std::nullopt,
/// with `why` set where `arg` is a buffer that vector loads or stores use.
std::optional<WordPlan> planWords(BlockArgument arg, std::string &why) {
  auto type = dyn_cast<MemRefType>(arg.getType());
  if (!type || llvm::none_of(arg.getUsers(), [](Operation *user) {
        return isa<vector::LoadOp, vector::StoreOp>(user);
      }))
    return std::nullopt;
  if (!type.hasStaticShape() || type.getRank() == 0 || type.getMemorySpace()) {
    why = "not a static buffer of rank 1 or more in global memory";
    return std::nullopt;
  }
  Type element = type.getElementType();
  int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  if (bits != 8 && bits != 16 && bits != 32) {
    why = "elements of neither 8, 16 nor 32 bits";
    return std::nullopt;
  }
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || strides.back() != 1 ||
      llvm::any_of(strides, ShapedType::isDynamic)) {
    why = "not a strided layout with static strides and contiguous rows";
    return std::nullopt;
  }
  int64_t bytes = 0;
  for (Operation *user : arg.getUsers()) {
    auto load = dyn_cast<vector::LoadOp>(user);
    auto store = dyn_cast<vector::StoreOp>(user);
    if ((!load || load.getBase() != arg) &&
        (!store || store.getBase() != arg)) {
      why = ("'" + user->getName().getStringRef() + "' uses it").str();
      return std::nullopt;
    }
    VectorType vector = load ? load.getVectorType() : store.getVectorType();
    if (vector.getRank() != 1 || vector.isScalable()) {
      why = "an access of a vector that is not 1-D";
      return std::nullopt;
    }
    // A stored vector is built whole: at most SPIR-V's 4 values.
    if (store && vector.getNumElements() > 4) {
      why = "a store of more than 4 values";
      return std::nullopt;
    }
    int64_t loadBytes = vector.getNumElements() * bits / 8;
    if (bytes != 0 && loadBytes != bytes) {
      why = "accesses of " + std::to_string(bytes) + " and " +
            std::to_string(loadBytes) + " bytes";
      return std::nullopt;
    }
    bytes = loadBytes;
    if (!getWordType(arg.getContext(), bytes)) {
      why = "an access of " + std::to_string(bytes) + " bytes (not 4, 8 or 16)";
      return std::nullopt;
    }
    std::optional<uint64_t> align =
        load ? load.getAlignment() : store.getAlignment();
    if (!align || *align % bytes != 0) {
      why = "an access of " + std::to_string(bytes) +
            " bytes without an alignment of " + std::to_string(bytes);
      return std::nullopt;
    }
    if (load && vector.getNumElements() > 4 &&
        !isUsedInWordPieces(load.getResult(), bits)) {
      why = "a vector of " + std::to_string(vector.getNumElements()) +
            " elements used other than in word pieces of at most 4";
      return std::nullopt;
    }
  }
  int64_t n = bytes * 8 / bits;
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.back() % n != 0 || offset % n != 0 ||
      llvm::any_of(ArrayRef(strides).drop_back(),
                   [&](int64_t stride) { return stride % n != 0; })) {
    why = "rows, strides or offset not a whole number of " +
          std::to_string(bytes) + "-byte words";
    return std::nullopt;
  }
  WordPlan plan;
  plan.elements = n;
  plan.word = getWordType(arg.getContext(), bytes);
  SmallVector<int64_t> wordShape(shape);
  wordShape.back() /= n;
  if (type.getLayout().isIdentity()) {
    plan.type = MemRefType::get(wordShape, plan.word);
    return plan;
  }
  SmallVector<int64_t> wordStrides;
  for (int64_t stride : ArrayRef(strides).drop_back())
    wordStrides.push_back(stride / n);
  wordStrides.push_back(1);
  plan.type = MemRefType::get(
      wordShape, plan.word,
      StridedLayoutAttr::get(arg.getContext(), offset / n, wordStrides));
  return plan;
}

/// Rewrites the loads and stores of `arg` per `plan` and gives `arg` its
/// word type.
void rewriteAccesses(BlockArgument arg, const WordPlan &plan) {
  IRRewriter rewriter(arg.getContext());
  OpBuilder &b = rewriter;
  arg.setType(plan.type);
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    Location loc = user->getLoc();
    rewriter.setInsertionPoint(user);
    auto wordIndices = [&](ValueRange at) {
      SmallVector<Value> indices(at);
      indices.back() = arith::DivUIOp::create(
          b, loc, indices.back(),
          arith::ConstantIndexOp::create(b, loc, plan.elements));
      return indices;
    };
    if (auto store = dyn_cast<vector::StoreOp>(user)) {
      // The value's bits as words (a bf16 vector's bit cast is rewritten
      // through i16 by cachet-emulate-bf16-storage).
      auto words = dyn_cast<VectorType>(plan.word);
      Value word = vector::BitCastOp::create(
          b, loc, words ? words : VectorType::get({1}, plan.word),
          store.getValueToStore());
      if (!words)
        word = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
      memref::StoreOp::create(b, loc, word, arg,
                              wordIndices(store.getIndices()));
      store.erase();
      continue;
    }
    auto load = cast<vector::LoadOp>(user);
    Value word =
        memref::LoadOp::create(b, loc, arg, wordIndices(load.getIndices()));
    auto words = dyn_cast<VectorType>(plan.word);
    if (!words) {
      words = VectorType::get({1}, plan.word);
      word = vector::BroadcastOp::create(b, loc, words, word);
    }
    // (A bit cast to bf16 is rewritten through i16 by
    // cachet-emulate-bf16-storage.)
    rewriter.replaceOpWithNewOp<vector::BitCastOp>(load, load.getVectorType(),
                                                   word);
  }
}

struct SPIRVWordLoadsPass final
    : public cachet::impl::SPIRVWordLoadsBase<SPIRVWordLoadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The new argument types of each rewritten kernel (null: unchanged).
    llvm::DenseMap<Operation *, SmallVector<Type>> rewritten;
    module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      // The kernel's arguments (its block's first ones; workgroup and
      // private attributions follow them).
      unsigned inputs = func.getFunctionType().getNumInputs();
      SmallVector<Type> types(inputs);
      bool any = false, wide = false;
      for (BlockArgument arg : func.getArguments().take_front(inputs)) {
        Type old = arg.getType();
        std::string why;
        std::optional<WordPlan> plan = planWords(arg, why);
        if (!plan) {
          if (!why.empty())
            emitRemark(func.getLoc(), "cachet-spirv-word-loads: kernel @")
                << func.getName() << " argument #" << arg.getArgNumber() << " ("
                << old << ") keeps its accesses: " << why;
          continue;
        }
        wide |= plan->elements > 4;
        int64_t loads =
            std::distance(arg.getUsers().begin(), arg.getUsers().end());
        rewriteAccesses(arg, *plan);
        types[arg.getArgNumber()] = plan->type;
        any = true;
        emitRemark(func.getLoc(), "cachet-spirv-word-loads: kernel @")
            << func.getName() << " argument #" << arg.getArgNumber() << " ("
            << old << ") accessed as " << plan->type << ": " << loads
            << (loads == 1 ? " access" : " accesses") << ", one " << plan->word
            << " word each";
      }
      if (!any)
        return;
      func.setFunctionType(FunctionType::get(
          func.getContext(), TypeRange(func.getArguments().take_front(inputs)),
          func.getResultTypes()));
      rewritten[func] = std::move(types);
      if (!wide)
        return;
      // Vectors of more than four elements leave in word pieces.
      RewritePatternSet patterns(&getContext());
      vector::populateBubbleVectorBitCastOpPatterns(patterns);
      vector::BitCastOp::getCanonicalizationPatterns(patterns, &getContext());
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        func.emitWarning("cachet-spirv-word-loads: the bit-cast patterns did "
                         "not converge");
    });
    if (rewritten.empty())
      return;
    // Launch operands take the kernels' new types (the same buffer; lowering
    // to LLVM folds the cast: both types have the same descriptor).
    SymbolTableCollection symbols;
    OpBuilder b(module.getContext());
    module.walk([&](gpu::LaunchFuncOp launch) {
      Operation *kernel =
          symbols.lookupNearestSymbolFrom(launch, launch.getKernel());
      auto it = rewritten.find(kernel);
      if (it == rewritten.end())
        return;
      for (auto [i, type] : llvm::enumerate(it->second)) {
        if (!type)
          continue;
        Value operand = launch.getKernelOperand(i);
        b.setInsertionPoint(launch);
        Value cast = UnrealizedConversionCastOp::create(b, launch.getLoc(),
                                                        type, operand)
                         .getResult(0);
        launch->setOperand(
            launch.getKernelOperands().getBeginOperandIndex() + i, cast);
      }
    });
  }
};

/// The buffer's type with its words' elements: memref<R x C x vector<N x
/// i32>> as memref<R x (C * N) x i32>, strides scaled alike.
MemRefType getScalarWordType(MemRefType type) {
  auto words = dyn_cast<VectorType>(type.getElementType());
  if (!words)
    return {};
  int64_t n = words.getNumElements();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() *= n;
  if (type.getLayout().isIdentity())
    return MemRefType::get(shape, words.getElementType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return {};
  SmallVector<int64_t> scaled;
  for (int64_t stride : ArrayRef(strides).drop_back())
    scaled.push_back(stride * n);
  scaled.push_back(1);
  return MemRefType::get(
      shape, words.getElementType(),
      StridedLayoutAttr::get(type.getContext(), offset * n, scaled));
}

struct SPIRVWordLaunchOperandsPass final
    : public cachet::impl::SPIRVWordLaunchOperandsBase<
          SPIRVWordLaunchOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    OpBuilder b(&getContext());
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
        auto type = dyn_cast<MemRefType>(operand.getType());
        MemRefType scalar = type ? getScalarWordType(type) : MemRefType();
        if (!scalar)
          continue;
        b.setInsertionPoint(launch);
        Value cast = UnrealizedConversionCastOp::create(b, launch.getLoc(),
                                                        scalar, operand)
                         .getResult(0);
        launch->setOperand(
            launch.getKernelOperands().getBeginOperandIndex() + i, cast);
      }
    });
  }
};

} // namespace
