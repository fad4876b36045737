//===- cachet-generate.cpp - run a GGUF llama model, prefill and decode --===//
//
// cachet-generate (--model=FILE.gguf | --random=SPEC [--type=T] [--seed=N])
//                 [--prompt=ID,ID,... | --prompt-length=N] [--n-predict=N]
//                 [--ctx=N] [--ubatch=N] [--kv=FORMAT] [--dtype=f16|bf16]
//                 [--target=spirv|nvvm|rocdl] [--chip=...] [--profile=...]
//                 [--cache-dir=DIR] [--check] [--compare-rewrites]
//                 [--bench [--bench-depths=D,...] [--bench-prompt=N]
//                          [--bench-gen=N] [--bench-reps=N]
//                          [--bench-on-only] [--json]]
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
// (byte-identical logits and the same tokens). --bench prints llama-bench's
// rows instead (pp / tg at depths, median t/s and spread).
//
//===----------------------------------------------------------------------===//

#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Generate/Generate.h"
#include "cachet/Generate/Gguf.h"
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
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace llvm;
using namespace cachet;

/// The tool's own options: --help lists these alone (the LLVM and MLIR
/// options linked in still parse).
static cl::OptionCategory generateCategory("cachet-generate options");

static cl::opt<std::string> modelFile("model", cl::cat(generateCategory),
                                      cl::desc("A GGUF llama model"),
                                      cl::init(""));
static cl::opt<std::string>
    randomSpec("random", cl::cat(generateCategory),
               cl::desc("Seeded random weights: tiny, small, llama3-8b, with "
                        "key=value overrides (tiny,layers=1)"),
               cl::init(""));
static cl::opt<std::string>
    weightType("type", cl::cat(generateCategory),
               cl::desc("--random: the projection weights' type"),
               cl::init("f16"));
static cl::opt<std::string> weightForm(
    "weights", cl::cat(generateCategory),
    cl::desc("packed: the projections stay in the file's block format (q8_0, "
             "q4_K, ...), decoded by the kernels; dense: every weight "
             "converted to --dtype at load"),
    cl::init("packed"));
static cl::opt<unsigned> seed("seed", cl::cat(generateCategory),
                              cl::desc("--random: the seed"), cl::init(1));
static cl::opt<std::string>
    prompt("prompt", cl::cat(generateCategory),
           cl::desc("The prompt's token ids, comma-separated"), cl::init(""));
static cl::opt<int> promptLength(
    "prompt-length", cl::cat(generateCategory),
    cl::desc("A prompt of this many seeded token ids (without --prompt)"),
    cl::init(8));
static cl::opt<int> nPredict("n-predict", cl::cat(generateCategory),
                             cl::desc("Tokens to generate"), cl::init(8));
static cl::opt<int> ctx("ctx", cl::cat(generateCategory),
                        cl::desc("Positions of the KV cache"), cl::init(64));
static cl::opt<int> ubatch("ubatch", cl::cat(generateCategory),
                           cl::desc("Tokens per prefill call"), cl::init(8));
static cl::opt<std::string> kvFormat("kv", cl::cat(generateCategory),
                                     cl::desc("KV cache format"),
                                     cl::init("f16"));
static cl::opt<std::string>
    dtype("dtype", cl::cat(generateCategory),
          cl::desc("Activations and weights: f16, bf16"), cl::init("f16"));
static cl::opt<std::string> target("target", cl::cat(generateCategory),
                                   cl::desc("spirv, nvvm or rocdl"),
                                   cl::init("spirv"));
static cl::opt<std::string> chip("chip", cl::cat(generateCategory),
                                 cl::desc("Target chip"), cl::init(""));
static cl::opt<uint64_t> maxScratchBytes(
    "max-scratch-bytes", cl::cat(generateCategory),
    cl::desc("Cap on the dequant-once K/V scratch in bytes (cachet-compile's "
             "max-scratch-bytes: larger layers in KV chunks; 0: no cap)"),
    cl::init(0));
static cl::opt<std::string> extraCompileOptions(
    "compile-options", cl::cat(generateCategory),
    cl::desc("More cachet-compile options for both functions, as "
             "cachet-opt writes them (e.g. "
             "'matvec-options={gemm-mma=true}')"),
    cl::init(""));
static cl::opt<bool> verifyEach(
    "verify-each", cl::cat(generateCategory),
    cl::desc("Verify the IR after every compiler pass (default: once, after "
             "the last; a pass that breaks the IR is then named)"),
    cl::init(false));
static cl::opt<std::string> profile("profile", cl::cat(generateCategory),
                                    cl::desc("Device profile"),
                                    cl::init("lavapipe"));
static cl::opt<std::string>
    cacheDir("cache-dir", cl::cat(generateCategory),
             cl::desc("Where compiled artifacts are kept"), cl::init(""));
static cl::opt<bool> check(
    "check", cl::cat(generateCategory),
    cl::desc("Compare every step's logits with the CPU reference (built "
             "only for --check: with --compile-only, into the artifacts for "
             "a later --check)"));
static cl::opt<bool>
    compareRewrites("compare-rewrites", cl::cat(generateCategory),
                    cl::desc("Run with the rewrites off too: same tokens, "
                             "byte-identical logits"));
static cl::opt<double> tolerance(
    "tolerance", cl::cat(generateCategory),
    cl::desc("--check: |gpu - ref| <= tolerance * (1 + max |ref|) per step"),
    cl::init(0.02));
static cl::opt<bool> compileOnly(
    "compile-only", cl::cat(generateCategory),
    cl::desc("Compile (or find) the two artifacts, print their folders and "
             "stop (cachet-generate-runner runs them on a GPU server)"));
static cl::opt<std::string> dumpLogits(
    "dump-logits", cl::cat(generateCategory),
    cl::desc("Write every step's logits (float32 rows of the vocabulary, "
             "rewrites on) to this file"),
    cl::init(""));
static cl::opt<bool> benchMode(
    "bench", cl::cat(generateCategory),
    cl::desc("Print llama-bench rows (pp / tg at each depth, rewrites "
             "on and off interleaved) instead of generating"));
static cl::opt<std::string>
    benchDepths("bench-depths", cl::cat(generateCategory),
                cl::desc("--bench: comma-separated depths (cache positions "
                         "filled before each test)"),
                cl::init("0"));
static cl::opt<int64_t> benchPrompt("bench-prompt", cl::cat(generateCategory),
                                    cl::desc("--bench: tokens of the pp rows "
                                             "(0: none)"),
                                    cl::init(512));
static cl::opt<int64_t> benchGen("bench-gen", cl::cat(generateCategory),
                                 cl::desc("--bench: tokens of the tg rows "
                                          "(0: none)"),
                                 cl::init(128));
static cl::opt<int> benchReps("bench-reps", cl::cat(generateCategory),
                              cl::desc("--bench: timed repetitions per row"),
                              cl::init(5));
static cl::opt<bool>
    benchOnOnly("bench-on-only", cl::cat(generateCategory),
                cl::desc("--bench: time the rewrites-on build alone"));
static cl::opt<bool> json("json", cl::cat(generateCategory),
                          cl::desc("--bench: print JSON"));
static cl::opt<std::string>
    remarksFile("remarks", cl::cat(generateCategory),
                cl::desc("Write the compilers' remarks (what each rewrite "
                         "did) to this file"),
                cl::init(""));
static cl::opt<std::string>
    linker("linker", cl::cat(generateCategory),
           cl::desc("Linker for the artifact's shared objects"),
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

/// A hash of this executable's identity (size and modification time), so
/// that a rebuilt cachet never reuses artifacts of an older one.
uint64_t selfStamp() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0)
    return 0;
  return uint64_t(st.st_size) * 1000003u ^ uint64_t(st.st_mtime);
}

/// The cachet-compile options of both functions (part of the cache key).
std::string compileOptions() {
  return "target=" + target + " chip=" + chip + " profile=" + profile +
         " max-scratch-bytes=" + std::to_string(maxScratchBytes) +
         (extraCompileOptions.empty() ? "" : " " + extraCompileOptions);
}

/// Guards the --remarks file, which both functions' compilations append to.
std::mutex remarksMutex;

/// Compiles `text` (the model function) into `directory` unless an artifact
/// is there already, in a context of its own (prefill and decode compile on
/// two threads). Returns false with `error`.
bool compile(const std::string &text, const std::string &directory,
             const mlir::DialectRegistry &registry, bool reference,
             double &seconds, bool &cached, std::string &error) {
  // The GPU variants and manifest.json are built together; the CPU
  // reference (ref.so) only where a check runs it, into the same folder
  // (later, where the GPU variants are cached).
  bool gpuCached = sys::fs::exists(directory + "/manifest.json");
  reference = reference && !sys::fs::exists(directory + "/ref.so");
  cached = gpuCached && !reference;
  seconds = 0;
  if (cached)
    return true;
  auto start = std::chrono::steady_clock::now();
  mlir::MLIRContext context(registry);
  // A diagnostic would print its op ("see current operation"), which
  // numbers the values of the whole function: with a remark for every
  // decision, compiling a 32-layer model spent most of its time there.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(text, "model"),
                               SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Remarks explain every decision: kept in --remarks, else dropped;
  // errors still reach stderr. The handler registered last sees a
  // diagnostic first.
  std::string remarkText;
  raw_string_ostream remarks(remarkText);
  mlir::ScopedDiagnosticHandler quiet(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Remark)
      return mlir::failure();
    if (!remarksFile.empty())
      remarks << diag.getLocation() << ": remark: " << diag.str() << "\n";
    return mlir::success();
  });
  // The remarks go to --remarks whatever the outcome.
  auto writeRemarks = [&]() {
    if (remarksFile.empty())
      return true;
    std::lock_guard<std::mutex> lock(remarksMutex);
    std::error_code ec;
    raw_fd_ostream file(remarksFile, ec, sys::fs::OF_Append);
    if (ec) {
      error = "cannot write " + remarksFile + ": " + ec.message();
      return false;
    }
    file << remarkText;
    return true;
  };
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
  if (failed(options.compile.parseFromString(compileOptions(), os))) {
    error = "bad cachet-compile option: " + message;
    return false;
  }
  options.gpu = !gpuCached;
  options.passManagerCLOptions = true;
  options.verifyEachPass = verifyEach;
  options.reference = reference;
  sys::fs::remove_directories(options.directory);
  if (failed(emitArtifact(*module, options))) {
    writeRemarks();
    error = "compiling the model failed (see above)";
    return false;
  }
  if (!writeRemarks())
    return false;
  // Only the reference was missing: it joins the cached GPU variants.
  std::string from =
      gpuCached ? options.directory + "/ref.so" : options.directory;
  std::string to = gpuCached ? directory + "/ref.so" : directory;
  if (!gpuCached)
    sys::fs::remove_directories(directory);
  if (std::error_code ec = sys::fs::rename(from, to)) {
    error = "cannot move the artifact to " + to + ": " + ec.message();
    return false;
  }
  if (gpuCached)
    sys::fs::remove_directories(options.directory);
  seconds = since(start);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  registerCachetPasses();
  registerCachetConversionPasses();
  // --mlir-timing and the other pass-manager options (hidden from --help).
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(generateCategory);
  cl::ParseCommandLineOptions(argc, argv, "cachet-generate\n");

  if (modelFile.empty() == randomSpec.empty())
    return fail("give one of --model=FILE.gguf and --random=SPEC");
  std::string error;
  generate::BenchOptions bench;
  if (benchMode || json) {
    // Checked before any weights are written or functions compiled.
    if (!generate::parseDepths(benchDepths, bench.depths, error))
      return fail(error);
    if (benchPrompt < 0 || benchGen < 0)
      return fail("--bench-prompt and --bench-gen take a count >= 0");
  }
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

  // The model file: given, or random weights written as GGUF first (not
  // with --compile-only: the functions need the shapes alone).
  std::string path = modelFile;
  gguf::LlamaConfig config;
  generate::ModelOptions model;
  if (!randomSpec.empty()) {
    gguf::RandomOptions random;
    random.seed = seed;
    if (!gguf::parseLlamaSpec(randomSpec, config, error) ||
        !gguf::parseType(weightType, random.weightType))
      return fail(error.empty() ? "--type: unknown type '" + weightType + "'"
                                : "--random: " + error);
    random.embeddingType = gguf::defaultEmbeddingType(random.weightType);
    model.tensorTypes = gguf::randomTensorTypes(config, random);
    std::string name = randomSpec + "-" + weightType + "-" +
                       std::to_string(seed.getValue()) + ".gguf";
    std::replace(name.begin(), name.end(), ',', '_');
    std::replace(name.begin(), name.end(), '=', '-');
    path = std::string(cache) + "/" + name;
    if (!compileOnly) {
      std::cerr << "cachet-generate: writing random weights to " << path
                << "\n";
      if (!gguf::writeRandomLlama(config, random, path, error))
        return fail(error);
    }
  }
  auto loadStart = std::chrono::steady_clock::now();
  gguf::File file;
  if (!compileOnly || randomSpec.empty()) {
    std::cerr << "cachet-generate: loading " << path << "\n";
    if (!gguf::read(path, file, error) ||
        !gguf::readLlamaConfig(file, config, error))
      return fail(error);
    model.tensorTypes = gguf::tensorTypes(file);
  }

  model.weights = weightForm;
  model.kv = kvFormat;
  model.dtype = dtype;
  model.ctx = ctx;
  model.ubatch = ubatch;
  modelgen::Options prefill, decode;
  if (!generate::modelOptions(config, model, prefill, decode, error))
    return fail(error);

  std::vector<generate::HostTensor> weights;
  if (!compileOnly &&
      !generate::loadWeights(file, config, decode, weights, error))
    return fail(error);
  double loadSeconds = since(loadStart);

  // Compile both functions once (cached by their IR and the options).
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<CachetDialect>();
  std::string artifacts[2], texts[2];
  for (int f = 0; f < 2; ++f) {
    const modelgen::Options &o = f == 0 ? prefill : decode;
    std::ostringstream text;
    if (!modelgen::generate(o, text, error))
      return fail(error);
    texts[f] = text.str();
    hash_code key = hash_combine(texts[f], compileOptions(), selfStamp());
    char name[40];
    std::snprintf(name, sizeof(name), "%s-%016llx",
                  f == 0 ? "prefill" : "decode",
                  static_cast<unsigned long long>(size_t(key)));
    artifacts[f] = std::string(cache) + "/" + name;
    std::cerr << "cachet-generate: compiling "
              << (f == 0 ? "prefill" : "decode") << " (T = " << o.tokens
              << ") into " << artifacts[f] << "\n";
  }
  // The two functions compile at once, each in its own context (the
  // host's LLVM targets registered first, here).
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto compileStart = std::chrono::steady_clock::now();
  double seconds[2] = {0, 0};
  bool cached[2] = {false, false}, ok[2] = {true, true};
  std::string errors[2];
  std::thread prefillThread([&] {
    ok[0] = compile(texts[0], artifacts[0], registry, check, seconds[0],
                    cached[0], errors[0]);
  });
  ok[1] = compile(texts[1], artifacts[1], registry, check, seconds[1],
                  cached[1], errors[1]);
  prefillThread.join();
  for (int f = 0; f < 2; ++f) {
    if (!ok[f])
      return fail(errors[f]);
    if (cached[f])
      std::cerr << "cachet-generate:   " << (f == 0 ? "prefill" : "decode")
                << " (cached)\n";
  }
  double compileSeconds = cached[0] && cached[1] ? 0.0 : since(compileStart);

  if (compileOnly) {
    std::cout << "prefill: " << artifacts[0] << "\ndecode: " << artifacts[1]
              << "\ncompile: " << compileSeconds << " s\n";
    return 0;
  }
  if (benchMode || json) {
    bench.promptTokens = benchPrompt;
    bench.genTokens = benchGen;
    bench.repetitions = benchReps;
    bench.compareRewrites = !benchOnOnly;
    bench.json = json;
    bench.seed = seed;
    bench.modelName = randomSpec.empty()
                          ? modelFile.getValue()
                          : "random " + randomSpec.getValue() + " (" +
                                weightType.getValue() + ")";
    bench.target = target;
    bench.loadSeconds = loadSeconds;
    bench.compileSeconds = compileSeconds;
    return generate::runBench(config, prefill, decode, weights, artifacts[0],
                              artifacts[1], bench, std::cout, std::cerr);
  }
  generate::GenerationOptions run;
  if (!prompt.empty()) {
    if (!generate::parsePrompt(prompt, config.vocab, run.prompt, error))
      return fail(error);
  } else {
    run.prompt = generate::seededPrompt(promptLength, config.vocab, seed);
  }
  run.nPredict = nPredict;
  run.check = check;
  run.compareRewrites = compareRewrites;
  run.tolerance = tolerance;
  run.dumpLogits = dumpLogits;
  run.loadSeconds = loadSeconds;
  run.compileSeconds = compileSeconds;
  run.target = target;
  return generate::runGeneration(config, prefill, decode, weights, artifacts[0],
                                 artifacts[1], run, std::cout, std::cerr);
}
