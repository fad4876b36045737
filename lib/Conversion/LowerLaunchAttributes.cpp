//===- LowerLaunchAttributes.cpp - launch flags for marked launches ------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace cachet {
#define GEN_PASS_DEF_LOWERLAUNCHATTRIBUTES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The runtime's launch-flags call (cachet/runtime.h) and its PDL flag.
constexpr StringLiteral kSetNextLaunchFlags = "cachetMgpuSetNextLaunchFlags";
constexpr int32_t kLaunchPDL = 1;

struct LowerLaunchAttributesPass final
    : public cachet::impl::LowerLaunchAttributesBase<
          LowerLaunchAttributesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    LLVM::LLVMFuncOp callee;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (!launch->hasAttr(cachet::CachetDialect::getPdlAttrName()))
        return;
      if (!callee) {
        callee = module.lookupSymbol<LLVM::LLVMFuncOp>(kSetNextLaunchFlags);
        if (!callee) {
          b.setInsertionPointToEnd(module.getBody());
          callee = LLVM::LLVMFuncOp::create(
              b, module.getLoc(), kSetNextLaunchFlags,
              LLVM::LLVMFunctionType::get(b.getI32Type(), {b.getI32Type()}));
        }
      }
      b.setInsertionPoint(launch);
      Value flags = LLVM::ConstantOp::create(b, launch.getLoc(),
                                             b.getI32IntegerAttr(kLaunchPDL));
      LLVM::CallOp::create(b, launch.getLoc(), callee, ValueRange{flags});
    });
  }
};

} // namespace
