//===- NestSPIRVModules.cpp - move spirv.module into its gpu.module ------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"

namespace cachet {
#define GEN_PASS_DEF_NESTSPIRVMODULES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// The prefix convert-gpu-to-spirv gives a spirv.module made from a
/// gpu.module.
constexpr StringLiteral kSPIRVModulePrefix = "__spv__";

/// Moves `spirv.module @__spv__NAME` into `gpu.module @NAME`.
struct NestSPIRVModulesPass final
    : public cachet::impl::NestSPIRVModulesBase<NestSPIRVModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto spirvModule :
         llvm::make_early_inc_range(module.getOps<spirv::ModuleOp>())) {
      std::optional<StringRef> name = spirvModule.getName();
      if (!name || !name->starts_with(kSPIRVModulePrefix))
        continue;
      StringRef gpuName = name->drop_front(kSPIRVModulePrefix.size());
      auto gpuModule = symbols.lookup<gpu::GPUModuleOp>(gpuName);
      if (!gpuModule) {
        spirvModule.emitError("cachet-nest-spirv-modules: no gpu.module @")
            << gpuName << " for this spirv.module";
        return signalPassFailure();
      }
      spirvModule->moveBefore(gpuModule.getBody(),
                              gpuModule.getBody()->begin());
    }
  }
};
} // namespace
