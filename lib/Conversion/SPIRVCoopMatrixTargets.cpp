//===- SPIRVCoopMatrixTargets.cpp - coop-matrix SPIR-V targets per module -===//
//
// Gives the gpu.modules whose kernels use cooperative matrices (the mma
// attention kernel's gpu.subgroup_mma ops) a SPIR-V target with KHR
// cooperative matrices, and leaves the others on the target they have, so
// that only those modules need VK_KHR_cooperative_matrix.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "llvm/ADT/STLExtras.h"

namespace cachet {
#define GEN_PASS_DEF_SPIRVCOOPMATRIXTARGETS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Whether an op of `module` has an operand or result of a cooperative
/// matrix type (!gpu.mma_matrix).
bool usesCooperativeMatrices(gpu::GPUModuleOp module) {
  auto isMatrix = [](Type type) { return isa<gpu::MMAMatrixType>(type); };
  WalkResult walk = module.walk([&](Operation *op) {
    if (llvm::any_of(op->getResultTypes(), isMatrix) ||
        llvm::any_of(op->getOperandTypes(), isMatrix))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// `env` with SPIR-V 1.6 (at least), capability CooperativeMatrixKHR and
/// extension SPV_KHR_cooperative_matrix.
spirv::TargetEnvAttr withCooperativeMatrices(spirv::TargetEnvAttr env) {
  MLIRContext *ctx = env.getContext();
  SmallVector<spirv::Capability> caps(env.getCapabilities());
  if (!llvm::is_contained(caps, spirv::Capability::CooperativeMatrixKHR))
    caps.push_back(spirv::Capability::CooperativeMatrixKHR);
  SmallVector<spirv::Extension> exts(env.getExtensions());
  if (!llvm::is_contained(exts, spirv::Extension::SPV_KHR_cooperative_matrix))
    exts.push_back(spirv::Extension::SPV_KHR_cooperative_matrix);
  spirv::Version version = env.getVersion();
  if (static_cast<uint32_t>(version) <
      static_cast<uint32_t>(spirv::Version::V_1_6))
    version = spirv::Version::V_1_6;
  auto triple = spirv::VerCapExtAttr::get(version, caps, exts, ctx);
  return spirv::TargetEnvAttr::get(triple, env.getResourceLimits(),
                                   env.getClientAPI(), env.getVendorID(),
                                   env.getDeviceType(), env.getDeviceID());
}

struct SPIRVCoopMatrixTargetsPass final
    : public cachet::impl::SPIRVCoopMatrixTargetsBase<
          SPIRVCoopMatrixTargetsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUModuleOp module) {
      ArrayAttr targets = module.getTargetsAttr();
      if (!targets || !usesCooperativeMatrices(module))
        return;
      SmallVector<Attribute> updated(targets.getValue());
      bool changed = false;
      for (Attribute &target : updated)
        if (auto env = dyn_cast<spirv::TargetEnvAttr>(target)) {
          target = withCooperativeMatrices(env);
          changed = true;
        }
      if (!changed)
        return;
      module.setTargetsAttr(ArrayAttr::get(module.getContext(), updated));
      module.emitRemark("cachet-spirv-coop-matrix-targets: @")
          << module.getName()
          << " uses cooperative matrices: its SPIR-V target gets "
             "CooperativeMatrixKHR (SPIR-V 1.6, SPV_KHR_cooperative_matrix); "
             "its kernels need VK_KHR_cooperative_matrix";
    });
  }
};

} // namespace
