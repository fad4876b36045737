//===- StreamLoops.cpp - keep a host loop's GPU work on one stream -------===//
//
// gpu-async-region ends the async region at a loop: the GPU work before it
// is waited for, and every iteration creates a stream, chains its work on
// it and synchronizes and destroys it. This pass keeps the loop on the
// stream of the work before it. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_STREAMLOOPS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Whether `op` is `gpu.wait async` with no dependencies: a new stream.
bool isNewStream(Operation *op) {
  auto wait = dyn_cast_or_null<gpu::WaitOp>(op);
  return wait && wait.getAsyncToken() && wait.getAsyncDependencies().empty();
}

/// Whether `op` is a host synchronization on one token: `gpu.wait [%t]`.
bool isSyncOnOne(Operation *op) {
  auto wait = dyn_cast_or_null<gpu::WaitOp>(op);
  return wait && !wait.getAsyncToken() &&
         wait.getAsyncDependencies().size() == 1;
}

/// Returns why the body of `loop` cannot run on an outer stream, or "": it
/// must be one chain that starts with a new stream and ends with a
/// synchronization right before the terminator, and every other op either
/// joins the chain or touches no memory (views, index arithmetic).
std::string whyNot(scf::ForOp loop, gpu::WaitOp &start, gpu::WaitOp &end) {
  Block *body = loop.getBody();
  Operation *last = body->getTerminator()->getPrevNode();
  if (!isSyncOnOne(last))
    return "its body does not end by waiting for its GPU work";
  end = cast<gpu::WaitOp>(last);
  for (Operation &op : body->without_terminator()) {
    if (&op == last)
      continue;
    if (isNewStream(&op)) {
      if (start)
        return "its body starts more than one stream";
      start = cast<gpu::WaitOp>(op);
      continue;
    }
    if (op.getNumRegions() != 0)
      return ("its body holds a '" + op.getName().getStringRef() +
              "' with regions")
          .str();
    if (isa<gpu::AsyncOpInterface>(op) &&
        cast<gpu::AsyncOpInterface>(op).getAsyncToken())
      continue;
    if (!isMemoryEffectFree(&op))
      return ("its body holds a host op with memory effects: '" +
              op.getName().getStringRef() + "'")
          .str();
  }
  if (!start)
    return "its body starts no stream";
  return "";
}

struct StreamLoopsPass final
    : public cachet::impl::StreamLoopsBase<StreamLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      gpu::WaitOp start, end;
      std::string why = whyNot(loop, start, end);
      if (!why.empty()) {
        // Loops without GPU work are none of this pass's business.
        bool gpuWork =
            llvm::any_of(loop.getBody()->getOperations(), [](Operation &op) {
              return isa<gpu::AsyncOpInterface>(op);
            });
        if (gpuWork)
          emitRemark(loop.getLoc(), "cachet-stream-loops: kept: ") << why;
        continue;
      }
      auto before = dyn_cast_or_null<gpu::WaitOp>(loop->getPrevNode());
      if (!before || !isSyncOnOne(before)) {
        emitRemark(loop.getLoc(),
                   "cachet-stream-loops: kept: no GPU work is waited "
                   "for right before the loop");
        continue;
      }
      // The stream of the work before the loop carries every iteration's
      // work in order (the lowering maps a token to its stream, and one
      // stream runs its work in issue order), then the work after it.
      Value stream = before.getAsyncDependencies().front();
      start.getAsyncToken().replaceAllUsesWith(stream);
      start.erase();
      end.erase();
      before.erase();
      Operation *after = loop->getNextNode();
      if (after && isNewStream(after)) {
        cast<gpu::WaitOp>(after).getAsyncToken().replaceAllUsesWith(stream);
        after->erase();
      } else {
        OpBuilder b(loop->getContext());
        b.setInsertionPointAfter(loop);
        gpu::WaitOp::create(b, loop.getLoc(), Type(), ValueRange{stream});
      }
      emitRemark(loop.getLoc(),
                 "cachet-stream-loops: the loop's GPU work stays on the "
                 "stream of the work before it (no stream created, "
                 "synchronized and destroyed per iteration)");
    }
  }
};

} // namespace
