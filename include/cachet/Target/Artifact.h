//===- Artifact.h - compile once, run on a machine without MLIR ----------===//
//
// An artifact is a folder that a runtime-only runner (cachet-runner) loads on
// a GPU server with no MLIR or LLVM installed:
//
//   manifest.json        the entry function's signature (shapes, element
//                        types, ggml block formats, row pitches), the target
//                        and the profile
//   gpu.so               the entry compiled by cachet-compile (rewrites on)
//   gpu-norewrite.so     the same with cachet's rewrites off
//   ref.so               the entry compiled for the host CPU (the reference)
//
// Each shared object exports `_mlir_ciface_<entry>` (the MLIR C interface:
// pointers to memref descriptors) and `_cachet_packed_<entry>(void **args)`,
// which calls it with `args[0]` (the results' struct, when there are
// results) and one pointer per argument (its descriptor, or its value for a
// scalar): one prototype for any number of arguments (a whole model has a
// few per layer). The GPU ones call the upstream mgpu* ABI, which
// libcachet_runtime implements.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_TARGET_ARTIFACT_H
#define CACHET_TARGET_ARTIFACT_H

#include "cachet/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace cachet {

/// What to build.
struct ArtifactOptions {
  /// The function to run.
  std::string entry;
  /// The folder to write (created if missing).
  std::string directory;
  /// Target, chip and profile of the GPU build (its `rewrites` is ignored:
  /// both variants are built).
  CompileOptions compile;
  /// The linker used to turn objects into shared objects.
  std::string linker;
  /// Which shared objects to build: gpu.so and gpu-norewrite.so, and
  /// ref.so (the CPU reference, which only a check runs). manifest.json
  /// is always written.
  bool gpu = true, reference = true;
  /// Applies MLIR's pass-manager and timing command-line options
  /// (--mlir-timing, --mlir-print-ir-after=..., ...) to each build; only for
  /// a tool that called mlir::registerPassManagerCLOptions() and
  /// mlir::registerDefaultTimingManagerCLOptions().
  bool passManagerCLOptions = false;
  /// Verifies the IR after every pass (MLIR's default) instead of once at
  /// the end.
  bool verifyEachPass = true;
};

/// Builds the artifact of `module` (which is not modified). Errors are
/// reported as diagnostics on the module.
mlir::LogicalResult emitArtifact(mlir::ModuleOp module,
                                 const ArtifactOptions &options);

} // namespace cachet

#endif // CACHET_TARGET_ARTIFACT_H
