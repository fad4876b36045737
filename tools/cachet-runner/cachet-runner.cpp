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

static constexpr const char *kUsage =
    "usage: cachet-runner ARTIFACT_DIR [--inputs=random:SEED | "
    "--input=FILE ...] [--check] [--compare-rewrites] [--repeat=N] "
    "[--print-results]\n";

static int usage(const std::string &error = "") {
  if (!error.empty())
    std::cerr << "cachet-runner: " << error << "\n";
  std::cerr << kUsage;
  return 2;
}

/// --help: what each option does, on stdout.
static int help() {
  std::cout
      << kUsage
      << "\nRuns an artifact of cachet-run --emit (manifest.json, gpu.so, "
         "gpu-norewrite.so,\nref.so) with libcachet_runtime and the GPU "
         "driver only.\n\n"
         "  --inputs=random:SEED  random inputs from SEED (default "
         "random:1)\n"
         "  --input=FILE          one raw input file per argument, in order\n"
         "  --check               compare with the CPU reference (ref.so)\n"
         "  --compare-rewrites    compare rewrites off and on byte for byte\n"
         "  --repeat=N            time N interleaved calls of each variant,\n"
         "                        then call once more: the results must be\n"
         "                        the first call's bytes\n"
         "  --print-results       print the results\n"
         "  --help                this text\n"
         "\nExit status: 0, 1 when a check or comparison fails, 2 on an "
         "error, 77 when\nthe device lacks what the kernels need.\n";
  return 0;
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
    else if (arg == "--help" || arg == "-h")
      return help();
    else if (arg.rfind("--", 0) == 0 || !options.artifact.empty())
      return usage("unknown argument " + arg);
    else
      options.artifact = arg;
  }
  if (options.artifact.empty())
    return usage("no artifact folder given");
  return cachet::runArtifact(options, std::cout, std::cerr);
}
