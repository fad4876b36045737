//===- cachet-opt.cpp - the cachet optimizer driver ----------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, plus cachet's.
//
//===----------------------------------------------------------------------===//

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

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  cachet::registerCachetPasses();
  cachet::registerCachetConversionPasses();
  cachet::registerCachetPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates NVVM and ROCDL kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<cachet::CachetDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cachet optimizer driver\n", registry));
}
