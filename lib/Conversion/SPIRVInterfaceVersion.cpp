//===- SPIRVInterfaceVersion.cpp - SPIR-V 1.4 for full interfaces --------===//
//
// An entry point whose interface lists more than its inputs and outputs
// needs SPIR-V 1.4; spirv-update-vce does not count interfaces. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/SymbolTable.h"

namespace cachet {
#define GEN_PASS_DEF_SPIRVINTERFACEVERSION
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns true if an entry point of `module` lists a global variable that
/// is neither an Input nor an Output.
bool listsOtherGlobals(spirv::ModuleOp module) {
  bool found = false;
  module.walk([&](spirv::EntryPointOp entry) {
    for (Attribute ref : entry.getInterface()) {
      auto variable =
          SymbolTable::lookupNearestSymbolFrom<spirv::GlobalVariableOp>(
              module, cast<FlatSymbolRefAttr>(ref));
      if (!variable)
        continue;
      spirv::StorageClass storage =
          cast<spirv::PointerType>(variable.getType()).getStorageClass();
      found |= storage != spirv::StorageClass::Input &&
               storage != spirv::StorageClass::Output;
    }
  });
  return found;
}

/// Raises the version of a module whose interfaces need SPIR-V 1.4.
struct SPIRVInterfaceVersionPass final
    : public cachet::impl::SPIRVInterfaceVersionBase<
          SPIRVInterfaceVersionPass> {
  using Base::Base;

  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    std::optional<spirv::VerCapExtAttr> vce = module.getVceTriple();
    if (!vce || vce->getVersion() >= spirv::Version::V_1_4 ||
        !listsOtherGlobals(module))
      return;
    Builder builder(module);
    module.setVceTripleAttr(spirv::VerCapExtAttr::get(
        builder.getI32IntegerAttr(static_cast<int32_t>(spirv::Version::V_1_4)),
        vce->getCapabilitiesAttr(), vce->getExtensionsAttr()));
  }
};
} // namespace
