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

/// Times of one GPU variant over repeated calls, in milliseconds.
struct VariantTimes {
  /// Device time from the first kernel's start to the last kernel's end.
  std::vector<double> kernels;
  /// The whole call on the device, uploads and downloads included.
  std::vector<double> device;
  /// Host wall time of the call.
  std::vector<double> wall;
  /// Kernels launched by the call (the latest call's count).
  uint64_t launches = 0;
};

/// Median and range of a sample.
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spread(std::vector<double> values);

/// What `benchArtifact` measured.
struct BenchResult {
  std::string device, backend, entry, target, profile;
  /// Rewrites off and on gave byte-identical results on the first call.
  bool identical = false;
  /// [0]: rewrites off, [1]: rewrites on; interleaved calls.
  VariantTimes times[2];
};

/// Loads the artifact folder, makes random inputs from `seed`, calls both GPU
/// variants once and compares their results, then times `warmup` + `repeat`
/// interleaved calls of each (keeping the last `repeat`). Returns false with
/// `error` set on a load or device error.
bool benchArtifact(const std::string &artifact, unsigned seed, int warmup,
                   int repeat, BenchResult &result, std::string &error);

/// Runs the artifact as `options` say, reporting to `out` (results) and
/// `err` (errors). Returns the process exit code: 0 on success, 1 when a
/// check or comparison fails, 2 on a usage, load or device error, 77
/// ("skipped") when the device lacks what the kernels need (the GPU runtime
/// reported CACHET_ERROR_UNSUPPORTED, e.g. cooperative-matrix kernels on a
/// Vulkan device without VK_KHR_cooperative_matrix): nothing was checked.
int runArtifact(const RunOptions &options, std::ostream &out,
                std::ostream &err);

} // namespace cachet

#endif // CACHET_TOOLS_RUNNER_H
