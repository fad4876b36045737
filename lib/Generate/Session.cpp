//===- Session.cpp - run a compiled decoder against resident state -------===//

#include "cachet/Generate/Session.h"

#include "cachet/Generate/Gguf.h"
#include "cachet/ModelGen/Blocks.h"
#include "cachet/ModelGen/Random.h"
#include "cachet/runtime.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace cachet;
using namespace cachet::generate;

namespace {

/// Bytes of one element of `element`: an integer type, or a float or block
/// format by its ggml type (a block format: its block bytes).
int64_t elementBytes(const std::string &element) {
  if (element == "i8")
    return 1;
  if (element == "i32")
    return 4;
  if (element == "i64")
    return 8;
  gguf::GgmlType type;
  return gguf::parseType(element, type) ? int64_t(gguf::blockBytes(type)) : 0;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A zero-filled argument of `info`'s shape.
HostTensor zeroTensor(const modelgen::ArgumentInfo &info) {
  HostTensor t{info.name, info.shape, info.element, {}};
  t.bytes.assign(product(info.shape) * elementBytes(info.element), 0);
  return t;
}

/// The memref descriptor of a contiguous buffer (the MLIR C interface:
/// allocated, aligned, offset, sizes, strides).
std::vector<int64_t> descriptor(void *data, const std::vector<int64_t> &shape) {
  size_t rank = shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  d[0] = reinterpret_cast<intptr_t>(data);
  d[1] = reinterpret_cast<intptr_t>(data);
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return d;
}

/// The mgpu* failure since the last check, as `error` (false), or true.
bool mgpuOk(const std::string &what, std::string &error) {
  char message[1024];
  if (cachetMgpuTakeError(message, sizeof(message)) == CACHET_SUCCESS)
    return true;
  error = what + ": " + message;
  return false;
}

} // namespace

const char *cachet::generate::variantFile(Variant variant) {
  switch (variant) {
  case Variant::Gpu:
    return "gpu.so";
  case Variant::GpuNoRewrite:
    return "gpu-norewrite.so";
  case Variant::Reference:
    return "ref.so";
  }
  return "";
}

std::string cachet::generate::artifactTarget(const std::string &artifact) {
  std::ifstream manifest(artifact + "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(manifest)),
                   std::istreambuf_iterator<char>());
  for (const char *target : {"nvvm", "rocdl", "spirv"})
    if (text.find(std::string("\"target\": \"") + target + "\"") !=
        std::string::npos)
      return target;
  return "spirv";
}

Program::~Program() {
  if (handle)
    dlclose(handle);
}

bool Program::load(const std::string &artifact, Variant variant,
                   std::string &error) {
  cachetMgpuTakeError(nullptr, 0);
  std::string path = artifact + "/" + variantFile(variant);
  if (variant == Variant::Reference && access(path.c_str(), F_OK) != 0) {
    error = path +
            " is missing: cachet-generate builds the CPU reference only for "
            "--check (with --compile-only too: compile with --check for a "
            "later --check)";
    return false;
  }
  // RTLD_LOCAL: the variants and the two functions define the same symbols.
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load " + path + ": " + dlerror();
    return false;
  }
  if (!mgpuOk("loading " + path, error))
    return false;
  fn = reinterpret_cast<void (*)(void **)>(
      dlsym(handle, "_cachet_packed_model"));
  if (!fn) {
    error = path + " has no _cachet_packed_model";
    return false;
  }
  return true;
}

bool Program::call(const std::vector<HostTensor *> &arguments,
                   const std::vector<std::vector<int64_t>> &resultShapes,
                   const std::vector<int> &resultElementBytes,
                   std::vector<std::vector<uint8_t>> &results,
                   std::string &error) {
  std::vector<std::vector<int64_t>> descriptors;
  for (HostTensor *a : arguments)
    descriptors.push_back(descriptor(a->bytes.data(), a->shape));
  size_t resultWords = 0;
  for (const auto &shape : resultShapes)
    resultWords += 3 + 2 * shape.size();
  std::vector<int64_t> resultBuffer(resultWords);
  std::vector<void *> args;
  if (!resultShapes.empty())
    args.push_back(resultBuffer.data());
  for (auto &d : descriptors)
    args.push_back(d.data());
  fn(args.data());
  if (!mgpuOk("calling @model", error))
    return false;
  results.clear();
  size_t word = 0;
  for (size_t r = 0; r < resultShapes.size(); ++r) {
    size_t rank = resultShapes[r].size();
    auto *allocated = reinterpret_cast<void *>(resultBuffer[word]);
    auto *aligned = reinterpret_cast<uint8_t *>(resultBuffer[word + 1]);
    int64_t offset = resultBuffer[word + 2];
    size_t size = product(resultShapes[r]) * resultElementBytes[r];
    const uint8_t *begin = aligned + offset * resultElementBytes[r];
    results.emplace_back(begin, begin + size);
    std::free(allocated);
    word += 3 + 2 * rank;
  }
  return true;
}

Session::Session(const modelgen::Options &prefill,
                 const modelgen::Options &decode,
                 std::vector<HostTensor> weightTensors, double ropeTheta)
    : prefillOptions(prefill), decodeOptions(decode),
      weights(std::move(weightTensors)) {
  for (const modelgen::ArgumentInfo &info : modelgen::arguments(prefill)) {
    if (info.name.find("_cache") != std::string::npos ||
        info.name.find("_scales") != std::string::npos)
      caches.push_back(zeroTensor(info));
    else if (info.name == "cos")
      cos = zeroTensor(info);
    else if (info.name == "sin")
      sin = zeroTensor(info);
  }
  ropeTables(cos.shape[0], cos.shape[1], ropeTheta, cos.bytes, sin.bytes);
}

Session::~Session() { unbind(); }

bool Session::open(const std::string &prefillArtifact,
                   const std::string &decodeArtifact, Variant kind,
                   std::string &error) {
  variant = kind;
  if (kind != Variant::Reference) {
    // The GPU code's mgpu* calls go to the backend of the artifact's
    // target (manifest.json: "target": "spirv" | "nvvm" | "rocdl").
    std::string target = artifactTarget(prefillArtifact);
    const char *backend = target == "nvvm"    ? "cuda"
                          : target == "rocdl" ? "hip"
                                              : "vulkan";
    if (cachetMgpuSetBackend(backend) != CACHET_SUCCESS)
      return mgpuOk(std::string("selecting the ") + backend + " backend",
                    error);
  }
  if (!prefillProgram.load(prefillArtifact, kind, error) ||
      !decodeProgram.load(decodeArtifact, kind, error))
    return false;
  return kind == Variant::Reference || bind(error);
}

bool Session::bind(std::string &error) {
  std::vector<HostTensor *> resident;
  for (HostTensor &w : weights)
    resident.push_back(&w);
  for (HostTensor &c : caches)
    resident.push_back(&c);
  resident.push_back(&cos);
  resident.push_back(&sin);
  for (HostTensor *t : resident) {
    void *device = nullptr;
    if (cachetMgpuBindResident(t->bytes.data(), t->bytes.size(), &device) !=
        CACHET_SUCCESS) {
      char message[1024];
      cachetMgpuTakeError(message, sizeof(message));
      error = "keeping " + t->name + " on the device: " + message;
      return false;
    }
  }
  bound = true;
  return true;
}

void Session::unbind() {
  if (!bound)
    return;
  for (HostTensor &w : weights)
    cachetMgpuUnbindResident(w.bytes.data());
  for (HostTensor &c : caches)
    cachetMgpuUnbindResident(c.bytes.data());
  cachetMgpuUnbindResident(cos.bytes.data());
  cachetMgpuUnbindResident(sin.bytes.data());
  cachetMgpuTakeError(nullptr, 0);
  bound = false;
}

bool Session::rebindCaches(std::string &error) {
  if (!bound)
    return true;
  for (HostTensor &c : caches) {
    void *device = nullptr;
    if (cachetMgpuUnbindResident(c.bytes.data()) != CACHET_SUCCESS ||
        cachetMgpuBindResident(c.bytes.data(), c.bytes.size(), &device) !=
            CACHET_SUCCESS)
      return mgpuOk("uploading " + c.name, error);
  }
  return true;
}

bool Session::reset(std::string &error) {
  for (HostTensor &c : caches)
    std::fill(c.bytes.begin(), c.bytes.end(), 0);
  return rebindCaches(error);
}

bool Session::fillCaches(uint64_t seed, std::string &error) {
  for (HostTensor &c : caches) {
    Rng rng = rngFor(seed, c.name);
    std::vector<uint8_t> &b = c.bytes;
    bool isFloat = c.element == "f16" || c.element == "bf16";
    if (isFloat) {
      // Values in [-1, 1).
      for (size_t i = 0; i + 1 < b.size(); i += 2) {
        float v = float(rng.uniform());
        uint16_t h =
            c.element == "f16" ? gguf::floatToHalf(v) : gguf::floatToBf16(v);
        b[i] = uint8_t(h & 0xff);
        b[i + 1] = uint8_t(h >> 8);
      }
      continue;
    }
    // A block format: valid blocks of values of standard deviation 0.5;
    // split q8_0's i8 values: random bytes.
    const blocks::Format *f = blocks::findFormat(c.element);
    if (!f) {
      rng.fillBytes(b.data(), int(b.size()));
      continue;
    }
    for (size_t at = 0; at + f->bytes <= b.size(); at += f->bytes)
      blocks::randomBlock(c.element, rng, 0.5, &b[at]);
  }
  return rebindCaches(error);
}

bool Session::step(const std::vector<int32_t> &ids, int64_t pos,
                   std::vector<float> &logits, std::string &error,
                   int32_t *best) {
  bool decode = ids.size() == 1;
  const modelgen::Options &o = decode ? decodeOptions : prefillOptions;
  if (ids.empty() || int64_t(ids.size()) > o.tokens) {
    error = "a step takes 1.." + std::to_string(o.tokens) + " tokens, got " +
            std::to_string(ids.size());
    return false;
  }
  int64_t maxSeq = cos.shape[0];
  if (pos < 0 || pos + o.tokens > maxSeq) {
    error = "position " + std::to_string(pos) + " + " +
            std::to_string(o.tokens) + " tokens is past the cache (" +
            std::to_string(maxSeq) + " positions)";
    return false;
  }
  HostTensor idTensor{"ids", {o.tokens}, "i32", {}};
  idTensor.bytes.assign(o.tokens * 4, 0);
  std::memcpy(idTensor.bytes.data(), ids.data(), ids.size() * 4);
  HostTensor posTensor{"pos", {1}, "i64", std::vector<uint8_t>(8)};
  std::memcpy(posTensor.bytes.data(), &pos, 8);

  // The count of real rows, where the function takes it (its logits are
  // then row rows - 1's alone).
  bool oneRow = o.lastLogits || o.tokens == 1;
  int64_t rows = int64_t(ids.size());
  HostTensor rowsTensor{"rows", {1}, "i64", std::vector<uint8_t>(8)};
  std::memcpy(rowsTensor.bytes.data(), &rows, 8);
  std::vector<HostTensor *> args = {&idTensor, &posTensor};
  if (o.lastLogits && o.tokens > 1)
    args.push_back(&rowsTensor);
  for (HostTensor &w : weights)
    args.push_back(&w);
  for (HostTensor &c : caches)
    args.push_back(&c);
  args.push_back(&cos);
  args.push_back(&sin);
  std::vector<std::vector<uint8_t>> results;
  Program &program = decode ? decodeProgram : prefillProgram;
  if (!program.call(args, {{1}, {oneRow ? 1 : o.tokens, o.vocab}}, {4, 4},
                    results, error))
    return false;
  logits.resize(o.vocab);
  size_t row = oneRow ? 0 : ids.size() - 1;
  std::memcpy(logits.data(), results[1].data() + row * o.vocab * sizeof(float),
              o.vocab * sizeof(float));
  if (best)
    std::memcpy(best, results[0].data(), 4);
  return true;
}

uint64_t Session::weightBytes() const {
  uint64_t n = 0;
  for (const HostTensor &w : weights)
    n += w.bytes.size();
  return n;
}

uint64_t Session::cacheBytes() const {
  uint64_t n = 0;
  for (const HostTensor &c : caches)
    n += c.bytes.size();
  return n;
}

std::vector<std::string>
cachet::generate::weightNames(const modelgen::Options &options) {
  std::vector<std::string> names = {"tok_embd"};
  for (int64_t l = 0; l < options.layers; ++l)
    for (const char *w : {"attn_norm", "wq", "wk", "wv", "wo", "ffn_norm",
                          "w_gate", "w_up", "w_down"})
      names.push_back("l" + std::to_string(l) + "_" + w);
  names.push_back("output_norm");
  names.push_back("lm_head");
  return names;
}

void cachet::generate::ropeTables(int64_t maxSeq, int64_t headDim, double theta,
                                  std::vector<uint8_t> &cosBytes,
                                  std::vector<uint8_t> &sinBytes) {
  cosBytes.resize(maxSeq * headDim * 4);
  sinBytes.resize(maxSeq * headDim * 4);
  for (int64_t p = 0; p < maxSeq; ++p)
    for (int64_t d = 0; d < headDim; ++d) {
      int64_t i = d % (headDim / 2);
      double angle = p * std::pow(theta, -2.0 * i / double(headDim));
      float c = float(std::cos(angle)), s = float(std::sin(angle));
      std::memcpy(&cosBytes[(p * headDim + d) * 4], &c, 4);
      std::memcpy(&sinBytes[(p * headDim + d) * 4], &s, 4);
    }
}

int32_t cachet::generate::argmax(const std::vector<float> &logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best])
      best = int32_t(i);
  return best;
}
