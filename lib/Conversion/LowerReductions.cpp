//===- LowerReductions.cpp - a workgroup per reduced row
//-------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <optional>

namespace cachet {
#define GEN_PASS_DEF_LOWERREDUCTIONS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// A reduction the kernel takes: the combining op and its other operand.
struct Reduction {
  Operation *combine = nullptr;
  Value term;
};

/// Returns the identity of `combine` (an arith op on `type`), if it is one
/// of the combiners the kernel takes.
std::optional<TypedAttr> getIdentity(Operation *combine, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  auto floatAttr = [&](const APFloat &value) -> TypedAttr {
    return FloatAttr::get(type, value);
  };
  if (isa<arith::AddFOp>(combine))
    return floatAttr(APFloat::getZero(semantics));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return floatAttr(APFloat::getInf(semantics, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    return floatAttr(APFloat::getInf(semantics, /*Negative=*/false));
  return std::nullopt;
}

/// Returns why the kernel cannot take `op`, or "" and the reduction.
std::string match(linalg::GenericOp op, int64_t minSize, Reduction &r) {
  if (!op.hasPureBufferSemantics())
    return "not on buffers";
  if (op.getNumDpsInits() != 1)
    return "more than one output";
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t reductions = llvm::count(iterators, utils::IteratorType::reduction);
  if (reductions != 1 || iterators.back() != utils::IteratorType::reduction)
    return "not one reduction dimension, innermost";
  if (linalg::isaContractionOpInterface(op))
    return "a contraction (mat-mul and mat-vec have their own kernels)";
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return "dynamic sizes";
  if (ranges.back() < minSize)
    return llvm::formatv("rows of {0} values, fewer than min-reduction-size "
                         "{1}",
                         ranges.back(), minSize)
        .str();
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      outMap.isFunctionOfDim(outMap.getNumDims() - 1))
    return "the output is not indexed by the parallel dimensions alone";
  auto outType = dyn_cast<FloatType>(getElementTypeOrSelf(init->get()));
  if (!outType)
    return "not a float output";
  Block *body = op.getBody();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body || !acc.hasOneUse() ||
      combine->getNumOperands() != 2 || !getIdentity(combine, outType))
    return "the payload is not combine(output, term) with addf, maximumf, "
           "minimumf, maxnumf or minnumf";
  Value term = combine->getOperand(0) == acc   ? combine->getOperand(1)
               : combine->getOperand(1) == acc ? combine->getOperand(0)
                                               : Value();
  if (!term || term == acc)
    return "the payload is not combine(output, term)";
  r.combine = combine;
  r.term = term;
  return "";
}

struct LowerReductionsPass final
    : public cachet::impl::LowerReductionsBase<LowerReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (workgroupSize < 1 || !llvm::isPowerOf2_64(workgroupSize)) {
      getOperation().emitError("cachet-lower-reductions: workgroup-size ")
          << workgroupSize.getValue() << " is not a power of two";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      // Only host code: a generic inside a kernel is already placed.
      if (!op->getParentOfType<gpu::LaunchOp>())
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics) {
      Reduction r;
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      // Only reductions are worth a remark when they are left alone.
      if (llvm::count(iterators, utils::IteratorType::reduction) == 0)
        continue;
      std::string why = match(op, minReductionSize, r);
      if (!why.empty()) {
        op.emitRemark("cachet-lower-reductions: one thread per output kept: ")
            << why;
        continue;
      }
      lower(op, r);
    }
  }

  void lower(linalg::GenericOp op, const Reduction &r);
};

void LowerReductionsPass::lower(linalg::GenericOp op, const Reduction &r) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back();
  int64_t outputs = 1;
  for (int64_t extent : ArrayRef<int64_t>(ranges).drop_back())
    outputs *= extent;
  int64_t threads = workgroupSize;
  OpOperand *init = op.getDpsInitOperand(0);
  auto type = cast<FloatType>(getElementTypeOrSelf(init->get()));
  auto index = [&](OpBuilder &ib, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, value);
  };

  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto partialsType = MemRefType::get({threads}, type, nullptr, workgroup);
  Value one = index(b, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(b, outputs), one, one, index(b, threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{partialsType});
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  Value partials = launch.getWorkgroupAttributions()[0];

  // The parallel indices of this workgroup's output: the block id,
  // delinearized over the parallel extents (row-major).
  SmallVector<Value> parallel(ranges.size() - 1);
  Value rest = launch.getBlockIds().x;
  for (int64_t d = static_cast<int64_t>(ranges.size()) - 2; d >= 0; --d) {
    parallel[d] = arith::RemUIOp::create(kb, loc, rest, index(kb, ranges[d]));
    rest = arith::DivUIOp::create(kb, loc, rest, index(kb, ranges[d]));
  }
  auto indicesOf = [&](OpBuilder &ib, AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(affine::makeComposedAffineApply(
                            ib, loc, AffineMap::get(map.getNumDims(), 0, expr),
                            llvm::to_vector_of<OpFoldResult>(loops))
                            .getResult());
    return indices;
  };

  // Each thread folds every threads-th term of the row into its partial,
  // with the payload cloned (the combine applied to the partial instead of
  // the output).
  Value identity =
      arith::ConstantOp::create(kb, loc, *getIdentity(r.combine, type));
  auto loop = scf::ForOp::create(kb, loc, tid, index(kb, length),
                                 index(kb, threads), ValueRange{identity});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> loops(parallel);
    loops.push_back(loop.getInductionVar());
    IRMapping map;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      if (!isa<MemRefType>(input->get().getType())) {
        map.map(arg, input->get());
        continue;
      }
      map.map(arg, memref::LoadOp::create(
                       lb, loc, input->get(),
                       indicesOf(lb, op.getMatchingIndexingMap(input), loops)));
    }
    for (Operation &payload : op.getBody()->without_terminator()) {
      if (&payload == r.combine)
        continue;
      if (auto idx = dyn_cast<linalg::IndexOp>(payload)) {
        map.map(idx.getResult(), loops[idx.getDim()]);
        continue;
      }
      lb.clone(payload, map);
    }
    Value partial = loop.getRegionIterArgs()[0];
    // Operand order as in the payload: the partial where the output was.
    BlockArgument acc = op.getMatchingBlockArgument(init);
    Value term = map.lookupOrDefault(r.term);
    Operation *combined = lb.clone(*r.combine);
    combined->setOperands(r.combine->getOperand(0) == acc
                              ? ValueRange{partial, term}
                              : ValueRange{term, partial});
    scf::YieldOp::create(lb, loc, combined->getResult(0));
  }

  // A thread past the row's end runs no iteration: its partial is the
  // identity, selected rather than taken from the loop, whose results
  // convert-scf-to-spirv (LLVM 22) returns through Function variables
  // stored only inside the loop body (uninitialized after no iteration).
  Value ran = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, tid,
                                    index(kb, length));
  Value partial =
      arith::SelectOp::create(kb, loc, ran, loop.getResult(0), identity);

  // The partials, combined by a tree in workgroup memory.
  memref::StoreOp::create(kb, loc, partial, partials, tid);
  gpu::BarrierOp::create(kb, loc);
  for (int64_t stride = threads / 2; stride > 0; stride /= 2) {
    Value active = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                         tid, index(kb, stride));
    auto ifOp = scf::IfOp::create(kb, loc, active, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(ifOp.thenBlock());
    Value mine = memref::LoadOp::create(ib, loc, partials, tid);
    Value other = memref::LoadOp::create(
        ib, loc, partials,
        ValueRange{arith::AddIOp::create(ib, loc, tid, index(ib, stride))});
    Operation *combined = ib.clone(*r.combine);
    combined->setOperands(ValueRange{mine, other});
    memref::StoreOp::create(ib, loc, combined->getResult(0), partials, tid);
    gpu::BarrierOp::create(kb, loc);
  }

  // Thread 0: the output's initial value combined with the total, in the
  // payload's operand order.
  Value first = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, tid,
                                      index(kb, 0));
  auto last = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
  {
    OpBuilder ib = OpBuilder::atBlockBegin(last.thenBlock());
    // The output's map does not use the reduction dimension: 0 for it.
    SmallVector<Value> loops(parallel);
    loops.push_back(index(ib, 0));
    SmallVector<Value> outIndices =
        indicesOf(ib, op.getMatchingIndexingMap(init), loops);
    Value initial = memref::LoadOp::create(ib, loc, init->get(), outIndices);
    Value total = memref::LoadOp::create(ib, loc, partials, index(ib, 0));
    BlockArgument acc = op.getMatchingBlockArgument(init);
    Operation *combined = ib.clone(*r.combine);
    combined->setOperands(r.combine->getOperand(0) == acc
                              ? ValueRange{initial, total}
                              : ValueRange{total, initial});
    memref::StoreOp::create(ib, loc, combined->getResult(0), init->get(),
                            outIndices);
  }
  kb.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(kb, loc);

  op.emitRemark("cachet-lower-reductions: ")
      << outputs << (outputs == 1 ? " workgroup" : " workgroups") << " of "
      << threads << " threads, one per output, each folding a row of " << length
      << " values (" << r.combine->getName()
      << "), partials combined by a tree in workgroup memory";
  op.erase();
}

} // namespace
