//===- Runner.cpp - run, check and time a cachet artifact ----------------===//

#include "Runner.h"

#include "Json.h"

#include "cachet/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iomanip>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

using namespace cachet;

namespace {

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1F,
           mantissa = h & 0x3FF, bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Round to nearest even; finite inputs in the f16 range (what we generate).
uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent <= 0) {
    if (exponent < -10)
      return static_cast<uint16_t>(sign);
    mantissa |= 0x800000;
    int shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  if (exponent >= 31)
    return static_cast<uint16_t>(sign | 0x7C00);
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// Bytes of one element of the manifest type `element`, 0 if unknown.
size_t elementBytes(const std::string &element) {
  if (element == "f32" || element == "i32")
    return 4;
  if (element == "f16" || element == "bf16" || element == "i16")
    return 2;
  if (element == "i8")
    return 1;
  if (element == "f64" || element == "i64")
    return 8;
  return 0;
}

/// Reads element `i` of `data` as a double.
double readElement(const std::string &element, const uint8_t *data, size_t i) {
  if (element == "f32") {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  uint16_t h;
  if (element == "f16" || element == "bf16") {
    std::memcpy(&h, data + 2 * i, 2);
    return element == "f16" ? halfToFloat(h) : bf16ToFloat(h);
  }
  if (element == "i8")
    return static_cast<int8_t>(data[i]);
  if (element == "u8")
    return data[i];
  if (element == "i32") {
    int32_t v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  if (element == "f64") {
    double v;
    std::memcpy(&v, data + 8 * i, 8);
    return v;
  }
  if (element == "i64") {
    int64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    return static_cast<double>(v);
  }
  if (element == "i16") {
    int16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return v;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

struct Tensor {
  std::vector<int64_t> shape;
  std::string element;
  std::string blockFormat;
  /// Results: the index of the argument it aliases, or -1.
  int aliases = -1;
  /// Arguments marked cachet.weight.
  bool weight = false;
  /// Integer results: the float result whose last rows this one is the
  /// argmax of (cachet.argmax_of), or -1.
  int argmaxOf = -1;
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const { return count() * elementBytes(element); }
  std::string str() const {
    std::ostringstream os;
    os << "tensor<";
    for (int64_t d : shape)
      os << d << "x";
    os << element << ">";
    if (blockFormat == "i4")
      os << " (i4 values, two per byte)";
    else if (!blockFormat.empty())
      os << " (" << blockFormat << " blocks)";
    return os.str();
  }
};

struct Manifest {
  std::string entry, target, chip, profile;
  std::vector<Tensor> arguments, results;
  std::string gpu, gpuNoRewrite, reference;
};

bool readTensor(const json::Value &value, Tensor &tensor, std::string &error) {
  const json::Value *shape = value.get("shape");
  const json::Value *element = value.get("element");
  if (!shape || !element || shape->kind != json::Value::Kind::Array) {
    error = "manifest: a tensor needs \"shape\" and \"element\"";
    return false;
  }
  for (const json::Value &d : shape->array)
    tensor.shape.push_back(static_cast<int64_t>(d.number));
  tensor.element = element->string;
  if (const json::Value *format = value.get("block_format"))
    tensor.blockFormat = format->string;
  if (const json::Value *aliases = value.get("aliases"))
    tensor.aliases = static_cast<int>(aliases->number);
  if (const json::Value *weight = value.get("weight"))
    tensor.weight = weight->kind == json::Value::Kind::Bool && weight->boolean;
  if (const json::Value *of = value.get("argmax_of"))
    tensor.argmaxOf = static_cast<int>(of->number);
  if (!elementBytes(tensor.element)) {
    error = "manifest: unsupported element type '" + tensor.element + "'";
    return false;
  }
  return true;
}

bool readManifest(const std::string &folder, Manifest &manifest,
                  std::string &error) {
  std::ifstream file(folder + "/manifest.json");
  if (!file) {
    error = "cannot read " + folder + "/manifest.json";
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  json::Value root;
  if (!json::parse(text.str(), root, error)) {
    error = folder + "/manifest.json: " + error;
    return false;
  }
  auto str = [&](const char *key) {
    const json::Value *v = root.get(key);
    return v ? v->string : std::string();
  };
  manifest.entry = str("entry");
  manifest.target = str("target");
  manifest.chip = str("chip");
  manifest.profile = str("profile");
  for (const char *key : {"arguments", "results"}) {
    const json::Value *list = root.get(key);
    if (!list) {
      error = "manifest: missing \"" + std::string(key) + "\"";
      return false;
    }
    for (const json::Value &item : list->array) {
      Tensor tensor;
      if (!readTensor(item, tensor, error))
        return false;
      (std::string(key) == "arguments" ? manifest.arguments : manifest.results)
          .push_back(tensor);
    }
  }
  const json::Value *variants = root.get("variants");
  if (!variants) {
    error = "manifest: missing \"variants\"";
    return false;
  }
  auto variant = [&](const char *key) {
    const json::Value *v = variants->get(key);
    return v ? folder + "/" + v->string : std::string();
  };
  manifest.gpu = variant("gpu");
  manifest.gpuNoRewrite = variant("gpu-norewrite");
  manifest.reference = variant("reference");
  return true;
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Bytes per block, f16 fields (offsets) and values per block of the ggml
/// formats.
struct BlockInfo {
  size_t bytes;
  std::vector<size_t> halfFields;
  /// The largest |quant| a scale multiplies (iq4_nl: its code book's; the
  /// k-quants: quant times sub-block scale).
  float maxQuant;
  size_t values = 32;
};

bool blockInfo(const std::string &format, BlockInfo &info) {
  static const std::pair<const char *, BlockInfo> table[] = {
      {"q8_0", {34, {0}, 128}},          {"q4_0", {18, {0}, 8}},
      {"q4_1", {20, {0, 2}, 15}},        {"q5_0", {22, {0}, 16}},
      {"q5_1", {24, {0, 2}, 31}},        {"iq4_nl", {18, {0}, 127}},
      {"q2_K", {84, {80, 82}, 45, 256}}, {"q3_K", {110, {108}, 128, 256}},
      {"q4_K", {144, {0, 2}, 945, 256}}, {"q5_K", {176, {0, 2}, 1953, 256}},
      {"q6_K", {210, {208}, 4096, 256}}, {"tq2_0", {66, {64}, 2, 256}},
      {"tq1_0", {54, {52}, 1, 256}},
  };
  for (const auto &[name, entry] : table)
    if (format == name) {
      info = entry;
      return true;
    }
  return false;
}

/// Fills `data` with random values valid for `tensor`: finite floats in
/// [-1, 1], ggml blocks whose d and m are small finite f16 and whose quants
/// are random, i8 (and i4 pairs) of any value, wider integers in [0, 4).
bool fillRandom(const Tensor &tensor, std::vector<uint8_t> &data,
                std::mt19937 &rng, std::string &error) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  data.resize(tensor.bytes());
  if (tensor.blockFormat == "i4") {
    // i4 values two per byte (split q4_0 weights): every byte is valid.
    for (uint8_t &b : data)
      b = static_cast<uint8_t>(byte(rng));
    return true;
  }
  if (!tensor.blockFormat.empty()) {
    BlockInfo info;
    if (!blockInfo(tensor.blockFormat, info)) {
      error = "unknown block format '" + tensor.blockFormat + "'";
      return false;
    }
    for (uint8_t &b : data)
      b = static_cast<uint8_t>(byte(rng));
    // Weights (cachet.weight, rank 2 or more) decode to about +-1/sqrt(fan-in)
    // like float weights (below), so that activations keep their scale
    // through a chain of layers; other blocks (a KV cache) to about +-8.
    float scale = 1.0f / 16.0f;
    if (tensor.weight && tensor.shape.size() >= 2 && tensor.shape.back() > 0)
      scale = 1.0f / (info.maxQuant *
                      std::sqrt(static_cast<float>(tensor.shape.back() /
                                                   info.bytes * info.values)));
    for (size_t block = 0; block + info.bytes <= data.size();
         block += info.bytes)
      for (size_t field : info.halfFields) {
        uint16_t h = floatToHalf(unit(rng) * scale);
        std::memcpy(&data[block + field], &h, 2);
      }
    return true;
  }
  int64_t n = tensor.count();
  // Weight matrices (cachet.weight, rank 2 or more) are drawn like a layer's
  // initialization, in +-1/sqrt(fan-in) with the innermost size as fan-in
  // ([out][in]), so that activations keep their scale through a layer as in
  // a trained model.
  float scale = 1.0f;
  if (tensor.weight && tensor.shape.size() >= 2 && tensor.shape.back() > 0)
    scale = 1.0f / std::sqrt(static_cast<float>(tensor.shape.back()));
  for (int64_t i = 0; i < n; ++i) {
    float v = unit(rng) * scale;
    if (tensor.element == "f32") {
      std::memcpy(&data[4 * i], &v, 4);
    } else if (tensor.element == "f16" || tensor.element == "bf16") {
      uint16_t h = tensor.element == "f16" ? floatToHalf(v) : floatToBf16(v);
      std::memcpy(&data[2 * i], &h, 2);
    } else if (tensor.element == "i8") {
      data[i] = static_cast<uint8_t>(byte(rng));
    } else if (tensor.element == "i16" || tensor.element == "i32" ||
               tensor.element == "i64") {
      // Wider integers are indices (token ids, positions): small and
      // non-negative, so that any table of 4 or more rows takes them.
      int64_t v = byte(rng) % 4;
      std::memcpy(&data[i * elementBytes(tensor.element)], &v,
                  elementBytes(tensor.element));
    } else {
      error = "cannot make random " + tensor.element + " inputs";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Calling the C interface
//===----------------------------------------------------------------------===//

/// A ranked memref descriptor as the MLIR C interface lays it out:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
std::vector<int64_t> makeDescriptor(void *data, const Tensor &tensor) {
  size_t rank = tensor.shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  d[0] = reinterpret_cast<intptr_t>(data);
  d[1] = reinterpret_cast<intptr_t>(data);
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = tensor.shape[i];
    d[3 + rank + i] = stride;
    stride *= tensor.shape[i];
  }
  return d;
}

/// The artifact's packed entry, `_cachet_packed_<entry>(void **args)`: the
/// results' buffer, then one pointer per argument (see Artifact.h).
using Fn = void (*)(void **);

/// Returns false, with `error` and `failure` set, when an mgpu* call failed
/// since the last check (the mgpu* functions return no status).
bool mgpuSucceeded(const std::string &what, CachetStatus &failure,
                   std::string &error) {
  char message[1024];
  failure = cachetMgpuTakeError(message, sizeof(message));
  if (failure == CACHET_SUCCESS)
    return true;
  error = what + ": " + message;
  return false;
}

/// A loaded variant of the entry.
class Variant {
public:
  bool load(const std::string &path, const std::string &entry,
            std::string &error) {
    // Failures of earlier calls are not this variant's.
    cachetMgpuTakeError(nullptr, 0);
    // Loaded once: a second dlopen of the same file would only raise its
    // reference count, and the one dlclose of the destructor would leave it
    // loaded until exit, where its destructor unloads the kernels after
    // NVIDIA's Vulkan driver has torn itself down (exit 139 after
    // `--repeat`'s call after the timed ones: docs/BENCHMARKS.md, run 157).
    if (handle && fn)
      return true;
    if (handle) {
      error = path + " has no _cachet_packed_" + entry;
      return false;
    }
    // RTLD_LOCAL: the variants define the same symbols. Their constructors
    // load the kernels.
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error = "cannot load " + path + ": " + dlerror();
      return false;
    }
    if (!mgpuSucceeded("loading " + path, failure, error))
      return false;
    fn = reinterpret_cast<Fn>(
        dlsym(handle, ("_cachet_packed_" + entry).c_str()));
    if (!fn) {
      error = path + " has no _cachet_packed_" + entry;
      return false;
    }
    return true;
  }

  /// The kind of the GPU runtime's failure that made load() or call() fail
  /// (CACHET_SUCCESS: none, or another error).
  CachetStatus getFailure() const { return failure; }
  ~Variant() {
    if (handle)
      dlclose(handle);
  }

  /// Calls the entry on `inputs`, which it may update in place (arguments
  /// the entry writes); returns the results' bytes. A result that aliases an
  /// argument, or another result, is not freed: the caller owns `inputs`.
  bool call(const Manifest &manifest, std::vector<std::vector<uint8_t>> &inputs,
            std::vector<std::vector<uint8_t>> &results, std::string &error) {
    std::vector<std::vector<int64_t>> descriptors;
    for (size_t i = 0; i < inputs.size(); ++i)
      descriptors.push_back(
          makeDescriptor(inputs[i].data(), manifest.arguments[i]));
    size_t resultWords = 0;
    for (const Tensor &r : manifest.results)
      resultWords += 3 + 2 * r.shape.size();
    std::vector<int64_t> resultBuffer(resultWords);
    std::vector<void *> args;
    if (!manifest.results.empty())
      args.push_back(resultBuffer.data());
    for (auto &d : descriptors)
      args.push_back(d.data());
    fn(args.data());
    if (!mgpuSucceeded("calling @" + manifest.entry, failure, error))
      return false;
    // Buffers the caller owns, and those already freed.
    std::vector<const void *> owned;
    for (const std::vector<uint8_t> &input : inputs)
      owned.push_back(input.data());
    results.clear();
    size_t word = 0;
    for (const Tensor &r : manifest.results) {
      size_t rank = r.shape.size();
      auto *allocated = reinterpret_cast<void *>(resultBuffer[word]);
      auto *aligned = reinterpret_cast<uint8_t *>(resultBuffer[word + 1]);
      int64_t offset = resultBuffer[word + 2];
      int64_t expected = 1;
      for (size_t i = rank; i-- > 0;) {
        if (resultBuffer[word + 3 + rank + i] != expected && r.shape[i] != 1) {
          error = "a result is not contiguous";
          return false;
        }
        expected *= r.shape[i];
      }
      size_t size = r.bytes();
      const uint8_t *begin = aligned + offset * elementBytes(r.element);
      results.emplace_back(begin, begin + size);
      if (std::find(owned.begin(), owned.end(), allocated) == owned.end()) {
        // Recorded before the free: a freed pointer's value is indeterminate
        // (GCC's -Wuse-after-free).
        owned.push_back(allocated);
        std::free(allocated);
      }
      word += 3 + 2 * rank;
    }
    return true;
  }

private:
  void *handle = nullptr;
  Fn fn = nullptr;
  CachetStatus failure = CACHET_SUCCESS;
};

/// The exit code of a run the device cannot do (a kernel needs a feature it
/// lacks): 77, "skipped", as cachet-probe's without a device.
constexpr int exitSkipped = 77;

/// Reports the failure of `variant` and returns the exit code: skipped when
/// the device lacks what the kernels need, 2 otherwise.
int reportFailure(const Variant &variant, const std::string &error,
                  std::ostream &err) {
  if (variant.getFailure() == CACHET_ERROR_UNSUPPORTED) {
    err << "cachet-runner: skipped, unsupported on this device: " << error
        << "\n";
    return exitSkipped;
  }
  err << "cachet-runner: " << error << "\n";
  return 2;
}

/// Times `warmup` + `repeat` calls of each variant, interleaved (off, on,
/// off, on, ...), keeping the last `repeat` of each. Kernels: device time
/// from the first kernel's start to the last one's end; device: the whole
/// call on the device (timestamp marks on the runtime's queue right before
/// and after it; the call waits for its work before it returns).
bool timeInterleaved(const Manifest &manifest,
                     std::vector<std::vector<uint8_t>> &inputs,
                     Variant *const variants[2], int warmup, int repeat,
                     CachetRuntime runtime, VariantTimes times[2],
                     std::string &error) {
  CachetEvent begin = nullptr, end = nullptr;
  if (cachetEventCreate(runtime, &begin) != CACHET_SUCCESS ||
      cachetEventCreate(runtime, &end) != CACHET_SUCCESS) {
    error = cachetGetLastError();
    return false;
  }
  std::vector<std::vector<uint8_t>> scratch;
  bool ok = true;
  for (int i = 0; ok && i < warmup + repeat; ++i)
    for (int v = 0; ok && v < 2; ++v) {
      uint64_t ns = 0, kernelNs = 0, launches = 0;
      auto start = std::chrono::steady_clock::now();
      ok = cachetMgpuKernelSpanBegin() == CACHET_SUCCESS &&
           cachetEventRecord(runtime, begin) == CACHET_SUCCESS &&
           variants[v]->call(manifest, inputs, scratch, error) &&
           cachetEventRecord(runtime, end) == CACHET_SUCCESS &&
           cachetEventElapsedNs(runtime, begin, end, &ns) == CACHET_SUCCESS &&
           cachetMgpuKernelSpanNs(&kernelNs) == CACHET_SUCCESS &&
           cachetMgpuKernelSpanLaunches(&launches) == CACHET_SUCCESS;
      if (!ok) {
        if (error.empty())
          error = cachetGetLastError();
        break;
      }
      if (i < warmup)
        continue;
      times[v].wall.push_back(std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
      times[v].device.push_back(ns / 1e6);
      times[v].kernels.push_back(kernelNs / 1e6);
      times[v].launches = launches;
    }
  cachetEventDestroy(runtime, begin);
  cachetEventDestroy(runtime, end);
  return ok;
}

/// Tolerances of the check, by element type.
std::pair<double, double> tolerance(const std::string &element) {
  if (element == "f32")
    return {1e-4, 1e-4};
  if (element == "f16")
    return {2e-3, 1e-2};
  return {2e-2, 2e-2};
}

/// The float type the check's tolerance follows: the least precise one of
/// the result and of the float arguments (a result computed from bf16 data
/// is as precise as bf16, whatever type holds it).
std::string checkElement(const Manifest &manifest, const Tensor &result) {
  std::string element = result.element;
  auto rank = [](const std::string &e) {
    return e == "bf16" ? 0 : e == "f16" ? 1 : e == "f32" ? 2 : 3;
  };
  for (const Tensor &a : manifest.arguments)
    if (a.blockFormat.empty() && rank(a.element) < rank(element))
      element = a.element;
  return element;
}

/// Decodes ggml blocks of `format` (ggml's dequantize_row_* rules) into
/// `values`, and the size of one quantization step of each value's block
/// into `steps`. Returns false for an unknown format.
bool decodeBlocks(const std::string &format, const std::vector<uint8_t> &bytes,
                  std::vector<double> &values, std::vector<double> &steps) {
  static const int kIQ4NL[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};
  BlockInfo info;
  if (!blockInfo(format, info))
    return false;
  size_t blockBytes = info.bytes;
  auto half = [&](const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return static_cast<double>(halfToFloat(h));
  };
  for (size_t b = 0; b + blockBytes <= bytes.size(); b += blockBytes) {
    const uint8_t *block = bytes.data() + b;
    if (format == "q4_K" || format == "q5_K") {
      // d, dmin, 6-bit scales and mins per 32 in 12 bytes, (q5_K: a bit
      // plane,) nibbles.
      bool five = format == "q5_K";
      double d = half(block), dmin = half(block + 2);
      const uint8_t *sc = block + 4, *qh = block + 16,
                    *qs = block + (five ? 48 : 16);
      for (int j = 0; j < 8; ++j) {
        int scale =
            j < 4 ? sc[j] & 63 : (sc[j + 4] & 15) | (sc[j - 4] >> 6) << 4;
        int min = j < 4 ? sc[j + 4] & 63 : (sc[j + 4] >> 4) | (sc[j] >> 6) << 4;
        for (int l = 0; l < 32; ++l) {
          int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
          if (five)
            q |= (qh[l] >> j & 1) << 4;
          values.push_back(d * scale * q - dmin * min);
          steps.push_back(std::fabs(d * scale));
        }
      }
      continue;
    }
    if (format == "q3_K") {
      // High-bit plane, 2-bit quants, 6-bit scales per 16 (less 32), d last.
      double d = half(block + 108);
      const uint8_t *hm = block, *qs = block + 32, *sc = block + 96;
      for (int i = 0; i < 256; ++i) {
        int j = i / 16;
        int scale = ((j < 8 ? sc[j] & 15 : sc[j - 8] >> 4) |
                     ((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) -
                    32;
        int q = (qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
        int high = hm[i % 32] >> (i / 32) & 1;
        values.push_back(d * scale * (q - (high ? 0 : 4)));
        steps.push_back(std::fabs(d * scale));
      }
      continue;
    }
    if (format == "q2_K") {
      // 4-bit scales and mins per 16, 2-bit quants, d and dmin last.
      double d = half(block + 80), dmin = half(block + 82);
      const uint8_t *sc = block, *qs = block + 16;
      for (int i = 0; i < 256; ++i) {
        int q = (qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
        double scale = d * (sc[i / 16] & 15);
        values.push_back(scale * q - dmin * (sc[i / 16] >> 4));
        steps.push_back(std::fabs(scale));
      }
      continue;
    }
    if (format == "tq2_0" || format == "tq1_0") {
      // Ternary: (t - 1) * d; tq2_0's t in 2-bit fields, tq1_0's base-3
      // digits (five per byte of qs, four per byte of qh).
      bool two = format == "tq2_0";
      double d = half(block + (two ? 64 : 52));
      static const int pow3[5] = {1, 3, 9, 27, 81};
      for (int i = 0; i < 256; ++i) {
        int t;
        if (two) {
          t = (block[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
        } else {
          int byte = i < 160   ? block[i % 32]
                     : i < 240 ? block[32 + (i - 160) % 16]
                               : block[48 + (i - 240) % 4];
          int digit = i < 160   ? i / 32
                      : i < 240 ? (i - 160) / 16
                                : (i - 240) / 4;
          t = (static_cast<uint8_t>(byte * pow3[digit]) * 3) >> 8;
        }
        values.push_back((t - 1) * d);
        steps.push_back(std::fabs(d));
      }
      continue;
    }
    if (format == "q6_K") {
      // ql (low 4 bits), qh (high 2), int8 scales per 16, d last.
      double d = half(block + 208);
      const uint8_t *ql = block, *qh = block + 128;
      const auto *sc = reinterpret_cast<const int8_t *>(block + 192);
      for (int i = 0; i < 256; ++i) {
        int h = i / 128, t = i % 128 / 32, l = i % 32;
        int low = (ql[64 * h + l + 32 * (t % 2)] >> (4 * (t / 2))) & 15;
        int high = (qh[32 * h + l] >> (2 * t)) & 3;
        double scale = d * sc[8 * h + l / 16 + 2 * t];
        values.push_back(scale * ((low | high << 4) - 32));
        steps.push_back(std::fabs(scale));
      }
      continue;
    }
    double d = half(block), m = 0;
    double q[32];
    if (format == "q8_0") {
      for (int j = 0; j < 32; ++j)
        q[j] = static_cast<int8_t>(block[2 + j]);
    } else if (format == "q4_0" || format == "q4_1" || format == "iq4_nl") {
      const uint8_t *qs = block + (format == "q4_1" ? 4 : 2);
      if (format == "q4_1")
        m = half(block + 2);
      for (int j = 0; j < 16; ++j) {
        int lo = qs[j] & 0xF, hi = qs[j] >> 4;
        if (format == "iq4_nl") {
          q[j] = kIQ4NL[lo];
          q[j + 16] = kIQ4NL[hi];
        } else {
          int bias = format == "q4_0" ? 8 : 0;
          q[j] = lo - bias;
          q[j + 16] = hi - bias;
        }
      }
    } else {
      bool q51 = format == "q5_1";
      if (q51)
        m = half(block + 2);
      uint32_t qh;
      std::memcpy(&qh, block + (q51 ? 4 : 2), 4);
      const uint8_t *qs = block + (q51 ? 8 : 6);
      int bias = q51 ? 0 : 16;
      for (int j = 0; j < 16; ++j) {
        int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
        q[j] = ((qs[j] & 0xF) | h0) - bias;
        q[j + 16] = ((qs[j] >> 4) | h1) - bias;
      }
    }
    // iq4_nl's levels are up to 24 apart.
    double step = std::fabs(d) * (format == "iq4_nl" ? 24 : 1);
    for (int j = 0; j < 32; ++j) {
      values.push_back(q[j] * d + m);
      steps.push_back(step);
    }
  }
  return true;
}

/// Accepts an argmax index that differs from the reference's when the
/// reference's values tie there: the value at the other index is within the
/// values' tolerance of the best one.
class ArgmaxTies {
public:
  ArgmaxTies() = default;
  ArgmaxTies(const Manifest &manifest, const Tensor &values,
             const std::vector<uint8_t> &refValues, int64_t count)
      : element(values.element), ref(&refValues), count(count) {
    row = values.shape.empty() ? 1 : values.shape.back();
    rows = row ? values.count() / row : 0;
    std::tie(atol, rtol) = tolerance(checkElement(manifest, values));
    double squares = 0;
    for (int64_t i = 0; i < values.count(); ++i) {
      double v = readElement(element, ref->data(), i);
      if (std::isfinite(v))
        squares += v * v;
    }
    rms = values.count() ? std::sqrt(squares / values.count()) : 0;
  }
  explicit operator bool() const { return ref != nullptr; }

  /// Returns true if index `other` ties the reference's index `best` in the
  /// row element `i` is the argmax of.
  bool tie(int64_t i, double best, double other) const {
    int64_t r = rows - count + i;
    if (!ref || r < 0 || best < 0 || other < 0 || best >= row || other >= row)
      return false;
    double top = readElement(element, ref->data(), r * row + int64_t(best));
    double there = readElement(element, ref->data(), r * row + int64_t(other));
    return top - there <= atol + rtol * std::max(std::fabs(top), rms);
  }

private:
  std::string element;
  const std::vector<uint8_t> *ref = nullptr;
  int64_t count = 0, row = 0, rows = 0;
  double atol = 0, rtol = 0, rms = 0;
};

} // namespace

Spread cachet::spread(std::vector<double> values) {
  Spread s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

namespace {

/// Makes random inputs from `seed` for every argument of `manifest`.
bool randomInputs(const Manifest &manifest, unsigned seed,
                  std::vector<std::vector<uint8_t>> &inputs,
                  std::string &error) {
  std::mt19937 rng(seed);
  inputs.assign(manifest.arguments.size(), {});
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!fillRandom(manifest.arguments[i], inputs[i], rng, error)) {
      error = "argument " + std::to_string(i) + ": " + error;
      return false;
    }
  return true;
}

/// Points the mgpu* functions at the artifact's backend and returns the
/// runtime they use.
bool openRuntime(const Manifest &manifest, CachetRuntime &runtime,
                 CachetDeviceInfo &info, std::string &error) {
  const char *backend = manifest.target == "nvvm"    ? "cuda"
                        : manifest.target == "rocdl" ? "hip"
                                                     : "vulkan";
  if (cachetMgpuSetBackend(backend) != CACHET_SUCCESS) {
    error = std::string("the GPU runtime of this process already uses "
                        "another backend than ") +
            backend;
    return false;
  }
  if (cachetMgpuGetRuntime(&runtime) != CACHET_SUCCESS ||
      cachetGetDeviceInfo(runtime, &info) != CACHET_SUCCESS) {
    error = std::string("no device: ") + cachetGetLastError();
    return false;
  }
  return true;
}

} // namespace

bool cachet::benchArtifact(const std::string &artifact, unsigned seed,
                           int warmup, int repeat, BenchResult &result,
                           std::string &error) {
  Manifest manifest;
  std::vector<std::vector<uint8_t>> inputs;
  CachetRuntime runtime = nullptr;
  CachetDeviceInfo info;
  if (!readManifest(artifact, manifest, error) ||
      !randomInputs(manifest, seed, inputs, error) ||
      !openRuntime(manifest, runtime, info, error))
    return false;
  result.device = info.name;
  result.backend = info.backend;
  result.entry = manifest.entry;
  result.target = manifest.target;
  result.profile = manifest.profile;
  Variant off, on;
  std::vector<std::vector<uint8_t>> offResults, onResults, offArgs = inputs,
                                                           onArgs = inputs;
  if (!off.load(manifest.gpuNoRewrite, manifest.entry, error) ||
      !on.load(manifest.gpu, manifest.entry, error) ||
      !off.call(manifest, offArgs, offResults, error) ||
      !on.call(manifest, onArgs, onResults, error))
    return false;
  result.identical = offResults == onResults && offArgs == onArgs;
  Variant *variants[2] = {&off, &on};
  return timeInterleaved(manifest, inputs, variants, warmup, repeat, runtime,
                         result.times, error);
}

namespace {

/// The bytes of each argument or each result of a call.
using Buffers = std::vector<std::vector<uint8_t>>;

/// What the variants give back and runArtifact compares: the results, then
/// the arguments that a result aliases (a cache updated in place and
/// returned): the caller's buffer itself must hold the update. An argument
/// written but not returned holds whatever bufferization left there, which
/// tensor semantics do not define, so it is not compared.
struct Output {
  std::string label;
  const Tensor *tensor;
  bool isArgument;
  size_t index;

  /// This output's bytes among a call's `results` and (updated) `args`.
  const std::vector<uint8_t> &bytesOf(const Buffers &results,
                                      const Buffers &args) const {
    return isArgument ? args[index] : results[index];
  }
};

/// The outputs of the entry of `manifest`, results first.
std::vector<Output> entryOutputs(const Manifest &manifest) {
  std::vector<Output> outputs;
  for (size_t r = 0; r < manifest.results.size(); ++r)
    outputs.push_back(
        {"result " + std::to_string(r), &manifest.results[r], false, r});
  for (size_t i = 0; i < manifest.arguments.size(); ++i)
    if (std::any_of(
            manifest.results.begin(), manifest.results.end(),
            [&](const Tensor &r) { return r.aliases == static_cast<int>(i); }))
      outputs.push_back({"argument " + std::to_string(i) + " (updated)",
                         &manifest.arguments[i], true, i});
  return outputs;
}

/// The check of one output against the CPU reference's: elementwise,
/// against the larger of |ref| and the reference's root mean square (a sum
/// whose terms cancel is as precise as its terms).
class OutputCheck {
public:
  /// Prepares the check of `tensor`, `gpuBytes` on the GPU and `refBytes`
  /// on the CPU; `refResults` are all of the reference's results (an
  /// argmax is checked against the values it is the argmax of).
  OutputCheck(const Manifest &manifest, const Tensor &tensor, bool isArgument,
              const std::vector<uint8_t> &gpuBytes,
              const std::vector<uint8_t> &refBytes, const Buffers &refResults);
  /// Compares the values; returns false when some are outside what the
  /// check accepts.
  bool compare();
  /// Prints the check's line for the output `label`.
  void print(const std::string &label, std::ostream &out) const;

private:
  /// Value `i` of the reference.
  double refAt(int64_t i) const {
    return blocks ? refValues[i] : readElement(readAs, refBytes.data(), i);
  }
  /// Value `i` of the GPU.
  double gpuAt(int64_t i) const {
    return blocks ? gpuValues[i] : readElement(readAs, gpuBytes.data(), i);
  }

  const Tensor &t;
  const std::vector<uint8_t> &gpuBytes, &refBytes;
  std::string element;
  double atol = 0, rtol = 0;
  /// ggml blocks (a quantized cache) are decoded and compared as values:
  /// a value computed from floats on another device may sit on the other
  /// side of a rounding boundary, one quantization step away.
  std::vector<double> gpuValues, refValues, refSteps, gpuSteps;
  bool blocks = false;
  int64_t count = 0;
  std::string readAs;
  double rms = 0;
  /// Integers and ggml blocks are compared exactly, except that i8 values
  /// (a quantized cache computed from floats, whose sums run in another
  /// order on the GPU) may be one step apart in 1% of them.
  bool integer = false, quantized = false;
  /// An argmax (cachet.argmax_of): another index is as good when the
  /// reference's value there ties its best one within that result's
  /// tolerance; element i is the argmax of the i-th of the last rows.
  ArgmaxTies ties;
  /// int8 values quantized from bf16 data (q8_0's 255 levels are as fine
  /// as bf16's 8-bit mantissa): a bf16 rounding moves x / d by up to
  /// |q| 2^-8, about half a level, and d as much; any value may be one
  /// step apart and 1% two steps.
  bool coarseSource = false;
  double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, oneStep = 0, twoSteps = 0, tied = 0;
  /// How many values differ at all, and the first of the largest
  /// difference (printed on a second line, with its block's bytes).
  int64_t differ = 0, worst = -1;
};

OutputCheck::OutputCheck(const Manifest &manifest, const Tensor &tensor,
                         bool isArgument, const std::vector<uint8_t> &gpuBytes,
                         const std::vector<uint8_t> &refBytes,
                         const Buffers &refResults)
    : t(tensor), gpuBytes(gpuBytes), refBytes(refBytes) {
  element = checkElement(manifest, t);
  std::tie(atol, rtol) = tolerance(element);
  blocks = !t.blockFormat.empty() &&
           decodeBlocks(t.blockFormat, gpuBytes, gpuValues, gpuSteps) &&
           decodeBlocks(t.blockFormat, refBytes, refValues, refSteps);
  double squares = 0;
  count = blocks                  ? int64_t(refValues.size())
          : t.blockFormat.empty() ? t.count()
                                  : int64_t(refBytes.size());
  readAs = t.blockFormat.empty() ? t.element : "u8";
  for (int64_t i = 0; i < count; ++i) {
    double b = refAt(i);
    if (std::isfinite(b))
      squares += b * b;
  }
  rms = count ? std::sqrt(squares / count) : 0;
  integer = !blocks && (!t.blockFormat.empty() || readAs[0] == 'i');
  quantized = t.blockFormat.empty() && readAs == "i8";
  if (integer && !isArgument && t.argmaxOf >= 0 &&
      t.argmaxOf < static_cast<int>(manifest.results.size()))
    ties = ArgmaxTies(manifest, manifest.results[t.argmaxOf],
                      refResults[t.argmaxOf], count);
  coarseSource = quantized && element == "bf16";
}

bool OutputCheck::compare() {
  for (int64_t i = 0; i < count; ++i) {
    double a = gpuAt(i);
    double b = refAt(i);
    double diff = std::fabs(a - b);
    double within = atol + rtol * std::max(std::fabs(b), rms);
    if (quantized && diff == 1)
      ++oneStep;
    else if (coarseSource && diff == 2)
      ++twoSteps;
    else if (blocks && diff > within &&
             diff <= std::max(refSteps[i], gpuSteps[i]) * 1.001 + within)
      ++oneStep;
    else if (diff != 0 && ties.tie(i, b, a))
      ++tied;
    else if (std::isnan(a) != std::isnan(b) ||
             (integer ? diff != 0
                      : diff > atol + rtol * std::max(std::fabs(b), rms)))
      ++bad;
    // A NaN on one side only is reported as a NaN error (std::max would
    // drop it and print 0); NaN on both sides is equal.
    if (std::isnan(a) != std::isnan(b))
      maxAbs = maxRel = std::numeric_limits<double>::quiet_NaN();
    if (diff != 0 && !(std::isnan(a) && std::isnan(b)))
      ++differ;
    if (std::isnan(diff) || std::isnan(maxAbs))
      continue;
    if (diff > maxAbs)
      worst = i;
    maxAbs = std::max(maxAbs, diff);
    if (b != 0)
      maxRel = std::max(maxRel, diff / std::fabs(b));
  }
  if (coarseSource && twoSteps * 100 > count)
    bad += twoSteps;
  else if (!coarseSource && oneStep * 100 > count)
    bad += oneStep;
  return bad == 0;
}

void OutputCheck::print(const std::string &label, std::ostream &out) const {
  out << "check " << label << " vs CPU reference: max abs error "
      << std::scientific << std::setprecision(3) << maxAbs << ", max rel error "
      << maxRel << " (";
  if (coarseSource)
    out << "i8 from bf16: equal, one step apart, or two steps apart in at "
           "most 1%; "
        << oneStep << " one step, " << twoSteps << " two steps apart";
  else if (quantized)
    out << "i8: equal, or one step apart in at most 1%; " << oneStep
        << " one step apart";
  else if (blocks)
    out << t.blockFormat << " decoded: " << element << " tolerance " << atol
        << " + " << rtol << " x max(|ref|, rms ref " << rms
        << "), or one quantization step apart in at most 1%; " << oneStep
        << " one step apart";
  else if (ties)
    out << t.element << ": exact, or a tie within the tolerance of result "
        << t.argmaxOf << "; " << tied << " tied";
  else if (integer)
    out << (t.blockFormat.empty() ? t.element : t.blockFormat)
        << ": byte-exact";
  else
    out << element << " tolerance " << atol << " + " << rtol
        << " x max(|ref|, rms ref " << rms << ")";
  out << "): " << std::defaultfloat
      << (bad ? "FAIL (" + std::to_string(bad) + " of " +
                    std::to_string(count) + " outside)"
              : std::string("PASS"))
      << "\n";
  if (worst < 0)
    return;
  // Where the largest difference is: its index in the flat output, and for
  // ggml blocks the block's bytes on both sides (scale fields first).
  out << "  " << differ << " of " << count
      << " values differ; the largest at value " << worst << ": gpu "
      << std::setprecision(9) << gpuAt(worst) << ", ref " << refAt(worst);
  BlockInfo info;
  if (blocks && blockInfo(t.blockFormat, info)) {
    size_t first = size_t(worst) / info.values * info.bytes;
    auto hex = [&](const std::vector<uint8_t> &bytes) {
      std::ostringstream s;
      for (size_t k = first; k < first + info.bytes && k < bytes.size(); ++k)
        s << std::hex << std::setw(2) << std::setfill('0') << int(bytes[k]);
      return s.str();
    };
    out << "; block " << worst / int64_t(info.values) << " gpu "
        << hex(gpuBytes) << ", ref " << hex(refBytes);
  }
  out << std::defaultfloat << "\n";
}

/// One run of runArtifact, a member function per step. A step returns 0 to
/// go on, else the exit code the run stops with.
class ArtifactRun {
public:
  ArtifactRun(const RunOptions &options, std::ostream &out, std::ostream &err)
      : options(options), out(out), err(err) {}

  /// Reads the artifact's manifest and names its entry.
  int loadArtifact();
  /// Reads the input files, or makes random inputs, and lists them.
  int prepareInputs();
  /// Points the mgpu* functions at the artifact's backend and names the
  /// device.
  int openDevice();
  /// Calls the GPU variant (rewrites on) and lists its results.
  int runGpu();
  /// With `check`: compares the outputs with the CPU reference's.
  int checkReference();
  /// With `compareRewrites`: compares the outputs with rewrites off and on.
  int compareRewrites();
  /// With `repeat`: times the GPU variants, rewrites off and on.
  int timeVariants();
  /// With `repeat`: one more call after the timed ones, whose results must
  /// be the first call's bytes (state a kernel keeps across calls, such as
  /// counters in a module global, must be back where it started).
  int callAgain();
  /// 1 when a check or comparison failed, else 0.
  int getStatus() const { return status; }

private:
  /// Loads the variant at `path` into `variant` and calls it on `args`, a
  /// copy of the inputs (the entry may update arguments in place), giving
  /// `results`; false with `error` set where either fails.
  bool callVariant(Variant &variant, const std::string &path, Buffers &args,
                   Buffers &results);

  const RunOptions &options;
  std::ostream &out, &err;
  std::string error;
  Manifest manifest;
  Buffers inputs;
  CachetRuntime runtime = nullptr;
  Variant gpu, gpuNoRewrite, reference;
  /// The arguments and results of the GPU variant (rewrites on).
  Buffers gpuArgs, gpuResults;
  int status = 0;
};

bool ArtifactRun::callVariant(Variant &variant, const std::string &path,
                              Buffers &args, Buffers &results) {
  args = inputs;
  return variant.load(path, manifest.entry, error) &&
         variant.call(manifest, args, results, error);
}

int ArtifactRun::loadArtifact() {
  if (!readManifest(options.artifact, manifest, error)) {
    err << "cachet-runner: " << error << "\n";
    return 2;
  }
  out << "entry @" << manifest.entry << " (target " << manifest.target
      << (manifest.chip.empty() ? "" : " " + manifest.chip) << ", profile "
      << (manifest.profile.empty() ? "none" : manifest.profile) << ")\n";
  return 0;
}

int ArtifactRun::prepareInputs() {
  inputs.assign(manifest.arguments.size(), {});
  if (!options.inputFiles.empty()) {
    if (options.inputFiles.size() != inputs.size()) {
      err << "cachet-runner: @" << manifest.entry << " takes " << inputs.size()
          << " arguments, " << options.inputFiles.size()
          << " input files given\n";
      return 2;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::ifstream file(options.inputFiles[i], std::ios::binary);
      inputs[i].assign(std::istreambuf_iterator<char>(file), {});
      if (!file || inputs[i].size() != manifest.arguments[i].bytes()) {
        err << "cachet-runner: " << options.inputFiles[i] << ": expected "
            << manifest.arguments[i].bytes() << " bytes for argument " << i
            << " (" << manifest.arguments[i].str() << "), read "
            << inputs[i].size() << "\n";
        return 2;
      }
    }
    out << "inputs: files\n";
  } else {
    if (options.inputs.rfind("random:", 0) != 0) {
      err << "cachet-runner: --inputs takes random:SEED or files\n";
      return 2;
    }
    if (!randomInputs(manifest,
                      std::strtoul(options.inputs.c_str() + 7, nullptr, 10),
                      inputs, error)) {
      err << "cachet-runner: " << error << "\n";
      return 2;
    }
    out << "inputs: " << options.inputs << "\n";
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    out << "  arg " << i << ": " << manifest.arguments[i].str() << "\n";
  return 0;
}

int ArtifactRun::openDevice() {
  // The artifact's kernels run on its target's backend; the mgpu* functions
  // of libcachet_runtime are told before the first of them runs.
  CachetDeviceInfo info;
  if (!openRuntime(manifest, runtime, info, error)) {
    err << "cachet-runner: " << error << "\n";
    return 2;
  }
  out << "device: " << info.name << " (" << info.backend << ")\n";
  return 0;
}

int ArtifactRun::runGpu() {
  if (!callVariant(gpu, manifest.gpu, gpuArgs, gpuResults))
    return reportFailure(gpu, error, err);
  for (size_t r = 0; r < gpuResults.size(); ++r) {
    const Tensor &t = manifest.results[r];
    out << "result " << r << ": " << t.str() << "\n";
    if (options.printResults) {
      out << "  values:" << std::setprecision(9);
      for (int64_t i = 0; i < t.count(); ++i)
        out << " " << readElement(t.element, gpuResults[r].data(), i);
      out << std::setprecision(6) << "\n";
    }
  }
  return 0;
}

int ArtifactRun::checkReference() {
  if (!options.check)
    return 0;
  Buffers refArgs, refResults;
  if (!callVariant(reference, manifest.reference, refArgs, refResults)) {
    err << "cachet-runner: reference: " << error << "\n";
    return 2;
  }
  for (const Output &o : entryOutputs(manifest)) {
    OutputCheck check(manifest, *o.tensor, o.isArgument,
                      o.bytesOf(gpuResults, gpuArgs),
                      o.bytesOf(refResults, refArgs), refResults);
    if (!check.compare())
      status = 1;
    check.print(o.label, out);
  }
  return 0;
}

int ArtifactRun::compareRewrites() {
  if (!options.compareRewrites)
    return 0;
  Buffers offArgs, offResults;
  if (!callVariant(gpuNoRewrite, manifest.gpuNoRewrite, offArgs, offResults))
    return reportFailure(gpuNoRewrite, "rewrites off: " + error, err);
  for (const Output &o : entryOutputs(manifest)) {
    const std::vector<uint8_t> &onBytes = o.bytesOf(gpuResults, gpuArgs);
    bool same = o.bytesOf(offResults, offArgs) == onBytes;
    out << "rewrites off vs on, " << o.label << ": "
        << (same ? "byte-identical" : "DIFFERENT") << " (" << onBytes.size()
        << " bytes)\n";
    if (!same)
      status = 1;
  }
  return 0;
}

int ArtifactRun::timeVariants() {
  if (options.repeat <= 0)
    return 0;
  if (!options.compareRewrites &&
      !gpuNoRewrite.load(manifest.gpuNoRewrite, manifest.entry, error))
    return reportFailure(gpuNoRewrite, error, err);
  VariantTimes times[2];
  Variant *variants[2] = {&gpuNoRewrite, &gpu};
  if (!timeInterleaved(manifest, inputs, variants, 0, options.repeat, runtime,
                       times, error)) {
    err << "cachet-runner: " << error << "\n";
    return 2;
  }
  auto report = [&](const std::vector<double> &t) {
    Spread s = spread(t);
    out << " " << std::fixed << std::setprecision(3) << s.median << " ["
        << s.min << ", " << s.max << "]" << std::defaultfloat;
  };
  out << "timing, " << options.repeat
      << " interleaved calls of each (ms: median [min, max]; kernels = "
         "device time from the first kernel's start to the last one's end; "
         "device = the whole call on the device, uploads included):\n";
  for (int v = 0; v < 2; ++v) {
    out << (v ? "  rewrites on : kernels" : "  rewrites off: kernels");
    report(times[v].kernels);
    out << ", device";
    report(times[v].device);
    out << ", wall";
    report(times[v].wall);
    out << ", " << times[v].launches << " launches\n";
  }
  double on = spread(times[1].kernels).median;
  if (on > 0)
    out << "  speedup (off / on, kernel medians): " << std::fixed
        << std::setprecision(3) << spread(times[0].kernels).median / on
        << std::defaultfloat << "\n";
  return 0;
}

int ArtifactRun::callAgain() {
  if (options.repeat <= 0)
    return 0;
  Buffers args, results;
  if (!callVariant(gpu, manifest.gpu, args, results))
    return reportFailure(gpu, "the call after the timed ones: " + error, err);
  for (const Output &o : entryOutputs(manifest)) {
    const std::vector<uint8_t> &first = o.bytesOf(gpuResults, gpuArgs);
    bool same = o.bytesOf(results, args) == first;
    out << "the call after the timed ones, " << o.label << ": "
        << (same ? "byte-identical to the first" : "DIFFERENT from the first")
        << " (" << first.size() << " bytes)\n";
    if (!same)
      status = 1;
  }
  return 0;
}

} // namespace

int cachet::runArtifact(const RunOptions &options, std::ostream &out,
                        std::ostream &err) {
  ArtifactRun run(options, out, err);
  for (int (ArtifactRun::*step)() :
       {&ArtifactRun::loadArtifact, &ArtifactRun::prepareInputs,
        &ArtifactRun::openDevice, &ArtifactRun::runGpu,
        &ArtifactRun::checkReference, &ArtifactRun::compareRewrites,
        &ArtifactRun::timeVariants, &ArtifactRun::callAgain})
    if (int stop = (run.*step)())
      return stop;
  return run.getStatus();
}
