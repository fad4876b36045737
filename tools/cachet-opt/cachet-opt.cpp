//===- cachet-opt.cpp - the cachet optimizer driver ----------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, plus cachet's.
//
//===----------------------------------------------------------------------===//

#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  cachet::registerCachetPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<cachet::CachetDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cachet optimizer driver\n", registry));
}
