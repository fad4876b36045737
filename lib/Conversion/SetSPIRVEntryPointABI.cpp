//===- SetSPIRVEntryPointABI.cpp - spirv.entry_point_abi from block size -===//

#include "cachet/Conversion/Passes.h"

#include "cachet/Device/DeviceProfile.h"

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
    // Its subgroup size is the device profile's, where there is one: the
    // conversion of gpu.shuffle requires the shuffle width to match it.
    // (in the module's targets too, which the conversions read first).
    if (ArrayAttr targets = module.getTargetsAttr()) {
      SmallVector<Attribute> updated(targets.begin(), targets.end());
      for (Attribute &target : updated)
        if (auto env = dyn_cast<spirv::TargetEnvAttr>(target)) {
          target = withProfileSubgroupSize(env);
          module->setAttr(spirv::getTargetEnvAttrName(), target);
          break;
        }
      module.setTargetsAttr(ArrayAttr::get(&getContext(), updated));
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

  spirv::TargetEnvAttr withProfileSubgroupSize(spirv::TargetEnvAttr env) {
    cachet::DeviceProfileAttr profile =
        cachet::lookupDeviceProfile(getOperation());
    spirv::ResourceLimitsAttr limits = env.getResourceLimits();
    if (!profile || profile.getSubgroupSize() == 0 ||
        static_cast<int64_t>(profile.getSubgroupSize()) ==
            limits.getSubgroupSize())
      return env;
    auto size = static_cast<int>(profile.getSubgroupSize());
    limits = spirv::ResourceLimitsAttr::get(
        &getContext(), limits.getMaxComputeSharedMemorySize(),
        limits.getMaxComputeWorkgroupInvocations(),
        limits.getMaxComputeWorkgroupSize(), size, limits.getMinSubgroupSize(),
        limits.getMaxSubgroupSize(), limits.getCooperativeMatrixPropertiesKhr(),
        limits.getCooperativeMatrixPropertiesNv());
    return spirv::TargetEnvAttr::get(env.getTripleAttr(), limits,
                                     env.getClientAPI(), env.getVendorID(),
                                     env.getDeviceType(), env.getDeviceID());
  }
};
} // namespace
