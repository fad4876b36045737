//===- Runner.h - run, check and time a cachet artifact ------------------===//
//
// The runtime-only half of cachet-run: loads an artifact folder (see
// include/cachet/Target/Artifact.h), makes inputs, calls the GPU variants and
// the CPU reference, compares and times them. No MLIR or LLVM dependency:
// this runs on GPU servers.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_TOOLS_RUNNER_H
#define CACHET_TOOLS_RUNNER_H

#include <ostream>
#include <string>
#include <vector>

namespace cachet {

/// What cachet-runner / cachet-run do with an artifact.
struct RunOptions {
  /// The artifact folder.
  std::string artifact;
  /// `random:SEED`, or empty when `inputFiles` are given.
  std::string inputs = "random:1";
  /// One raw little-endian file per argument (the bytes of the tensor).
  std::vector<std::string> inputFiles;
  /// Compare the GPU results with the CPU reference.
  bool check = false;
  /// Compare rewrites off and on byte for byte.
  bool compareRewrites = false;
  /// Time this many interleaved calls of each GPU variant.
  int repeat = 0;
  /// Print every result value.
  bool printResults = false;
};

/// Runs the artifact as `options` say, reporting to `out` (results) and
/// `err` (errors). Returns the process exit code: 0 on success, 1 when a
/// check or comparison fails, 2 on a usage or load error.
int runArtifact(const RunOptions &options, std::ostream &out,
                std::ostream &err);

} // namespace cachet

#endif // CACHET_TOOLS_RUNNER_H
