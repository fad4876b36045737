//===- ExternDynamicSharedMemory.cpp - linkage of dynamic shared memory ---===//
//
// Makes the zero-sized shared-memory globals that gpu.dynamic_shared_memory
// lowers to external, so the NVPTX backend emits them as `.extern .shared`
// arrays backed by the launch's dynamic shared memory. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

namespace cachet {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDMEMORY
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
struct ExternDynamicSharedMemoryPass final
    : public cachet::impl::ExternDynamicSharedMemoryBase<
          ExternDynamicSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError("cachet-extern-dynamic-shared-memory: "
                               "alignment ")
          << alignment.getValue() << " is not a positive power of two";
      return signalPassFailure();
    }
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != 3 || !array || array.getNumElements() != 0 ||
          global.getLinkage() == LLVM::Linkage::External)
        continue;
      global.setLinkage(LLVM::Linkage::External);
      if (global.getAlignment().value_or(0) < uint64_t(alignment))
        global.setAlignment(alignment);
    }
  }
};
} // namespace
