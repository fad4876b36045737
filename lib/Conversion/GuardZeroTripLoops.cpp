//===- GuardZeroTripLoops.cpp - scf.for results when no iteration runs ---===//
//
// Follows each scf.for with results that may run no iteration by an scf.if
// that gives its initial values when it ran none, which upstream's
// scf-to-spirv does not give a loop that never runs. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace cachet {
#define GEN_PASS_DEF_GUARDZEROTRIPLOOPS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Whether `loop` runs at least once whatever the run-time values.
bool runsAtLeastOnce(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                         ub = getConstantIntValue(loop.getUpperBound());
  if (!lb || !ub)
    return false;
  return loop.getUnsignedCmp() ? uint64_t(*lb) < uint64_t(*ub) : *lb < *ub;
}

struct GuardZeroTripLoopsPass final
    : public cachet::impl::GuardZeroTripLoopsBase<GuardZeroTripLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    int64_t guarded = 0;
    module.walk([&](scf::ForOp loop) {
      if (loop.getNumResults() == 0 || runsAtLeastOnce(loop))
        return;
      OpBuilder b(loop->getContext());
      b.setInsertionPointAfter(loop);
      Location loc = loop.getLoc();
      Value ran = arith::CmpIOp::create(
          b, loc,
          loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                : arith::CmpIPredicate::slt,
          loop.getLowerBound(), loop.getUpperBound());
      // scf.if, not arith.select: it takes every type the loop carries
      // (vectors longer than SPIR-V's, cooperative matrices), and its
      // lowering stores the result on both branches.
      auto guard = scf::IfOp::create(
          b, loc, ran,
          [&](OpBuilder &tb, Location tl) {
            scf::YieldOp::create(tb, tl, loop.getResults());
          },
          [&](OpBuilder &eb, Location el) {
            scf::YieldOp::create(eb, el, loop.getInitArgs());
          });
      loop.getResults().replaceUsesWithIf(
          guard.getResults(),
          [&](OpOperand &use) { return !guard->isAncestor(use.getOwner()); });
      ++guarded;
    });
    if (guarded > 0)
      emitRemark(module.getLoc())
          << "cachet-guard-zero-trip-loops: " << guarded << " loop"
          << (guarded == 1 ? "" : "s")
          << " with a run-time trip count give their initial "
             "values when they run no iteration";
  }
};

} // namespace
