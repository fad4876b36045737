//===- cachet-gen.cpp - write a Llama layer or model as front-end MLIR ----===//
//
// cachet-gen [--kind=layer|model] [--hidden=N] ... [-o FILE]
//            [--write-inputs=PREFIX]
//
// Writes the function cachet/ModelGen/ModelGen.h describes, for tests and
// benchmarks. Every bad option is reported with its name and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "cachet/ModelGen/ModelGen.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

using namespace cachet::modelgen;

namespace {

const char *const usage = R"(usage: cachet-gen [options]

Writes one Llama-architecture decoder layer (func.func @layer) or a whole
model (func.func @model) as MLIR in the form ML front ends emit: linalg on
tensors over func, arith, math and tensor (packed KV formats use cachet's
block types with cachet.quantize / cachet.dequantize).

  @layer(%x: [T][H], weights..., %k_cache, %v_cache [, %k_scales, %v_scales],
         %cos: [S][Dh] f32, %sin: [S][Dh] f32) -> (out [T][H], caches...)
  @model(%ids: [T] i32, weights..., caches..., %cos, %sin)
         -> (next token [1] i32, logits [T][vocab] f32, caches...)

Shapes:
  --kind=layer|model      what to write (default layer)
  --hidden=N              hidden size H (default 128)
  --heads=N               query heads Hq (default 4)
  --kv-heads=N            KV heads Hkv, dividing Hq (default 2)
  --head-dim=N            head dimension Dh, even; a multiple of 32 for
                          quantized KV (default 32)
  --ffn=N                 MLP size (default 256)
  --vocab=N               vocabulary size, model only (default 256)
  --layers=N              layers, model only (default 2)
  --tokens=T              new tokens; 1 is decode (default 4)
  --past=P                positions already cached (default 12)
  --max-seq=S             cache length, at least P + T (default P + T)
  --eps=X                 RMSNorm epsilon (default 1e-5)
Types and spellings:
  --dtype=f16|bf16        activations and dense weights (default f16); norms,
                          softmax and accumulation are f32
  --kv=FORMAT             f16, bf16, q8_0 (split i8 values + f16 scales,
                          quantized with generics), or packed ggml blocks:
                          q4_0, q4_1, q5_0, q5_1, iq4_nl, q8_0-packed
                          (default f16)
  --round=away|even       q8_0 rounding: math.round (ggml's roundf, the
                          default) or math.roundeven
  --weights=args|constants  {cachet.weight} arguments (default) or
                          arith.constant dense<...> of seeded values
  --weight-format=FORMAT  projection weights (Q, K, V, O, gate, up, down,
                          LM head): dense in --dtype (default), or packed
                          ggml blocks read through cachet.dequantize: q8_0,
                          q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K,
                          q5_K, q6_K, tq1_0, tq2_0 (--weights=args; the row
                          width a multiple of the block's 32 or 256 values)
  --matmul=named|generic|matvec|transposed
                          linalg.matmul / batch_matmul (default), contraction
                          generics, linalg.matvec projections (T = 1), or
                          torch-mlir's aten.linear: a linalg.transpose of
                          the weight feeding a default-map linalg.matmul
  --softmax=named|decomposed
                          linalg.softmax (default) or max / exp / sum / div
                          generics
  --position=static|dynamic
                          new tokens at --past (default), or at a run-time
                          `pos: tensor<1xi64>` argument over the whole
                          --max-seq cache (one function for every step)
  --return-caches=true|false
                          return the updated caches (default true)
  --last-logits=true|false
                          --kind=model: the LM head on the last token's row
                          only (with --position=dynamic and T > 1, row
                          `rows - 1` of a run-time `rows: tensor<1xi64>`
                          argument after `pos`); default false: every row
  --seed=N                seed of constant weights and inputs (default 1)
Output:
  -o FILE                 write the MLIR to FILE (default stdout)
  --write-inputs=PREFIX   also write one input file per argument,
                          PREFIX<i>.bin, and PREFIX.args holding the
                          matching `--input=...` flags of cachet-run
  --help                  this text
)";

/// Parses a decimal integer; false unless all of `text` is one.
bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  value = v;
  return true;
}

int fail(const std::string &message) {
  std::cerr << "cachet-gen: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string output = "-", inputsPrefix;
  bool haveVocab = false, haveLayers = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      std::cout << usage;
      return 0;
    }
    std::string flag = arg, value;
    bool hasValue = false;
    if (arg == "-o") {
      if (i + 1 >= argc)
        return fail("-o: expects a file name");
      output = argv[++i];
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      return fail("unexpected argument '" + arg + "' (see --help)");
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    } else if (i + 1 < argc) {
      value = argv[++i];
      hasValue = true;
    }
    if (!hasValue)
      return fail(flag + ": expects a value");

    struct IntFlag {
      const char *name;
      int64_t *target;
    };
    const IntFlag intFlags[] = {
        {"--hidden", &options.hidden},    {"--heads", &options.heads},
        {"--kv-heads", &options.kvHeads}, {"--head-dim", &options.headDim},
        {"--ffn", &options.ffn},          {"--vocab", &options.vocab},
        {"--layers", &options.layers},    {"--tokens", &options.tokens},
        {"--past", &options.past},        {"--max-seq", &options.maxSeq}};
    bool done = false;
    for (const IntFlag &f : intFlags)
      if (flag == f.name) {
        if (!parseInt(value, *f.target))
          return fail(flag + ": expects an integer, got '" + value + "'");
        done = true;
      }
    if (done) {
      haveVocab |= flag == "--vocab";
      haveLayers |= flag == "--layers";
      continue;
    }

    struct EnumFlag {
      const char *name;
      const std::vector<EnumName> &names;
      int *target;
    };
    int kind = int(options.kind), dtype = int(options.dtype),
        kv = int(options.kv), weights = int(options.weights),
        rounding = int(options.rounding), matmul = int(options.matmul),
        softmax = int(options.softmax), position = int(options.position);
    const EnumFlag enumFlags[] = {{"--kind", kindNames(), &kind},
                                  {"--dtype", dtypeNames(), &dtype},
                                  {"--kv", kvFormatNames(), &kv},
                                  {"--weights", weightModeNames(), &weights},
                                  {"--round", roundingNames(), &rounding},
                                  {"--matmul", matmulFormNames(), &matmul},
                                  {"--softmax", softmaxFormNames(), &softmax},
                                  {"--position", positionNames(), &position}};
    for (const EnumFlag &f : enumFlags)
      if (flag == f.name) {
        if (!parseEnum(f.names, value, *f.target))
          return fail(flag + ": unknown value '" + value + "' (expected " +
                      enumList(f.names) + ")");
        done = true;
      }
    if (done) {
      options.kind = Kind(kind);
      options.dtype = DType(dtype);
      options.kv = KVFormat(kv);
      options.weights = WeightMode(weights);
      options.rounding = Rounding(rounding);
      options.matmul = MatmulForm(matmul);
      options.softmax = SoftmaxForm(softmax);
      options.position = Position(position);
      continue;
    }

    if (flag == "--eps") {
      char *end = nullptr;
      errno = 0;
      options.eps = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno != 0)
        return fail("--eps: expects a number, got '" + value + "'");
    } else if (flag == "--seed") {
      int64_t seed;
      if (!parseInt(value, seed) || seed < 0)
        return fail("--seed: expects a non-negative integer, got '" + value +
                    "'");
      options.seed = static_cast<uint64_t>(seed);
    } else if (flag == "--return-caches") {
      if (value != "true" && value != "false")
        return fail("--return-caches: expects true or false, got '" + value +
                    "'");
      options.returnCaches = value == "true";
    } else if (flag == "--last-logits") {
      if (value != "true" && value != "false")
        return fail("--last-logits: expects true or false, got '" + value +
                    "'");
      options.lastLogits = value == "true";
    } else if (flag == "--weight-format") {
      options.weightFormat = value == "dense" ? "" : value;
    } else if (flag == "--write-inputs") {
      if (value.empty())
        return fail("--write-inputs: expects a file name prefix");
      inputsPrefix = value;
    } else {
      return fail("unknown option '" + flag + "' (see --help)");
    }
  }
  if (options.kind == Kind::Layer && (haveVocab || haveLayers))
    return fail(std::string(haveVocab ? "--vocab" : "--layers") +
                ": only applies to --kind=model");

  std::string error = validate(options);
  if (!error.empty())
    return fail(error);

  if (!inputsPrefix.empty()) {
    std::vector<std::string> files;
    if (!writeInputs(options, inputsPrefix, files, error))
      return fail("--write-inputs: " + error);
    std::ofstream argsFile(inputsPrefix + ".args");
    for (size_t i = 0; i < files.size(); ++i)
      argsFile << (i ? " " : "") << "--input=" << files[i];
    argsFile << "\n";
    if (!argsFile)
      return fail("--write-inputs: cannot write " + inputsPrefix + ".args");
  }

  if (output == "-") {
    if (!generate(options, std::cout, error))
      return fail(error);
    return std::cout.flush() ? 0 : fail("cannot write the output");
  }
  std::ofstream file(output);
  if (!file)
    return fail("-o: cannot open " + output);
  if (!generate(options, file, error))
    return fail(error);
  file.close();
  if (!file)
    return fail("-o: cannot write " + output);
  return 0;
}
