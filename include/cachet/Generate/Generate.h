//===- Generate.h - a GGUF llama model run step by step ----------*- C++
//-*-===//
//
// What cachet-generate does once its two functions are compiled, for the
// tools and for embedding: the model functions' options from a GGUF file's
// configuration, its weights as the functions' arguments, and a generation
// (prompt, then greedy decoding) on resident state, checked against the CPU
// reference and the rewrites-off build. Plain C++17 over the runtime, no
// LLVM or MLIR: it runs on GPU servers (cachet-generate-runner).
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_GENERATE_GENERATE_H
#define CACHET_GENERATE_GENERATE_H

#include "cachet/Generate/Gguf.h"
#include "cachet/Generate/Session.h"

#include <map>
#include <ostream>

namespace cachet {
namespace generate {

/// The choices the model functions are built with beside the file's shapes.
struct ModelOptions {
  /// KV cache format (cachet-gen's --kv spelling).
  std::string kv = "f16";
  /// Activations and dense weights: f16 or bf16.
  std::string dtype = "f16";
  /// Positions of the KV cache.
  int64_t ctx = 64;
  /// Tokens per prefill call.
  int64_t ubatch = 8;
  /// "packed": the projections stay in their file's block format where it
  /// has one (q8_0, q4_K, ...: the kernels decode the blocks); "dense":
  /// every weight converted to `dtype` at load.
  std::string weights = "packed";
  /// The GGUF file's tensor types by name (gguf::tensorTypes, or
  /// gguf::randomTensorTypes before the file is written); a tensor not
  /// listed is dense.
  std::map<std::string, gguf::GgmlType> tensorTypes;
};

/// The prefill (T = ubatch) and decode (T = 1) options of `config`'s model
/// with a run-time position. False with `error` for a bad choice.
bool modelOptions(const gguf::LlamaConfig &config, const ModelOptions &model,
                  modelgen::Options &prefill, modelgen::Options &decode,
                  std::string &error);

/// The weight arguments of `options`' model read from `file` (ModelGen's
/// order; the packed ones copied as the file holds them, the others
/// converted to the activation type; Q and K rows un-permuted from
/// llama.cpp's pairwise RoPE order to rotate-half).
bool loadWeights(const gguf::File &file, const gguf::LlamaConfig &config,
                 const modelgen::Options &options,
                 std::vector<HostTensor> &weights, std::string &error);

/// Parses comma-separated token ids below `vocab`.
bool parsePrompt(const std::string &text, int64_t vocab,
                 std::vector<int32_t> &ids, std::string &error);

/// `length` token ids below `vocab` from `seed` (splitmix64).
std::vector<int32_t> seededPrompt(int64_t length, int64_t vocab, uint64_t seed);

/// How runGeneration runs and what it reports.
struct GenerationOptions {
  /// The name in messages.
  std::string tool = "cachet-generate";
  std::vector<int32_t> prompt;
  int nPredict = 8;
  /// Compare every step's logits with the CPU reference.
  bool check = false;
  /// Run the rewrites-off build too: same tokens, byte-identical logits.
  bool compareRewrites = false;
  /// --check's bound: |gpu - ref| <= tolerance x (1 + max |ref|).
  double tolerance = 0.02;
  /// Write every step's logits (rewrites on) here (empty: no).
  std::string dumpLogits;
  /// Reported in the `time:` line.
  double loadSeconds = 0, compileSeconds = 0;
  std::string target = "spirv";
};

/// Runs the prompt (prefill calls of T tokens, the last padded) and greedy
/// decoding with the artifacts' rewrites-on build, and with the others the
/// options ask for; prints the comparisons, the prompt, the tokens, the
/// model's bytes and the times to `out`. Returns 0, 1 when a comparison
/// fails, 2 on an error (reported to `err`).
int runGeneration(
    const gguf::LlamaConfig &config, const modelgen::Options &prefill,
    const modelgen::Options &decode, const std::vector<HostTensor> &weights,
    const std::string &prefillArtifact, const std::string &decodeArtifact,
    const GenerationOptions &options, std::ostream &out, std::ostream &err);

/// What runBench measures: llama-bench's tests, `pp<N> @ d<D>` (N prompt
/// tokens in prefill calls at position D) and `tg<N> @ d<D>` (N tokens
/// decoded one by one from position D), with the rewrites on and off.
struct BenchOptions {
  std::string tool = "cachet-generate";
  /// Depths D; a depth is the caches filled with seeded values up to D
  /// (Session::fillCaches), not a processed prompt: the kernels read the
  /// same bytes either way.
  std::vector<int64_t> depths = {0};
  /// N of the pp rows and of the tg rows (0: none of that kind).
  int64_t promptTokens = 512, genTokens = 128;
  /// Timed repetitions of each row, after one untimed run.
  int repetitions = 5;
  /// Time the rewrites-off build too, interleaved with the rewrites-on one.
  bool compareRewrites = true;
  /// Print JSON instead of the table.
  bool json = false;
  uint64_t seed = 1;
  /// Described in the output.
  std::string modelName, target;
  double loadSeconds = 0, compileSeconds = 0;
};

/// Runs the benchmark rows of `options` on the artifacts' GPU builds and
/// prints them (median tokens per second and the spread, min..max, over the
/// repetitions; the model's size and parameters, the KV cache and the peak
/// of device temporaries per call) to `out`, progress to `err`. With both
/// builds, the untimed run of each test also compares their tokens and the
/// bytes of every step's logits. Returns 0, 1 when they differ, 2 on an
/// error.
int runBench(const gguf::LlamaConfig &config, const modelgen::Options &prefill,
             const modelgen::Options &decode,
             const std::vector<HostTensor> &weights,
             const std::string &prefillArtifact,
             const std::string &decodeArtifact, const BenchOptions &options,
             std::ostream &out, std::ostream &err);

/// Parses comma-separated depths (non-negative integers).
bool parseDepths(const std::string &text, std::vector<int64_t> &depths,
                 std::string &error);

} // namespace generate
} // namespace cachet

#endif // CACHET_GENERATE_GENERATE_H
