//===- CachetPlugin.cpp - cachet as an mlir-opt dialect and pass plugin --===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"
#include "cachet/Pipelines/Pipelines.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

/// Dialect plugin entry point: registers the cachet dialect.
extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Cachet", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<cachet::CachetDialect>();
          }};
}

/// Pass plugin entry point: registers every cachet pass and cachet-compile.
extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CachetPasses", LLVM_VERSION_STRING, []() {
            cachet::registerCachetPasses();
            cachet::registerCachetConversionPasses();
            cachet::registerCachetPipelines();
          }};
}
