//===- cachet-opt.cpp - the cachet optimizer driver ----------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, plus cachet's.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Attention.h"
#include "cachet/Conversion/DequantTranspose.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"
#include "cachet/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace {
/// Applies cachet's exported lowering patterns (populateLowerAttention-
/// Patterns, populateLowerDequantTransposePatterns) with
/// mlir::walkAndApplyPatterns, as a compiler that drives its own pattern
/// sets would; test/Conversion/lowering-patterns.mlir checks that they give
/// the passes' IR.
struct TestLoweringPatternsPass final
    : mlir::PassWrapper<TestLoweringPatternsPass,
                        mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestLoweringPatternsPass)

  llvm::StringRef getArgument() const final {
    return "cachet-test-lowering-patterns";
  }
  llvm::StringRef getDescription() const final {
    return "Apply cachet's populate*Patterns with walkAndApplyPatterns "
           "(tests)";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const final {
    registry.insert<mlir::arith::ArithDialect, mlir::gpu::GPUDialect,
                    mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect, mlir::nvgpu::NVGPUDialect,
                    mlir::bufferization::BufferizationDialect>();
  }
  void runOnOperation() final {
    mlir::RewritePatternSet patterns(&getContext());
    cachet::populateLowerAttentionPatterns(patterns);
    cachet::populateLowerDequantTransposePatterns(patterns);
    mlir::walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  cachet::registerCachetPasses();
  cachet::registerCachetConversionPasses();
  cachet::registerCachetPipelines();
  mlir::PassRegistration<TestLoweringPatternsPass>();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates NVVM and ROCDL kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<cachet::CachetDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cachet optimizer driver\n", registry));
}
