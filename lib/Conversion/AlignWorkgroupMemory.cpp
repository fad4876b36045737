//===- AlignWorkgroupMemory.cpp - alignment of workgroup attributions ----===//
//
// Gives every workgroup attribution of a gpu.func an `llvm.align`, which the
// NVVM and ROCDL lowerings put on the shared-memory global. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

namespace cachet {
#define GEN_PASS_DEF_ALIGNWORKGROUPMEMORY
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Sets `llvm.align` on the workgroup attributions that have none.
struct AlignWorkgroupMemoryPass final
    : public cachet::impl::AlignWorkgroupMemoryBase<AlignWorkgroupMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError("cachet-align-workgroup-memory: alignment ")
          << alignment.getValue() << " is not a positive power of two";
      return signalPassFailure();
    }
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i)
        if (!func.getWorkgroupAttributionAttr(i, name))
          func.setWorkgroupAttributionAttr(i, name,
                                           b.getI64IntegerAttr(alignment));
    });
  }
};
} // namespace
