//===- SPIRVSubgroupSize.cpp - The subgroup size a module was built for ---===//
//
// Kernels that use subgroup operations are written for one subgroup size;
// Vulkan sets it at pipeline creation. This pass records it in the module as
// a specialization constant with a reserved SpecId, which the runtime reads.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"

#include "llvm/ADT/StringExtras.h"

#include <set>

namespace cachet {
#define GEN_PASS_DEF_SPIRVSUBGROUPSIZE
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// The SpecId of the constant; CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID in the
/// runtime's public header (cachet/runtime.h) is the same number ("cach").
constexpr uint32_t kSubgroupSizeSpecId = 0x63616368;
constexpr StringLiteral kConstantName = "cachet_subgroup_size";
/// The attribute that spirv.SpecConstant keeps its SpecId in.
constexpr StringLiteral kSpecIdAttr = "spec_id";

/// Op-name prefixes of the operations that act across a subgroup
/// ("spirv.Group" covers spirv.GroupNonUniform*).
constexpr StringLiteral kSubgroupOpPrefixes[] = {
    "spirv.Group", "spirv.KHR.CooperativeMatrix", "spirv.KHR.Subgroup",
    "spirv.INTEL.Subgroup", "spirv.NV.CooperativeMatrix"};

/// Built-ins whose values depend on the subgroup size.
bool isSubgroupBuiltIn(StringRef builtIn) {
  return builtIn.starts_with("Subgroup") || builtIn == "NumSubgroups";
}

/// The names of what `module` uses across subgroups (ops and built-ins),
/// sorted; empty if nothing.
std::set<std::string> subgroupUses(spirv::ModuleOp module) {
  std::set<std::string> uses;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    for (StringRef prefix : kSubgroupOpPrefixes)
      if (name.starts_with(prefix)) {
        uses.insert(name.str());
        return;
      }
    if (auto variable = dyn_cast<spirv::GlobalVariableOp>(op))
      if (std::optional<StringRef> builtIn = variable.getBuiltIn())
        if (isSubgroupBuiltIn(*builtIn))
          uses.insert(builtIn->str());
  });
  return uses;
}

std::string entryPointNames(spirv::ModuleOp module) {
  SmallVector<std::string> names;
  module.walk([&](spirv::EntryPointOp entry) {
    names.push_back("'" + entry.getFn().str() + "'");
  });
  return names.empty() ? std::string("(no entry point)")
                       : llvm::join(names, ", ");
}

struct SPIRVSubgroupSizePass final
    : public cachet::impl::SPIRVSubgroupSizeBase<SPIRVSubgroupSizePass> {
  using Base::Base;

  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    std::string kernels = entryPointNames(module);
    std::set<std::string> uses = subgroupUses(module);
    if (uses.empty()) {
      module.emitRemark("cachet-spirv-subgroup-size: kernel ")
          << kernels
          << " uses no subgroup operation: it runs at any subgroup size";
      return;
    }
    spirv::TargetEnvAttr env = spirv::lookupTargetEnvOrDefault(module);
    int size = env.getResourceLimits().getSubgroupSize();
    if (size <= 0 || !llvm::isPowerOf2_32(size)) {
      module.emitError("cachet-spirv-subgroup-size: the target environment's "
                       "subgroup size is ")
          << size << ", not a power of two; kernel " << kernels
          << " uses subgroup operations (" << llvm::join(uses, ", ") << ")";
      return signalPassFailure();
    }
    // An existing constant: the reserved SpecId or the name.
    spirv::SpecConstantOp existing;
    WalkResult walk = module.walk([&](spirv::SpecConstantOp constant) {
      auto specId = constant->getAttrOfType<IntegerAttr>(kSpecIdAttr);
      bool reservedId = specId && specId.getValue() == kSubgroupSizeSpecId;
      if (!reservedId && constant.getSymName() != kConstantName)
        return WalkResult::advance();
      auto value = dyn_cast<IntegerAttr>(constant.getDefaultValue());
      if (!reservedId || constant.getSymName() != kConstantName || !value ||
          value.getInt() != size) {
        constant.emitError("cachet-spirv-subgroup-size: this specialization "
                           "constant clashes with the one that records the "
                           "subgroup size (@")
            << kConstantName << ", SpecId " << kSubgroupSizeSpecId << " = "
            << size << " : i32)";
        return WalkResult::interrupt();
      }
      existing = constant;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!existing) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      auto constant = spirv::SpecConstantOp::create(
          builder, module.getLoc(), builder.getStringAttr(kConstantName),
          builder.getI32IntegerAttr(size));
      constant->setAttr(
          kSpecIdAttr,
          builder.getI32IntegerAttr(static_cast<int32_t>(kSubgroupSizeSpecId)));
    }
    module.emitRemark("cachet-spirv-subgroup-size: kernel ")
        << kernels << " uses subgroup operations (" << llvm::join(uses, ", ")
        << "): compiled for subgroups of " << size << " lanes, recorded as @"
        << kConstantName << " (SpecId " << kSubgroupSizeSpecId
        << ") for the runtime, which asks the device for that size or "
           "refuses the kernel";
  }
};
} // namespace
