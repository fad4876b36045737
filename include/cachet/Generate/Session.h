//===- Session.h - run a compiled decoder against resident state -*- C++
//-*-===//
//
// The runtime half of cachet-generate, for embedding: a decoder's prefill
// and decode functions (artifacts of cachet-compile, see
// cachet/Target/Artifact.h, built from cachet::modelgen with a run-time
// position) called step after step on one set of arguments: the weights,
// the KV caches and the RoPE tables stay where they are (bound resident on
// the device for a GPU variant, so nothing is uploaded per token), each
// step passes the new token ids and their position, and returns the logits.
//
// Plain C++17 over libcachet_runtime and dlopen; no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_GENERATE_SESSION_H
#define CACHET_GENERATE_SESSION_H

#include "cachet/ModelGen/ModelGen.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cachet {
namespace generate {

/// One argument of the model functions, on the host.
struct HostTensor {
  std::string name;
  std::vector<int64_t> shape;
  /// `f16`, `bf16`, `f32`, `i8`, `i32`, `i64` or a ggml block format.
  std::string element;
  std::vector<uint8_t> bytes;
};

/// Which build of an artifact a session calls.
enum class Variant {
  /// `gpu.so`: cachet's rewrites on.
  Gpu,
  /// `gpu-norewrite.so`: the same IR with the rewrites off.
  GpuNoRewrite,
  /// `ref.so`: the CPU reference compiled from the same IR.
  Reference,
};

/// Returns the file name of `variant` in an artifact folder.
const char *variantFile(Variant variant);

/// The target an artifact was compiled for (its manifest's "target":
/// "nvvm", "rocdl" or "spirv").
std::string artifactTarget(const std::string &artifact);

/// A model function loaded from one artifact variant: its packed entry
/// `_cachet_packed_model`.
class Program {
public:
  Program() = default;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;
  ~Program();
  /// Loads `<artifact>/<variantFile(variant)>`. Returns false with `error`.
  bool load(const std::string &artifact, Variant variant, std::string &error);
  /// Calls the entry with `arguments` (host buffers, in order, with their
  /// shapes) and returns its results' bytes (the model's next token id and
  /// its logits); frees the results the call allocated.
  bool call(const std::vector<HostTensor *> &arguments,
            const std::vector<std::vector<int64_t>> &resultShapes,
            const std::vector<int> &resultElementBytes,
            std::vector<std::vector<uint8_t>> &results, std::string &error);

private:
  void *handle = nullptr;
  void (*fn)(void **) = nullptr;
};

/// The state of one generation: the arguments of the prefill and decode
/// functions, shared (same ids, weights, caches and tables; a GPU session
/// binds them resident once), and the two loaded programs.
class Session {
public:
  /// `prefill` / `decode` are the ModelGen options the artifacts were built
  /// from (tokens T and 1, Position::Dynamic, the same model and cache).
  /// `weights` are the weight arguments in ModelGen's order (see
  /// weightNames); `ropeTheta` gives the RoPE tables.
  Session(const modelgen::Options &prefill, const modelgen::Options &decode,
          std::vector<HostTensor> weights, double ropeTheta);
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session();

  /// Loads both artifacts' `variant` and, for a GPU variant, binds the
  /// weights, caches and tables resident on the device.
  bool open(const std::string &prefillArtifact,
            const std::string &decodeArtifact, Variant variant,
            std::string &error);

  /// Runs `ids` (at most the prefill's T tokens, or 1 with the decode
  /// function) at positions `pos`..: appends them to the caches and returns
  /// the logits of the last one (`vocab` floats). Shorter prompts are
  /// padded; the padding's cache rows are written over by the next steps
  /// before any query sees them.
  /// `best`, where given, receives the model's own argmax of those logits
  /// (its first result).
  bool step(const std::vector<int32_t> &ids, int64_t pos,
            std::vector<float> &logits, std::string &error,
            int32_t *best = nullptr);

  /// Zeroes the caches (a new sequence).
  bool reset(std::string &error);

  /// Fills the caches with values drawn from `seed` (valid blocks of their
  /// format: finite scales), as if a prompt had filled every position; a
  /// benchmark's depth. Their device copies are replaced.
  bool fillCaches(uint64_t seed, std::string &error);

  /// Bytes of the weights, of the caches and of the RoPE tables.
  uint64_t weightBytes() const;
  uint64_t cacheBytes() const;

private:
  bool bind(std::string &error);
  /// Uploads the caches again after their host bytes changed.
  bool rebindCaches(std::string &error);
  void unbind();

  modelgen::Options prefillOptions, decodeOptions;
  std::vector<HostTensor> weights, caches;
  HostTensor cos, sin;
  Program prefillProgram, decodeProgram;
  Variant variant = Variant::Reference;
  bool bound = false;
};

/// Names of the weight arguments of a ModelGen model, in order:
/// `tok_embd`, per layer `l<N>_attn_norm`, `l<N>_wq`, `l<N>_wk`, `l<N>_wv`,
/// `l<N>_wo`, `l<N>_ffn_norm`, `l<N>_w_gate`, `l<N>_w_up`, `l<N>_w_down`,
/// then `output_norm`, `lm_head`.
std::vector<std::string> weightNames(const modelgen::Options &options);

/// The RoPE tables of `maxSeq` positions (ModelGen's layout: both halves of
/// a row hold the angles p * theta^(-2i / headDim)), as f32 bytes.
void ropeTables(int64_t maxSeq, int64_t headDim, double theta,
                std::vector<uint8_t> &cosBytes, std::vector<uint8_t> &sinBytes);

/// The index of the largest of `logits` (the first of equal ones).
int32_t argmax(const std::vector<float> &logits);

} // namespace generate
} // namespace cachet

#endif // CACHET_GENERATE_SESSION_H
