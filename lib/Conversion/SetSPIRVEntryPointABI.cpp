//===- SetSPIRVEntryPointABI.cpp - spirv.entry_point_abi from block size -===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"

namespace cachet {
#define GEN_PASS_DEF_SETSPIRVENTRYPOINTABI
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Attaches spirv.entry_point_abi to every kernel of a gpu.module.
struct SetSPIRVEntryPointABIPass final
    : public cachet::impl::SetSPIRVEntryPointABIBase<
          SetSPIRVEntryPointABIPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    // The SPIR-V dialect conversions look up the target in the
    // `spirv.target_env` attribute of an enclosing op.
    if (ArrayAttr targets = module.getTargetsAttr())
      for (Attribute target : targets)
        if (auto env = dyn_cast<spirv::TargetEnvAttr>(target)) {
          module->setAttr(spirv::getTargetEnvAttrName(), env);
          break;
        }
    StringRef abiName = spirv::getEntryPointABIAttrName();
    WalkResult result = module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func->hasAttr(abiName))
        return WalkResult::advance();
      SmallVector<int32_t, 3> size;
      if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize())
        size.assign(known->begin(), known->end());
      else
        size.assign(workgroupSize.begin(), workgroupSize.end());
      if (size.empty() || size.size() > 3) {
        func.emitError("cachet-set-spirv-entry-point-abi: kernel has no "
                       "known_block_size and no workgroup-size option (x,y,z) "
                       "was given");
        return WalkResult::interrupt();
      }
      size.resize(3, 1);
      func->setAttr(abiName, spirv::getEntryPointABIAttr(&getContext(), size));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
