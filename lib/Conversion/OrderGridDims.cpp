//===- OrderGridDims.cpp - the order of a generic kernel's dimensions ----===//
//
// cachet-innermost-dim-first: before tiling, an outermost scf.parallel's
// innermost dimension becomes its first, which the tiling splits over the
// threads of a workgroup. cachet-order-grid-dims: after tiling, a dimension
// that would be mapped to grid y or z and is longer than those allow is
// swapped with the first (grid x). See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <optional>

namespace cachet {
#define GEN_PASS_DEF_INNERMOSTDIMFIRST
#define GEN_PASS_DEF_ORDERGRIDDIMS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// `value` where it is a constant, or a sum, difference or product of
/// constants (the tiling leaves `arith.muli %c1, %c64` as steps).
std::optional<int64_t> constantOf(Value value, int depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return c;
  Operation *op = value.getDefiningOp();
  if (!op || depth > 4 || !isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(op))
    return std::nullopt;
  std::optional<int64_t> a = constantOf(op->getOperand(0), depth + 1),
                         b = constantOf(op->getOperand(1), depth + 1);
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::AddIOp>(op))
    return *a + *b;
  if (isa<arith::SubIOp>(op))
    return *a - *b;
  return *a * *b;
}

/// The iterations of dimension `i` of `op`, where its bounds and step are
/// constants.
std::optional<int64_t> tripCount(scf::ParallelOp op, unsigned i) {
  std::optional<int64_t> lb = constantOf(op.getLowerBound()[i]),
                         ub = constantOf(op.getUpperBound()[i]),
                         step = constantOf(op.getStep()[i]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
}

/// Rebuilds `op` with its dimensions in `order` (new dimension i is old
/// dimension order[i]); the body moves over unchanged. Returns the new loop.
scf::ParallelOp permuteDims(scf::ParallelOp op, ArrayRef<unsigned> order) {
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned i : order) {
    lbs.push_back(op.getLowerBound()[i]);
    ubs.push_back(op.getUpperBound()[i]);
    steps.push_back(op.getStep()[i]);
  }
  OpBuilder b(op);
  auto permuted = scf::ParallelOp::create(b, op.getLoc(), lbs, ubs, steps);
  permuted->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *from = op.getBody(), *to = permuted.getBody();
  // The new body's own terminator goes; the old body (with its
  // terminator) moves over, its induction variables renamed.
  to->getTerminator()->erase();
  for (unsigned i = 0, e = order.size(); i < e; ++i)
    from->getArgument(order[i]).replaceAllUsesWith(to->getArgument(i));
  to->getOperations().splice(to->end(), from->getOperations());
  op.erase();
  return permuted;
}

/// The outermost scf.parallel loops of `root` (those the tiling and
/// gpu-map-parallel-loops make kernels of).
SmallVector<scf::ParallelOp> outermostLoops(Operation *root) {
  SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp op) {
    if (!op->getParentOfType<scf::ParallelOp>())
      loops.push_back(op);
  });
  return loops;
}

struct InnermostDimFirstPass final
    : public cachet::impl::InnermostDimFirstBase<InnermostDimFirstPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t moved = 0;
    for (scf::ParallelOp op : outermostLoops(getOperation())) {
      unsigned n = op.getNumLoops();
      if (n < 2 || !op.getInitVals().empty())
        continue;
      // The innermost dimension first, the others after it in their order.
      SmallVector<unsigned> order{n - 1};
      for (unsigned i = 0; i + 1 < n; ++i)
        order.push_back(i);
      permuteDims(op, order);
      ++moved;
    }
    if (moved > 0)
      getOperation().emitRemark()
          << "cachet-innermost-dim-first: " << moved << " parallel loop"
          << (moved == 1 ? "" : "s")
          << " with the innermost dimension first, so that the threads of "
             "a workgroup take consecutive elements";
  }
};

struct OrderGridDimsPass final
    : public cachet::impl::OrderGridDimsBase<OrderGridDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxGridYZ < 1) {
      getOperation().emitError("cachet-order-grid-dims: max-grid-yz must be "
                               "at least 1, got ")
          << int64_t(maxGridYZ);
      return signalPassFailure();
    }
    for (scf::ParallelOp op : outermostLoops(getOperation()))
      reorder(op);
  }

  void reorder(scf::ParallelOp op) {
    unsigned n = op.getNumLoops();
    if (n < 2 || !op.getInitVals().empty())
      return;
    // The first of grid y and z that is too long.
    std::optional<unsigned> longDim;
    for (unsigned i = 1; i < std::min(n, 3u) && !longDim; ++i)
      if (std::optional<int64_t> t = tripCount(op, i); t && *t > maxGridYZ)
        longDim = i;
    if (!longDim)
      return;
    unsigned k = *longDim;
    int64_t longTrips = *tripCount(op, k);
    std::optional<int64_t> firstTrips = tripCount(op, 0);
    if (!firstTrips || *firstTrips > maxGridYZ) {
      op.emitRemark() << "cachet-order-grid-dims: dimension " << k << " ("
                      << longTrips << " workgroups) stays on grid "
                      << (k == 1 ? "y" : "z")
                      << ": dimension 0 would then be too long ("
                      << (firstTrips ? std::to_string(*firstTrips)
                                     : std::string("unknown"))
                      << " workgroups; the limit is " << int64_t(maxGridYZ)
                      << ")";
      return;
    }
    SmallVector<unsigned> order(n);
    for (unsigned i = 0; i < n; ++i)
      order[i] = i;
    std::swap(order[0], order[k]);
    scf::ParallelOp swapped = permuteDims(op, order);
    swapped.emitRemark() << "cachet-order-grid-dims: dimension " << k << " ("
                         << longTrips << " workgroups) swapped with dimension "
                         << "0 (" << *firstTrips
                         << "): it maps to grid x, as grid "
                         << (k == 1 ? "y" : "z") << " allows at most "
                         << int64_t(maxGridYZ);
  }
};

} // namespace
