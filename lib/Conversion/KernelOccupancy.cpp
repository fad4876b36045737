//===- KernelOccupancy.cpp - nvvm.minctasm from occupancy marks -----------===//
//
// Gives each kernel the nvvm.minctasm its generator asked for with
// cachet.min_workgroups_per_sm marks on ops of its body. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

namespace cachet {
#define GEN_PASS_DEF_KERNELOCCUPANCY
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
struct KernelOccupancyPass final
    : public cachet::impl::KernelOccupancyBase<KernelOccupancyPass> {
  using Base::Base;

  void runOnOperation() override {
    StringRef mark = cachet::CachetDialect::getMinWorkgroupsPerSMAttrName();
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      int64_t workgroups = 0;
      kernel.walk([&](Operation *op) {
        if (auto n = op->getAttrOfType<IntegerAttr>(mark)) {
          workgroups = std::max(workgroups, n.getInt());
          op->removeAttr(mark);
        }
      });
      if (workgroups <= 0 || !kernel.isKernel())
        continue;
      kernel->setAttr(
          NVVM::NVVMDialect::getMinctasmAttrName(),
          IntegerAttr::get(IntegerType::get(&getContext(), 32), workgroups));
      emitRemark(kernel.getLoc(), "cachet-kernel-occupancy: nvvm.minctasm = ")
          << workgroups << " (registers for " << workgroups
          << " workgroups per SM)";
    }
  }
};
} // namespace
