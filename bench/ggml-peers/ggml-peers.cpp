//===- ggml-peers.cpp - Time ggml's kernels at cachet's shapes ------------===//
//
// Builds one-op ggml graphs, FLASH_ATTN_EXT and MUL_MAT at the Llama-3-8B
// shapes of cachet's benchmarks, the way llama.cpp builds them, and times
// ggml_backend_graph_compute on one backend:
//
// * attention as cachet-bench's "ppN @ dD" (bench/make-suite.py): N new
//   queries after D cached positions, query i seeing positions [0, D + i].
//   As llama.cpp, the op reads the first L = D + N positions rounded up to a
//   multiple of 256 of a token-major [positions][8][128] cache, K and V as
//   ggml_permute views per head, with an f16 mask [L][N] that hides the
//   future and the padding, F32 precision, Q f32;
// * MUL_MAT of a typed weight, in a buffer marked as weights, and f32
//   activations.
//
// It links the libggml of a checkout that the user fetched
// (bench/ggml-peers.sh builds it); no ggml code is copied here.
//
// A sample is one graph holding R copies of the op (R chosen so that the
// graph runs for about --target-us; test-backend-ops' perf mode also
// repeats an op within one graph, so that launch and synchronisation costs
// are amortised); its time is the graph's host wall time divided by R.
// That is not cachet-bench's kernel span (device events around one call):
// here the gaps between R launches (one CUDA graph where ggml uses them)
// count, and so does every kernel ggml runs for the op (a conversion of
// quantized K/V to f16 before CUDA's tensor-core attention, the
// quantization of activations before a quantized mat-vec). The copies
// rotate over C distinct weight (or K/V cache) buffers holding at least
// --rotate-mib together, so that successive copies read memory, not the
// last level cache; --rotate-mib=0 gives one buffer, caches warm.
//
// Every case is checked: two rows of the last op's output (the first and
// the last query, or activation column) against a double-precision
// reference on the dequantized inputs; the relative RMS error is reported
// and a case above 5% (or with a non-finite value) is marked failed.
//
//===----------------------------------------------------------------------===//

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpp.h"
#include "ggml.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string backend = "cpu";
  std::string json;
  std::string ggmlCommit = "unknown";
  int reps = 20;
  int warmup = 3;
  int threads = 0;
  int maxNodes = 256;
  int maxCopies = 64;
  double targetUs = 5000;
  size_t rotateBytes = size_t(256) << 20;
  std::vector<int64_t> depths = {4096, 32768, 65536};
  std::vector<int64_t> batches = {1, 4, 512};
  /// Weights as {rows M, columns K}: ne0 = K, out = W x (K-long columns).
  std::vector<std::pair<int64_t, int64_t>> weights = {
      {4096, 4096}, {14336, 4096}, {4096, 14336}};
  bool attention = true;
  bool matmul = true;
};

/// One timed case, a row of the table and an object of the JSON.
struct Result {
  std::string op;
  std::string shape;
  std::string type;
  int64_t batch = 0;
  int64_t rows = 0, cols = 0;                                      // MUL_MAT
  int64_t headSize = 0, heads = 0, kvHeads = 0, depth = 0, kv = 0; // FA
  bool supported = false;
  std::string error;
  double medianUs = 0, minUs = 0, maxUs = 0;
  int nodes = 0, copies = 0;
  double weightBytes = 0;
  double flops = 0;
  double checkError = 0;
};

/// Median, min and max of per-op times, and R, the ops per graph.
struct Timing {
  bool supported = false;
  std::string error;
  double medianUs = 0, minUs = 0, maxUs = 0;
  int nodes = 0;
  /// The output of the graph's last op.
  std::vector<float> output;
};

/// The largest relative RMS error a case passes with: ggml rounds
/// activations to q8_1/q8_K, f16 or bf16 where its kernels do.
constexpr double maxCheckError = 0.05;

/// Sampled output positions of a case and their reference values.
struct Check {
  std::vector<size_t> positions;
  std::vector<double> values;
};

/// Builds one op into a graph context, reading input copy `copy`.
using NodeBuilder = std::function<ggml_tensor *(ggml_context *, int copy)>;

/// Prints `message` and exits with status 1.
[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "ggml-peers: %s\n", message.c_str());
  std::exit(1);
}

/// `value` with `digits` decimals.
std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

/// `value` in exponent notation, or null where it is not finite (JSON).
std::string scientific(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[64];
  std::snprintf(text, sizeof(text), "%.3e", value);
  return text;
}

/// A comma-separated list of positive integers.
std::vector<int64_t> parseList(const std::string &text) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    char *rest = nullptr;
    std::string item = text.substr(start, end - start);
    long long value = std::strtoll(item.c_str(), &rest, 10);
    if (item.empty() || *rest != '\0' || value <= 0)
      fail("not a list of positive integers: '" + text + "'");
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

/// The positive (or, where allowed, zero) integer value of option `name`.
int parsePositive(const std::string &name, const std::string &text,
                  bool zeroAllowed = false) {
  char *rest = nullptr;
  long value = std::strtol(text.c_str(), &rest, 10);
  if (text.empty() || *rest != '\0' || value < (zeroAllowed ? 0 : 1))
    fail("bad value for " + name + ": '" + text + "'");
  return int(value);
}

/// Prints the options.
void usage() {
  std::printf(
      "usage: ggml-peers [--backend=cpu|cuda|vulkan] [--quick] [--reps=N]\n"
      "  [--warmup=N] [--depths=D,...] [--batches=N,...] [--only=fa|mm]\n"
      "  [--threads=N] [--rotate-mib=N] [--target-us=N] [--max-nodes=N]\n"
      "  [--json=FILE] [--ggml-commit=TEXT]\n"
      "FLASH_ATTN_EXT: head size 128, 32 query heads, 8 KV heads, K/V f16,\n"
      "  q8_0, q4_0; N queries after D cached positions (ppN @ dD), causal,\n"
      "  KV length D + N padded to 256; --depths default 4096,32768,65536,\n"
      "  --quick 256.\n"
      "MUL_MAT: weights 4096x4096, 14336x4096, 4096x14336 (rows x cols,\n"
      "  ne0 = cols; --quick 4096x4096), bf16 f16 q8_0 q4_0 q2_K q4_K q5_K "
      "q6_K\n"
      "  q4_1 q5_0 q5_1 iq4_nl tq2_0 tq1_0,\n"
      "  times f32 activations of N columns.\n"
      "N: --batches (default 1,4,512). --reps (default 20, --quick 5).\n");
}

/// The options of the command line; exits on a bad one.
Options parseOptions(int argc, char **argv) {
  Options opts;
  bool quick = false, depthsGiven = false, repsGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (name == "--help" || name == "-h") {
      usage();
      std::exit(0);
    } else if (name == "--backend") {
      if (value != "cpu" && value != "cuda" && value != "vulkan")
        fail("--backend must be cpu, cuda or vulkan, not '" + value + "'");
      opts.backend = value;
    } else if (name == "--quick") {
      quick = true;
    } else if (name == "--reps") {
      opts.reps = parsePositive(name, value);
      repsGiven = true;
    } else if (name == "--warmup") {
      opts.warmup = parsePositive(name, value);
    } else if (name == "--depths") {
      opts.depths = parseList(value);
      depthsGiven = true;
    } else if (name == "--batches") {
      opts.batches = parseList(value);
    } else if (name == "--only") {
      if (value != "fa" && value != "mm")
        fail("--only must be fa or mm, not '" + value + "'");
      opts.attention = value == "fa";
      opts.matmul = value == "mm";
    } else if (name == "--threads") {
      opts.threads = parsePositive(name, value);
    } else if (name == "--rotate-mib") {
      opts.rotateBytes = size_t(parsePositive(name, value, true)) << 20;
    } else if (name == "--target-us") {
      opts.targetUs = parsePositive(name, value);
    } else if (name == "--max-nodes") {
      opts.maxNodes = parsePositive(name, value);
    } else if (name == "--json") {
      opts.json = value;
    } else if (name == "--ggml-commit") {
      opts.ggmlCommit = value;
    } else {
      usage();
      fail("unknown argument '" + arg + "'");
    }
  }
  if (quick) {
    if (!depthsGiven)
      opts.depths = {256};
    if (!repsGiven)
      opts.reps = 5;
    opts.weights = {{4096, 4096}};
  }
  return opts;
}

/// Uniform values in [-1, 1) from a xorshift64* stream.
std::vector<float> randomValues(size_t count, uint64_t seed) {
  std::vector<float> values(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float &value : values) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t bits = state * 0x2545F4914F6CDD1Dull;
    value = float(bits >> 40) / float(1 << 23) - 1.0f;
  }
  return values;
}

/// The values that `bytes` in `type` encode, ggml's own decoder.
std::vector<float> decode(ggml_type type, const std::vector<uint8_t> &bytes,
                          size_t count) {
  std::vector<float> values(count);
  ggml_get_type_traits(type)->to_float(bytes.data(), values.data(),
                                       int64_t(count));
  return values;
}

/// Relative RMS error of `got` against `want`, infinite where `got` has a
/// non-finite value.
double relativeError(const std::vector<float> &got,
                     const std::vector<double> &want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i]))
      return INFINITY;
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// The indices the check samples out of `count`: the first and the last.
std::vector<int64_t> firstAndLast(int64_t count) {
  if (count == 1)
    return {0};
  return {0, count - 1};
}

/// Rows of `rowLength` values in `type`'s encoding, ggml's own quantizer.
std::vector<uint8_t> encodeRows(ggml_type type,
                                const std::vector<float> &values,
                                int64_t rowLength) {
  int64_t rows = int64_t(values.size()) / rowLength;
  std::vector<uint8_t> bytes(ggml_row_size(type, rowLength) * rows);
  ggml_quantize_chunk(type, values.data(), bytes.data(), 0, rows, rowLength,
                      nullptr);
  return bytes;
}

/// A context for `tensors` tensors without data and a graph of
/// `graphNodes` nodes.
ggml_context_ptr newContext(size_t tensors, size_t graphNodes = 0) {
  ggml_init_params params = {
      ggml_tensor_overhead() * tensors +
          (graphNodes ? ggml_graph_overhead_custom(graphNodes, false) : 0),
      nullptr, /*no_alloc=*/true};
  return ggml_context_ptr(ggml_init(params));
}

/// A backend buffer holding every tensor of `ctx`; exits naming `what`
/// where the backend has no room.
ggml_backend_buffer_ptr allocateAll(ggml_context *ctx, ggml_backend_t backend,
                                    const std::string &what) {
  ggml_backend_buffer_ptr buffer(ggml_backend_alloc_ctx_tensors(ctx, backend));
  if (!buffer)
    fail("cannot allocate " + what);
  return buffer;
}

/// A view of `t` with dimensions 1 and 2 swapped, given the data of `t`.
ggml_tensor *swapDims12(ggml_context *ctx, ggml_tensor *t) {
  ggml_tensor *view = ggml_permute(ctx, t, 0, 2, 1, 3);
  if (ggml_backend_view_init(view) != GGML_STATUS_SUCCESS)
    fail("cannot place a view");
  return view;
}

/// How many distinct input buffers of `bytes` fill --rotate-mib.
int copiesFor(size_t bytes, const Options &opts) {
  size_t wanted = (opts.rotateBytes + bytes - 1) / bytes;
  return int(std::clamp<size_t>(wanted, 1, size_t(opts.maxCopies)));
}

/// Runs `graph` once; its wall time in microseconds.
double graphUs(ggml_backend_t backend, ggml_cgraph *graph) {
  auto start = std::chrono::steady_clock::now();
  ggml_status status = ggml_backend_graph_compute(backend, graph);
  auto end = std::chrono::steady_clock::now();
  if (status != GGML_STATUS_SUCCESS)
    fail(std::string("graph compute failed: ") + ggml_status_to_string(status));
  return std::chrono::duration<double, std::micro>(end - start).count();
}

/// Room for `ops` ops and their views (at most 8 tensors each, leaves
/// included) in a context and a graph.
size_t graphSize(int ops) { return 8 * size_t(ops) + 16; }

/// Times the op `build` makes: a one-node graph to size R, then --reps
/// samples of an R-node graph, all nodes writing one output buffer.
Timing timeOp(ggml_backend_t backend, const NodeBuilder &build, int copies,
              const Options &opts) {
  Timing timing;
  ggml_context_ptr probeCtx = newContext(graphSize(1));
  ggml_tensor *probe = build(probeCtx.get(), 0);
  if (!ggml_backend_supports_op(backend, probe)) {
    timing.error = "not supported by the backend";
    return timing;
  }
  timing.supported = true;
  // The backend's size for the output, with any scratch it appends (CUDA's
  // flash attention keeps f16 copies of quantized K/V there).
  size_t outBytes = ggml_backend_buft_get_alloc_size(
      ggml_backend_get_default_buffer_type(backend), probe);
  ggml_backend_buffer_ptr out(ggml_backend_alloc_buffer(backend, outBytes));
  if (!out)
    fail("cannot allocate the output buffer");

  auto makeGraph = [&](ggml_context *ctx, int nodes) {
    ggml_cgraph *graph = ggml_new_graph_custom(ctx, graphSize(nodes), false);
    for (int i = 0; i < nodes; ++i) {
      ggml_tensor *node = build(ctx, i % copies);
      if (ggml_backend_tensor_alloc(out.get(), node,
                                    ggml_backend_buffer_get_base(out.get())) !=
          GGML_STATUS_SUCCESS)
        fail("cannot place the output");
      ggml_build_forward_expand(graph, node);
    }
    return graph;
  };

  ggml_context_ptr pilotCtx = newContext(graphSize(1), graphSize(1));
  ggml_cgraph *pilot = makeGraph(pilotCtx.get(), 1);
  double pilotUs = graphUs(backend, pilot);
  for (int i = 1; i < opts.warmup; ++i)
    pilotUs = std::min(pilotUs, graphUs(backend, pilot));
  timing.nodes = int(
      std::clamp<double>(std::ceil(opts.targetUs / pilotUs), 1, opts.maxNodes));

  ggml_context_ptr ctx =
      newContext(graphSize(timing.nodes), graphSize(timing.nodes));
  ggml_cgraph *graph = makeGraph(ctx.get(), timing.nodes);
  for (int i = 0; i < opts.warmup; ++i)
    graphUs(backend, graph);
  std::vector<double> samples;
  for (int i = 0; i < opts.reps; ++i)
    samples.push_back(graphUs(backend, graph) / timing.nodes);
  std::sort(samples.begin(), samples.end());
  size_t mid = samples.size() / 2;
  timing.medianUs =
      samples.size() % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  timing.minUs = samples.front();
  timing.maxUs = samples.back();

  ggml_tensor *last = ggml_graph_node(graph, -1);
  timing.output.resize(ggml_nelements(last));
  ggml_backend_tensor_get(last, timing.output.data(), 0, ggml_nbytes(last));
  return timing;
}

/// Appends `result` with its timing and `check` of its output.
void record(std::vector<Result> &results, Result result, const Timing &t,
            int copies, const Check &check) {
  result.supported = t.supported;
  result.error = t.error;
  if (t.supported) {
    std::vector<float> got;
    for (size_t position : check.positions)
      got.push_back(t.output[position]);
    result.checkError = relativeError(got, check.values);
    if (!(result.checkError <= maxCheckError))
      result.error = "check failed";
  }
  result.medianUs = t.medianUs;
  result.minUs = t.minUs;
  result.maxUs = t.maxUs;
  result.nodes = t.nodes;
  result.copies = std::min(copies, std::max(t.nodes, 1));
  std::fprintf(
      stderr, "  %s %s %s n=%lld: %s\n", result.op.c_str(),
      result.shape.c_str(), result.type.c_str(), (long long)result.batch,
      !t.supported ? t.error.c_str() : (fixed(t.medianUs, 2) + " us").c_str());
  results.push_back(std::move(result));
}

/// Causal mask rows [rows][kv] for `batch` queries after `depth` positions:
/// query i sees positions [0, depth + i]; rows past `batch` (padding that
/// older ggml asks for) see nothing.
std::vector<ggml_fp16_t> causalMask(int64_t kv, int64_t depth, int64_t batch,
                                    int64_t rows) {
  std::vector<float> mask(size_t(kv * rows), -INFINITY);
  for (int64_t i = 0; i < batch; ++i)
    std::fill_n(mask.begin() + i * kv, depth + i + 1, 0.0f);
  std::vector<ggml_fp16_t> half(mask.size());
  ggml_fp32_to_fp16_row(mask.data(), half.data(), int64_t(mask.size()));
  return half;
}

constexpr int64_t headSize = 128, heads = 32, kvHeads = 8;

/// The attention of the first and last query, every head, from Q
/// [batch][heads][headSize] and the dequantized caches
/// [positions][kvHeads][headSize]; the op's output is
/// [batch][heads][headSize].
Check attentionCheck(const std::vector<float> &q, const std::vector<float> &k,
                     const std::vector<float> &v, int64_t batch,
                     int64_t depth) {
  const double scale = 1.0 / std::sqrt(double(headSize));
  Check check;
  for (int64_t i : firstAndLast(batch)) {
    for (int64_t h = 0; h < heads; ++h) {
      const float *query = &q[(i * heads + h) * headSize];
      int64_t group = h / (heads / kvHeads), seen = depth + i + 1;
      std::vector<double> weight(seen);
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < seen; ++j) {
        const float *key = &k[(j * kvHeads + group) * headSize];
        double dot = 0;
        for (int64_t d = 0; d < headSize; ++d)
          dot += double(query[d]) * key[d];
        weight[j] = dot * scale;
        top = std::max(top, weight[j]);
      }
      for (double &w : weight)
        sum += w = std::exp(w - top);
      for (int64_t d = 0; d < headSize; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < seen; ++j)
          acc += weight[j] * v[(j * kvHeads + group) * headSize + d];
        check.positions.push_back(size_t((i * heads + h) * headSize + d));
        check.values.push_back(acc / sum);
      }
    }
  }
  return check;
}

/// The first and last column of W x for W [rows][cols] and x [batch][cols];
/// the op's output is [batch][rows].
Check matmulCheck(const std::vector<float> &w, const std::vector<float> &x,
                  int64_t rows, int64_t cols, int64_t batch) {
  Check check;
  for (int64_t n : firstAndLast(batch)) {
    for (int64_t m = 0; m < rows; ++m) {
      double acc = 0;
      for (int64_t c = 0; c < cols; ++c)
        acc += double(w[m * cols + c]) * x[n * cols + c];
      check.positions.push_back(size_t(n * rows + m));
      check.values.push_back(acc);
    }
  }
  return check;
}

/// FLASH_ATTN_EXT as llama.cpp's attention with a KV cache builds it.
void runAttention(ggml_backend_t backend, const Options &opts,
                  std::vector<Result> &results) {
  const float scale = 1.0f / std::sqrt(float(headSize));
  const int64_t maxBatch =
      *std::max_element(opts.batches.begin(), opts.batches.end());
  for (int64_t depth : opts.depths) {
    // The cache: [positions][kvHeads][headSize], token-major as llama.cpp's,
    // long enough for every batch.
    const int64_t positions = GGML_PAD(depth + maxBatch, 256);
    for (ggml_type type : {GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0}) {
      size_t cacheBytes = ggml_row_size(type, headSize) * kvHeads * positions;
      int copies = copiesFor(2 * cacheBytes, opts);
      ggml_context_ptr cacheCtx = newContext(2 * copies);
      std::vector<ggml_tensor *> keys, values;
      for (int c = 0; c < copies; ++c) {
        keys.push_back(ggml_new_tensor_3d(cacheCtx.get(), type, headSize,
                                          kvHeads, positions));
        values.push_back(ggml_new_tensor_3d(cacheCtx.get(), type, headSize,
                                            kvHeads, positions));
      }
      ggml_backend_buffer_ptr cacheBuf =
          allocateAll(cacheCtx.get(), backend, "the K/V cache");
      size_t elements = size_t(headSize * kvHeads * positions);
      std::vector<uint8_t> k =
          encodeRows(type, randomValues(elements, 1), headSize);
      std::vector<uint8_t> v =
          encodeRows(type, randomValues(elements, 2), headSize);
      for (int c = 0; c < copies; ++c) {
        ggml_backend_tensor_set(keys[c], k.data(), 0, k.size());
        ggml_backend_tensor_set(values[c], v.data(), 0, v.size());
      }
      std::vector<float> kRef = decode(type, k, elements);
      std::vector<float> vRef = decode(type, v, elements);

      for (int64_t batch : opts.batches) {
        // llama.cpp's KV length: the used positions padded to 256.
        const int64_t kv = GGML_PAD(depth + batch, 256);
        int64_t maskRows = batch;
#ifdef GGML_KQ_MASK_PAD
        maskRows = GGML_PAD(batch, GGML_KQ_MASK_PAD);
#endif
        ggml_context_ptr inCtx = newContext(2);
        ggml_tensor *q = ggml_new_tensor_3d(inCtx.get(), GGML_TYPE_F32,
                                            headSize, heads, batch);
        ggml_tensor *mask =
            ggml_new_tensor_2d(inCtx.get(), GGML_TYPE_F16, kv, maskRows);
        ggml_backend_buffer_ptr inBuf =
            allocateAll(inCtx.get(), backend, "Q and the mask");
        std::vector<float> qValues =
            randomValues(size_t(headSize * heads * batch), 3);
        ggml_backend_tensor_set(q, qValues.data(), 0, ggml_nbytes(q));
        std::vector<ggml_fp16_t> maskValues =
            causalMask(kv, depth, batch, maskRows);
        ggml_backend_tensor_set(mask, maskValues.data(), 0, ggml_nbytes(mask));

        // The first kv positions of a cache, one view per head.
        auto heads3d = [&](ggml_context *ctx, ggml_tensor *cache) {
          ggml_tensor *used = ggml_view_3d(ctx, cache, headSize, kvHeads, kv,
                                           cache->nb[1], cache->nb[2], 0);
          if (ggml_backend_view_init(used) != GGML_STATUS_SUCCESS)
            fail("cannot place a view");
          return swapDims12(ctx, used);
        };
        NodeBuilder build = [&](ggml_context *ctx, int copy) {
          ggml_tensor *attn = ggml_flash_attn_ext(
              ctx, swapDims12(ctx, q), heads3d(ctx, keys[copy]),
              heads3d(ctx, values[copy]), mask, scale, 0.0f, 0.0f);
          ggml_flash_attn_ext_set_prec(attn, GGML_PREC_F32);
          return attn;
        };
        Result result;
        result.op = "FLASH_ATTN_EXT";
        result.shape = "pp" + std::to_string(batch) + " @ d" +
                       std::to_string(depth) + ", kv " + std::to_string(kv);
        result.type = ggml_type_name(type);
        result.batch = batch;
        result.headSize = headSize;
        result.heads = heads;
        result.kvHeads = kvHeads;
        result.depth = depth;
        result.kv = kv;
        // Q K^T and P V over the unmasked positions, as make-suite.py counts.
        double visible = double(batch) * double(depth) +
                         double(batch) * double(batch + 1) / 2;
        result.flops = 4.0 * double(heads) * double(headSize) * visible;

        record(results, result, timeOp(backend, build, copies, opts), copies,
               attentionCheck(qValues, kRef, vRef, batch, depth));
      }
    }
  }
}

/// MUL_MAT of a typed weight and f32 activations, as llama.cpp's linear
/// layers.
void runMatmul(ggml_backend_t backend, const Options &opts,
               std::vector<Result> &results) {
  for (auto [rows, cols] : opts.weights) {
    for (ggml_type type :
         {GGML_TYPE_BF16, GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,
          GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
          GGML_TYPE_Q6_K,
          GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL,
          GGML_TYPE_TQ2_0, GGML_TYPE_TQ1_0}) {
      size_t weightBytes = ggml_row_size(type, cols) * rows;
      int copies = copiesFor(weightBytes, opts);
      ggml_context_ptr weightCtx = newContext(copies);
      std::vector<ggml_tensor *> weights;
      for (int c = 0; c < copies; ++c)
        weights.push_back(
            ggml_new_tensor_2d(weightCtx.get(), type, cols, rows));
      ggml_backend_buffer_ptr weightBuf =
          allocateAll(weightCtx.get(), backend, "the weights");
      ggml_backend_buffer_set_usage(weightBuf.get(),
                                    GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
      std::vector<uint8_t> w =
          encodeRows(type, randomValues(size_t(rows * cols), 4), cols);
      for (ggml_tensor *weight : weights)
        ggml_backend_tensor_set(weight, w.data(), 0, w.size());
      std::vector<float> wRef = decode(type, w, size_t(rows * cols));

      for (int64_t batch : opts.batches) {
        ggml_context_ptr inCtx = newContext(1);
        ggml_tensor *x =
            ggml_new_tensor_2d(inCtx.get(), GGML_TYPE_F32, cols, batch);
        ggml_backend_buffer_ptr inBuf =
            allocateAll(inCtx.get(), backend, "the activations");
        std::vector<float> xValues = randomValues(size_t(cols * batch), 5);
        ggml_backend_tensor_set(x, xValues.data(), 0, ggml_nbytes(x));

        NodeBuilder build = [&](ggml_context *ctx, int copy) {
          return ggml_mul_mat(ctx, weights[copy], x);
        };
        Result result;
        result.op = "MUL_MAT";
        result.shape = std::to_string(rows) + "x" + std::to_string(cols);
        result.type = ggml_type_name(type);
        result.batch = batch;
        result.rows = rows;
        result.cols = cols;
        result.weightBytes = double(weightBytes);
        result.flops = 2.0 * double(rows) * double(cols) * double(batch);

        record(results, result, timeOp(backend, build, copies, opts), copies,
               matmulCheck(wRef, xValues, rows, cols, batch));
      }
    }
  }
}

/// The first device of the backend --backend names, initialised.
ggml_backend_t initBackend(const Options &opts) {
  if (opts.backend == "cpu") {
    ggml_backend_t backend =
        ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
    if (!backend)
      fail("no CPU backend");
    ggml_backend_reg_t reg =
        ggml_backend_dev_backend_reg(ggml_backend_get_device(backend));
    auto setThreads =
        (ggml_backend_set_n_threads_t)ggml_backend_reg_get_proc_address(
            reg, "ggml_backend_set_n_threads");
    int threads =
        opts.threads ? opts.threads : int(std::thread::hardware_concurrency());
    if (setThreads)
      setThreads(backend, std::max(threads, 1));
    return backend;
  }
  std::string wanted = opts.backend == "cuda" ? "CUDA" : "Vulkan";
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_GPU ||
        wanted != ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)))
      continue;
    if (ggml_backend_t backend = ggml_backend_dev_init(dev, nullptr))
      return backend;
  }
  fail("no " + wanted + " device: was ggml built with it?");
}

/// `text` as a JSON string.
std::string jsonString(const std::string &text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      quoted += c;
  }
  return quoted + "\"";
}

/// The results as a markdown table.
void printTable(const std::vector<Result> &results) {
  std::printf("| op | shape | type | n | median us | [min, max] us | "
              "weight GB/s | TFLOP/s | R x C | check |\n"
              "|---|---|---|---:|---:|---|---:|---:|---|---|\n");
  for (const Result &r : results) {
    std::printf("| %s | %s | %s | %lld | ", r.op.c_str(), r.shape.c_str(),
                r.type.c_str(), (long long)r.batch);
    if (!r.supported) {
      std::printf("%s | | | | | |\n", r.error.c_str());
      continue;
    }
    std::string gbs = r.weightBytes
                          ? fixed(r.weightBytes / (r.medianUs * 1e3), 1)
                          : std::string();
    char check[64];
    std::snprintf(check, sizeof(check), "%.1e%s", r.checkError,
                  r.error.empty() ? "" : (" " + r.error).c_str());
    std::printf("%s | [%s, %s] | %s | %s | %d x %d | %s |\n",
                fixed(r.medianUs, 2).c_str(), fixed(r.minUs, 2).c_str(),
                fixed(r.maxUs, 2).c_str(), gbs.c_str(),
                fixed(r.flops / (r.medianUs * 1e6), 3).c_str(), r.nodes,
                r.copies, check);
  }
}

/// The options, the device and the results as JSON in `path`.
void writeJson(const std::string &path, const Options &opts,
               ggml_backend_t backend, const std::vector<Result> &results) {
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    fail("cannot write " + path);
  ggml_backend_dev_t dev = ggml_backend_get_device(backend);
  std::fprintf(file,
               "{\n  \"tool\": \"bench/ggml-peers.sh\",\n"
               "  \"ggml_commit\": %s,\n  \"backend\": %s,\n"
               "  \"device\": %s,\n  \"reps\": %d,\n  \"warmup\": %d,\n"
               "  \"target_us\": %s,\n  \"rotate_bytes\": %zu,\n"
               "  \"cases\": [",
               jsonString(opts.ggmlCommit).c_str(),
               jsonString(ggml_backend_name(backend)).c_str(),
               jsonString(ggml_backend_dev_description(dev)).c_str(), opts.reps,
               opts.warmup, fixed(opts.targetUs, 0).c_str(), opts.rotateBytes);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    std::fprintf(file, "%s\n    {\"op\": %s, \"type\": %s, \"n\": %lld, ",
                 i ? "," : "", jsonString(r.op).c_str(),
                 jsonString(r.type).c_str(), (long long)r.batch);
    if (r.op == "MUL_MAT")
      std::fprintf(file, "\"rows\": %lld, \"cols\": %lld, ", (long long)r.rows,
                   (long long)r.cols);
    else
      std::fprintf(file,
                   "\"head_size\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
                   "\"depth\": %lld, \"kv\": %lld, \"causal\": true, ",
                   (long long)r.headSize, (long long)r.heads,
                   (long long)r.kvHeads, (long long)r.depth, (long long)r.kv);
    std::fprintf(file, "\"supported\": %s", r.supported ? "true" : "false");
    if (r.supported) {
      std::fprintf(file,
                   ", \"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                   "\"nodes_per_graph\": %d, \"copies\": %d, \"flops\": %.0f, "
                   "\"check_rel_rms\": %s",
                   r.medianUs, r.minUs, r.maxUs, r.nodes, r.copies, r.flops,
                   scientific(r.checkError).c_str());
      if (r.weightBytes)
        std::fprintf(file,
                     ", \"weight_bytes\": %.0f, \"weight_bytes_per_s\": %.4e",
                     r.weightBytes, r.weightBytes / (r.medianUs * 1e-6));
    }
    if (!r.error.empty())
      std::fprintf(file, ", \"error\": %s", jsonString(r.error).c_str());
    std::fprintf(file, "}");
  }
  std::fprintf(file, "\n  ]\n}\n");
  std::fclose(file);
}

} // namespace

int main(int argc, char **argv) {
  Options opts = parseOptions(argc, argv);
  ggml_backend_ptr backend(initBackend(opts));
  ggml_backend_dev_t dev = ggml_backend_get_device(backend.get());
  std::fprintf(stderr, "ggml-peers: %s (%s), ggml %s\n",
               ggml_backend_name(backend.get()),
               ggml_backend_dev_description(dev), opts.ggmlCommit.c_str());

  std::vector<Result> results;
  if (opts.attention)
    runAttention(backend.get(), opts, results);
  if (opts.matmul)
    runMatmul(backend.get(), opts, results);

  std::printf("ggml %s, backend %s (%s); per op: median [min, max] of the "
              "wall time of %d graphs of R ops over C input copies, "
              "divided by R\n\n",
              opts.ggmlCommit.c_str(), ggml_backend_name(backend.get()),
              ggml_backend_dev_description(dev), opts.reps);
  printTable(results);
  if (!opts.json.empty())
    writeJson(opts.json, opts, backend.get(), results);
  return 0;
}
