//===- HostComputeToParallel.cpp - every loop of a function on the GPU ----===//

#include "cachet/Analysis/Buffers.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace cachet {
#define GEN_PASS_DEF_HOSTCOMPUTETOPARALLEL
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// What an op of a host block is to this pass.
enum class Role {
  /// Reads or writes buffer elements outside any parallel loop.
  Compute,
  /// Has no memory effect (arith, math, constants): joins a run.
  Pure,
  /// Anything else (allocation, copy, launch, call, a parallel loop, an op
  /// of unknown effects): ends a run.
  Boundary,
};

/// Returns true if `op` or an op nested in it is an scf.parallel.
bool hasParallelLoop(Operation *op) {
  return op->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Returns true if `op` is a load or store of buffer elements (the ops that
/// linalg's loop lowerings emit).
bool isElementAccess(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op);
}

Role classify(Operation *op) {
  if (isElementAccess(op))
    return Role::Compute;
  if (isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op) && !hasParallelLoop(op)) {
    bool accesses = op->walk([](Operation *nested) {
                        return isElementAccess(nested) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
                      }).wasInterrupted();
    bool unknown =
        op->walk([](Operation *nested) {
            return !isElementAccess(nested) && !isMemoryEffectFree(nested) &&
                           !isa<scf::YieldOp, scf::ConditionOp>(nested) &&
                           nested->getNumRegions() == 0
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted();
    if (unknown)
      return Role::Boundary;
    return accesses ? Role::Compute : Role::Pure;
  }
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
      !isa<ViewLikeOpInterface>(op))
    return Role::Pure;
  return Role::Boundary;
}

struct HostComputeToParallelPass final
    : public cachet::impl::HostComputeToParallelBase<
          HostComputeToParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) { copyInParallel(copy); });
    runOnBlock(getOperation().getBody());
  }

  /// Replaces a copy between buffers that are not both plain (an
  /// insert_slice into a cache or along an inner dimension, a concat) by a
  /// parallel loop of element copies, which runs as a kernel. A pitched
  /// weight upload (cachet-pitched-weights) stays: the runtime does it.
  static void copyInParallel(memref::CopyOp copy) {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getRank() == 0 ||
        copy->hasAttr(cachet::CachetDialect::getPitchedUploadAttrName()) ||
        (cachet::isPlainBuffer(source) && cachet::isPlainBuffer(target)))
      return;
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> lower, upper, steps;
    for (int64_t dim = 0; dim < source.getRank(); ++dim) {
      lower.push_back(zero);
      upper.push_back(
          source.isDynamicDim(dim)
              ? Value(memref::DimOp::create(b, loc, copy.getSource(), dim))
              : Value(arith::ConstantIndexOp::create(b, loc,
                                                     source.getDimSize(dim))));
      steps.push_back(one);
    }
    auto loop = scf::ParallelOp::create(b, loc, lower, upper, steps);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value element = memref::LoadOp::create(b, loc, copy.getSource(),
                                           loop.getInductionVars());
    memref::StoreOp::create(b, loc, element, copy.getTarget(),
                            loop.getInductionVars());
    copy.erase();
  }

  /// Wraps the runs of compute ops of every block of `region`, recursing
  /// into ops that hold parallel loops.
  void runOnBlock(Region &region) {
    for (Block &block : region) {
      SmallVector<Operation *> run;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        Role role = classify(&op);
        if (role == Role::Boundary) {
          wrap(run);
          run.clear();
          if (!isa<scf::ParallelOp, gpu::LaunchOp>(op) && hasParallelLoop(&op))
            for (Region &nested : op.getRegions())
              runOnBlock(nested);
          continue;
        }
        if (role == Role::Compute || !run.empty())
          run.push_back(&op);
      }
      wrap(run);
    }
  }

  /// Moves the compute ops of `run` (and the pure ops between them that
  /// nothing after the run uses) into a one-iteration scf.parallel placed
  /// after the run.
  void wrap(ArrayRef<Operation *> run) {
    // Trailing pure ops belong to what follows.
    while (!run.empty() && classify(run.back()) == Role::Pure)
      run = run.drop_back();
    if (run.empty())
      return;
    Operation *last = run.back();
    auto usedAfter = [&](Operation *op) {
      return llvm::any_of(op->getUsers(), [&](Operation *user) {
        Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
        return !top || last->isBeforeInBlock(top);
      });
    };
    SmallVector<Operation *> moved;
    for (Operation *op : run) {
      if (!usedAfter(op)) {
        moved.push_back(op);
        continue;
      }
      if (classify(op) == Role::Compute) {
        emitRemark(op->getLoc(),
                   "cachet-host-compute-to-parallel: not moved to the "
                   "GPU: the host uses the value it loads");
        return;
      }
    }
    // A pure op left on the host must not use what moves.
    DenseSet<Operation *> movedSet(moved.begin(), moved.end());
    for (Operation *op : run)
      if (!movedSet.contains(op))
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && movedSet.contains(def)) {
            emitRemark(op->getLoc(),
                       "cachet-host-compute-to-parallel: not moved to the "
                       "GPU: the host uses a value computed from loaded "
                       "ones");
            return;
          }

    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    Location loc = moved.front()->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                            ValueRange{one}, ValueRange{one});
    Block *body = parallel.getBody();
    for (Operation *op : moved)
      op->moveBefore(body->getTerminator());
    emitRemark(parallel->getLoc(), "cachet-host-compute-to-parallel: ")
        << moved.size()
        << " ops without a parallel loop run on a single GPU thread";
  }
};

} // namespace

namespace cachet {
#define GEN_PASS_DEF_REDUCTIONSINNER
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

namespace {

/// Permutes the iteration space of generic ops whose reduction dimensions
/// precede a parallel one: parallel dimensions first, each group in order.
struct ReductionsInnerPass final
    : public cachet::impl::ReductionsInnerBase<ReductionsInnerPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (auto [dim, type] : llvm::enumerate(iterators))
        if (type == utils::IteratorType::parallel)
          order.push_back(dim);
      unsigned parallel = order.size();
      for (auto [dim, type] : llvm::enumerate(iterators))
        if (type != utils::IteratorType::parallel)
          order.push_back(dim);
      bool identity = llvm::all_of(llvm::enumerate(order), [](auto entry) {
        return entry.index() == entry.value();
      });
      if (identity || parallel == 0)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        continue;
      emitRemark(op->getLoc(),
                 "cachet-reductions-inner: reduction dimensions moved "
                 "inside the ")
          << parallel << " parallel ones";
    }
  }
};

} // namespace
