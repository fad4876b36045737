//===- OrderGridDims.cpp - the longest grid dimension on x ---------------===//
//
// Swaps a dimension of an outermost scf.parallel that would be mapped to
// grid y or z and is longer than those allow with the first dimension (grid
// x). See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <optional>

namespace cachet {
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
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        loops.push_back(op);
    });
    for (scf::ParallelOp op : loops)
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
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned i : order) {
      lbs.push_back(op.getLowerBound()[i]);
      ubs.push_back(op.getUpperBound()[i]);
      steps.push_back(op.getStep()[i]);
    }
    OpBuilder b(op);
    auto swapped = scf::ParallelOp::create(b, op.getLoc(), lbs, ubs, steps);
    swapped->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Block *from = op.getBody(), *to = swapped.getBody();
    // The new body's own terminator goes; the old body (with its
    // terminator) moves over, its induction variables renamed.
    to->getTerminator()->erase();
    for (unsigned i = 0; i < n; ++i)
      from->getArgument(order[i]).replaceAllUsesWith(to->getArgument(i));
    to->getOperations().splice(to->end(), from->getOperations());
    op.erase();
    swapped.emitRemark() << "cachet-order-grid-dims: dimension " << k << " ("
                         << longTrips << " workgroups) swapped with dimension "
                         << "0 (" << *firstTrips
                         << "): it maps to grid x, as grid "
                         << (k == 1 ? "y" : "z") << " allows at most "
                         << int64_t(maxGridYZ);
  }
};

} // namespace
