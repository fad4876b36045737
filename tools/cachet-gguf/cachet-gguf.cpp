//===- cachet-gguf.cpp - write random llama GGUFs, dump GGUF files --------===//
//
// cachet-gguf random SPEC [--type=T] [--tensor-type=NAME=T]... [--embd-type=T]
//                         [--seed=N] [--name=S] [--alignment=N] -o FILE
// cachet-gguf dump FILE
// cachet-gguf values FILE [TENSOR...]
//
// The command line of cachet/Generate/Gguf.h. Every bad option or input is
// reported as `cachet-gguf: <message>` with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "cachet/Generate/Gguf.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cachet::gguf;

namespace {

const char *const usage = R"(usage:
  cachet-gguf random SPEC [--type=T] [--tensor-type=NAME=T]... [--embd-type=T]
                          [--seed=N] [--name=S]
                          [--alignment=N] -o FILE
  cachet-gguf dump FILE
  cachet-gguf values FILE [TENSOR...]

random: writes a llama model with seeded pseudo-random weights as GGUF.
  SPEC is a preset (tiny, small, llama3-8b) and/or comma-separated
  overrides KEY=VALUE of hidden, layers, heads, kvHeads, headDim, ffn,
  vocab, contextLength, ropeTheta, eps, tiedOutput (0 or 1), e.g.
  tiny,layers=1,vocab=300.
  --type=T       projection weights and output.weight: f32, f16, bf16,
                 q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K,
                 q5_K, q6_K, tq1_0, tq2_0 (default f16)
  --tensor-type=NAME=T
                 the type of the projections whose tensor name contains
                 NAME (llama-quantize's --tensor-type: ffn_down=q6_K,
                 blk.0.attn_v=q8_0); the last match wins; repeatable
  --embd-type=T  token_embd.weight: f32, f16 or bf16 (default: the weight
                 type for f32 and bf16, else f16)
  --seed=N       the seed (default 0); the same options write the same bytes
  --name=S       general.name (default cachet-random)
  --alignment=N  the tensor data alignment, a power of two (default 32)
dump: prints the header, the metadata (arrays: type, length, first four
  elements), every tensor (name, type, ne, offset, bytes) and, for a llama
  model, its configuration as SPEC overrides.
values: prints each tensor's (or the named tensors') values decoded to
  float, one tensor a line: NAME then the values.
)";

int fail(const std::string &message) {
  std::fprintf(stderr, "cachet-gguf: %s\n", message.c_str());
  return 1;
}

std::string scalarString(const Value &v) {
  char buf[64];
  switch (v.type) {
  case ValueType::I8:
  case ValueType::I16:
  case ValueType::I32:
  case ValueType::I64:
    return std::to_string(v.i);
  case ValueType::Bool:
    return v.u ? "true" : "false";
  case ValueType::F32:
    std::snprintf(buf, sizeof(buf), "%.9g", v.f);
    return buf;
  case ValueType::F64:
    std::snprintf(buf, sizeof(buf), "%.17g", v.f);
    return buf;
  case ValueType::String:
    return "\"" + escape(v.s) + "\"";
  default:
    return std::to_string(v.u);
  }
}

std::string shapeString(const std::vector<int64_t> &ne) {
  std::string s = "[";
  for (size_t k = 0; k < ne.size(); ++k)
    s += (k ? ", " : "") + std::to_string(ne[k]);
  return s + "]";
}

int dump(const std::string &path) {
  File file;
  std::string error;
  if (!read(path, file, error))
    return fail(error);
  LlamaConfig config;
  const Value *arch = file.find("general.architecture");
  bool llama = arch && arch->type == ValueType::String && arch->s == "llama";
  if (llama && !readLlamaConfig(file, config, error))
    return fail(path + ": " + error);

  std::printf("version %u\n", file.version());
  std::printf("alignment %" PRIu64 "\n", file.alignment());
  std::printf("data offset %" PRIu64 "\n", file.dataOffset());
  std::printf("metadata %zu\n", file.metadata().size());
  for (const KeyValue &entry : file.metadata()) {
    const Value &v = entry.value;
    if (v.type != ValueType::Array) {
      std::printf("  %s %s %s\n", escape(entry.key).c_str(),
                  valueTypeName(v.type), scalarString(v).c_str());
      continue;
    }
    std::string elements;
    for (size_t k = 0; k < v.elements.size() && k < 4; ++k)
      elements += (k ? ", " : "") + scalarString(v.elements[k]);
    if (v.elements.size() > 4)
      elements += ", ...";
    std::printf("  %s array[%s] %zu [%s]\n", escape(entry.key).c_str(),
                valueTypeName(v.elementType), v.elements.size(),
                elements.c_str());
  }
  std::printf("tensors %zu\n", file.tensors().size());
  for (const TensorInfo &t : file.tensors())
    std::printf("  %s %s %s offset %" PRIu64 " bytes %" PRIu64 "\n",
                escape(t.name).c_str(), typeName(t.type),
                shapeString(t.ne).c_str(), t.offset, t.bytes);
  if (llama)
    std::printf("llama hidden=%" PRId64 ",layers=%" PRId64 ",heads=%" PRId64
                ",kvHeads=%" PRId64 ",headDim=%" PRId64 ",ffn=%" PRId64
                ",vocab=%" PRId64 ",contextLength=%" PRId64
                ",ropeTheta=%.9g,eps=%.9g,tiedOutput=%d\n",
                config.hidden, config.layers, config.heads, config.kvHeads,
                config.headDim, config.ffn, config.vocab, config.contextLength,
                config.ropeTheta, config.eps, config.tiedOutput ? 1 : 0);
  return 0;
}

int values(const std::string &path, const std::vector<std::string> &names) {
  File file;
  std::string error;
  if (!read(path, file, error))
    return fail(error);
  std::vector<const TensorInfo *> selected;
  for (const std::string &name : names) {
    const TensorInfo *t = file.findTensor(name);
    if (!t)
      return fail(path + ": no tensor '" + escape(name) + "'");
    selected.push_back(t);
  }
  if (names.empty())
    for (const TensorInfo &t : file.tensors())
      selected.push_back(&t);
  std::vector<float> decoded;
  for (const TensorInfo *t : selected) {
    decoded.resize(static_cast<size_t>(t->elements()));
    dequantize(t->type, file.data(*t), t->elements(), decoded.data());
    std::printf("%s", escape(t->name).c_str());
    for (float v : decoded)
      std::printf(" %.9g", static_cast<double>(v));
    std::printf("\n");
  }
  return 0;
}

/// ggml's names of the types, comma-separated.
std::string typeList() {
  std::string list;
  for (GgmlType type : allTypes())
    list += std::string(list.empty() ? "" : ", ") + typeName(type);
  return list;
}

/// Parses a non-negative decimal integer.
bool parseUnsigned(const std::string &s, uint64_t &out) {
  if (s.empty() || s[0] == '-' || s[0] == '+')
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtoull(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

int random(const std::vector<std::string> &args) {
  std::string spec, output;
  RandomOptions options;
  bool embdGiven = false;
  for (size_t k = 0; k < args.size(); ++k) {
    const std::string &a = args[k];
    auto value = [&](const char *prefix, std::string &out) {
      size_t n = std::strlen(prefix);
      if (a.compare(0, n, prefix) != 0)
        return false;
      out = a.substr(n);
      return true;
    };
    std::string v;
    if (value("--type=", v)) {
      if (!parseType(v, options.weightType))
        return fail("unknown type '" + v + "' in --type (" + typeList() + ")");
    } else if (value("--tensor-type=", v)) {
      size_t eq = v.rfind('=');
      GgmlType type;
      if (eq == std::string::npos || eq == 0 ||
          !parseType(v.substr(eq + 1), type))
        return fail("--tensor-type expects NAME=TYPE (" + typeList() +
                    "), found '" + v + "'");
      options.tensorTypes.push_back({v.substr(0, eq), type});
    } else if (value("--embd-type=", v)) {
      if (!parseType(v, options.embeddingType))
        return fail("unknown type '" + v + "' in --embd-type (" + typeList() +
                    ")");
      embdGiven = true;
    } else if (value("--seed=", v)) {
      if (!parseUnsigned(v, options.seed))
        return fail("--seed must be a non-negative integer, found '" + v + "'");
    } else if (value("--alignment=", v)) {
      uint64_t alignment = 0;
      if (!parseUnsigned(v, alignment) || alignment > UINT32_MAX)
        return fail("--alignment must be a power of two, found '" + v + "'");
      options.alignment = static_cast<uint32_t>(alignment);
    } else if (value("--name=", v)) {
      options.name = v;
    } else if (a == "-o") {
      if (k + 1 == args.size())
        return fail("-o needs a file name");
      output = args[++k];
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "'");
    } else if (spec.empty()) {
      spec = a;
    } else {
      return fail("unexpected argument '" + a + "'");
    }
  }
  if (spec.empty())
    return fail("random needs a SPEC (a preset such as tiny)");
  if (output.empty())
    return fail("random needs -o FILE");
  if (!embdGiven)
    options.embeddingType = defaultEmbeddingType(options.weightType);
  LlamaConfig config;
  std::string error;
  if (!parseLlamaSpec(spec, config, error))
    return fail("bad SPEC '" + spec + "': " + error);
  if (!writeRandomLlama(config, options, output, error))
    return fail(error);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return fail("expected a command: random, dump or values (--help)");
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "--help" || command == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (command == "random")
    return random(args);
  if (command == "dump") {
    if (args.size() != 1)
      return fail("dump takes one FILE");
    return dump(args[0]);
  }
  if (command == "values") {
    if (args.empty())
      return fail("values takes a FILE and tensor names");
    std::string path = args[0];
    args.erase(args.begin());
    return values(path, args);
  }
  return fail("unknown command '" + command + "' (random, dump or values)");
}
