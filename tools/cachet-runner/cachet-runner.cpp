//===- cachet-runner.cpp - run a cachet artifact without MLIR ------------===//
//
// cachet-runner ARTIFACT_DIR [--inputs=random:SEED | --input=FILE ...]
//               [--check] [--compare-rewrites] [--repeat=N] [--print-results]
//
// Loads the artifact that `cachet-run --emit=DIR` (or cachet::emitArtifact)
// wrote, runs its entry on the GPU through libcachet_runtime, and checks,
// compares and times it. Needs only libcachet_runtime and the GPU driver:
// this is what runs on GPU servers.
//
//===----------------------------------------------------------------------===//

#include "Runner.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

static int usage() {
  std::cerr << "usage: cachet-runner ARTIFACT_DIR [--inputs=random:SEED | "
               "--input=FILE ...] [--check] [--compare-rewrites] "
               "[--repeat=N] [--print-results]\n";
  return 2;
}

int main(int argc, char **argv) {
  cachet::RunOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--inputs="))
      options.inputs = v;
    else if (const char *v = value("--input="))
      options.inputFiles.push_back(v);
    else if (arg == "--check")
      options.check = true;
    else if (arg == "--compare-rewrites")
      options.compareRewrites = true;
    else if (const char *v = value("--repeat="))
      options.repeat = std::atoi(v);
    else if (arg == "--print-results")
      options.printResults = true;
    else if (arg.rfind("--", 0) == 0 || !options.artifact.empty())
      return usage();
    else
      options.artifact = arg;
  }
  if (options.artifact.empty())
    return usage();
  return cachet::runArtifact(options, std::cout, std::cerr);
}
