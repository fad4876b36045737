//===- Gguf.h - GGUF files: reading, writing, llama models ------*- C++ -*-===//
//
// A small reader and writer of GGUF, the file format of ggml and llama.cpp
// (ggml's docs/gguf.md): a header, metadata key/values, tensor infos, and the
// tensor data, each tensor at an aligned offset from the data section's
// start. The reader maps the file and validates every count, length, type,
// shape and offset against the file's size, so bad input is a message naming
// the cause, never an abort or a read out of bounds. The writer streams the
// tensor data, so a model larger than memory can be written a tensor at a
// time. On top of both: the llama architecture's hyperparameters and tensor
// shapes, and seeded random llama models.
//
// Plain C++17, no LLVM or MLIR dependency. Multi-byte fields are
// little-endian, as in every GGUF file ggml writes on common hosts.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_GENERATE_GGUF_H
#define CACHET_GENERATE_GGUF_H

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace cachet {
namespace gguf {

//===----------------------------------------------------------------------===//
// ggml tensor types
//===----------------------------------------------------------------------===//

/// The ggml tensor types this library reads and writes, with ggml's numeric
/// ids (ggml.h's `enum ggml_type`).
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
};

/// Every GgmlType, in id order.
const std::vector<GgmlType> &allTypes();

/// ggml's name of `type`: "f32", "q4_0", "q4_K", "iq4_nl", "tq2_0", ...
const char *typeName(GgmlType type);

/// The number of values one block of `type` holds (1 for f32, f16, bf16).
int64_t blockSize(GgmlType type);

/// The bytes one block of `type` takes.
uint64_t blockBytes(GgmlType type);

/// Sets `type` to the type ggml calls `name`; false for an unknown name.
bool parseType(const std::string &name, GgmlType &type);

/// Sets `type` to the type whose ggml id is `id`; false when it is not one
/// of GgmlType's.
bool typeFromId(uint32_t id, GgmlType &type);

/// Decodes `count` values of `type` (a multiple of its block size) from
/// `src` into `dst`, by ggml's dequantize_row_* rules (f16 and bf16 widened
/// exactly).
void dequantize(GgmlType type, const uint8_t *src, int64_t count, float *dst);

/// IEEE half to float, exactly.
float halfToFloat(uint16_t half);

/// Float to IEEE half, rounded to nearest even.
uint16_t floatToHalf(float value);

/// Float to bfloat16, rounded to nearest even (NaN stays NaN).
uint16_t floatToBf16(float value);

//===----------------------------------------------------------------------===//
// Metadata values
//===----------------------------------------------------------------------===//

/// GGUF's metadata value types, with the file's numeric ids.
enum class ValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

/// A short name of `type`: "u8", "i32", "f32", "bool", "string", "array"...
const char *valueTypeName(ValueType type);

/// One metadata value. Unsigned integers and booleans are in `u`, signed
/// integers in `i`, floats in `f`, strings in `s`; an array's elements (all
/// of `elementType`, never arrays themselves) are in `elements`.
struct Value {
  ValueType type = ValueType::U32;
  ValueType elementType = ValueType::U8;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Value> elements;

  /// An unsigned integer (u8, u16, u32, u64) or a bool of value `v`.
  static Value ofUnsigned(ValueType type, uint64_t v);
  /// A signed integer (i8, i16, i32, i64) of value `v`.
  static Value ofSigned(ValueType type, int64_t v);
  /// An f32 or f64 of value `v` (an f32 keeps `v` rounded to float).
  static Value ofFloat(ValueType type, double v);
  /// A u32.
  static Value ofU32(uint32_t v);
  /// An f32.
  static Value ofF32(float v);
  /// A bool.
  static Value ofBool(bool v);
  /// A string.
  static Value ofString(std::string v);
  /// An array of `elementType` values.
  static Value ofArray(ValueType elementType, std::vector<Value> elements);
  /// An array of strings.
  static Value ofStrings(const std::vector<std::string> &strings);

  /// Whether this is one of the integer types.
  bool isInteger() const;
};

/// `s` with backslashes and double quotes escaped (\\, \") and bytes
/// outside printable ASCII written \xNN: how keys, names and strings are
/// shown in messages and dumps.
std::string escape(const std::string &s);

/// One metadata entry.
struct KeyValue {
  std::string key;
  Value value;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// One tensor of a GGUF file.
struct TensorInfo {
  std::string name;
  /// ggml order: ne[0] is the innermost (contiguous) dimension.
  std::vector<int64_t> ne;
  GgmlType type = GgmlType::F32;
  /// Relative to the data section's start.
  uint64_t offset = 0;
  uint64_t bytes = 0;

  /// The number of values: the product of `ne`.
  int64_t elements() const;
};

/// A GGUF file read by `read`: its metadata and tensor infos, and the file
/// mapped read-only for the tensor data. Move-only.
class File {
public:
  File() = default;
  File(const File &) = delete;
  File &operator=(const File &) = delete;
  File(File &&other) noexcept;
  File &operator=(File &&other) noexcept;
  ~File();

  /// The GGUF version (2 or 3).
  uint32_t version() const { return fileVersion; }
  /// The data alignment: `general.alignment`, 32 when absent.
  uint64_t alignment() const { return fileAlignment; }
  /// Where the data section starts, from the file's start.
  uint64_t dataOffset() const { return fileDataOffset; }
  /// The file's size in bytes.
  uint64_t size() const { return mappedSize; }
  /// The metadata, in file order.
  const std::vector<KeyValue> &metadata() const { return entries; }
  /// The tensor infos, in file order.
  const std::vector<TensorInfo> &tensors() const { return infos; }

  /// The value of `key`, or null.
  const Value *find(const std::string &key) const;
  /// The tensor called `name`, or null.
  const TensorInfo *findTensor(const std::string &name) const;
  /// The first byte of `tensor`'s data (`tensor` being one of `tensors()`).
  const uint8_t *data(const TensorInfo &tensor) const;

  /// Sets `out` to the integer `key` holds, of any integer type whose value
  /// fits; false with a message naming the key when it is absent, not an
  /// integer or out of range.
  bool getU32(const std::string &key, uint32_t &out, std::string &error) const;
  /// As getU32, for uint64.
  bool getU64(const std::string &key, uint64_t &out, std::string &error) const;
  /// As getU32, for int64.
  bool getI64(const std::string &key, int64_t &out, std::string &error) const;
  /// Sets `out` to the f32 or f64 `key` holds (rounded to float).
  bool getF32(const std::string &key, float &out, std::string &error) const;
  /// Sets `out` to the f32 or f64 `key` holds.
  bool getF64(const std::string &key, double &out, std::string &error) const;
  /// Sets `out` to the bool `key` holds.
  bool getBool(const std::string &key, bool &out, std::string &error) const;
  /// Sets `out` to the string `key` holds.
  bool getString(const std::string &key, std::string &out,
                 std::string &error) const;
  /// Sets `out` to the array `key` holds.
  bool getArray(const std::string &key, const Value *&out,
                std::string &error) const;
  /// Sets `out` to the array of strings `key` holds.
  bool getStrings(const std::string &key, std::vector<std::string> &out,
                  std::string &error) const;

private:
  friend bool read(const std::string &path, File &out, std::string &error);
  /// Returns the value of `key` when `accepts` it, else null with a message
  /// naming the key and the `expected` kind of value.
  const Value *lookUp(const std::string &key, const char *expected,
                      bool (*accepts)(const Value &), std::string &error) const;
  /// Sets `out` to the integer `key` holds when it lies in [0, max], max
  /// being `name`'s largest value.
  bool getU64Max(const std::string &key, uint64_t max, const char *name,
                 uint64_t &out, std::string &error) const;
  void unmap();

  uint32_t fileVersion = 0;
  uint64_t fileAlignment = 32;
  uint64_t fileDataOffset = 0;
  std::vector<KeyValue> entries;
  std::vector<TensorInfo> infos;
  std::unordered_map<std::string, size_t> keyIndex;
  std::unordered_map<std::string, size_t> tensorIndex;
  const uint8_t *mapped = nullptr;
  uint64_t mappedSize = 0;
};

/// The most elements a metadata array may have (16M: real tokenizers' have
/// up to a few hundred thousand), which bounds the memory a file's metadata
/// takes.
constexpr uint64_t maxArrayElements = uint64_t(1) << 24;

/// The longest metadata key, in bytes (GGUF's limit).
constexpr uint64_t maxKeyBytes = 65535;

/// Reads the GGUF file at `path` into `out` (its tensor data mapped, not
/// copied). Accepts versions 2 and 3. False with a message that names the
/// file and the cause for any malformed, truncated or unsupported input.
bool read(const std::string &path, File &out, std::string &error);

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Writes a GGUF v3 file: metadata, then the tensors at offsets aligned to
/// the alignment, zeros between them.
class Writer {
public:
  /// Writes exactly a tensor's bytes to the stream; false with a message on
  /// failure.
  using TensorWriter = std::function<bool(std::ostream &, std::string &)>;

  /// Sets the data alignment (a power of two; default 32) and records it as
  /// the metadata `general.alignment` (u32), at its first setting's place.
  bool setAlignment(uint32_t alignment, std::string &error);
  /// Adds a metadata entry; false for a duplicate or empty key, an array of
  /// arrays or an element not of the array's element type.
  bool addMetadata(const std::string &key, Value value, std::string &error);
  /// Adds a tensor whose data is `bytes`, of exactly the size `ne` and
  /// `type` give.
  bool addTensor(const std::string &name, const std::vector<int64_t> &ne,
                 GgmlType type, std::vector<uint8_t> bytes, std::string &error);
  /// Adds a tensor whose data `writeBytes` writes when the file is written.
  bool addTensor(const std::string &name, const std::vector<int64_t> &ne,
                 GgmlType type, TensorWriter writeBytes, std::string &error);
  /// Writes the file; on failure removes it and returns false with a
  /// message.
  bool write(const std::string &path, std::string &error) const;

private:
  struct Tensor {
    TensorInfo info;
    std::vector<uint8_t> bytes;
    TensorWriter writeBytes;
  };
  bool checkTensor(const std::string &name, const std::vector<int64_t> &ne,
                   GgmlType type, TensorInfo &info, std::string &error) const;
  bool writeTo(std::ostream &target, std::string &error) const;

  uint32_t alignment = 32;
  std::vector<KeyValue> entries;
  std::vector<Tensor> tensors;
};

//===----------------------------------------------------------------------===//
// Llama models
//===----------------------------------------------------------------------===//

/// The hyperparameters of a llama-architecture model.
struct LlamaConfig {
  /// llama.embedding_length.
  int64_t hidden = 0;
  /// llama.block_count.
  int64_t layers = 0;
  /// llama.attention.head_count.
  int64_t heads = 0;
  /// llama.attention.head_count_kv (default: heads).
  int64_t kvHeads = 0;
  /// llama.attention.key_length, else llama.rope.dimension_count, else
  /// hidden / heads.
  int64_t headDim = 0;
  /// llama.feed_forward_length.
  int64_t ffn = 0;
  /// The length of tokenizer.ggml.tokens, else llama.vocab_size, else
  /// token_embd.weight's ne[1].
  int64_t vocab = 0;
  /// llama.context_length.
  int64_t contextLength = 0;
  /// llama.rope.freq_base (default 10000).
  double ropeTheta = 10000;
  /// llama.attention.layer_norm_rms_epsilon (default 1e-5).
  double eps = 1e-5;
  /// No output.weight: the LM head is token_embd.weight.
  bool tiedOutput = false;
};

/// Reads `file`'s llama hyperparameters into `config` and checks that
/// general.architecture is "llama" and that every tensor of the model exists
/// with its shape (norms of a float type). False with a message naming the
/// key or the tensor and what was expected and found.
bool readLlamaConfig(const File &file, LlamaConfig &config, std::string &error);

/// Sets `config` from `spec`: a preset name (`tiny`, `small`, `llama3-8b`)
/// and/or `key=value` overrides separated by commas (`tiny,layers=1`); the
/// keys are LlamaConfig's field names and overrides alone start from
/// `tiny`. False with a message for an unknown preset, key or bad value.
bool parseLlamaSpec(const std::string &spec, LlamaConfig &config,
                    std::string &error);

/// Checks that `config` describes a model that can be built: positive sizes,
/// heads a multiple of kvHeads, an even headDim.
bool checkLlamaConfig(const LlamaConfig &config, std::string &error);

/// How `writeRandomLlama` fills a model.
struct RandomOptions {
  /// Seeds every tensor's splitmix64 generator together with its name.
  uint64_t seed = 0;
  /// The type of the 2-D projection weights and output.weight.
  GgmlType weightType = GgmlType::F16;
  /// Types of the projections whose name contains a pattern (the last
  /// match wins), as llama-quantize's --tensor-type mixes formats.
  std::vector<std::pair<std::string, GgmlType>> tensorTypes;
  /// The type of token_embd.weight: f32, f16 or bf16.
  GgmlType embeddingType = GgmlType::F16;
  /// general.name.
  std::string name = "cachet-random";
  /// The data alignment (general.alignment), a power of two.
  uint32_t alignment = 32;
};

/// The embedding type that goes with `weightType` by default: the same for
/// f32, f16 and bf16, f16 for the block formats.
GgmlType defaultEmbeddingType(GgmlType weightType);

/// The type of each tensor writeRandomLlama writes for `config` and
/// `options`, by tensor name (f32 norms, the embedding type, the weight type).
std::map<std::string, GgmlType> randomTensorTypes(const LlamaConfig &config,
                                                  const RandomOptions &options);

/// The type of each of `file`'s tensors, by tensor name.
std::map<std::string, GgmlType> tensorTypes(const File &file);

/// Writes a llama model of `config`'s shape with seeded pseudo-random
/// weights to `path` as GGUF (the llama.* metadata and
/// `vocab` tokens "<t0>", "<t1>", ...). Each tensor's values come from a
/// splitmix64 stream seeded with `options.seed` and the tensor's name, so
/// the file's bytes depend on the options alone. Projection weights have a
/// standard deviation near 1/sqrt(ne[0]) (block formats: random quants with
/// block scales chosen for it), norms are 1 + 0.1 u, embeddings 0.5 u, u
/// uniform in [-1, 1). Norms are f32.
bool writeRandomLlama(const LlamaConfig &config, const RandomOptions &options,
                      const std::string &path, std::string &error);

} // namespace gguf
} // namespace cachet

#endif // CACHET_GENERATE_GGUF_H
