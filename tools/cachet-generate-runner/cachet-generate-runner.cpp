//===- cachet-generate-runner.cpp - run compiled model artifacts ---------===//
//
// cachet-generate-runner --model=FILE.gguf --prefill=DIR --decode=DIR
//     [--kv=F] [--dtype=D] [--weights=packed|dense] [--ctx=N] [--ubatch=N]
//     [--prompt=ID,... | --prompt-length=N] [--seed=N] [--n-predict=N]
//     [--check] [--compare-rewrites] [--tolerance=X] [--dump-logits=FILE]
//     [--bench [--bench-depths=D,...] [--bench-prompt=N] [--bench-gen=N]
//              [--bench-reps=N] [--bench-on-only] [--json]]
//
// The runtime-only half of cachet-generate, for GPU servers without MLIR:
// runs the prefill and decode artifacts that cachet-generate compiled (it
// prints their folders; the model options must be the ones they were built
// with) on the model's weights, as cachet-generate does after compiling.
// No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#include "cachet/Generate/Generate.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace cachet;

namespace {

int fail(const std::string &message) {
  std::cerr << "cachet-generate-runner: " << message << "\n";
  return 2;
}

/// Parses `text` as an integer of at least `min` into `value`.
bool parseInt(const std::string &flag, const std::string &text, int64_t min,
              int64_t &value, std::string &error) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || v < min) {
    error = flag + ": expects an integer >= " + std::to_string(min) +
            ", got '" + text + "'";
    return false;
  }
  value = v;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, prefillDir, decodeDir, prompt, dumpLogits;
  generate::ModelOptions options;
  generate::GenerationOptions run;
  run.tool = "cachet-generate-runner";
  generate::BenchOptions bench;
  bench.tool = run.tool;
  bool benchMode = false;
  int64_t promptLength = 8, seed = 1, nPredict = 8;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--check") {
      run.check = true;
      continue;
    }
    if (arg == "--compare-rewrites") {
      run.compareRewrites = true;
      continue;
    }
    if (arg == "--bench" || arg == "--bench-on-only" || arg == "--json") {
      benchMode = true;
      if (arg == "--bench-on-only")
        bench.compareRewrites = false;
      if (arg == "--json")
        bench.json = true;
      continue;
    }
    size_t eq = arg.find('=');
    if (eq == std::string::npos)
      return fail("unknown argument '" + arg + "'");
    std::string flag = arg.substr(0, eq), value = arg.substr(eq + 1);
    bool ok = true;
    if (flag == "--model")
      model = value;
    else if (flag == "--prefill")
      prefillDir = value;
    else if (flag == "--decode")
      decodeDir = value;
    else if (flag == "--kv")
      options.kv = value;
    else if (flag == "--dtype")
      options.dtype = value;
    else if (flag == "--weights")
      options.weights = value;
    else if (flag == "--ctx")
      ok = parseInt(flag, value, 1, options.ctx, error);
    else if (flag == "--ubatch")
      ok = parseInt(flag, value, 1, options.ubatch, error);
    else if (flag == "--prompt")
      prompt = value;
    else if (flag == "--prompt-length")
      ok = parseInt(flag, value, 1, promptLength, error);
    else if (flag == "--seed")
      ok = parseInt(flag, value, 0, seed, error);
    else if (flag == "--n-predict")
      ok = parseInt(flag, value, 1, nPredict, error);
    else if (flag == "--tolerance")
      run.tolerance = std::atof(value.c_str());
    else if (flag == "--dump-logits")
      run.dumpLogits = value;
    else if (flag == "--bench-depths")
      ok = generate::parseDepths(value, bench.depths, error);
    else if (flag == "--bench-prompt")
      ok = parseInt(flag, value, 0, bench.promptTokens, error);
    else if (flag == "--bench-gen")
      ok = parseInt(flag, value, 0, bench.genTokens, error);
    else if (flag == "--bench-reps") {
      int64_t reps = 0;
      ok = parseInt(flag, value, 1, reps, error);
      bench.repetitions = int(reps);
    } else
      return fail("unknown argument '" + arg + "'");
    if (!ok)
      return fail(error);
  }
  if (model.empty() || prefillDir.empty() || decodeDir.empty())
    return fail("--model, --prefill and --decode are required");

  auto start = std::chrono::steady_clock::now();
  std::cerr << "cachet-generate-runner: loading " << model << "\n";
  gguf::File file;
  gguf::LlamaConfig config;
  if (!gguf::read(model, file, error) ||
      !gguf::readLlamaConfig(file, config, error))
    return fail(error);
  modelgen::Options prefill, decode;
  std::vector<generate::HostTensor> weights;
  options.tensorTypes = gguf::tensorTypes(file);
  if (!generate::modelOptions(config, options, prefill, decode, error) ||
      !generate::loadWeights(file, config, decode, weights, error))
    return fail(error);
  run.loadSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (benchMode) {
    bench.seed = uint64_t(seed);
    bench.loadSeconds = run.loadSeconds;
    bench.modelName = model;
    bench.target = generate::artifactTarget(prefillDir);
    return generate::runBench(config, prefill, decode, weights, prefillDir,
                              decodeDir, bench, std::cout, std::cerr);
  }
  if (!prompt.empty()) {
    if (!generate::parsePrompt(prompt, config.vocab, run.prompt, error))
      return fail(error);
  } else {
    run.prompt = generate::seededPrompt(promptLength, config.vocab, seed);
  }
  run.nPredict = int(nPredict);
  run.target = generate::artifactTarget(prefillDir);
  return generate::runGeneration(config, prefill, decode, weights, prefillDir,
                                 decodeDir, run, std::cout, std::cerr);
}
