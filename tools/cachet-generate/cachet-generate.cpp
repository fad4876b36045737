//===- cachet-generate.cpp - run a GGUF llama model, prefill and decode --===//
//
// cachet-generate (--model=FILE.gguf | --random=SPEC [--type=T] [--seed=N])
//                 [--prompt=ID,ID,... | --prompt-length=N] [--n-predict=N]
//                 [--ctx=N] [--ubatch=N] [--kv=FORMAT] [--dtype=f16|bf16]
//                 [--target=spirv|nvvm|rocdl] [--chip=...] [--profile=...]
//                 [--cache-dir=DIR] [--check] [--compare-rewrites]
//
// Reads the model (or writes seeded random weights as GGUF first, so the
// loading code always runs), writes its prefill (T = --ubatch tokens) and
// decode (1 token) functions with cachet::modelgen at the file's shapes and
// a run-time position, compiles each once into an artifact cached on disk
// (keyed by the IR and the options), keeps the weights, the KV cache and the
// RoPE tables resident on the device, runs the prompt and then greedy
// decoding, and prints the token ids. --check runs the CPU reference
// compiled from the same IR step by step beside it and compares the logits
// of every step; --compare-rewrites does the same with cachet's rewrites off
// (byte-identical logits and the same tokens).
//
//===----------------------------------------------------------------------===//

#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Generate/Gguf.h"
#include "cachet/Generate/Session.h"
#include "cachet/ModelGen/ModelGen.h"
#include "cachet/Target/Artifact.h"

#include "cachet/Conversion/Passes.h"
#include "cachet/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

using namespace llvm;
using namespace cachet;

static cl::opt<std::string> modelFile("model", cl::desc("A GGUF llama model"),
                                      cl::init(""));
static cl::opt<std::string>
    randomSpec("random",
               cl::desc("Seeded random weights: tiny, small, llama3-8b, with "
                        "key=value overrides (tiny,layers=1)"),
               cl::init(""));
static cl::opt<std::string>
    weightType("type", cl::desc("--random: the projection weights' type"),
               cl::init("f16"));
static cl::opt<unsigned> seed("seed", cl::desc("--random: the seed"),
                              cl::init(1));
static cl::opt<std::string>
    prompt("prompt", cl::desc("The prompt's token ids, comma-separated"),
           cl::init(""));
static cl::opt<int> promptLength(
    "prompt-length",
    cl::desc("A prompt of this many seeded token ids (without --prompt)"),
    cl::init(8));
static cl::opt<int> nPredict("n-predict", cl::desc("Tokens to generate"),
                             cl::init(8));
static cl::opt<int> ctx("ctx", cl::desc("Positions of the KV cache"),
                        cl::init(64));
static cl::opt<int> ubatch("ubatch", cl::desc("Tokens per prefill call"),
                           cl::init(8));
static cl::opt<std::string> kvFormat("kv", cl::desc("KV cache format"),
                                     cl::init("f16"));
static cl::opt<std::string>
    dtype("dtype", cl::desc("Activations and weights: f16, bf16"),
          cl::init("f16"));
static cl::opt<std::string> target("target", cl::desc("spirv, nvvm or rocdl"),
                                   cl::init("spirv"));
static cl::opt<std::string> chip("chip", cl::desc("Target chip"), cl::init(""));
static cl::opt<std::string> profile("profile", cl::desc("Device profile"),
                                    cl::init("lavapipe"));
static cl::opt<std::string>
    cacheDir("cache-dir", cl::desc("Where compiled artifacts are kept"),
             cl::init(""));
static cl::opt<bool> check("check",
                           cl::desc("Compare every step's logits with the CPU "
                                    "reference"));
static cl::opt<bool>
    compareRewrites("compare-rewrites",
                    cl::desc("Run with the rewrites off too: same tokens, "
                             "byte-identical logits"));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("--check: |gpu - ref| <= tolerance * (1 + max |ref|) per step"),
    cl::init(0.02));
static cl::opt<std::string> dumpLogits(
    "dump-logits",
    cl::desc("Write every step's logits (float32 rows of the vocabulary, "
             "rewrites on) to this file"),
    cl::init(""));
static cl::opt<std::string>
    remarksFile("remarks",
                cl::desc("Write the compilers' remarks (what each rewrite "
                         "did) to this file"),
                cl::init(""));
static cl::opt<std::string>
    linker("linker", cl::desc("Linker for the artifact's shared objects"),
           cl::init(CACHET_DEFAULT_LINKER));

namespace {

/// Prints `message` as cachet-generate's error and returns 2.
int fail(const std::string &message) {
  std::cerr << "cachet-generate: " << message << "\n";
  return 2;
}

/// Seconds since `start`.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Appends `value` in the activation type to `bytes`.
void pushValue(std::vector<uint8_t> &bytes, float value, bool bf16) {
  uint16_t h = bf16 ? gguf::floatToBf16(value) : gguf::floatToHalf(value);
  bytes.push_back(h & 0xff);
  bytes.push_back(h >> 8);
}

/// The rows of `tensor` (ggml's ne[1] rows of ne[0] values) as floats.
std::vector<float> readFloats(const gguf::File &file,
                              const gguf::TensorInfo &tensor) {
  std::vector<float> values(tensor.elements());
  gguf::dequantize(tensor.type, file.data(tensor), tensor.elements(),
                   values.data());
  return values;
}

/// llama.cpp's converter permutes the rows of attn_q / attn_k so that its
/// RoPE of adjacent pairs equals Hugging Face's RoPE of halves; cachet's
/// model rotates halves, so the rows go back: within each head, row
/// 2 i + j (i < headDim / 2, j < 2) of the file is row j headDim / 2 + i.
std::vector<float> unpermuteRows(const std::vector<float> &rows, int64_t heads,
                                 int64_t headDim, int64_t width) {
  std::vector<float> out(rows.size());
  int64_t half = headDim / 2;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const float *src = &rows[(h * headDim + 2 * i + j) * width];
        float *dst = &out[(h * headDim + j * half + i) * width];
        std::memcpy(dst, src, width * sizeof(float));
      }
  return out;
}

/// The weight arguments of `options`' model from `file`, in ModelGen's
/// order and the activation type.
bool loadWeights(const gguf::File &file, const gguf::LlamaConfig &config,
                 const modelgen::Options &options,
                 std::vector<generate::HostTensor> &weights,
                 std::string &error) {
  bool bf16 = options.dtype == modelgen::DType::BF16;
  std::string element = bf16 ? "bf16" : "f16";
  auto add = [&](const std::string &name, const std::string &ggufName,
                 std::vector<int64_t> shape, bool qk = false) {
    const gguf::TensorInfo *tensor = file.findTensor(ggufName);
    if (!tensor) {
      error = "the model has no tensor " + ggufName;
      return false;
    }
    std::vector<float> values = readFloats(file, *tensor);
    if (qk)
      values = unpermuteRows(values, shape[0] / config.headDim, config.headDim,
                             shape[1]);
    generate::HostTensor t{name, shape, element, {}};
    t.bytes.reserve(values.size() * 2);
    for (float v : values)
      pushValue(t.bytes, v, bf16);
    weights.push_back(std::move(t));
    return true;
  };
  int64_t q = config.heads * config.headDim,
          kv = config.kvHeads * config.headDim;
  if (!add("tok_embd", "token_embd.weight", {config.vocab, config.hidden}))
    return false;
  for (int64_t l = 0; l < config.layers; ++l) {
    std::string p = "l" + std::to_string(l) + "_",
                b = "blk." + std::to_string(l) + ".";
    if (!add(p + "attn_norm", b + "attn_norm.weight", {config.hidden}) ||
        !add(p + "wq", b + "attn_q.weight", {q, config.hidden}, true) ||
        !add(p + "wk", b + "attn_k.weight", {kv, config.hidden}, true) ||
        !add(p + "wv", b + "attn_v.weight", {kv, config.hidden}) ||
        !add(p + "wo", b + "attn_output.weight", {config.hidden, q}) ||
        !add(p + "ffn_norm", b + "ffn_norm.weight", {config.hidden}) ||
        !add(p + "w_gate", b + "ffn_gate.weight",
             {config.ffn, config.hidden}) ||
        !add(p + "w_up", b + "ffn_up.weight", {config.ffn, config.hidden}) ||
        !add(p + "w_down", b + "ffn_down.weight", {config.hidden, config.ffn}))
      return false;
  }
  if (!add("output_norm", "output_norm.weight", {config.hidden}))
    return false;
  return add("lm_head",
             config.tiedOutput ? "token_embd.weight" : "output.weight",
             {config.vocab, config.hidden});
}

/// A hash of this executable's identity (size and modification time), so
/// that a rebuilt cachet never reuses artifacts of an older one.
uint64_t selfStamp() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0)
    return 0;
  return uint64_t(st.st_size) * 1000003u ^ uint64_t(st.st_mtime);
}

/// Compiles `text` (the model function) into `directory` unless an artifact
/// is there already. Returns false with `error`.
bool compile(const std::string &text, const std::string &directory,
             mlir::MLIRContext &context, double &seconds, bool &cached,
             std::string &error) {
  cached = sys::fs::exists(directory + "/manifest.json");
  seconds = 0;
  if (cached)
    return true;
  auto start = std::chrono::steady_clock::now();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(text, "model"),
                               SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Remarks explain every decision: kept in --remarks, else dropped;
  // errors still reach stderr. The handler registered last sees a
  // diagnostic first.
  std::unique_ptr<raw_fd_ostream> remarks;
  if (!remarksFile.empty()) {
    std::error_code ec;
    remarks =
        std::make_unique<raw_fd_ostream>(remarksFile, ec, sys::fs::OF_Append);
    if (ec) {
      error = "cannot write " + remarksFile + ": " + ec.message();
      return false;
    }
  }
  mlir::ScopedDiagnosticHandler quiet(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Remark)
      return mlir::failure();
    if (remarks)
      *remarks << diag.getLocation() << ": remark: " << diag.str() << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr,
                                            mlir::ParserConfig(&context));
  if (!module) {
    error = "the generated model does not parse";
    return false;
  }
  ArtifactOptions options;
  options.entry = "model";
  options.linker = linker;
  options.directory = directory + ".tmp";
  std::string message;
  raw_string_ostream os(message);
  if (failed(options.compile.parseFromString(
          "target=" + target + " chip=" + chip + " profile=" + profile, os))) {
    error = "bad cachet-compile option: " + message;
    return false;
  }
  sys::fs::remove_directories(options.directory);
  if (failed(emitArtifact(*module, options))) {
    error = "compiling the model failed (see above)";
    return false;
  }
  sys::fs::remove_directories(directory);
  if (std::error_code ec = sys::fs::rename(options.directory, directory)) {
    error = "cannot move the artifact to " + directory + ": " + ec.message();
    return false;
  }
  seconds = since(start);
  return true;
}

/// The prompt: --prompt's ids, or --prompt-length seeded ids below `vocab`.
bool makePrompt(int64_t vocab, std::vector<int32_t> &ids, std::string &error) {
  if (!prompt.empty()) {
    std::stringstream in(prompt);
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
    return !ids.empty() || (error = "--prompt: no token ids", false);
  }
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int i = 0; i < promptLength; ++i) {
    state ^= state >> 31;
    state *= 0xBF58476D1CE4E5B9ull;
    state ^= state >> 29;
    ids.push_back(int32_t(state % uint64_t(vocab)));
  }
  return true;
}

/// One model instance: a session of one variant and the tokens it chose.
struct Run {
  const char *name;
  generate::Variant variant;
  std::unique_ptr<generate::Session> session;
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
  double seconds = 0;
};

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  registerCachetPasses();
  registerCachetConversionPasses();
  cl::ParseCommandLineOptions(argc, argv, "cachet-generate\n");

  if (modelFile.empty() == randomSpec.empty())
    return fail("give one of --model=FILE.gguf and --random=SPEC");
  std::string error;
  SmallString<128> cache(cacheDir);
  if (cache.empty()) {
    // $XDG_CACHE_HOME/cachet, else ~/.cache/cachet, else a temporary one.
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
      sys::path::append(cache, xdg, "cachet");
    else if (sys::path::home_directory(cache))
      sys::path::append(cache, ".cache", "cachet");
    else
      sys::path::system_temp_directory(true, cache),
          sys::path::append(cache, "cachet");
  }
  if (std::error_code ec = sys::fs::create_directories(cache))
    return fail("cannot create " + std::string(cache) + ": " + ec.message());

  // The model file: given, or random weights written as GGUF first.
  std::string path = modelFile;
  if (!randomSpec.empty()) {
    gguf::LlamaConfig config;
    gguf::RandomOptions random;
    random.seed = seed;
    if (!gguf::parseLlamaSpec(randomSpec, config, error) ||
        !gguf::parseType(weightType, random.weightType))
      return fail(error.empty() ? "--type: unknown type '" + weightType + "'"
                                : "--random: " + error);
    random.embeddingType = gguf::defaultEmbeddingType(random.weightType);
    std::string name = randomSpec + "-" + weightType + "-" +
                       std::to_string(seed.getValue()) + ".gguf";
    std::replace(name.begin(), name.end(), ',', '_');
    std::replace(name.begin(), name.end(), '=', '-');
    path = std::string(cache) + "/" + name;
    std::cerr << "cachet-generate: writing random weights to " << path << "\n";
    if (!gguf::writeRandomLlama(config, random, path, error))
      return fail(error);
  }
  std::cerr << "cachet-generate: loading " << path << "\n";
  auto loadStart = std::chrono::steady_clock::now();
  gguf::File file;
  gguf::LlamaConfig config;
  if (!gguf::read(path, file, error) ||
      !gguf::readLlamaConfig(file, config, error))
    return fail(error);

  modelgen::Options decode;
  decode.kind = modelgen::Kind::Model;
  decode.hidden = config.hidden;
  decode.heads = config.heads;
  decode.kvHeads = config.kvHeads;
  decode.headDim = config.headDim;
  decode.ffn = config.ffn;
  decode.vocab = config.vocab;
  decode.layers = config.layers;
  decode.eps = config.eps;
  decode.maxSeq = ctx;
  decode.position = modelgen::Position::Dynamic;
  decode.returnCaches = false;
  int value = 0;
  if (!modelgen::parseEnum(modelgen::kvFormatNames(), kvFormat, value))
    return fail("--kv: unknown format '" + kvFormat + "' (expected " +
                modelgen::enumList(modelgen::kvFormatNames()) + ")");
  decode.kv = modelgen::KVFormat(value);
  if (!modelgen::parseEnum(modelgen::dtypeNames(), dtype, value))
    return fail("--dtype: expected f16 or bf16, got '" + dtype + "'");
  decode.dtype = modelgen::DType(value);
  decode.tokens = 1;
  decode.past = 0;
  modelgen::Options prefill = decode;
  prefill.tokens = std::min<int64_t>(ubatch, ctx);
  for (const modelgen::Options *o : {&prefill, &decode})
    if (std::string why = modelgen::validate(*o); !why.empty())
      return fail(why);

  std::vector<generate::HostTensor> weights;
  if (!loadWeights(file, config, decode, weights, error))
    return fail(error);
  double loadSeconds = since(loadStart);

  // Compile both functions once (cached by their IR and the options).
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<CachetDialect>();
  mlir::MLIRContext context(registry);
  std::string artifacts[2];
  double compileSeconds = 0;
  for (int f = 0; f < 2; ++f) {
    const modelgen::Options &o = f == 0 ? prefill : decode;
    std::ostringstream text;
    if (!modelgen::generate(o, text, error))
      return fail(error);
    hash_code key = hash_combine(text.str(), target.getValue(), chip.getValue(),
                                 profile.getValue(), selfStamp());
    char name[40];
    std::snprintf(name, sizeof(name), "%s-%016llx",
                  f == 0 ? "prefill" : "decode",
                  static_cast<unsigned long long>(size_t(key)));
    artifacts[f] = std::string(cache) + "/" + name;
    std::cerr << "cachet-generate: compiling "
              << (f == 0 ? "prefill" : "decode") << " (T = " << o.tokens
              << ") into " << artifacts[f] << "\n";
    double seconds = 0;
    bool cached = false;
    if (!compile(text.str(), artifacts[f], context, seconds, cached, error))
      return fail(error);
    if (cached)
      std::cerr << "cachet-generate:   (cached)\n";
    compileSeconds += seconds;
  }

  std::vector<int32_t> promptIds;
  if (!makePrompt(config.vocab, promptIds, error))
    return fail(error);
  if (int64_t(promptIds.size()) + nPredict + prefill.tokens > ctx)
    return fail("the prompt (" + std::to_string(promptIds.size()) +
                ") and --n-predict (" + std::to_string(nPredict) +
                ") do not fit in --ctx=" + std::to_string(ctx) +
                " with a padded prefill of " + std::to_string(prefill.tokens));

  std::vector<Run> runs;
  runs.push_back({"rewrites on", generate::Variant::Gpu, nullptr, {}, {}, 0});
  if (compareRewrites)
    runs.push_back(
        {"rewrites off", generate::Variant::GpuNoRewrite, nullptr, {}, {}, 0});
  if (check)
    runs.push_back(
        {"CPU reference", generate::Variant::Reference, nullptr, {}, {}, 0});
  for (Run &run : runs) {
    run.session = std::make_unique<generate::Session>(prefill, decode, weights,
                                                      config.ropeTheta);
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
      int32_t next = generate::argmax(logits);
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
    if (run.variant == generate::Variant::GpuNoRewrite) {
      bool sameTokens = run.tokens == on.tokens;
      bool sameBytes = sameTokens && run.logits.size() == on.logits.size();
      for (size_t s = 0; sameBytes && s < run.logits.size(); ++s)
        sameBytes = std::memcmp(run.logits[s].data(), on.logits[s].data(),
                                on.logits[s].size() * sizeof(float)) == 0;
      std::cout << "rewrites off vs on: " << (sameTokens ? "same" : "different")
                << " tokens, logits "
                << (sameBytes ? "byte-identical" : "differ") << " over "
                << on.logits.size() << " steps\n";
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
        err = std::max<double>(
            err, std::fabs(double(on.logits[s][i]) - double(run.logits[s][i])));
      }
      double ratio = err / (tolerance * (1 + maxRef));
      worst = std::max(worst, ratio);
      if (!(ratio <= 1))
        ok = false;
    }
    bool sameTokens = run.tokens == on.tokens;
    std::cout << "check vs CPU reference: " << steps << " steps, worst error "
              << worst << " of the tolerance, tokens "
              << (sameTokens ? "same" : "different") << ": "
              << (ok ? "PASS" : "FAIL") << "\n";
    if (!ok)
      status = 1;
  }

  if (!dumpLogits.empty()) {
    std::ofstream out(dumpLogits, std::ios::binary);
    for (const std::vector<float> &step : on.logits)
      out.write(reinterpret_cast<const char *>(step.data()),
                std::streamsize(step.size() * sizeof(float)));
    if (!out)
      return fail("cannot write " + dumpLogits);
  }
  std::cout << "prompt:";
  for (int32_t id : promptIds)
    std::cout << " " << id;
  std::cout << "\ntokens:";
  for (int32_t id : on.tokens)
    std::cout << " " << id;
  std::cout << "\n";
  std::cout << "model: " << config.layers << " layers, hidden " << config.hidden
            << ", heads " << config.heads << "/" << config.kvHeads << ", vocab "
            << config.vocab << "; weights " << on.session->weightBytes()
            << " B (" << dtype << "), KV cache " << on.session->cacheBytes()
            << " B (" << kvFormat << ", " << ctx << " positions)\n";
  std::cout << "time: load " << loadSeconds << " s, compile " << compileSeconds
            << " s, generate " << on.seconds << " s ("
            << (promptIds.size() + on.tokens.size()) / on.seconds
            << " tokens/s, wall, " << target << ")\n";
  return status;
}
