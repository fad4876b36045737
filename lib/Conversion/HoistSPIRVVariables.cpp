//===- HoistSPIRVVariables.cpp - Function variables to the entry block ---===//
//
// SPIR-V requires every Function-storage OpVariable to be in the first block
// of its function; the SCF to SPIR-V conversion leaves the variables of a
// loop's results next to the loop, inside any enclosing loop. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"

namespace cachet {
#define GEN_PASS_DEF_HOISTSPIRVVARIABLES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Moves the variables without initializer of every spirv.func to the start
/// of its entry block.
struct HoistSPIRVVariablesPass final
    : public cachet::impl::HoistSPIRVVariablesBase<HoistSPIRVVariablesPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](spirv::FuncOp func) {
      if (func.isExternal())
        return;
      Block &entry = func.front();
      SmallVector<spirv::VariableOp> variables;
      func.walk([&](spirv::VariableOp variable) {
        if (!variable.getInitializer())
          variables.push_back(variable);
      });
      for (spirv::VariableOp variable : llvm::reverse(variables))
        variable->moveBefore(&entry, entry.begin());
    });
  }
};
} // namespace
