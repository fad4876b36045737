//===- Generate.cpp - a GGUF llama model run step by step ----------------===//

#include "cachet/Generate/Generate.h"
#include "cachet/ModelGen/Blocks.h"
#include "cachet/ModelGen/Random.h"
#include "cachet/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

using namespace cachet;
using namespace cachet::generate;

namespace {

/// Seconds since `start`.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The rows of `tensor` (ggml's ne[1] rows of ne[0] values) as floats.
std::vector<float> readFloats(const gguf::File &file,
                              const gguf::TensorInfo &tensor) {
  std::vector<float> values(tensor.elements());
  gguf::dequantize(tensor.type, file.data(tensor), tensor.elements(),
                   values.data());
  return values;
}

/// A weight argument of the model functions and the GGUF tensor it holds.
struct WeightTensor {
  /// ModelGen's argument name.
  std::string name;
  /// The GGUF tensor's name.
  std::string gguf;
  /// [rows][values per row] (a norm: [values]).
  std::vector<int64_t> shape;
  /// A projection (Q, K, V, O, gate, up, down, the LM head): the weights
  /// that may stay packed.
  bool projection = false;
  /// Rows in llama.cpp's pairwise RoPE order (attn_q, attn_k).
  bool qk = false;
};

/// The weight arguments of `config`'s model, in ModelGen's order.
std::vector<WeightTensor> weightTensors(const gguf::LlamaConfig &config) {
  int64_t q = config.heads * config.headDim,
          kv = config.kvHeads * config.headDim, h = config.hidden;
  std::vector<WeightTensor> list = {
      {"tok_embd", "token_embd.weight", {config.vocab, h}}};
  for (int64_t l = 0; l < config.layers; ++l) {
    std::string p = "l" + std::to_string(l) + "_",
                b = "blk." + std::to_string(l) + ".";
    list.push_back({p + "attn_norm", b + "attn_norm.weight", {h}});
    list.push_back({p + "wq", b + "attn_q.weight", {q, h}, true, true});
    list.push_back({p + "wk", b + "attn_k.weight", {kv, h}, true, true});
    list.push_back({p + "wv", b + "attn_v.weight", {kv, h}, true});
    list.push_back({p + "wo", b + "attn_output.weight", {h, q}, true});
    list.push_back({p + "ffn_norm", b + "ffn_norm.weight", {h}});
    list.push_back(
        {p + "w_gate", b + "ffn_gate.weight", {config.ffn, h}, true});
    list.push_back({p + "w_up", b + "ffn_up.weight", {config.ffn, h}, true});
    list.push_back(
        {p + "w_down", b + "ffn_down.weight", {h, config.ffn}, true});
  }
  list.push_back({"output_norm", "output_norm.weight", {h}});
  list.push_back({"lm_head",
                  config.tiedOutput ? "token_embd.weight" : "output.weight",
                  {config.vocab, h},
                  true});
  return list;
}

/// llama.cpp's converter permutes the rows of attn_q / attn_k so that its
/// RoPE of adjacent pairs equals Hugging Face's RoPE of halves; cachet's
/// model rotates halves, so the rows go back: within each head, row
/// 2 i + j (i < headDim / 2, j < 2) of the file is row j headDim / 2 + i.
int64_t unpermutedRow(int64_t r, int64_t headDim) {
  int64_t h = r / headDim, i = (r % headDim) / 2, j = r % 2;
  return h * headDim + j * (headDim / 2) + i;
}

/// The weight arguments of `options`' model from `file`, in ModelGen's
/// order: packed blocks copied as they are where the function takes them
/// packed, else converted to the activation type.
bool loadWeightsImpl(const gguf::File &file, const gguf::LlamaConfig &config,
                     const modelgen::Options &options,
                     std::vector<HostTensor> &weights, std::string &error) {
  bool bf16 = options.dtype == modelgen::DType::BF16;
  std::map<std::string, modelgen::ArgumentInfo> args;
  for (const modelgen::ArgumentInfo &a : modelgen::arguments(options))
    args[a.name] = a;
  for (const WeightTensor &w : weightTensors(config)) {
    const gguf::TensorInfo *tensor = file.findTensor(w.gguf);
    if (!tensor) {
      error = "the model has no tensor " + w.gguf;
      return false;
    }
    auto arg = args.find(w.name);
    if (arg == args.end()) {
      error = "the model function has no argument " + w.name;
      return false;
    }
    const modelgen::ArgumentInfo &a = arg->second;
    HostTensor t{w.name, a.shape, a.element, {}};
    int64_t rows = w.shape[0];
    if (blocks::findFormat(a.element)) {
      if (gguf::typeName(tensor->type) != a.element) {
        error = "tensor " + w.gguf + " is " + gguf::typeName(tensor->type) +
                ", the model function takes " + a.element;
        return false;
      }
      // Whole rows of blocks: un-permuting Q / K moves rows of bytes.
      const uint8_t *src = file.data(*tensor);
      uint64_t rowBytes = tensor->bytes / uint64_t(rows);
      t.bytes.resize(tensor->bytes);
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(
            &t.bytes[(w.qk ? unpermutedRow(r, config.headDim) : r) * rowBytes],
            src + r * rowBytes, rowBytes);
      weights.push_back(std::move(t));
      continue;
    }
    std::vector<float> values = readFloats(file, *tensor);
    int64_t width = static_cast<int64_t>(values.size()) / rows;
    t.bytes.resize(values.size() * 2);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t to = w.qk ? unpermutedRow(r, config.headDim) : r;
      for (int64_t c = 0; c < width; ++c) {
        float v = values[r * width + c];
        uint16_t h = bf16 ? gguf::floatToBf16(v) : gguf::floatToHalf(v);
        t.bytes[2 * (to * width + c)] = uint8_t(h & 0xff);
        t.bytes[2 * (to * width + c) + 1] = uint8_t(h >> 8);
      }
    }
    weights.push_back(std::move(t));
  }
  return true;
}

/// The projections' formats of `decode`: `q8_0`, `bf16`, or a mix such as
/// `q4_K + 33 q6_K` (the weights whose format differs, counted).
std::string weightTypes(const modelgen::Options &decode) {
  const char *dtype =
      modelgen::enumName(modelgen::dtypeNames(), int(decode.dtype));
  auto name = [&](const std::string &format) {
    return format.empty() ? std::string(dtype) : format;
  };
  std::map<std::string, int> others;
  for (const auto &entry : decode.weightFormats)
    ++others[name(entry.second)];
  std::string text = name(decode.weightFormat);
  for (const auto &[format, count] : others)
    text += " + " + std::to_string(count) + " " + format;
  return text;
}

/// One model instance: a session of one variant and the tokens it chose.
struct Run {
  const char *name;
  Variant variant;
  std::unique_ptr<Session> session;
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
  double seconds = 0;
};

} // namespace

bool cachet::generate::loadWeights(const gguf::File &file,
                                   const gguf::LlamaConfig &config,
                                   const modelgen::Options &options,
                                   std::vector<HostTensor> &weights,
                                   std::string &error) {
  return loadWeightsImpl(file, config, options, weights, error);
}

bool cachet::generate::modelOptions(const gguf::LlamaConfig &config,
                                    const ModelOptions &model,
                                    modelgen::Options &prefill,
                                    modelgen::Options &decode,
                                    std::string &error) {
  decode = modelgen::Options();
  decode.kind = modelgen::Kind::Model;
  decode.hidden = config.hidden;
  decode.heads = config.heads;
  decode.kvHeads = config.kvHeads;
  decode.headDim = config.headDim;
  decode.ffn = config.ffn;
  decode.vocab = config.vocab;
  decode.layers = config.layers;
  decode.eps = config.eps;
  decode.maxSeq = model.ctx;
  decode.position = modelgen::Position::Dynamic;
  decode.returnCaches = false;
  // The LM head on the last real row of each call alone.
  decode.lastLogits = true;
  int value = 0;
  if (!modelgen::parseEnum(modelgen::kvFormatNames(), model.kv, value)) {
    error = "--kv: unknown format '" + model.kv + "' (expected " +
            modelgen::enumList(modelgen::kvFormatNames()) + ")";
    return false;
  }
  decode.kv = modelgen::KVFormat(value);
  if (!modelgen::parseEnum(modelgen::dtypeNames(), model.dtype, value)) {
    error = "--dtype: expected f16 or bf16, got '" + model.dtype + "'";
    return false;
  }
  decode.dtype = modelgen::DType(value);
  if (model.weights != "packed" && model.weights != "dense") {
    error = "--weights: expected packed or dense, got '" + model.weights + "'";
    return false;
  }
  if (model.weights == "packed") {
    // Each projection in its file format where that is a block format
    // whose blocks tile its rows; the commonest is weightFormat, the rest
    // are listed.
    std::map<std::string, std::string> formats;
    std::map<std::string, int> counts;
    for (const WeightTensor &w : weightTensors(config)) {
      if (!w.projection)
        continue;
      auto type = model.tensorTypes.find(w.gguf);
      std::string format;
      if (type != model.tensorTypes.end()) {
        const blocks::Format *f =
            blocks::findFormat(gguf::typeName(type->second));
        if (f && w.shape[1] % f->values == 0)
          format = f->name;
      }
      formats[w.name] = format;
      ++counts[format];
    }
    int best = 0;
    for (const auto &[format, count] : counts)
      if (count > best) {
        best = count;
        decode.weightFormat = format;
      }
    for (const auto &[name, format] : formats)
      if (format != decode.weightFormat)
        decode.weightFormats[name] = format;
  }
  decode.tokens = 1;
  decode.past = 0;
  prefill = decode;
  prefill.tokens = std::min<int64_t>(model.ubatch, model.ctx);
  for (const modelgen::Options *o : {&prefill, &decode})
    if (std::string why = modelgen::validate(*o); !why.empty()) {
      error = why;
      return false;
    }
  return true;
}

bool cachet::generate::parsePrompt(const std::string &text, int64_t vocab,
                                   std::vector<int32_t> &ids,
                                   std::string &error) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    long id = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || id < 0 || id >= vocab) {
      error = "--prompt: '" + item + "' is not a token id below " +
              std::to_string(vocab);
      return false;
    }
    ids.push_back(int32_t(id));
  }
  if (ids.empty()) {
    error = "--prompt: no token ids";
    return false;
  }
  return true;
}

std::vector<int32_t>
cachet::generate::seededPrompt(int64_t length, int64_t vocab, uint64_t seed) {
  std::vector<int32_t> ids;
  Rng rng = rngFor(seed, "prompt");
  for (int64_t i = 0; i < length; ++i)
    ids.push_back(int32_t(rng.next() % uint64_t(vocab)));
  return ids;
}

int cachet::generate::runGeneration(
    const gguf::LlamaConfig &config, const modelgen::Options &prefill,
    const modelgen::Options &decode, const std::vector<HostTensor> &weights,
    const std::string &prefillArtifact, const std::string &decodeArtifact,
    const GenerationOptions &options, std::ostream &out, std::ostream &err) {
  auto fail = [&](const std::string &message) {
    err << options.tool << ": " << message << "\n";
    return 2;
  };
  const std::vector<int32_t> &promptIds = options.prompt;
  const int nPredict = options.nPredict;
  const int64_t ctx = decode.maxSeq;
  std::string error;
  if (int64_t(promptIds.size()) + nPredict + prefill.tokens > ctx)
    return fail("the prompt (" + std::to_string(promptIds.size()) +
                ") and --n-predict (" + std::to_string(nPredict) +
                ") do not fit in --ctx=" + std::to_string(ctx) +
                " with a padded prefill of " + std::to_string(prefill.tokens));
  std::string artifacts[2] = {prefillArtifact, decodeArtifact};
  std::vector<Run> runs;
  runs.push_back({"rewrites on", Variant::Gpu, nullptr, {}, {}, 0});
  if (options.compareRewrites)
    runs.push_back({"rewrites off", Variant::GpuNoRewrite, nullptr, {}, {}, 0});
  if (options.check)
    runs.push_back({"CPU reference", Variant::Reference, nullptr, {}, {}, 0});
  for (Run &run : runs) {
    run.session =
        std::make_unique<Session>(prefill, decode, weights, config.ropeTheta);
    if (!run.session->open(artifacts[0], artifacts[1], run.variant, error))
      return fail(std::string(run.name) + ": " + error);
  }

  // Prefill in chunks of T tokens, then greedy decoding; every variant
  // takes its own tokens (they are compared after).
  for (Run &run : runs) {
    auto start = std::chrono::steady_clock::now();
    int64_t pos = 0;
    std::vector<float> logits;
    for (size_t i = 0; i < promptIds.size(); i += prefill.tokens) {
      size_t n = std::min<size_t>(prefill.tokens, promptIds.size() - i);
      std::vector<int32_t> chunk(promptIds.begin() + i,
                                 promptIds.begin() + i + n);
      // A one-token chunk takes the decode function.
      if (!run.session->step(chunk, pos, logits, error))
        return fail(std::string(run.name) + ", prefill: " + error);
      pos += int64_t(n);
    }
    run.logits.push_back(logits);
    for (int t = 0; t < nPredict; ++t) {
      int32_t next = argmax(logits);
      run.tokens.push_back(next);
      if (t + 1 == nPredict)
        break;
      if (!run.session->step({next}, pos, logits, error))
        return fail(std::string(run.name) + ", decode: " + error);
      ++pos;
      run.logits.push_back(logits);
    }
    run.seconds = since(start);
  }

  int status = 0;
  const Run &on = runs.front();
  for (const Run &run : runs) {
    if (&run == &on)
      continue;
    if (run.variant == Variant::GpuNoRewrite) {
      bool sameTokens = run.tokens == on.tokens;
      bool sameBytes = sameTokens && run.logits.size() == on.logits.size();
      for (size_t s = 0; sameBytes && s < run.logits.size(); ++s)
        sameBytes = std::memcmp(run.logits[s].data(), on.logits[s].data(),
                                on.logits[s].size() * sizeof(float)) == 0;
      out << "rewrites off vs on: " << (sameTokens ? "same" : "different")
          << " tokens, logits " << (sameBytes ? "byte-identical" : "differ")
          << " over " << on.logits.size() << " steps\n";
      if (!sameBytes)
        status = 1;
      continue;
    }
    // The reference: compare the logits step by step while the tokens
    // agree (a different token changes every later input).
    size_t steps = on.logits.size();
    for (size_t s = 0; s < on.tokens.size() && s < run.tokens.size(); ++s)
      if (on.tokens[s] != run.tokens[s]) {
        steps = s + 1;
        break;
      }
    double worst = 0;
    bool ok = true;
    for (size_t s = 0; s < steps; ++s) {
      double maxRef = 0, err = 0;
      for (size_t i = 0; i < run.logits[s].size(); ++i) {
        maxRef = std::max<double>(maxRef, std::fabs(run.logits[s][i]));
        // A NaN or infinity on either side is an error of infinity (a max
        // would skip a NaN).
        double d =
            std::fabs(double(on.logits[s][i]) - double(run.logits[s][i]));
        err = std::max(err, std::isfinite(d) ? d : HUGE_VAL);
      }
      double ratio = err / (options.tolerance * (1 + maxRef));
      worst = std::max(worst, ratio);
      if (!(ratio <= 1))
        ok = false;
    }
    bool sameTokens = run.tokens == on.tokens;
    out << "check vs CPU reference: " << steps << " steps, worst error "
        << worst << " of the tolerance, tokens "
        << (sameTokens ? "same" : "different") << ": " << (ok ? "PASS" : "FAIL")
        << "\n";
    if (!ok)
      status = 1;
  }

  if (!options.dumpLogits.empty()) {
    std::ofstream file(options.dumpLogits, std::ios::binary);
    for (const std::vector<float> &step : on.logits)
      file.write(reinterpret_cast<const char *>(step.data()),
                 std::streamsize(step.size() * sizeof(float)));
    if (!file)
      return fail("cannot write " + options.dumpLogits);
  }
  out << "prompt:";
  for (int32_t id : promptIds)
    out << " " << id;
  out << "\ntokens:";
  for (int32_t id : on.tokens)
    out << " " << id;
  out << "\n";
  out << "model: " << config.layers << " layers, hidden " << config.hidden
      << ", heads " << config.heads << "/" << config.kvHeads << ", vocab "
      << config.vocab << "; weights " << on.session->weightBytes() << " B ("
      << weightTypes(decode) << "), KV cache " << on.session->cacheBytes()
      << " B (" << modelgen::enumName(modelgen::kvFormatNames(), int(decode.kv))
      << ", " << ctx << " positions)\n";
  out << "time: load " << options.loadSeconds << " s, compile "
      << options.compileSeconds << " s, generate " << on.seconds << " s ("
      << (promptIds.size() + on.tokens.size()) / on.seconds
      << " tokens/s, wall, " << options.target << ")\n";
  return status;
}

bool cachet::generate::parseDepths(const std::string &text,
                                   std::vector<int64_t> &depths,
                                   std::string &error) {
  depths.clear();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || d < 0) {
      error = "--bench-depths: '" + item + "' is not a depth (an integer >= 0)";
      return false;
    }
    depths.push_back(d);
  }
  if (depths.empty()) {
    error = "--bench-depths: no depths";
    return false;
  }
  return true;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One row of a benchmark: a test at a depth with one build.
struct BenchRow {
  std::string test;
  int64_t depth = 0;
  bool rewrites = true;
  int64_t tokens = 0;
  std::vector<double> seconds;
  /// The most device temporaries allocated at once during a call.
  uint64_t peakBytes = 0;

  /// Tokens per second over the repetitions.
  struct Rates {
    double median, min, max;
  };
  Rates rates() const {
    std::vector<double> r;
    for (double s : seconds)
      r.push_back(double(tokens) / s);
    return {median(r), *std::min_element(r.begin(), r.end()),
            *std::max_element(r.begin(), r.end())};
  }
};

std::string fixed(double value, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << value;
  return s.str();
}

} // namespace

int cachet::generate::runBench(
    const gguf::LlamaConfig &config, const modelgen::Options &prefill,
    const modelgen::Options &decode, const std::vector<HostTensor> &weights,
    const std::string &prefillArtifact, const std::string &decodeArtifact,
    const BenchOptions &options, std::ostream &out, std::ostream &err) {
  auto fail = [&](const std::string &message) {
    err << options.tool << ": " << message << "\n";
    return 2;
  };
  const int64_t ctx = decode.maxSeq, T = prefill.tokens;
  const int64_t ppCalls = (options.promptTokens + T - 1) / T;
  for (int64_t d : options.depths) {
    if (options.promptTokens > 0 && d + ppCalls * T > ctx)
      return fail("pp" + std::to_string(options.promptTokens) + " @ d" +
                  std::to_string(d) + " needs " +
                  std::to_string(d + ppCalls * T) +
                  " cache positions (prefill calls of " + std::to_string(T) +
                  "), --ctx is " + std::to_string(ctx));
    if (options.genTokens > 0 && d + options.genTokens > ctx)
      return fail("tg" + std::to_string(options.genTokens) + " @ d" +
                  std::to_string(d) + " needs " +
                  std::to_string(d + options.genTokens) +
                  " cache positions, --ctx is " + std::to_string(ctx));
  }
  if (options.repetitions < 1)
    return fail("--bench-reps: at least 1");

  struct Build {
    bool rewrites;
    std::unique_ptr<Session> session;
  };
  std::vector<Build> builds;
  builds.push_back({true, nullptr});
  if (options.compareRewrites)
    builds.push_back({false, nullptr});
  std::string error;
  for (Build &b : builds) {
    err << options.tool << ": bench: loading the rewrites-"
        << (b.rewrites ? "on" : "off") << " build and its resident state\n";
    b.session =
        std::make_unique<Session>(prefill, decode, weights, config.ropeTheta);
    if (!b.session->open(prefillArtifact, decodeArtifact,
                         b.rewrites ? Variant::Gpu : Variant::GpuNoRewrite,
                         error) ||
        !b.session->fillCaches(options.seed, error))
      return fail(std::string("rewrites ") + (b.rewrites ? "on" : "off") +
                  ": " + error);
  }
  std::vector<int32_t> prompt = seededPrompt(
      std::max<int64_t>(options.promptTokens, 1), config.vocab, options.seed);

  // One test on one build: the wall time of its calls, and the peak of
  // device temporaries during them.
  // FNV-1a over `bytes`, continuing `hash`.
  auto fnv = [](uint64_t hash, const void *bytes, size_t n) {
    const uint8_t *p = static_cast<const uint8_t *>(bytes);
    for (size_t i = 0; i < n; ++i)
      hash = (hash ^ p[i]) * 0x100000001b3ULL;
    return hash;
  };
  // `digest` (the untimed run only): a hash of every step's logits and
  // token, to compare the builds.
  auto runTest = [&](Session &session, bool pp, int64_t depth, double &seconds,
                     uint64_t &peak, uint64_t *digest) {
    auto note = [&](const std::vector<float> &logits, int32_t best) {
      if (!digest)
        return;
      *digest = fnv(*digest, logits.data(), logits.size() * sizeof(float));
      *digest = fnv(*digest, &best, sizeof(best));
    };
    uint64_t base = 0, top = 0;
    cachetMgpuMemoryUsage(&base, nullptr, 1);
    std::vector<float> logits;
    int32_t best = 0;
    auto start = std::chrono::steady_clock::now();
    if (pp) {
      for (int64_t i = 0; i < options.promptTokens; i += T) {
        int64_t n = std::min(T, options.promptTokens - i);
        std::vector<int32_t> chunk(prompt.begin() + i, prompt.begin() + i + n);
        if (!session.step(chunk, depth + i, logits, error, &best))
          return false;
        note(logits, best);
      }
    } else {
      int32_t token = prompt[0];
      for (int64_t t = 0; t < options.genTokens; ++t) {
        if (!session.step({token}, depth + t, logits, error, &best))
          return false;
        note(logits, best);
        token = best;
      }
    }
    seconds = since(start);
    cachetMgpuMemoryUsage(nullptr, &top, 0);
    peak = std::max(peak, top > base ? top - base : 0);
    return true;
  };

  std::vector<BenchRow> rows;
  // Rewrites off vs on, per test: the untimed runs' tokens and logits.
  std::vector<std::string> identical;
  int status = 0;
  for (int64_t depth : options.depths) {
    for (bool pp : {false, true}) {
      int64_t tokens = pp ? options.promptTokens : options.genTokens;
      if (tokens <= 0)
        continue;
      std::string test = (pp ? "pp" : "tg") + std::to_string(tokens);
      size_t first = rows.size();
      for (Build &b : builds) {
        BenchRow row;
        row.test = test;
        row.depth = depth;
        row.rewrites = b.rewrites;
        row.tokens = tokens;
        rows.push_back(row);
      }
      // One untimed run per build, then the repetitions, the builds'
      // order alternating so that a drift of the clock hits both alike.
      for (int r = -1; r < options.repetitions; ++r) {
        err << options.tool << ": bench: " << test << " @ d" << depth
            << (r < 0 ? " warm-up"
                      : " repetition " + std::to_string(r + 1) + "/" +
                            std::to_string(options.repetitions))
            << ":";
        std::vector<uint64_t> digests(builds.size(), 0xcbf29ce484222325ULL);
        for (size_t k = 0; k < builds.size(); ++k) {
          size_t i = (r % 2 != 0) ? builds.size() - 1 - k : k;
          double seconds = 0;
          uint64_t peak = 0;
          if (!runTest(*builds[i].session, pp, depth, seconds, peak,
                       r < 0 ? &digests[i] : nullptr))
            return fail(test + " @ d" + std::to_string(depth) + ": " + error);
          err << " rewrites " << (builds[i].rewrites ? "on " : "off ")
              << fixed(seconds, 4) << " s" << std::flush;
          BenchRow &row = rows[first + i];
          row.peakBytes = std::max(row.peakBytes, peak);
          if (r >= 0)
            row.seconds.push_back(seconds);
        }
        err << "\n";
        if (r < 0 && builds.size() == 2) {
          bool same = digests[0] == digests[1];
          identical.push_back(test + " @ d" + std::to_string(depth) + ": " +
                              (same ? "same tokens, logits byte-identical"
                                    : "tokens or logits DIFFER"));
          if (!same)
            status = 1;
        }
      }
    }
  }

  uint64_t params = 0;
  for (const HostTensor &w : weights) {
    // A packed weight's shape counts blocks.
    const blocks::Format *f = blocks::findFormat(w.element);
    uint64_t n = f ? uint64_t(f->values) : 1;
    for (int64_t d : w.shape)
      n *= uint64_t(d);
    params += n;
  }
  const Session &on = *builds.front().session;
  std::string dtype = weightTypes(decode);
  const char *kv =
      modelgen::enumName(modelgen::kvFormatNames(), int(decode.kv));
  if (options.json) {
    out << "{\n  \"model\": \"" << options.modelName << "\",\n"
        << "  \"params\": " << params << ",\n"
        << "  \"weight_bytes\": " << on.weightBytes() << ",\n"
        << "  \"weight_type\": \"" << dtype << "\",\n"
        << "  \"kv_type\": \"" << kv << "\",\n"
        << "  \"kv_bytes\": " << on.cacheBytes() << ",\n"
        << "  \"ctx\": " << ctx << ",\n  \"ubatch\": " << T << ",\n"
        << "  \"backend\": \"" << options.target << "\",\n"
        << "  \"load_s\": " << options.loadSeconds << ",\n"
        << "  \"compile_s\": " << options.compileSeconds << ",\n"
        << "  \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const BenchRow &row = rows[i];
      BenchRow::Rates rates = row.rates();
      out << (i ? ",\n" : "\n") << "    {\"test\": \"" << row.test
          << "\", \"depth\": " << row.depth << ", \"rewrites\": \""
          << (row.rewrites ? "on" : "off") << "\", \"tokens\": " << row.tokens
          << ", \"tps_median\": " << rates.median
          << ", \"tps_min\": " << rates.min << ", \"tps_max\": " << rates.max
          << ", \"temporaries_peak_bytes\": " << row.peakBytes
          << ", \"seconds\": [";
      for (size_t k = 0; k < row.seconds.size(); ++k)
        out << (k ? ", " : "") << row.seconds[k];
      out << "]}";
    }
    out << "\n  ],\n  \"rewrites_off_vs_on\": [";
    for (size_t i = 0; i < identical.size(); ++i)
      out << (i ? ", " : "") << "\"" << identical[i] << "\"";
    out << "]\n}\n";
    return status;
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  out << "model: " << options.modelName << ", " << fixed(params / 1e9, 2)
      << " B params, " << config.layers << " layers; weights "
      << fixed(on.weightBytes() / gib, 2) << " GiB (" << dtype
      << " on the device); KV cache " << fixed(on.cacheBytes() / gib, 3)
      << " GiB (" << kv << ", " << ctx << " positions); backend "
      << options.target << "; ubatch " << T << "; depth: caches filled with "
      << "seeded values\n";
  out << "| test | rewrites | t/s (median) | spread (min .. max) | reps | "
         "temporaries peak |\n"
      << "|---|---|---|---|---|---|\n";
  for (const BenchRow &row : rows) {
    BenchRow::Rates rates = row.rates();
    out << "| " << row.test << " @ d" << row.depth << " | "
        << (row.rewrites ? "on" : "off") << " | " << fixed(rates.median, 2)
        << " | " << fixed(rates.min, 2) << " .. " << fixed(rates.max, 2)
        << " | " << row.seconds.size() << " | "
        << fixed(row.peakBytes / (1024.0 * 1024.0), 1) << " MiB |\n";
  }
  for (size_t i = 0; i + 1 < rows.size() && builds.size() == 2; i += 2) {
    out << rows[i].test << " @ d" << rows[i].depth << ": rewrites on / off = "
        << fixed(median(rows[i + 1].seconds) / median(rows[i].seconds), 3)
        << "x (time off / time on)\n";
  }
  for (const std::string &line : identical)
    out << "rewrites off vs on, " << line << "\n";
  out << "time: load " << fixed(options.loadSeconds, 1) << " s, compile "
      << fixed(options.compileSeconds, 1) << " s\n";
  return status;
}
