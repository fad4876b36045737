//===- ModelGen.cpp - Llama layers and models as front-end MLIR -----------===//
//
// The emitted IR follows test inputs written by hand in front-end style (see
// the canonical attention form in the project's examples): every op is a
// linalg op on tensors, intermediate values get descriptive names, and each
// linalg.generic body defines its few local values itself.
//
//===----------------------------------------------------------------------===//

#include "cachet/ModelGen/ModelGen.h"
#include "cachet/ModelGen/Blocks.h"
#include "cachet/ModelGen/Random.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace cachet;
using namespace cachet::modelgen;

using cachet::Rng;
using cachet::rngFor;

namespace {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

using blocks::floatToBf16;
using blocks::floatToHalf;

/// An f32 literal MLIR parses back to the same float.
std::string f32Literal(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8e",
                static_cast<double>(static_cast<float>(value)));
  return buf;
}

int64_t product(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

bool isPacked(KVFormat kv) {
  return kv != KVFormat::F16 && kv != KVFormat::BF16 && kv != KVFormat::Q8_0;
}

bool isQuantized(KVFormat kv) {
  return kv != KVFormat::F16 && kv != KVFormat::BF16;
}

/// The ggml block type name of a packed format.
const char *blockName(KVFormat kv) {
  switch (kv) {
  case KVFormat::Q4_0:
    return "q4_0";
  case KVFormat::Q4_1:
    return "q4_1";
  case KVFormat::Q5_0:
    return "q5_0";
  case KVFormat::Q5_1:
    return "q5_1";
  case KVFormat::IQ4_NL:
    return "iq4_nl";
  case KVFormat::Q8_0Packed:
    return "q8_0";
  default:
    return "";
  }
}

/// Bytes of one block of a packed format and the offsets of its f16 fields.
void blockLayout(KVFormat kv, int &bytes, std::vector<int> &halfFields) {
  halfFields = {0};
  switch (kv) {
  case KVFormat::Q4_0:
  case KVFormat::IQ4_NL:
    bytes = 18;
    break;
  case KVFormat::Q4_1:
    bytes = 20;
    halfFields.push_back(2);
    break;
  case KVFormat::Q5_0:
    bytes = 22;
    break;
  case KVFormat::Q5_1:
    bytes = 24;
    halfFields.push_back(2);
    break;
  default:
    bytes = 34;
    break;
  }
}

const char *dtypeName(DType dtype) {
  return dtype == DType::F16 ? "f16" : "bf16";
}

std::string dims(const Shape &shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s;
}

std::string tensorType(const Shape &shape, const std::string &element) {
  if (element == "f16" || element == "bf16" || element == "f32" ||
      element == "i8" || element == "i32" || element == "i64")
    return "tensor<" + dims(shape) + element + ">";
  return "tensor<" + dims(shape) + "!cachet." + element + ">";
}

std::string join(const std::vector<std::string> &parts,
                 const char *separator = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? separator : "") + parts[i];
  return s;
}

std::string intList(const Shape &values) {
  std::vector<std::string> parts;
  for (int64_t v : values)
    parts.push_back(std::to_string(v));
  return join(parts);
}

/// `affine_map<(d0, ..., dn-1) -> (results)>`.
std::string affineMap(unsigned numDims, const std::vector<std::string> &res) {
  std::vector<std::string> ds;
  for (unsigned i = 0; i < numDims; ++i)
    ds.push_back("d" + std::to_string(i));
  return "affine_map<(" + join(ds) + ") -> (" + join(res) + ")>";
}

std::string identityMap(unsigned numDims) {
  std::vector<std::string> ds;
  for (unsigned i = 0; i < numDims; ++i)
    ds.push_back("d" + std::to_string(i));
  return affineMap(numDims, ds);
}

//===----------------------------------------------------------------------===//
// Tensors the function reads
//===----------------------------------------------------------------------===//

/// What a tensor of the function holds, which decides its values.
enum class Role {
  Activation,
  Ids,
  Position,
  Rows,
  Matrix,
  NormWeight,
  Embedding,
  CacheFloat,
  CacheValues,
  CacheScales,
  CachePacked,
  Cos,
  Sin,
};

/// A tensor the generated function reads: an argument or a constant.
struct Source {
  std::string name;
  Shape shape;
  std::string element;
  Role role;
  bool weight = false;
  /// A projection weight's values per row (its input width).
  int64_t columns = 0;
};

/// The values of `source`, as raw little-endian bytes.
std::vector<uint8_t> sourceBytes(const Options &options, const Source &source) {
  Rng rng = rngFor(options.seed, source.name);
  int64_t n = product(source.shape);
  std::vector<uint8_t> bytes;
  auto pushFloat = [&](double v) {
    float f = static_cast<float>(v);
    if (source.element == "f32") {
      uint8_t b[4];
      std::memcpy(b, &f, 4);
      bytes.insert(bytes.end(), b, b + 4);
      return;
    }
    uint16_t h = source.element == "f16" ? floatToHalf(f) : floatToBf16(f);
    bytes.push_back(h & 0xff);
    bytes.push_back(h >> 8);
  };
  switch (source.role) {
  case Role::Position:
    for (int b = 0; b < 8; ++b)
      bytes.push_back((uint64_t(options.past) >> (8 * b)) & 0xff);
    break;
  case Role::Rows:
    for (int b = 0; b < 8; ++b)
      bytes.push_back((uint64_t(options.tokens) >> (8 * b)) & 0xff);
    break;
  case Role::Ids:
    for (int64_t i = 0; i < n; ++i) {
      uint32_t id = static_cast<uint32_t>(rng.next() % options.vocab);
      for (int b = 0; b < 4; ++b)
        bytes.push_back((id >> (8 * b)) & 0xff);
    }
    break;
  case Role::Matrix: {
    if (const blocks::Format *f = blocks::findFormat(source.element)) {
      // Blocks of the standard deviation of the dense values below.
      double sigma = 1.0 / std::sqrt(3.0 * source.shape.back() * f->values);
      bytes.resize(static_cast<size_t>(n) * f->bytes);
      for (int64_t i = 0; i < n; ++i)
        blocks::randomBlock(source.element, rng, sigma, &bytes[i * f->bytes]);
      break;
    }
    double scale = 1.0 / std::sqrt(static_cast<double>(source.shape.back()));
    for (int64_t i = 0; i < n; ++i)
      pushFloat(rng.uniform() * scale);
    break;
  }
  case Role::NormWeight:
    for (int64_t i = 0; i < n; ++i)
      pushFloat(1.0 + 0.25 * rng.uniform());
    break;
  case Role::Cos:
  case Role::Sin: {
    // HF's LlamaRotaryEmbedding: angle(p, i) = p * theta^(-2i/Dh), both
    // halves of a row hold the same Dh/2 angles.
    int64_t rows = source.shape[0], headDim = source.shape[1];
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t d = 0; d < headDim; ++d) {
        int64_t i = d % (headDim / 2);
        double angle =
            p * std::pow(10000.0, -2.0 * i / static_cast<double>(headDim));
        pushFloat(source.role == Role::Cos ? std::cos(angle) : std::sin(angle));
      }
    break;
  }
  case Role::CacheValues:
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(static_cast<uint8_t>(
          static_cast<int8_t>(static_cast<int64_t>(rng.next() % 255) - 127)));
    break;
  case Role::CacheScales:
    for (int64_t i = 0; i < n; ++i)
      pushFloat((1.0 + rng.uniform()) / 128.0);
    break;
  case Role::CachePacked: {
    int blockBytes;
    std::vector<int> halfFields;
    blockLayout(options.kv, blockBytes, halfFields);
    for (int64_t i = 0; i < n; ++i) {
      size_t start = bytes.size();
      for (int b = 0; b < blockBytes; ++b)
        bytes.push_back(static_cast<uint8_t>(rng.next()));
      for (int field : halfFields) {
        uint16_t h = floatToHalf(static_cast<float>(rng.uniform() / 16.0));
        bytes[start + field] = h & 0xff;
        bytes[start + field + 1] = h >> 8;
      }
    }
    break;
  }
  case Role::Activation:
  case Role::Embedding:
  case Role::CacheFloat:
    for (int64_t i = 0; i < n; ++i)
      pushFloat(rng.uniform());
    break;
  }
  return bytes;
}

/// The tensors of one layer, in argument order. `prefix` names the layer in
/// a model ("l0_").
struct LayerSources {
  Source attnNorm, wq, wk, wv, wo, ffnNorm, wGate, wUp, wDown;
  std::vector<Source> caches;
};

/// The format of the weight argument `name`: a block format name, or ""
/// for dense weights of the activation type.
std::string weightFormatOf(const Options &o, const std::string &name) {
  auto it = o.weightFormats.find(name);
  return it != o.weightFormats.end() ? it->second : o.weightFormat;
}

/// A projection weight [rows][cols]: dense, or packed blocks along cols.
Source matrixSource(const Options &o, const std::string &name, int64_t rows,
                    int64_t cols) {
  std::string format = weightFormatOf(o, name);
  const blocks::Format *f = blocks::findFormat(format);
  Source s{name, {rows, cols}, dtypeName(o.dtype), Role::Matrix, true, cols};
  if (f && cols % f->values == 0)
    s.shape[1] = cols / f->values, s.element = format;
  return s;
}

LayerSources layerSources(const Options &o, const std::string &prefix) {
  std::string dt = dtypeName(o.dtype);
  int64_t qDim = o.heads * o.headDim, kvDim = o.kvHeads * o.headDim;
  auto matrix = [&](const char *name, int64_t rows, int64_t cols) {
    return matrixSource(o, prefix + name, rows, cols);
  };
  LayerSources s;
  s.attnNorm = {prefix + "attn_norm", {o.hidden}, dt, Role::NormWeight, true};
  s.wq = matrix("wq", qDim, o.hidden);
  s.wk = matrix("wk", kvDim, o.hidden);
  s.wv = matrix("wv", kvDim, o.hidden);
  s.wo = matrix("wo", o.hidden, qDim);
  s.ffnNorm = {prefix + "ffn_norm", {o.hidden}, dt, Role::NormWeight, true};
  s.wGate = matrix("w_gate", o.ffn, o.hidden);
  s.wUp = matrix("w_up", o.ffn, o.hidden);
  s.wDown = matrix("w_down", o.hidden, o.ffn);
  int64_t seq = o.maxSeq ? o.maxSeq : o.past + o.tokens;
  Shape values = {seq, o.kvHeads, o.headDim};
  Shape blocks = {seq, o.kvHeads, o.headDim / 32};
  switch (o.kv) {
  case KVFormat::F16:
  case KVFormat::BF16: {
    std::string e = o.kv == KVFormat::F16 ? "f16" : "bf16";
    s.caches = {{prefix + "k_cache", values, e, Role::CacheFloat},
                {prefix + "v_cache", values, e, Role::CacheFloat}};
    break;
  }
  case KVFormat::Q8_0:
    s.caches = {{prefix + "k_cache", values, "i8", Role::CacheValues},
                {prefix + "v_cache", values, "i8", Role::CacheValues},
                {prefix + "k_scales", blocks, "f16", Role::CacheScales},
                {prefix + "v_scales", blocks, "f16", Role::CacheScales}};
    break;
  default:
    s.caches = {
        {prefix + "k_cache", blocks, blockName(o.kv), Role::CachePacked},
        {prefix + "v_cache", blocks, blockName(o.kv), Role::CachePacked}};
    break;
  }
  return s;
}

std::vector<Source> layerWeights(const LayerSources &s) {
  return {s.attnNorm, s.wq,    s.wk,  s.wv,   s.wo,
          s.ffnNorm,  s.wGate, s.wUp, s.wDown};
}

/// Everything the function reads, in argument order (weights included in
/// either weight mode).
struct FunctionSources {
  Source input;
  /// The run-time position (Position::Dynamic); empty name otherwise.
  Source position;
  /// The run-time count of real rows (lastLogits with a run-time position
  /// and T > 1); empty name otherwise.
  Source rows;
  Source embedding, outputNorm, lmHead;
  std::vector<LayerSources> layers;
  Source cos, sin;

  std::vector<Source> all() const {
    std::vector<Source> list = {input};
    if (!position.name.empty())
      list.push_back(position);
    if (!rows.name.empty())
      list.push_back(rows);
    if (input.role == Role::Ids)
      list.push_back(embedding);
    for (const LayerSources &l : layers)
      for (const Source &w : layerWeights(l))
        list.push_back(w);
    if (input.role == Role::Ids) {
      list.push_back(outputNorm);
      list.push_back(lmHead);
    }
    for (const LayerSources &l : layers)
      list.insert(list.end(), l.caches.begin(), l.caches.end());
    list.push_back(cos);
    list.push_back(sin);
    return list;
  }

  std::vector<Source> args(WeightMode mode) const {
    std::vector<Source> list;
    for (const Source &s : all())
      if (!s.weight || mode == WeightMode::Args)
        list.push_back(s);
    return list;
  }
};

FunctionSources functionSources(const Options &o) {
  std::string dt = dtypeName(o.dtype);
  int64_t seq = o.maxSeq ? o.maxSeq : o.past + o.tokens;
  FunctionSources f;
  if (o.kind == Kind::Layer) {
    f.input = {"x", {o.tokens, o.hidden}, dt, Role::Activation};
    f.layers.push_back(layerSources(o, ""));
  } else {
    f.input = {"ids", {o.tokens}, "i32", Role::Ids};
    f.embedding = {"tok_embd", {o.vocab, o.hidden}, dt, Role::Embedding, true};
    for (int64_t l = 0; l < o.layers; ++l)
      f.layers.push_back(layerSources(o, "l" + std::to_string(l) + "_"));
    f.outputNorm = {"output_norm", {o.hidden}, dt, Role::NormWeight, true};
    f.lmHead = matrixSource(o, "lm_head", o.vocab, o.hidden);
  }
  if (o.position == Position::Dynamic)
    f.position = {"pos", {1}, "i64", Role::Position};
  if (o.position == Position::Dynamic && o.kind == Kind::Model &&
      o.lastLogits && o.tokens > 1)
    f.rows = {"rows", {1}, "i64", Role::Rows};
  f.cos = {"cos", {seq, o.headDim}, "f32", Role::Cos};
  f.sin = {"sin", {seq, o.headDim}, "f32", Role::Sin};
  return f;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// A tensor value of the function being written.
struct Val {
  std::string name;
  Shape shape;
  std::string element;
  std::string type() const { return tensorType(shape, element); }
};

/// Names used inside linalg.generic bodies. Function-level values never take
/// them, so a body never redefines a value visible from above.
const std::set<std::string> &bodyNames() {
  static const std::set<std::string> names = {
      "in",  "in0", "in1", "in2",  "out",   "out0", "acc",   "acc0", "f",
      "f0",  "f1",  "m",   "s",    "n",     "eps",  "mean",  "var",  "r",
      "w",   "g",   "y",   "t",    "i",     "j",    "h",     "half", "lo",
      "jp",  "jm",  "pj",  "pair", "npair", "rot",  "cs",    "sn",   "ca",
      "sb",  "pos", "vis", "xs",   "ninf",  "c",    "scale", "ng",   "ex",
      "den", "one", "sig", "d",    "c127",  "nz",   "zero",  "inv",  "id",
      "qs",  "qr",  "qi",  "gt",   "nm",    "ni",   "a",     "dq",   "ds",
      "sf",  "ji",  "sub", "e",    "row",   "col",  "val",   "tok",  "absf",
      "p",   "dd"};
  return names;
}

/// Writes one function.
class Emitter {
public:
  Emitter(const Options &options, std::ostream &os)
      : o(options), os(os), dt(dtypeName(options.dtype)) {}

  /// Returns a fresh `%name` based on `base` (with the layer prefix).
  std::string fresh(const std::string &base) {
    std::string name = prefix + base;
    if (bodyNames().count(name) || used.count(name))
      for (int i = 1;; ++i) {
        std::string candidate = name + "_" + std::to_string(i);
        if (!bodyNames().count(candidate) && !used.count(candidate)) {
          name = candidate;
          break;
        }
      }
    used.insert(name);
    return "%" + name;
  }

  void line(const std::string &text) { body << "  " << text << "\n"; }
  void comment(const std::string &text) { line("// " + text); }

  Val value(const std::string &base, Shape shape, std::string element) {
    return {fresh(base), std::move(shape), std::move(element)};
  }

  Val empty(const std::string &base, const Shape &shape,
            const std::string &element) {
    Val v = value(base, shape, element);
    line(v.name + " = tensor.empty() : " + v.type());
    return v;
  }

  /// A tensor filled with the f32 constant `constant` (a function-level
  /// value).
  Val filled(const std::string &base, const Shape &shape,
             const std::string &constant) {
    Val e = empty(base + "_e", shape, "f32");
    Val v = value(base, shape, "f32");
    line(v.name + " = linalg.fill ins(" + constant + " : f32) outs(" + e.name +
         " : " + e.type() + ") -> " + v.type());
    return v;
  }

  Val zeros(const std::string &base, const Shape &shape) {
    return filled(base, shape, zero);
  }

  /// Writes a linalg.generic. `args` names the block arguments (ins then
  /// outs), `lines` is the body, its last line the `linalg.yield`.
  std::vector<Val> generic(const std::vector<std::string> &resultBases,
                           const std::vector<std::string> &maps,
                           const std::vector<std::string> &iterators,
                           const std::vector<Val> &ins,
                           const std::vector<Val> &outs,
                           const std::vector<std::string> &args,
                           const std::vector<std::string> &lines) {
    std::vector<std::string> its, inNames, inTypes, outNames, outTypes,
        blockArgs;
    for (const std::string &it : iterators)
      its.push_back("\"" + it + "\"");
    for (const Val &v : ins) {
      inNames.push_back(v.name);
      inTypes.push_back(v.type());
    }
    for (const Val &v : outs) {
      outNames.push_back(v.name);
      outTypes.push_back(v.type());
    }
    std::vector<Val> all = ins;
    all.insert(all.end(), outs.begin(), outs.end());
    for (size_t i = 0; i < all.size(); ++i)
      blockArgs.push_back("%" + args[i] + ": " + all[i].element);
    std::vector<Val> results;
    std::string head;
    if (outs.size() == 1) {
      results.push_back(value(resultBases[0], outs[0].shape, outs[0].element));
      head = results[0].name;
    } else {
      std::string base = fresh(resultBases[0]);
      for (size_t i = 0; i < outs.size(); ++i)
        results.push_back(
            {base + "#" + std::to_string(i), outs[i].shape, outs[i].element});
      head = base + ":" + std::to_string(outs.size());
    }
    std::string resultTypes =
        outs.size() == 1 ? outTypes[0] : "(" + join(outTypes) + ")";
    line(head + " = linalg.generic {indexing_maps = [" + join(maps) +
         "], iterator_types = [" + join(its) + "]}");
    line("    ins(" + join(inNames) + " : " + join(inTypes) + ") outs(" +
         join(outNames) + " : " + join(outTypes) + ") {");
    line("^bb0(" + join(blockArgs) + "):");
    for (const std::string &l : lines)
      line("  " + l);
    line("} -> " + resultTypes);
    return results;
  }

  /// An element-wise generic from `in` (all dims parallel).
  Val map(const std::string &base, const std::vector<Val> &ins,
          const std::string &element, const std::vector<std::string> &args,
          const std::vector<std::string> &lines) {
    unsigned rank = ins[0].shape.size();
    Val e = empty(base + "_e", ins[0].shape, element);
    std::vector<std::string> maps(ins.size() + 1, identityMap(rank));
    return generic({base}, maps, std::vector<std::string>(rank, "parallel"),
                   ins, {e}, args, lines)[0];
  }

  /// Lines converting `%from` of type `a` to `%to` of type `b`.
  static std::vector<std::string> convert(const std::string &from,
                                          const std::string &a,
                                          const std::string &to,
                                          const std::string &b) {
    if (a == b)
      return {};
    if (a == "f32")
      return {"%" + to + " = arith.truncf %" + from + " : f32 to " + b};
    if (b == "f32")
      return {"%" + to + " = arith.extf %" + from + " : " + a + " to f32"};
    return {"%f = arith.extf %" + from + " : " + a + " to f32",
            "%" + to + " = arith.truncf %f : f32 to " + b};
  }

  /// `v` converted to `element` (v itself when it has that type).
  Val cast(const std::string &base, const Val &v, const std::string &element) {
    if (v.element == element)
      return v;
    std::vector<std::string> lines = convert("in", v.element, "y", element);
    lines.push_back("linalg.yield %y : " + element);
    return map(base, {v}, element, {"in", "out"}, lines);
  }

  Val expand(const std::string &base, const Val &v, const Shape &shape,
             const std::string &reassociation) {
    Val r = value(base, shape, v.element);
    line(r.name + " = tensor.expand_shape " + v.name + " " + reassociation +
         " output_shape [" + intList(shape) + "] : " + v.type() + " into " +
         r.type());
    return r;
  }

  Val collapse(const std::string &base, const Val &v, const Shape &shape,
               const std::string &reassociation) {
    Val r = value(base, shape, v.element);
    line(r.name + " = tensor.collapse_shape " + v.name + " " + reassociation +
         " : " + v.type() + " into " + r.type());
    return r;
  }

  Val transpose(const std::string &base, const Val &v, const Shape &perm) {
    Shape shape;
    for (int64_t p : perm)
      shape.push_back(v.shape[p]);
    Val e = empty(base + "_e", shape, v.element);
    Val r = value(base, shape, v.element);
    line(r.name + " = linalg.transpose ins(" + v.name + " : " + v.type() +
         ") outs(" + e.name + " : " + e.type() + ") permutation = [" +
         intList(perm) + "]");
    return r;
  }

  /// The offsets of a slice at row `row` (an integer or an SSA index
  /// value), 0 in the other `rank - 1` dimensions.
  static std::string rowOffsets(const std::string &row, size_t rank) {
    Shape zeros(rank - 1, 0);
    return rank == 1 ? row : row + ", " + intList(zeros);
  }

  /// The leading `sizes[0]` rows of `v` starting at row `offset`.
  Val slice(const std::string &base, const Val &v, int64_t offset,
            int64_t rows) {
    return slice(base, v, std::to_string(offset), rows);
  }
  Val slice(const std::string &base, const Val &v, const std::string &offset,
            int64_t rows) {
    Shape shape = v.shape;
    shape[0] = rows;
    Shape strides(shape.size(), 1);
    Val r = value(base, shape, v.element);
    line(r.name + " = tensor.extract_slice " + v.name + "[" +
         rowOffsets(offset, shape.size()) + "] [" + intList(shape) + "] [" +
         intList(strides) + "] : " + v.type() + " to " + r.type());
    return r;
  }

  /// `part` written into `whole` at row `offset` (an integer or an SSA
  /// index value).
  Val insert(const std::string &base, const Val &part, const Val &whole,
             const std::string &offset) {
    Shape strides(part.shape.size(), 1);
    Val r = value(base, whole.shape, whole.element);
    line(r.name + " = tensor.insert_slice " + part.name + " into " +
         whole.name + "[" + rowOffsets(offset, part.shape.size()) + "] [" +
         intList(part.shape) + "] [" + intList(strides) + "] : " + part.type() +
         " into " + whole.type());
    return r;
  }

  //===--------------------------------------------------------------------===//
  // Products
  //===--------------------------------------------------------------------===//

  /// `x W^T` accumulated in f32: x [T][in], W [out][in] -> [T][out]. A
  /// packed W is dequantized to the activation type first.
  Val project(const std::string &base, const Val &x, const Val &packed) {
    Val w = packed;
    if (const blocks::Format *f = blocks::findFormat(packed.element)) {
      w = value(base + "_w", {packed.shape[0], packed.shape[1] * f->values},
                dt);
      line(w.name + " = cachet.dequantize " + packed.name + " : " +
           packed.type() + " -> " + w.type());
    }
    int64_t t = x.shape[0], out = w.shape[0], in = w.shape[1];
    if (o.matmul == MatmulForm::Matvec) {
      Val xv = collapse(base + "_in", x, {in}, "[[0, 1]]");
      Val z = zeros(base + "_z", {out});
      Val y = value(base + "_v", {out}, "f32");
      line(y.name + " = linalg.matvec ins(" + w.name + ", " + xv.name + " : " +
           w.type() + ", " + xv.type() + ") outs(" + z.name + " : " + z.type() +
           ") -> " + y.type());
      return expand(base, y, {1, out}, "[[0, 1]]");
    }
    Val z = zeros(base + "_z", {t, out});
    std::vector<std::string> maps = {affineMap(3, {"d0", "d2"}),
                                     affineMap(3, {"d1", "d2"}),
                                     affineMap(3, {"d0", "d1"})};
    if (o.matmul == MatmulForm::Transposed) {
      Val wt = transpose(base + "_wt", w, {1, 0});
      Val y = value(base, {t, out}, "f32");
      line(y.name + " = linalg.matmul ins(" + x.name + ", " + wt.name + " : " +
           x.type() + ", " + wt.type() + ") outs(" + z.name + " : " + z.type() +
           ") -> " + y.type());
      return y;
    }
    if (o.matmul == MatmulForm::Named) {
      Val y = value(base, {t, out}, "f32");
      line(y.name + " = linalg.matmul indexing_maps = [" + join(maps) +
           "] ins(" + x.name + ", " + w.name + " : " + x.type() + ", " +
           w.type() + ") outs(" + z.name + " : " + z.type() + ") -> " +
           y.type());
      return y;
    }
    return contraction(base, x, w, z, maps, 3);
  }

  /// A contraction generic: out += extf(a) * extf(b).
  Val contraction(const std::string &base, const Val &a, const Val &b,
                  const Val &init, const std::vector<std::string> &maps,
                  unsigned rank) {
    std::vector<std::string> iterators(rank - 1, "parallel");
    iterators.push_back("reduction");
    std::vector<std::string> lines = convert("in", a.element, "f0", "f32");
    std::vector<std::string> more = convert("in0", b.element, "f1", "f32");
    lines.insert(lines.end(), more.begin(), more.end());
    lines.push_back(std::string("%m = arith.mulf ") +
                    (a.element == "f32" ? "%in" : "%f0") + ", " +
                    (b.element == "f32" ? "%in0" : "%f1") + " : f32");
    lines.push_back("%s = arith.addf %acc, %m : f32");
    lines.push_back("linalg.yield %s : f32");
    return generic({base}, maps, iterators, {a, b}, {init},
                   {"in", "in0", "acc"}, lines)[0];
  }

  /// a [B][M][K] times b [B][K][N] into f32 [B][M][N].
  Val batchMatmul(const std::string &base, const Val &a, const Val &b) {
    Shape shape = {a.shape[0], a.shape[1], b.shape[2]};
    Val z = zeros(base + "_z", shape);
    if (o.matmul != MatmulForm::Generic) {
      Val y = value(base, shape, "f32");
      line(y.name + " = linalg.batch_matmul ins(" + a.name + ", " + b.name +
           " : " + a.type() + ", " + b.type() + ") outs(" + z.name + " : " +
           z.type() + ") -> " + y.type());
      return y;
    }
    return contraction(base, a, b, z,
                       {affineMap(4, {"d0", "d1", "d3"}),
                        affineMap(4, {"d0", "d3", "d2"}),
                        affineMap(4, {"d0", "d1", "d2"})},
                       4);
  }

  //===--------------------------------------------------------------------===//
  // Layer pieces
  //===--------------------------------------------------------------------===//

  /// RMSNorm of x [T][H] with weight w [H], in f32, result in the activation
  /// type: y = x * rsqrt(mean(x^2) + eps) * w.
  Val rmsNorm(const std::string &base, const Val &x, const Val &w) {
    int64_t t = x.shape[0], h = x.shape[1];
    Val z = zeros(base + "_z", {t});
    Val ss =
        generic({base + "_ss"}, {identityMap(2), affineMap(2, {"d0"})},
                {"parallel", "reduction"}, {x}, {z}, {"in", "acc"},
                {"%f = arith.extf %in : " + x.element + " to f32",
                 "%m = arith.mulf %f, %f : f32",
                 "%s = arith.addf %acc, %m : f32", "linalg.yield %s : f32"})[0];
    Val rms = map(base + "_rms", {ss}, "f32", {"in", "out"},
                  {"%n = arith.constant " + f32Literal(double(h)) + " : f32",
                   "%eps = arith.constant " + f32Literal(o.eps) + " : f32",
                   "%mean = arith.divf %in, %n : f32",
                   "%var = arith.addf %mean, %eps : f32",
                   "%r = math.rsqrt %var : f32", "linalg.yield %r : f32"});
    Val e = empty(base + "_e", {t, h}, dt);
    return generic(
        {base},
        {identityMap(2), affineMap(2, {"d0"}), affineMap(2, {"d1"}),
         identityMap(2)},
        {"parallel", "parallel"}, {x, rms, w}, {e}, {"in", "in0", "in1", "out"},
        {"%f = arith.extf %in : " + x.element + " to f32",
         "%m = arith.mulf %f, %in0 : f32",
         "%w = arith.extf %in1 : " + w.element + " to f32",
         "%y = arith.mulf %m, %w : f32", "%t = arith.truncf %y : f32 to " + dt,
         "linalg.yield %t : " + dt})[0];
  }

  /// Rotate-half (NeoX / Hugging Face) RoPE of x f32 [T][heads][Dh] with
  /// rows of the cos / sin tables [T][Dh]: y[d] = x[d] cos[d] + r[d] sin[d],
  /// r = (-x[d + Dh/2] for d < Dh/2, x[d - Dh/2] after). The paired element
  /// is read with tensor.extract.
  Val rope(const std::string &base, const Val &x, const Val &cos,
           const Val &sin) {
    Val e = empty(base + "_e", x.shape, dt);
    return generic(
        {base},
        {identityMap(3), affineMap(3, {"d0", "d2"}), affineMap(3, {"d0", "d2"}),
         identityMap(3)},
        {"parallel", "parallel", "parallel"}, {x, cos, sin}, {e},
        {"in", "cs", "sn", "out"},
        {"%t = linalg.index 0 : index", "%h = linalg.index 1 : index",
         "%j = linalg.index 2 : index",
         "%half = arith.constant " + std::to_string(x.shape[2] / 2) +
             " : index",
         "%lo = arith.cmpi ult, %j, %half : index",
         "%jp = arith.addi %j, %half : index",
         "%jm = arith.subi %j, %half : index",
         "%pj = arith.select %lo, %jp, %jm : index",
         "%pair = tensor.extract " + x.name + "[%t, %h, %pj] : " + x.type(),
         "%npair = arith.negf %pair : f32",
         "%rot = arith.select %lo, %npair, %pair : f32",
         "%ca = arith.mulf %in, %cs : f32", "%sb = arith.mulf %rot, %sn : f32",
         "%r = arith.addf %ca, %sb : f32",
         "%y = arith.truncf %r : f32 to " + dt, "linalg.yield %y : " + dt})[0];
  }

  /// Split q8_0 quantization of x [T][Hkv][Dh] (ggml's quantize_row_q8_0
  /// reference): per 32 values d = absmax / 127, q = round(x / d) (0 where
  /// d = 0). Returns the i8 values [T][Hkv][Dh] and f16 scales
  /// [T][Hkv][Dh/32].
  std::pair<Val, Val> quantizeQ8_0(const std::string &base, const Val &x) {
    int64_t t = x.shape[0], heads = x.shape[1], blocks = x.shape[2] / 32;
    Shape blocked = {t, heads, blocks, 32};
    Val xb = expand(base + "_blk", x, blocked, "[[0], [1], [2, 3]]");
    Val z = zeros(base + "_z", {t, heads, blocks});
    std::string blockMap = affineMap(4, {"d0", "d1", "d2"});
    Val amax = generic({base + "_amax"}, {identityMap(4), blockMap},
                       {"parallel", "parallel", "parallel", "reduction"}, {xb},
                       {z}, {"in", "acc"},
                       {"%f = arith.extf %in : " + x.element + " to f32",
                        "%a = math.absf %f : f32",
                        "%m = arith.maximumf %acc, %a : f32",
                        "linalg.yield %m : f32"})[0];
    Val qe = empty(base + "_qe", blocked, "i8");
    const char *round =
        o.rounding == Rounding::Even ? "math.roundeven" : "math.round";
    Val q = generic({base + "_qb"}, {identityMap(4), blockMap, identityMap(4)},
                    {"parallel", "parallel", "parallel", "parallel"},
                    {xb, amax}, {qe}, {"in", "in0", "out"},
                    {"%c127 = arith.constant 1.27000000e+02 : f32",
                     "%zero = arith.constant 0.00000000e+00 : f32",
                     "%one = arith.constant 1.00000000e+00 : f32",
                     "%d = arith.divf %in0, %c127 : f32",
                     "%nz = arith.cmpf une, %d, %zero : f32",
                     "%inv = arith.divf %one, %d : f32",
                     "%id = arith.select %nz, %inv, %zero : f32",
                     "%f = arith.extf %in : " + x.element + " to f32",
                     "%s = arith.mulf %f, %id : f32",
                     std::string("%r = ") + round + " %s : f32",
                     "%qi = arith.fptosi %r : f32 to i8",
                     "linalg.yield %qi : i8"})[0];
    Val scales =
        map(base + "_d", {amax}, "f16", {"in", "out"},
            {"%c127 = arith.constant 1.27000000e+02 : f32",
             "%d = arith.divf %in, %c127 : f32",
             "%ds = arith.truncf %d : f32 to f16", "linalg.yield %ds : f16"});
    Val values =
        collapse(base + "_q", q, {t, heads, x.shape[2]}, "[[0], [1], [2, 3]]");
    return {values, scales};
  }

  /// Split q8_0 dequantization: float(q) * scale[block], in the activation
  /// type.
  Val dequantizeQ8_0(const std::string &base, const Val &q, const Val &s) {
    Val e = empty(base + "_e", q.shape, dt);
    std::vector<std::string> lines;
    if (dt == "f16")
      lines = {"%f = arith.sitofp %in : i8 to f16",
               "%m = arith.mulf %f, %in0 : f16", "linalg.yield %m : f16"};
    else
      lines = {
          "%f = arith.sitofp %in : i8 to f32",
          "%sf = arith.extf %in0 : f16 to f32", "%m = arith.mulf %f, %sf : f32",
          "%y = arith.truncf %m : f32 to " + dt, "linalg.yield %y : " + dt};
    return generic({base},
                   {identityMap(3),
                    affineMap(3, {"d0", "d1", "d2 floordiv 32"}),
                    identityMap(3)},
                   {"parallel", "parallel", "parallel"}, {q, s}, {e},
                   {"in", "in0", "out"}, lines)[0];
  }

  /// Writes the new rows `x` [T][Hkv][Dh] (activation type) into the caches
  /// `caches` (one tensor, or values and scales) at position P; returns the
  /// updated caches and appends the first P + T positions, dequantized to the
  /// activation type, to `read`.
  std::vector<Val> appendToCache(const std::string &base, const Val &x,
                                 const std::vector<Val> &caches, Val &read) {
    // A run-time position reads the whole cache (the mask hides the rest).
    int64_t len = dynamic() ? caches[0].shape[0] : o.past + o.tokens;
    std::vector<Val> updated;
    auto firstRows = [&](const std::string &name, const Val &cache) {
      return cache.shape[0] == len ? cache : slice(name, cache, 0, len);
    };
    if (o.kv == KVFormat::Q8_0) {
      std::pair<Val, Val> qs = quantizeQ8_0(base + "_new", x);
      updated.push_back(insert(base + "_cache_upd", qs.first, caches[0], at()));
      updated.push_back(
          insert(base + "_scales_upd", qs.second, caches[1], at()));
      Val values = firstRows(base + "_q", updated[0]);
      Val scales = firstRows(base + "_s", updated[1]);
      read = dequantizeQ8_0(base, values, scales);
      return updated;
    }
    if (isPacked(o.kv)) {
      Val q = value(base + "_new", caches[0].shape, caches[0].element);
      q.shape[0] = x.shape[0];
      line(q.name + " = cachet.quantize " + x.name + " : " + x.type() + " -> " +
           q.type());
      updated.push_back(insert(base + "_cache_upd", q, caches[0], at()));
      Val blocks = firstRows(base + "_q", updated[0]);
      read = value(base, {len, x.shape[1], x.shape[2]}, dt);
      line(read.name + " = cachet.dequantize " + blocks.name + " : " +
           blocks.type() + " -> " + read.type());
      return updated;
    }
    Val stored = cast(base + "_new", x, caches[0].element);
    updated.push_back(insert(base + "_cache_upd", stored, caches[0], at()));
    read = cast(base, firstRows(base + "_all", updated[0]), dt);
    return updated;
  }

  /// The softmax of s [Hq][T][L] over its last dimension, in f32.
  Val softmax(const std::string &base, const Val &s) {
    if (o.softmax == SoftmaxForm::Named) {
      Val e = empty(base + "_e", s.shape, "f32");
      Val p = value(base, s.shape, "f32");
      line(p.name + " = linalg.softmax dimension(2) ins(" + s.name + " : " +
           s.type() + ") outs(" + e.name + " : " + e.type() + ") -> " +
           p.type());
      return p;
    }
    Shape rows = {s.shape[0], s.shape[1]};
    std::string rowMap = affineMap(3, {"d0", "d1"});
    std::vector<std::string> reduce = {"parallel", "parallel", "reduction"};
    std::vector<std::string> parallel(3, "parallel");
    Val mi = filled(base + "_max_init", rows, ninf);
    Val mx = generic(
        {base + "_max"}, {identityMap(3), rowMap}, reduce, {s}, {mi},
        {"in", "acc"},
        {"%m = arith.maximumf %in, %acc : f32", "linalg.yield %m : f32"})[0];
    Val ee = empty(base + "_exp_e", s.shape, "f32");
    Val ex = generic({base + "_exp"}, {identityMap(3), rowMap, identityMap(3)},
                     parallel, {s, mx}, {ee}, {"in", "in0", "out"},
                     {"%sub = arith.subf %in, %in0 : f32",
                      "%e = math.exp %sub : f32", "linalg.yield %e : f32"})[0];
    Val si = zeros(base + "_sum_init", rows);
    Val sum = generic(
        {base + "_sum"}, {identityMap(3), rowMap}, reduce, {ex}, {si},
        {"in", "acc"},
        {"%s = arith.addf %in, %acc : f32", "linalg.yield %s : f32"})[0];
    Val pe = empty(base + "_e", s.shape, "f32");
    return generic(
        {base}, {identityMap(3), rowMap, identityMap(3)}, parallel, {ex, sum},
        {pe}, {"in", "in0", "out"},
        {"%d = arith.divf %in, %in0 : f32", "linalg.yield %d : f32"})[0];
  }

  /// Causal GQA attention of q [T][Hq][Dh] over k, v [L][Hkv][Dh] (all in the
  /// activation type), in the canonical front-end form; returns [T][Hq][Dh].
  Val attention(const Val &q, const Val &k, const Val &v) {
    int64_t hq = q.shape[1], dh = q.shape[2];
    int64_t len = k.shape[0], group = hq / k.shape[1];
    std::string kvHead =
        group == 1 ? "d0" : "d0 floordiv " + std::to_string(group);
    std::vector<std::string> parallel(3, "parallel");
    Val qh = transpose("q_heads", q, {1, 0, 2});
    comment("K^T broadcast to the query heads: kT[h, d, s] = k[s, h / " +
            std::to_string(group) + ", d].");
    Val kte = empty("kT_e", {hq, dh, len}, dt);
    Val kT = generic(
        {"kT"}, {affineMap(3, {"d2", kvHead, "d1"}), identityMap(3)}, parallel,
        {k}, {kte}, {"in", "out"}, {"linalg.yield %in : " + dt})[0];
    comment("Scores = Q K^T, accumulated in f32.");
    Val scores = batchMatmul("scores", qh, kT);
    comment("Scale and causal mask: query i sits at absolute position " + at() +
            " + i.");
    Val me = empty("masked_e", scores.shape, "f32");
    std::vector<std::string> maskBody = {"%i = linalg.index 1 : index",
                                         "%j = linalg.index 2 : index"};
    if (dynamic())
      maskBody.push_back("%pos = arith.addi %i, " + positionIndex + " : index");
    else
      maskBody.insert(maskBody.end(), {"%c = arith.constant " +
                                           std::to_string(o.past) + " : index",
                                       "%pos = arith.addi %i, %c : index"});
    maskBody.insert(maskBody.end(),
                    {"%vis = arith.cmpi ule, %j, %pos : index",
                     "%scale = arith.constant " +
                         f32Literal(1.0 / std::sqrt(double(dh))) + " : f32",
                     "%ninf = arith.constant 0xFF800000 : f32",
                     "%xs = arith.mulf %in, %scale : f32",
                     "%r = arith.select %vis, %xs, %ninf : f32",
                     "linalg.yield %r : f32"});
    Val masked = generic({"masked"}, {identityMap(3), identityMap(3)}, parallel,
                         {scores}, {me}, {"in", "out"}, maskBody)[0];
    Val probs = softmax("probs", masked);
    Val p = cast("probs_" + dt, probs, dt);
    comment("V broadcast to the query heads: vB[h, s, d] = v[s, h / " +
            std::to_string(group) + ", d].");
    Val vbe = empty("vB_e", {hq, len, dh}, dt);
    Val vB = generic(
        {"vB"}, {affineMap(3, {"d1", kvHead, "d2"}), identityMap(3)}, parallel,
        {v}, {vbe}, {"in", "out"}, {"linalg.yield %in : " + dt})[0];
    Val ctx = batchMatmul("attn", p, vB);
    Val ctxT = cast("attn_" + dt, ctx, dt);
    return transpose("attn_tokens", ctxT, {1, 0, 2});
  }

  /// x + y in f32, rounded to the activation type.
  Val residual(const std::string &base, const Val &x, const Val &y) {
    return map(base, {x, y}, dt, {"in", "in0", "out"},
               {"%f = arith.extf %in : " + x.element + " to f32",
                "%s = arith.addf %f, %in0 : f32",
                "%t = arith.truncf %s : f32 to " + dt,
                "linalg.yield %t : " + dt});
  }

  /// One decoder layer on x [T][H]; appends the updated caches to `caches`.
  Val layer(const Val &x, const std::vector<Val> &weights,
            const std::vector<Val> &cacheArgs, const Val &cosRows,
            const Val &sinRows, std::vector<Val> &caches) {
    const Val &attnNorm = weights[0], &wq = weights[1], &wk = weights[2],
              &wv = weights[3], &wo = weights[4], &ffnNorm = weights[5],
              &wGate = weights[6], &wUp = weights[7], &wDown = weights[8];
    int64_t t = o.tokens, dh = o.headDim;
    comment("Attention RMSNorm.");
    Val xn = rmsNorm("attn_in", x, attnNorm);
    comment("Q, K, V projections (y = x W^T) and RoPE.");
    Val q = project("q_proj", xn, wq);
    Val k = project("k_proj", xn, wk);
    Val v = project("v_proj", xn, wv);
    Val q3 = expand("q_split", q, {t, o.heads, dh}, "[[0], [1, 2]]");
    Val k3 = expand("k_split", k, {t, o.kvHeads, dh}, "[[0], [1, 2]]");
    Val v3 = expand("v_split", v, {t, o.kvHeads, dh}, "[[0], [1, 2]]");
    Val qr = rope("q_rope", q3, cosRows, sinRows);
    Val kr = rope("k_rope", k3, cosRows, sinRows);
    Val vn = cast("v_cast", v3, dt);
    comment("Append the new K/V at positions " + at() + " + 0.." +
            std::to_string(t - 1) + " of the caches.");
    Val kAll, vAll;
    std::vector<Val> kArgs = {cacheArgs[0]}, vArgs = {cacheArgs[1]};
    if (o.kv == KVFormat::Q8_0) {
      kArgs.push_back(cacheArgs[2]);
      vArgs.push_back(cacheArgs[3]);
    }
    std::vector<Val> kUpd = appendToCache("k", kr, kArgs, kAll);
    std::vector<Val> vUpd = appendToCache("v", vn, vArgs, vAll);
    caches.push_back(kUpd[0]);
    caches.push_back(vUpd[0]);
    if (kUpd.size() > 1) {
      caches.push_back(kUpd[1]);
      caches.push_back(vUpd[1]);
    }
    comment(dynamic() ? "Attention over the cache, positions after " + at() +
                            " + i masked."
                      : "Attention over positions 0.." +
                            std::to_string(o.past + t - 1) + ".");
    Val ctx = attention(qr, kAll, vAll);
    Val ctx2 = collapse("attn_flat", ctx, {t, o.heads * dh}, "[[0], [1, 2]]");
    comment("Output projection and residual.");
    Val out = project("o_proj", ctx2, wo);
    Val h = residual("attn_res", x, out);
    comment("MLP: RMSNorm, SwiGLU (silu(gate) * up), down, residual.");
    Val hn = rmsNorm("ffn_in", h, ffnNorm);
    Val gate = project("gate", hn, wGate);
    Val up = project("up", hn, wUp);
    Val act =
        map("act", {gate, up}, dt, {"in", "in0", "out"},
            {"%one = arith.constant 1.00000000e+00 : f32",
             "%ng = arith.negf %in : f32", "%ex = math.exp %ng : f32",
             "%den = arith.addf %one, %ex : f32",
             "%sig = arith.divf %in, %den : f32",
             "%p = arith.mulf %sig, %in0 : f32",
             "%t = arith.truncf %p : f32 to " + dt, "linalg.yield %t : " + dt});
    Val down = project("down", act, wDown);
    return residual("layer_out", h, down);
  }

  /// The hex form of a constant's values.
  static std::string hex(const std::vector<uint8_t> &bytes) {
    static const char digits[] = "0123456789ABCDEF";
    std::string s = "0x";
    s.reserve(2 + 2 * bytes.size());
    for (uint8_t b : bytes) {
      s.push_back(digits[b >> 4]);
      s.push_back(digits[b & 15]);
    }
    return s;
  }

  /// A weight as a value: the argument, or a constant written here.
  Val weight(const Source &source,
             const std::vector<std::pair<std::string, Val>> &args) {
    if (o.weights == WeightMode::Args) {
      for (const auto &a : args)
        if (a.first == source.name)
          return a.second;
    }
    std::string saved;
    std::swap(saved, prefix);
    Val v = value(source.name, source.shape, source.element);
    std::swap(saved, prefix);
    line(v.name + " = arith.constant dense<\"" + hex(sourceBytes(o, source)) +
         "\"> : " + v.type());
    return v;
  }

  /// Writes the whole function.
  void function() {
    FunctionSources sources = functionSources(o);
    std::vector<Source> argSources = sources.args(o.weights);
    std::vector<std::pair<std::string, Val>> args;
    std::vector<std::string> signature;
    for (const Source &s : argSources) {
      Val v = value(s.name, s.shape, s.element);
      args.push_back({s.name, v});
      signature.push_back(v.name + ": " + v.type() +
                          (s.weight ? " {cachet.weight}" : ""));
    }
    auto arg = [&](const std::string &name) {
      for (const auto &a : args)
        if (a.first == name)
          return a.second;
      return Val();
    };
    zero = fresh("cst_zero");
    line(zero + " = arith.constant 0.00000000e+00 : f32");
    if (o.softmax == SoftmaxForm::Decomposed || o.kind == Kind::Model) {
      ninf = fresh("cst_ninf");
      line(ninf + " = arith.constant 0xFF800000 : f32");
    }
    int64_t seq = sources.cos.shape[0];
    if (dynamic()) {
      comment("The position of the first new token, known at run time.");
      std::string c0 = fresh("c0");
      line(c0 + " = arith.constant 0 : index");
      std::string pos64 = fresh("pos_i64");
      line(pos64 + " = tensor.extract " + arg("pos").name + "[" + c0 +
           "] : tensor<1xi64>");
      positionIndex = fresh("pos_idx");
      line(positionIndex + " = arith.index_cast " + pos64 + " : i64 to index");
    }
    Val cosRows = arg("cos"), sinRows = arg("sin");
    if (dynamic() || o.past != 0 || seq != o.tokens) {
      comment("RoPE tables of the new positions.");
      cosRows = slice("cos_new", cosRows, at(), o.tokens);
      sinRows = slice("sin_new", sinRows, at(), o.tokens);
    }
    Val x;
    if (o.kind == Kind::Layer) {
      x = arg("x");
    } else {
      comment("Embedding lookup: row ids[t] of the table.");
      Val table = weight(sources.embedding, args);
      Val e = empty("embd_e", {o.tokens, o.hidden}, dt);
      x = generic({"embd"}, {affineMap(2, {"d0"}), identityMap(2)},
                  {"parallel", "parallel"}, {arg("ids")}, {e}, {"in", "out"},
                  {"%row = arith.index_cast %in : i32 to index",
                   "%col = linalg.index 1 : index",
                   "%val = tensor.extract " + table.name +
                       "[%row, %col] : " + table.type(),
                   "linalg.yield %val : " + dt})[0];
    }
    std::vector<Val> caches;
    for (size_t l = 0; l < sources.layers.size(); ++l) {
      const LayerSources &ls = sources.layers[l];
      if (o.kind == Kind::Model) {
        prefix = "l" + std::to_string(l) + "_";
        comment("Layer " + std::to_string(l) + ".");
      }
      std::vector<Val> weights, cacheArgs;
      for (const Source &w : layerWeights(ls))
        weights.push_back(weight(w, args));
      for (const Source &c : ls.caches)
        cacheArgs.push_back(arg(c.name));
      x = layer(x, weights, cacheArgs, cosRows, sinRows, caches);
      prefix.clear();
    }
    std::vector<Val> results;
    if (o.kind == Kind::Layer) {
      results.push_back(x);
    } else {
      Val norm = weight(sources.outputNorm, args);
      Val logits, last;
      if (o.lastLogits && o.tokens > 1) {
        comment("The last token's row, final RMSNorm, LM head, argmax.");
        std::string row = std::to_string(o.tokens - 1);
        if (!sources.rows.name.empty()) {
          std::string c0 = fresh("c0"), c1 = fresh("c1");
          line(c0 + " = arith.constant 0 : index");
          line(c1 + " = arith.constant 1 : index");
          std::string rows64 = fresh("rows_i64"), rowsIdx = fresh("rows_idx");
          line(rows64 + " = tensor.extract " + arg("rows").name + "[" + c0 +
               "] : tensor<1xi64>");
          line(rowsIdx + " = arith.index_cast " + rows64 + " : i64 to index");
          row = fresh("last_row");
          line(row + " = arith.subi " + rowsIdx + ", " + c1 + " : index");
        }
        Val xl = slice("x_last", x, row, 1);
        Val xn = rmsNorm("final", xl, norm);
        logits = project("logits", xn, weight(sources.lmHead, args));
        last = logits;
      } else {
        comment("Final RMSNorm, LM head, argmax of the last token's logits.");
        Val xn = rmsNorm("final", x, norm);
        logits = project("logits", xn, weight(sources.lmHead, args));
        last = o.tokens == 1 ? logits : slice("last", logits, o.tokens - 1, 1);
      }
      Val vi = filled("best_init", {1}, ninf);
      Val ie = empty("best_id_e", {1}, "i32");
      Val zi = value("best_id_init", {1}, "i32");
      std::string c0 = fresh("c0_i32");
      line(c0 + " = arith.constant 0 : i32");
      line(zi.name + " = linalg.fill ins(" + c0 + " : i32) outs(" + ie.name +
           " : " + ie.type() + ") -> " + zi.type());
      std::vector<Val> best = generic(
          {"argmax"},
          {identityMap(2), affineMap(2, {"d0"}), affineMap(2, {"d0"})},
          {"parallel", "reduction"}, {last}, {vi, zi}, {"in", "acc", "acc0"},
          {"%j = linalg.index 1 : index",
           "%ji = arith.index_cast %j : index to i32",
           "%gt = arith.cmpf ogt, %in, %acc : f32",
           "%nm = arith.select %gt, %in, %acc : f32",
           "%ni = arith.select %gt, %ji, %acc0 : i32",
           "linalg.yield %nm, %ni : f32, i32"});
      results.push_back(best[1]);
      results.push_back(logits);
    }
    if (o.returnCaches)
      results.insert(results.end(), caches.begin(), caches.end());
    std::vector<std::string> names, types, resultTypes;
    for (const Val &r : results) {
      names.push_back(r.name);
      types.push_back(r.type());
      resultTypes.push_back(r.type());
    }
    // The next token is the argmax of the last row of the logits (result
    // 1): a check may accept another token whose logit ties the best one.
    if (o.kind == Kind::Model)
      resultTypes[0] += " {cachet.argmax_of = 1 : i64}";
    std::string fn = o.kind == Kind::Layer ? "layer" : "model";
    os << "func.func @" << fn << "(" << join(signature, ",\n    ") << ")\n"
       << "    -> (" << join(resultTypes) << ") {\n"
       << body.str() << "  return " << join(names) << " : " << join(types)
       << "\n}\n";
  }

private:
  /// Whether the new tokens' position is a run-time value.
  bool dynamic() const { return o.position == Position::Dynamic; }
  /// The first new token's position: `past`, or the run-time index value.
  std::string at() const {
    return dynamic() ? positionIndex : std::to_string(o.past);
  }

  const Options &o;
  std::ostream &os;
  std::string dt;
  /// The SSA name of the run-time position (an index), when dynamic().
  std::string positionIndex;
  std::string prefix;
  std::string zero, ninf;
  std::set<std::string> used;
  std::ostringstream body;
};

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

const std::vector<EnumName> &cachet::modelgen::kindNames() {
  static const std::vector<EnumName> names = {{int(Kind::Layer), "layer"},
                                              {int(Kind::Model), "model"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::dtypeNames() {
  static const std::vector<EnumName> names = {{int(DType::F16), "f16"},
                                              {int(DType::BF16), "bf16"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::kvFormatNames() {
  static const std::vector<EnumName> names = {
      {int(KVFormat::F16), "f16"},
      {int(KVFormat::BF16), "bf16"},
      {int(KVFormat::Q8_0), "q8_0"},
      {int(KVFormat::Q4_0), "q4_0"},
      {int(KVFormat::Q4_1), "q4_1"},
      {int(KVFormat::Q5_0), "q5_0"},
      {int(KVFormat::Q5_1), "q5_1"},
      {int(KVFormat::IQ4_NL), "iq4_nl"},
      {int(KVFormat::Q8_0Packed), "q8_0-packed"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::weightModeNames() {
  static const std::vector<EnumName> names = {
      {int(WeightMode::Args), "args"},
      {int(WeightMode::Constants), "constants"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::roundingNames() {
  static const std::vector<EnumName> names = {
      {int(Rounding::AwayFromZero), "away"}, {int(Rounding::Even), "even"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::matmulFormNames() {
  static const std::vector<EnumName> names = {
      {int(MatmulForm::Named), "named"},
      {int(MatmulForm::Generic), "generic"},
      {int(MatmulForm::Matvec), "matvec"},
      {int(MatmulForm::Transposed), "transposed"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::positionNames() {
  static const std::vector<EnumName> names = {
      {int(Position::Static), "static"}, {int(Position::Dynamic), "dynamic"}};
  return names;
}

const std::vector<EnumName> &cachet::modelgen::softmaxFormNames() {
  static const std::vector<EnumName> names = {
      {int(SoftmaxForm::Named), "named"},
      {int(SoftmaxForm::Decomposed), "decomposed"}};
  return names;
}

bool cachet::modelgen::parseEnum(const std::vector<EnumName> &names,
                                 const std::string &text, int &value) {
  for (const EnumName &n : names)
    if (text == n.name) {
      value = n.value;
      return true;
    }
  return false;
}

const char *cachet::modelgen::enumName(const std::vector<EnumName> &names,
                                       int value) {
  for (const EnumName &n : names)
    if (n.value == value)
      return n.name;
  return "?";
}

std::string cachet::modelgen::enumList(const std::vector<EnumName> &names) {
  std::vector<std::string> parts;
  for (const EnumName &n : names)
    parts.push_back(n.name);
  return join(parts);
}

std::string cachet::modelgen::validate(const Options &o) {
  // Each dimension stays small enough that no product of two overflows.
  const int64_t limit = int64_t(1) << 24;
  struct Dim {
    const char *flag;
    int64_t value;
    int64_t min;
  };
  std::vector<Dim> dimensions = {
      {"--hidden", o.hidden, 1},    {"--heads", o.heads, 1},
      {"--kv-heads", o.kvHeads, 1}, {"--head-dim", o.headDim, 2},
      {"--ffn", o.ffn, 1},          {"--tokens", o.tokens, 1},
      {"--past", o.past, 0},        {"--max-seq", o.maxSeq, 0}};
  if (o.kind == Kind::Model) {
    dimensions.push_back({"--vocab", o.vocab, 1});
    dimensions.push_back({"--layers", o.layers, 1});
  }
  for (const Dim &d : dimensions) {
    if (d.value < d.min)
      return std::string(d.flag) + ": must be at least " +
             std::to_string(d.min) + ", got " + std::to_string(d.value);
    if (d.value > limit)
      return std::string(d.flag) + ": must be at most " +
             std::to_string(limit) + ", got " + std::to_string(d.value);
  }
  if (o.heads % o.kvHeads != 0)
    return "--kv-heads: must divide --heads (" + std::to_string(o.heads) +
           "), got " + std::to_string(o.kvHeads);
  if (o.headDim % 2 != 0)
    return "--head-dim: must be even (RoPE pairs its halves), got " +
           std::to_string(o.headDim);
  if (isQuantized(o.kv) && o.headDim % 32 != 0)
    return "--head-dim: must be a multiple of 32 for --kv=" +
           std::string(enumName(kvFormatNames(), int(o.kv))) + ", got " +
           std::to_string(o.headDim);
  if (o.maxSeq != 0 && o.maxSeq < o.past + o.tokens)
    return "--max-seq: must be at least --past + --tokens (" +
           std::to_string(o.past + o.tokens) + "), got " +
           std::to_string(o.maxSeq);
  if (o.matmul == MatmulForm::Matvec && o.tokens != 1)
    return "--matmul: matvec needs --tokens=1, got --tokens=" +
           std::to_string(o.tokens);
  if (!(o.eps > 0.0) || !std::isfinite(o.eps))
    return "--eps: must be a positive number";
  if (o.lastLogits && o.kind != Kind::Model)
    return "--last-logits: needs --kind=model (a layer has no logits)";
  std::set<std::string> matrices;
  for (const Source &s : functionSources(o).all()) {
    if (s.role != Role::Matrix)
      continue;
    matrices.insert(s.name);
    std::string format = weightFormatOf(o, s.name);
    if (format.empty())
      continue;
    const blocks::Format *f = blocks::findFormat(format);
    std::string flag = format == o.weightFormat ? std::string("--weight-format")
                                                : "the format of " + s.name;
    if (!f)
      return flag + ": unknown block format '" + format + "' (expected " +
             blocks::formatList() + ")";
    if (o.weights != WeightMode::Args)
      return flag + ": packed weights are function arguments (--weights=args)";
    int64_t cols = s.columns;
    if (cols % f->values != 0)
      return flag + ": " + format + " packs " + std::to_string(f->values) +
             " values per block along a row; " + s.name + " has rows of " +
             std::to_string(cols) + " values";
  }
  for (const auto &entry : o.weightFormats)
    if (!matrices.count(entry.first))
      return "the format of " + entry.first + ": no such projection weight";
  return "";
}

bool cachet::modelgen::generate(const Options &options, std::ostream &os,
                                std::string &error) {
  error = validate(options);
  if (!error.empty())
    return false;
  const Options &o = options;
  os << "// Generated by cachet-gen --kind="
     << enumName(kindNames(), int(o.kind)) << " --hidden=" << o.hidden
     << " --heads=" << o.heads << " --kv-heads=" << o.kvHeads
     << " --head-dim=" << o.headDim << " --ffn=" << o.ffn;
  if (o.kind == Kind::Model)
    os << " --vocab=" << o.vocab << " --layers=" << o.layers;
  os << " --tokens=" << o.tokens << " --past=" << o.past
     << " --max-seq=" << (o.maxSeq ? o.maxSeq : o.past + o.tokens)
     << "\n//   --dtype=" << enumName(dtypeNames(), int(o.dtype))
     << " --kv=" << enumName(kvFormatNames(), int(o.kv))
     << " --weights=" << enumName(weightModeNames(), int(o.weights))
     << " --matmul=" << enumName(matmulFormNames(), int(o.matmul))
     << " --softmax=" << enumName(softmaxFormNames(), int(o.softmax))
     << " --position=" << enumName(positionNames(), int(o.position));
  if (o.kv == KVFormat::Q8_0)
    os << " --round=" << enumName(roundingNames(), int(o.rounding));
  if (!o.weightFormat.empty())
    os << " --weight-format=" << o.weightFormat;
  for (const auto &[name, format] : o.weightFormats)
    os << "\n//   " << name << ": " << (format.empty() ? "dense" : format);
  os << " --eps=" << f32Literal(o.eps)
     << " --return-caches=" << (o.returnCaches ? "true" : "false")
     << (o.lastLogits ? " --last-logits=true" : "") << " --seed=" << o.seed
     << "\n";
  Emitter(o, os).function();
  return true;
}

std::vector<ArgumentInfo> cachet::modelgen::arguments(const Options &options) {
  std::vector<ArgumentInfo> list;
  for (const Source &s : functionSources(options).args(options.weights))
    list.push_back({s.name, s.shape, s.element});
  return list;
}

bool cachet::modelgen::writeInputs(const Options &options,
                                   const std::string &prefix,
                                   std::vector<std::string> &files,
                                   std::string &error) {
  error = validate(options);
  if (!error.empty())
    return false;
  std::vector<Source> args = functionSources(options).args(options.weights);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string path = prefix + std::to_string(i) + ".bin";
    std::vector<uint8_t> bytes = sourceBytes(options, args[i]);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char *>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    if (!file) {
      error = "cannot write " + path;
      return false;
    }
    files.push_back(path);
  }
  return true;
}
