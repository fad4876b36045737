//===- OrderGridDims.cpp - the shape of a generic kernel's grid -----------===//
//
// cachet-innermost-dim-first: before tiling, an outermost scf.parallel's
// innermost dimension becomes its first, which the tiling splits over the
// threads of a workgroup. cachet-coarsen-elementwise: after tiling, a large
// element-wise loop nest gives each thread several elements of that
// dimension. cachet-order-grid-dims: after tiling, a dimension that would be
// mapped to grid y or z and is longer than those allow is swapped with the
// first (grid x), and a first dimension longer than grid x allows is split
// over x and a free y or z. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <string>

namespace cachet {
#define GEN_PASS_DEF_COARSENELEMENTWISE
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
      emitRemark(getOperation().getLoc())
          << "cachet-innermost-dim-first: " << moved << " parallel loop"
          << (moved == 1 ? "" : "s")
          << " with the innermost dimension first, so that the threads of "
             "a workgroup take consecutive elements";
  }
};

/// The buffer `memref` views (through subviews, reshapes and casts).
Value rootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewSource() == memref)
      break;
    memref = view.getViewSource();
  }
  return memref;
}

/// Why the tile body `body` cannot have its loads moved ahead of its
/// stores, or "" where it can: one block of loads, stores to buffers that
/// the function allocates and no load reads, and ops without side effects
/// or regions.
std::string whyNotCoarsenable(Block &body) {
  llvm::SmallPtrSet<Value, 8> loaded, stored;
  bool anyStore = false;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() > 0)
      return "'" + op.getName().getStringRef().str() +
             "' in the body has regions";
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      loaded.insert(rootBuffer(load.getMemRef()));
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value root = rootBuffer(store.getMemRef());
      if (!root.getDefiningOp<memref::AllocOp>())
        return "it stores to a buffer the function does not allocate (a "
               "load may read it)";
      stored.insert(root);
      anyStore = true;
      continue;
    }
    if (!isMemoryEffectFree(&op))
      return "'" + op.getName().getStringRef().str() +
             "' in the body has side effects";
  }
  auto *terminator = body.getTerminator();
  if (!isa<scf::ReduceOp>(terminator) || terminator->getNumOperands() != 0)
    return "the tile loop reduces";
  if (!anyStore)
    return "the body stores nothing";
  for (Value root : stored)
    if (loaded.contains(root))
      return "the body loads a buffer it stores to";
  return "";
}

struct CoarsenElementwisePass final
    : public cachet::impl::CoarsenElementwiseBase<CoarsenElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (factor < 1 || minWorkgroups < 0) {
      func.emitError("cachet-coarsen-elementwise: factor must be at least 1 "
                     "and min-workgroups at least 0, got ")
          << int64_t(factor) << " and " << int64_t(minWorkgroups);
      return signalPassFailure();
    }
    if (factor == 1)
      return;
    int64_t threshold = minWorkgroups;
    if (threshold == 0) {
      cachet::DeviceProfileAttr profile = cachet::lookupDeviceProfile(func);
      threshold = profile && profile.getComputeUnits() > 0
                      ? 32 * int64_t(profile.getComputeUnits())
                      : 4096;
    }
    int64_t small = 0;
    for (scf::ParallelOp op : outermostLoops(func))
      coarsen(op, threshold, small);
    if (small > 0)
      emitRemark(func.getLoc())
          << "cachet-coarsen-elementwise: " << small << " tiled loop"
          << (small == 1 ? "" : "s") << " under " << threshold
          << " workgroups keep one element per thread";
  }

  void coarsen(scf::ParallelOp outer, int64_t threshold, int64_t &small) {
    // A tiled nest: the outer loop's body is the tile loop alone.
    Block *body = outer.getBody();
    auto inner = dyn_cast<scf::ParallelOp>(&body->front());
    if (!inner || inner->getNextNode() != body->getTerminator() ||
        !outer.getInitVals().empty() ||
        inner.getNumLoops() != outer.getNumLoops())
      return;
    int64_t workgroups = 1;
    for (unsigned i = 0, e = outer.getNumLoops(); i < e; ++i) {
      std::optional<int64_t> trips = tripCount(outer, i);
      if (!trips)
        return;
      workgroups *= *trips;
    }
    if (workgroups < threshold) {
      ++small;
      return;
    }
    auto leave = [&](const std::string &why) {
      emitRemark(outer.getLoc())
          << "cachet-coarsen-elementwise: one element per "
          << "thread in " << workgroups << " workgroups: " << why;
    };
    // The dimension whose elements a thread takes: the threads' own (the
    // first) where `factor` tiles divide it, else the first other one; a
    // warp's accesses stay consecutive either way.
    std::optional<unsigned> dim;
    int64_t tile = 0;
    for (unsigned i = 0, e = outer.getNumLoops(); i < e && !dim; ++i) {
      std::optional<int64_t> lb = constantOf(outer.getLowerBound()[i]),
                             ub = constantOf(outer.getUpperBound()[i]),
                             step = constantOf(outer.getStep()[i]),
                             innerLb = constantOf(inner.getLowerBound()[i]),
                             innerUb = constantOf(inner.getUpperBound()[i]),
                             innerStep = constantOf(inner.getStep()[i]);
      if (lb && *lb == 0 && ub && step && innerLb && *innerLb == 0 && innerUb &&
          *innerUb == *step && innerStep && *innerStep == 1 &&
          *ub % (*step * factor) == 0) {
        dim = i;
        tile = *step;
      }
    }
    if (!dim)
      return leave("no dimension is a multiple of " + std::to_string(factor) +
                   " tiles of constant size");
    Block &tileBody = *inner.getBody();
    if (std::string why = whyNotCoarsenable(tileBody); !why.empty())
      return leave(why);

    // The outer step grows `factor` times (the tile loop's bound keeps the
    // old step's value).
    OpBuilder b(outer);
    Location loc = outer.getLoc();
    outer.getStepMutable()[*dim].assign(
        arith::ConstantIndexOp::create(b, loc, tile * factor));

    // The body cloned once per element, the element's index a tile further
    // each time; every clone's loads and arithmetic first, then the stores.
    SmallVector<Operation *> originals;
    for (Operation &op : tileBody.without_terminator())
      originals.push_back(&op);
    b.setInsertionPoint(tileBody.getTerminator());
    Value thread = tileBody.getArgument(*dim);
    SmallVector<IRMapping> clones(factor);
    for (int64_t j = 1; j < factor; ++j)
      clones[j].map(thread,
                    arith::AddIOp::create(
                        b, loc, thread,
                        arith::ConstantIndexOp::create(b, loc, j * tile)));
    for (int64_t j = 0; j < factor; ++j)
      for (Operation *op : originals)
        if (!isa<memref::StoreOp>(op))
          b.clone(*op, clones[j]);
    for (int64_t j = 0; j < factor; ++j)
      for (Operation *op : originals)
        if (isa<memref::StoreOp>(op))
          b.clone(*op, clones[j]);
    for (Operation *op : llvm::reverse(originals))
      op->erase();
    emitRemark(outer.getLoc())
        << "cachet-coarsen-elementwise: " << int64_t(factor)
        << " elements per thread along dimension " << *dim << ", " << tile
        << " apart: " << workgroups << " workgroups become "
        << workgroups / factor;
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
    if (maxGridX < 1) {
      getOperation().emitError("cachet-order-grid-dims: max-grid-x must be "
                               "at least 1, got ")
          << int64_t(maxGridX);
      return signalPassFailure();
    }
    for (scf::ParallelOp op : outermostLoops(getOperation()))
      if (op.getInitVals().empty())
        splitFirst(reorder(op));
  }

  /// Where dimension 0 of `op` (grid x) has more workgroups W than
  /// max-grid-x: W = X * Y with X <= max-grid-x and Y <= max-grid-yz, and
  /// dimension 0 becomes X workgroups wx, a new last dimension (y or z) Y
  /// workgroups wy, its induction variable lb + (wy X + wx) step. Every
  /// iteration computes what it computed before.
  void splitFirst(scf::ParallelOp op) {
    std::optional<int64_t> trips = tripCount(op, 0);
    if (!trips || *trips <= maxGridX)
      return;
    int64_t w = *trips;
    unsigned n = op.getNumLoops();
    auto stays = [&](const std::string &why) {
      emitRemark(op.getLoc()) << "cachet-order-grid-dims: dimension 0 (" << w
                              << " workgroups) stays on grid x, over the "
                              << int64_t(maxGridX) << " it allows: " << why;
    };
    if (n >= 3)
      return stays("grid y and z are taken");
    int64_t y = 0;
    for (int64_t c = llvm::divideCeil(w, int64_t(maxGridX));
         c <= std::min<int64_t>(w, maxGridYZ) && !y; ++c)
      if (w % c == 0)
        y = c;
    if (!y)
      return stays(llvm::formatv("no factor of {0} is at most {1} with the "
                                 "other at most {2}",
                                 w, int64_t(maxGridX), int64_t(maxGridYZ))
                       .str());
    int64_t x = w / y;
    Location loc = op.getLoc();
    OpBuilder b(op);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    SmallVector<Value> lbs(op.getLowerBound()), ubs(op.getUpperBound()),
        steps(op.getStep());
    lbs[0] = c(0);
    ubs[0] = c(x);
    steps[0] = c(1);
    lbs.push_back(c(0));
    ubs.push_back(c(y));
    steps.push_back(c(1));
    auto split = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
    split->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Block *from = op.getBody(), *to = split.getBody();
    to->getTerminator()->erase();
    b.setInsertionPointToStart(to);
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, to->getArgument(n), c(x)).getResult(),
        to->getArgument(0));
    Value iv = arith::AddIOp::create(
        b, loc, op.getLowerBound()[0],
        arith::MulIOp::create(b, loc, linear, op.getStep()[0]).getResult());
    from->getArgument(0).replaceAllUsesWith(iv);
    for (unsigned i = 1; i < n; ++i)
      from->getArgument(i).replaceAllUsesWith(to->getArgument(i));
    to->getOperations().splice(to->end(), from->getOperations());
    op.erase();
    emitRemark(loc) << "cachet-order-grid-dims: dimension 0 (" << w
                    << " workgroups, over the " << int64_t(maxGridX)
                    << " grid x allows) split into " << x << " on grid x by "
                    << y << " on grid " << (n == 1 ? "y" : "z");
  }

  /// Returns `op` or the loop that replaces it.
  scf::ParallelOp reorder(scf::ParallelOp op) {
    unsigned n = op.getNumLoops();
    if (n < 2)
      return op;
    // The first of grid y and z that is too long.
    std::optional<unsigned> longDim;
    for (unsigned i = 1; i < std::min(n, 3u) && !longDim; ++i)
      if (std::optional<int64_t> t = tripCount(op, i); t && *t > maxGridYZ)
        longDim = i;
    if (!longDim)
      return op;
    unsigned k = *longDim;
    int64_t longTrips = *tripCount(op, k);
    std::optional<int64_t> firstTrips = tripCount(op, 0);
    if (!firstTrips || *firstTrips > maxGridYZ) {
      emitRemark(op.getLoc())
          << "cachet-order-grid-dims: dimension " << k << " (" << longTrips
          << " workgroups) stays on grid " << (k == 1 ? "y" : "z")
          << ": dimension 0 would then be too long ("
          << (firstTrips ? std::to_string(*firstTrips) : std::string("unknown"))
          << " workgroups; the limit is " << int64_t(maxGridYZ) << ")";
      return op;
    }
    SmallVector<unsigned> order(n);
    for (unsigned i = 0; i < n; ++i)
      order[i] = i;
    std::swap(order[0], order[k]);
    scf::ParallelOp swapped = permuteDims(op, order);
    emitRemark(swapped.getLoc())
        << "cachet-order-grid-dims: dimension " << k << " (" << longTrips
        << " workgroups) swapped with dimension "
        << "0 (" << *firstTrips << "): it maps to grid x, as grid "
        << (k == 1 ? "y" : "z") << " allows at most " << int64_t(maxGridYZ);
    return swapped;
  }
};

} // namespace
