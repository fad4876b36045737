//===- cachet-run.cpp - compile an MLIR function and run it on a GPU -----===//
//
// cachet-run FILE.mlir --entry=FN [--target=spirv|nvvm|rocdl] [--chip=...]
//            [--profile=...] [--inputs=random:SEED | --input=FILE ...]
//            [--check] [--compare-rewrites] [--repeat=N] [--print-results]
//            [--emit=DIR] [--no-run]
//
// Compiles FN with cachet-compile into an artifact (rewrites on and off, and
// a CPU reference; see cachet/Target/Artifact.h) and runs it with the same
// runner cachet-runner uses on GPU servers.
//
//===----------------------------------------------------------------------===//

#include "Runner.h"

#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Target/Artifact.h"

#include "cachet/Conversion/Passes.h"
#include "cachet/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <iostream>

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::Required);
static cl::opt<std::string> target("target",
                                   cl::desc("spirv (default), nvvm or rocdl"),
                                   cl::init("spirv"));
static cl::opt<std::string> chip("chip", cl::desc("Target chip (nvvm, rocdl)"),
                                 cl::init(""));
static cl::opt<std::string>
    profile("profile", cl::desc("Device profile (built-in name or .json)"),
            cl::init("lavapipe"));
static cl::opt<std::string>
    prefetch("prefetch",
             cl::desc("Mat-vec chain prefetch and PDL plans in the rewrites-on "
                      "build: auto (default), l2, bulk, pdl, pdl+l2, pdl+bulk, "
                      "off"),
             cl::init("auto"));
static cl::opt<std::string>
    matvecKernel("matvec-kernel",
                 cl::desc("Mat-vec kernels: auto (default: subgroup on NVVM "
                          "and ROCDL, generic on SPIR-V), subgroup or generic"),
                 cl::init("auto"));
static cl::opt<std::string>
    compileOptions("compile-options",
                   cl::desc("More cachet-compile options, e.g. "
                            "\"matvec-options={rows-per-block=8}\""),
                   cl::init(""));
static cl::opt<std::string> attentionKernel(
    "attention-kernel",
    cl::desc("auto (default), scalar, tiled, mma, mma-sync, decode or "
             "reference attention kernels"),
    cl::init("auto"));
static cl::opt<std::string> inputs("inputs",
                                   cl::desc("random:SEED (default random:1)"),
                                   cl::init("random:1"));
static cl::list<std::string>
    inputFiles("input", cl::desc("Raw bytes of one argument, in order"));
static cl::opt<bool> check("check", cl::desc("Compare with the CPU reference"));
static cl::opt<bool>
    compareRewrites("compare-rewrites",
                    cl::desc("Compare rewrites off and on byte for byte"));
static cl::opt<int> repeat("repeat",
                           cl::desc("Time N interleaved calls of each variant"),
                           cl::init(0));
static cl::opt<bool> printResults("print-results",
                                  cl::desc("Print every result value"));
static cl::opt<std::string>
    emit("emit", cl::desc("Keep the artifact in this folder"), cl::init(""));
static cl::opt<bool> noRun("no-run", cl::desc("Only build the artifact"));
static cl::opt<std::string>
    linker("linker", cl::desc("Linker for the artifact's shared objects"),
           cl::init(CACHET_DEFAULT_LINKER));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  cachet::registerCachetPasses();
  cachet::registerCachetConversionPasses();
  cl::ParseCommandLineOptions(argc, argv, "cachet-run\n");

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<cachet::CachetDialect>();
  mlir::MLIRContext context(registry);
  // A diagnostic would print its op ("see current operation"), which
  // numbers the values of the whole function: with a remark for every
  // decision, compiling a 32-layer model spent most of its time there.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(inputFile, sourceMgr,
                                            mlir::ParserConfig(&context));
  if (!module)
    return 2;

  cachet::ArtifactOptions options;
  options.entry = entry;
  options.linker = linker;
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(options.compile.parseFromString(
          "target=" + target + " chip=" + chip + " profile=" + profile +
              " prefetch=" + prefetch + " matvec-kernel=" + matvecKernel +
              " attention-kernel=" + attentionKernel + " " + compileOptions,
          errorStream))) {
    // llvm::cl reports an unknown name or value on stderr itself.
    std::cerr << "cachet-run: bad cachet-compile option"
              << (error.empty() ? std::string(" (see above)") : ": " + error)
              << "\n";
    return 2;
  }
  SmallString<128> directory(emit);
  if (directory.empty() &&
      llvm::sys::fs::createUniqueDirectory("cachet-run", directory)) {
    std::cerr << "cachet-run: cannot create a temporary folder\n";
    return 2;
  }
  options.directory = std::string(directory);
  if (failed(cachet::emitArtifact(*module, options)))
    return 2;
  if (noRun)
    return 0;

  cachet::RunOptions run;
  run.artifact = options.directory;
  run.inputs = inputs;
  run.inputFiles.assign(inputFiles.begin(), inputFiles.end());
  run.check = check;
  run.compareRewrites = compareRewrites;
  run.repeat = repeat;
  run.printResults = printResults;
  int status = cachet::runArtifact(run, std::cout, std::cerr);
  if (emit.empty())
    llvm::sys::fs::remove_directories(directory);
  return status;
}
