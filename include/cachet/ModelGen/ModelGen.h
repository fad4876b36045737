//===- ModelGen.h - Llama layers and models as front-end MLIR ---*- C++ -*-===//
//
// Writes a Llama-architecture decoder layer, or a whole model, as MLIR text in
// the form an ML front end (torch-mlir, IREE) emits: linalg on tensors over
// the upstream func, arith, math and tensor dialects; only the packed ggml KV
// cache formats use cachet's block types and `cachet.quantize` /
// `cachet.dequantize`. The output is for tests and benchmarks: every option
// changes the spelling or the shapes, never the meaning, so the same layer can
// be run through each matcher path.
//
// Plain C++17, no LLVM or MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_MODELGEN_MODELGEN_H
#define CACHET_MODELGEN_MODELGEN_H

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace cachet {
namespace modelgen {

/// What to generate.
enum class Kind {
  /// `func.func @layer`: one decoder layer.
  Layer,
  /// `func.func @model`: embedding, the layers, final norm, LM head, argmax.
  Model,
};

/// Element type of the activations and dense weights.
enum class DType { F16, BF16 };

/// Format of the KV cache.
enum class KVFormat {
  F16,
  BF16,
  /// Split q8_0: `i8 [S][Hkv][Dh]` values and `f16 [S][Hkv][Dh/32]` scales,
  /// quantized and dequantized with linalg generics.
  Q8_0,
  /// Packed ggml blocks: `[S][Hkv][Dh/32] x !cachet.<format>`, written with
  /// `cachet.quantize` and read with `cachet.dequantize`.
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  IQ4_NL,
  Q8_0Packed,
};

/// Where the weights live.
enum class WeightMode {
  /// Function arguments marked `{cachet.weight}`.
  Args,
  /// `arith.constant dense<...>` with seeded pseudo-random values.
  Constants,
};

/// Rounding of the split q8_0 quantization.
enum class Rounding {
  /// `math.round`: half away from zero, as ggml's `roundf`.
  AwayFromZero,
  /// `math.roundeven`.
  Even,
};

/// How the projections and the attention products are spelled.
enum class MatmulForm {
  /// `linalg.matmul` with transposed-B indexing maps, `linalg.batch_matmul`.
  Named,
  /// Contraction `linalg.generic`s.
  Generic,
  /// Projections as `linalg.matvec` (one token only), attention as Named.
  Matvec,
  /// Projections as torch-mlir writes `aten.linear`: a `linalg.transpose`
  /// of the weight feeding a default-map `linalg.matmul`; attention as
  /// Named.
  Transposed,
};

/// How the attention softmax is spelled.
enum class SoftmaxForm {
  /// `linalg.softmax dimension(2)`.
  Named,
  /// max, subtract and exp, sum, divide generics.
  Decomposed,
};

/// Where the new tokens go in the KV cache.
enum class Position {
  /// At `past`, a constant of the function.
  Static,
  /// At a run-time position: the function takes `pos: tensor<1xi64>` after
  /// its input (as torch-mlir passes a static cache's `cache_position`),
  /// appends at it, masks the cache's keys past it and reads the RoPE rows
  /// there; `past` is only the position `writeInputs` writes. One function
  /// serves every step of a cache of `max-seq` positions.
  Dynamic,
};

/// Everything the generator takes. Defaults give a small layer that every
/// KV format accepts.
struct Options {
  Kind kind = Kind::Layer;
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t kvHeads = 2;
  int64_t headDim = 32;
  int64_t ffn = 256;
  int64_t vocab = 256;
  int64_t layers = 2;
  /// New tokens T (1 is decode).
  int64_t tokens = 4;
  /// Positions already in the cache, P.
  int64_t past = 12;
  /// Cache length S_max; 0 means past + tokens.
  int64_t maxSeq = 0;
  /// RMSNorm epsilon.
  double eps = 1e-5;
  DType dtype = DType::F16;
  KVFormat kv = KVFormat::F16;
  WeightMode weights = WeightMode::Args;
  Rounding rounding = Rounding::AwayFromZero;
  MatmulForm matmul = MatmulForm::Named;
  SoftmaxForm softmax = SoftmaxForm::Named;
  Position position = Position::Static;
  /// Return the updated caches (else they are updated and read internally).
  bool returnCaches = true;
  /// A model's logits for one row only, the last token's (the LM head
  /// runs on that row): row T - 1, or with a run-time position and T > 1
  /// row `rows - 1` of a run-time argument `rows: tensor<1xi64>` (after
  /// `pos`: a prompt shorter than T is padded). Else every row's.
  bool lastLogits = false;
  /// Format of the projection weights (Q, K, V, O, gate, up, down and the
  /// LM head; not the embedding table): empty for dense weights of `dtype`,
  /// or a ggml block format (`q8_0`, `q4_K`, ...: blocks::formats()), a
  /// packed argument `tensor<rows x (cols / block) x !cachet.<format>>`
  /// read through `cachet.dequantize` as a front end writes it. Packed
  /// weights are arguments (WeightMode::Args).
  std::string weightFormat;
  /// Per-weight overrides of weightFormat by argument name (`l0_w_down`,
  /// `lm_head`): a block format, or "" for a dense weight (a GGUF file's
  /// own mix of formats).
  std::map<std::string, std::string> weightFormats;
  /// Seed of the constant weights and of `writeInputs`.
  uint64_t seed = 1;
};

/// One spelling of an enumerated option, for parsing and printing.
struct EnumName {
  int value;
  const char *name;
};

/// The spellings of each enumerated option, as `cachet-gen` takes them.
const std::vector<EnumName> &kindNames();
const std::vector<EnumName> &dtypeNames();
const std::vector<EnumName> &kvFormatNames();
const std::vector<EnumName> &weightModeNames();
const std::vector<EnumName> &roundingNames();
const std::vector<EnumName> &matmulFormNames();
const std::vector<EnumName> &softmaxFormNames();
const std::vector<EnumName> &positionNames();

/// Looks `text` up in `names`; returns false when it is not one of them.
bool parseEnum(const std::vector<EnumName> &names, const std::string &text,
               int &value);

/// Returns `value`'s spelling in `names` ("?" when absent).
const char *enumName(const std::vector<EnumName> &names, int value);

/// Returns the spellings of `names` joined by ", ".
std::string enumList(const std::vector<EnumName> &names);

/// Checks `options`. Returns an empty string when they are valid, else a
/// message that starts with the offending option's flag (`--heads: ...`).
std::string validate(const Options &options);

/// Writes the module for `options` to `os`. Returns false, with the reason in
/// `error`, when `options` are invalid.
bool generate(const Options &options, std::ostream &os, std::string &error);

/// Description of one argument of the generated function.
struct ArgumentInfo {
  std::string name;
  std::vector<int64_t> shape;
  /// `f16`, `bf16`, `f32`, `i8`, `i32` or a ggml block format name.
  std::string element;
};

/// Returns the arguments of the generated function, in order.
std::vector<ArgumentInfo> arguments(const Options &options);

/// Writes one file per argument, `<prefix><index>.bin`, holding seeded input
/// values valid for the function (token ids below the vocabulary size, floats
/// in [-1, 1], RoPE tables of real angles, ggml blocks with small scales).
/// Appends the file names to `files`. Returns false with `error` on failure.
bool writeInputs(const Options &options, const std::string &prefix,
                 std::vector<std::string> &files, std::string &error);

} // namespace modelgen
} // namespace cachet

#endif // CACHET_MODELGEN_MODELGEN_H
