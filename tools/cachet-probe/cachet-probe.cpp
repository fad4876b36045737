//===- cachet-probe.cpp - measure a device profile through the runtime ----===//
//
// cachet-probe [--backend=vulkan|cuda|auto] [--device=N] [-o profile.json]
//              [--quick]
// cachet-probe --fit-sweep=profile.json
//
// Runs micro-kernels (tools/cachet-probe/probe.spvasm on Vulkan, their PTX
// twins probe.ptx on CUDA, both embedded in the binary) through
// libcachet_runtime and writes a device profile JSON that
// `cachet-attach-device{profile=FILE}` accepts: DRAM bandwidth (kernel copy,
// driver copy and read-only), last-level cache size (a cache model fitted to
// bandwidth versus working set), cache line size (latency of a dependent-load
// tour versus the distance between loads; stride sweeps as fallbacks), the
// set-index alias stride (a column walk and a latency tour over power-of-two
// rows versus rows padded by one line), the strided-read penalty (256 B
// chunks at a 1 KiB stride versus sequential) and the idle time at a launch
// boundary (on CUDA sm_90+ also with programmatic dependent launch). Every
// figure is device-timed with the runtime's timestamp events, repeated, and
// written with its median, minimum and maximum into the profile's
// "measurements" object, next to how it was measured, the raw working-set
// sweep (for --fit-sweep) and which fields were measured, reported by the
// driver or defaulted. Needs only libcachet_runtime and the driver: no LLVM
// or MLIR. Without a device of the backend it exits 77 (skipped).
//
//===----------------------------------------------------------------------===//

#include "cachet/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/utsname.h>

namespace {

/// The SPIR-V words of probe.spvasm, assembled at build time.
const uint32_t probeSpirv[] = {
#include "probe.spv.inc"
};

/// The same kernels as PTX (probe.ptx), for the CUDA backend.
const char probePtx[] =
#include "probe.ptx.inc"
    ;

/// The programmatic-dependent-launch copy (probe-pdl.ptx, sm_90+).
const char probePdlPtx[] =
#include "probe-pdl.ptx.inc"
    ;

/// Bytes of one kernel element (a uvec4).
constexpr uint64_t elementBytes = 16;
/// Invocations per workgroup (the shader's LocalSize).
constexpr uint64_t workgroupSize = 64;
/// A column walk whose packed rows take this many times longer than rows
/// padded by one line shows an alias cliff.
constexpr double aliasCliffRatio = 1.3;
/// Rows of the alias column walk.
constexpr uint64_t aliasWalkRows = 4096;

/// Median, minimum and maximum of repeated measurements.
struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats summarize(std::vector<double> values) {
  Stats s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  s.min = values.front();
  s.max = values.back();
  return s;
}

/// Stats of `scale / x` for each x: turns times into rates (the fastest time
/// becomes the maximum rate).
Stats invert(const Stats &times, double scale) {
  Stats s;
  s.median = scale / times.median;
  s.min = scale / times.max;
  s.max = scale / times.min;
  return s;
}

Stats scaled(const Stats &s, double factor) {
  return {s.median * factor, s.min * factor, s.max * factor};
}

uint32_t log2Exact(uint64_t v) {
  uint32_t l = 0;
  while ((uint64_t(1) << l) < v)
    ++l;
  return l;
}

uint64_t floorPow2(uint64_t v) {
  uint64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/// Returns the line size L in {32, 64, 128, 256} whose model
/// cost(s) = c + m * min(s, L) / L (a fixed cost per access plus the share of
/// a line it fetches) fits `costs` (stride, cost per access) best in the least
/// squares sense, or 0 where no model has m > 0.
uint64_t fitLineSize(const std::vector<std::pair<uint64_t, double>> &costs) {
  uint64_t best = 0;
  double bestError = 0;
  for (uint64_t line = 32; line <= 256; line *= 2) {
    // Linear least squares of cost against x = min(s, L) / L.
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto &point : costs) {
      double x = double(std::min(point.first, line)) / double(line);
      n += 1;
      sx += x;
      sy += point.second;
      sxx += x * x;
      sxy += x * point.second;
    }
    double det = n * sxx - sx * sx;
    if (det <= 0)
      continue;
    double m = (n * sxy - sx * sy) / det;
    double c = (sy - m * sx) / n;
    if (m <= 0)
      continue;
    double error = 0;
    for (const auto &point : costs) {
      double x = double(std::min(point.first, line)) / double(line);
      double r = point.second - (c + m * x);
      error += r * r;
    }
    if (!best || error < bestError) {
      best = line;
      bestError = error;
    }
  }
  return best;
}

/// Hit rate of a cyclic sweep over `ratio` = working set / cache size under
/// random replacement: 1 up to the cache size; beyond it each miss evicts a
/// random line, so a line survives the (1 - h) * ratio misses of one pass
/// with probability exp(-(1 - h) * ratio), which is h: the nontrivial root of
/// h = exp(-(1 - h) * ratio), found by bisection.
double randomReplacementHitRate(double ratio) {
  if (ratio <= 1)
    return 1;
  double lo = 0, hi = 1 - 1e-12;
  for (int i = 0; i < 100; ++i) {
    double mid = 0.5 * (lo + hi);
    if (mid - std::exp(-(1 - mid) * ratio) < 0)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// The cache-size fit of a working-set sweep.
struct CacheFit {
  /// Fitted cache size in bytes; 0 where the sweep shows no cache.
  double bytes = 0;
  /// The replacement model that fits best: "random" or "lru".
  std::string model;
  /// Bandwidths (GB/s) the fit gives a hit and a miss.
  double hitGbps = 0, missGbps = 0;
  /// Root mean square of the relative time residuals.
  double rms = 0;
  /// Points the fit used.
  size_t points = 0;
  /// Why there is no result (empty when there is one).
  std::string problem;
};

/// Fits a cache to `sweep` (working set bytes, GB/s): time per byte
/// t(W) = h(W / C) * tHit + (1 - h(W / C)) * tMiss, where h is the hit rate
/// of a cyclic sweep under random replacement (randomReplacementHitRate) or
/// under LRU (1 up to C, 0 beyond), whichever fits better. For every
/// candidate C (1% steps between the smallest and the largest working set
/// of the points at or above `minBytes`) tHit and tMiss are the linear least
/// squares of the relative time residuals; C minimizes their sum of
/// squares (the geometric middle of the candidates that tie, as LRU's do
/// between two points).
CacheFit fitCacheSize(const std::vector<std::pair<uint64_t, double>> &sweep,
                      uint64_t minBytes) {
  CacheFit fit;
  std::vector<std::pair<double, double>> points;
  for (const auto &point : sweep)
    if (point.first >= minBytes && point.second > 0)
      points.push_back({double(point.first), 1.0 / point.second});
  fit.points = points.size();
  if (points.size() < 5) {
    fit.problem = "fewer than 5 sweep points at or above " +
                  std::to_string(minBytes) + " bytes";
    return fit;
  }
  double smallest = points.front().first, largest = points.front().first;
  for (const auto &point : points) {
    smallest = std::min(smallest, point.first);
    largest = std::max(largest, point.first);
  }
  double bestError = -1;
  for (const char *model : {"random", "lru"}) {
    bool lru = std::string(model) == "lru";
    auto hitRate = [&](double ratio) {
      return lru ? (ratio <= 1 ? 1.0 : 0.0) : randomReplacementHitRate(ratio);
    };
    double modelError = -1, firstBest = 0, lastBest = 0, hit = 0, miss = 0;
    for (double c = smallest; c <= largest; c *= 1.01) {
      // Minimize sum ((h a + (1 - h) b) / t - 1)^2 over a = tHit, b = tMiss.
      double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
      for (const auto &point : points) {
        double h = hitRate(point.first / c);
        double x0 = h / point.second, x1 = (1 - h) / point.second;
        s00 += x0 * x0;
        s01 += x0 * x1;
        s11 += x1 * x1;
        r0 += x0;
        r1 += x1;
      }
      double det = s00 * s11 - s01 * s01;
      if (!(std::fabs(det) > 1e-9 * s00 * s11))
        continue;
      double tHit = (r0 * s11 - r1 * s01) / det;
      double tMiss = (s00 * r1 - s01 * r0) / det;
      if (!(tHit > 0 && tMiss > tHit))
        continue;
      double error = 0;
      for (const auto &point : points) {
        double h = hitRate(point.first / c);
        double r = (h * tHit + (1 - h) * tMiss) / point.second - 1;
        error += r * r;
      }
      if (modelError >= 0 && std::fabs(error - modelError) <= 1e-9 * error) {
        lastBest = c;
      } else if (modelError < 0 || error < modelError) {
        modelError = error;
        firstBest = lastBest = c;
        hit = 1 / tHit;
        miss = 1 / tMiss;
      }
    }
    if (modelError >= 0 && (bestError < 0 || modelError < bestError)) {
      bestError = modelError;
      fit.bytes = std::sqrt(firstBest * lastBest);
      fit.model = model;
      fit.hitGbps = hit;
      fit.missGbps = miss;
    }
  }
  if (bestError < 0) {
    fit.problem = "no cache size gives hits faster than misses";
    return fit;
  }
  fit.rms = std::sqrt(bestError / double(points.size()));
  // A knee at either end of the sweep is not located by it.
  if (fit.bytes <= smallest * 1.02 || fit.bytes >= largest / 1.02) {
    fit.problem = "the fitted size is at the end of the sweep";
    fit.bytes = 0;
  } else if (fit.hitGbps < 1.2 * fit.missGbps) {
    fit.problem = "hits are less than 1.2x faster than misses";
    fit.bytes = 0;
  }
  return fit;
}

//===----------------------------------------------------------------------===//
// A tiny JSON writer (the loader reads what this writes).
//===----------------------------------------------------------------------===//

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  // Four significant digits; %g's exponent form ("3.3e+07") is valid JSON.
  return buf;
}

std::string statsJson(const Stats &s) {
  return "{\"median\": " + number(s.median) + ", \"min\": " + number(s.min) +
         ", \"max\": " + number(s.max) + "}";
}

/// Builds one JSON object member by member.
class ObjectWriter {
public:
  ObjectWriter &raw(const std::string &key, const std::string &json) {
    members.push_back(quote(key) + ": " + json);
    return *this;
  }
  ObjectWriter &str(const std::string &key, const std::string &value) {
    return raw(key, quote(value));
  }
  ObjectWriter &num(const std::string &key, double value) {
    return raw(key, number(value));
  }
  ObjectWriter &integer(const std::string &key, uint64_t value) {
    return raw(key, std::to_string(value));
  }
  ObjectWriter &boolean(const std::string &key, bool value) {
    return raw(key, value ? "true" : "false");
  }
  ObjectWriter &stats(const std::string &key, const Stats &s) {
    return raw(key, statsJson(s));
  }
  std::string str(int indent = 0) const {
    std::string pad(indent + 2, ' ');
    std::string out = "{";
    for (size_t i = 0; i < members.size(); ++i)
      out += (i ? ",\n" : "\n") + pad + members[i];
    out += "\n" + std::string(indent, ' ') + "}";
    return out;
  }

private:
  std::vector<std::string> members;
};

std::string joinArray(const std::vector<std::string> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out + "]";
}

/// A JSON array of `items`, one per line, each line indented by `indent`.
std::string joinLines(const std::vector<std::string> &items, int indent) {
  std::string separator = "\n" + std::string(indent, ' ');
  std::string out = "[" + separator;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? "," + separator : "") + items[i];
  return out + "]";
}

/// One working-set sweep: read bandwidth (GB/s) per working set, as the
/// median and the slowest and fastest run of each point, their JSON
/// records, and the cache fit to each of the three curves.
struct Sweep {
  std::vector<std::pair<uint64_t, double>> median, slowest, fastest;
  std::vector<std::string> points;
  CacheFit fit, fitSlowest, fitFastest;

  /// Adds working set `w` at `gbps`; `point` (already holding the working
  /// set, the rates and the point's own fields) gets the raw times.
  void add(uint64_t w, const Stats &gbps, const std::vector<double> &raw,
           ObjectWriter &point) {
    median.push_back({w, gbps.median});
    slowest.push_back({w, gbps.min});
    fastest.push_back({w, gbps.max});
    std::vector<std::string> rawText;
    for (double t : raw)
      rawText.push_back(number(t));
    points.push_back(point.raw("ns", joinArray(rawText)).str(8));
  }

  /// Fits the cache size to the points with working sets of at least
  /// `fitMin`, the median curve and, for the spread, the other two.
  void fitCache(uint64_t fitMin) {
    for (auto *curve : {&median, &slowest, &fastest})
      std::sort(curve->begin(), curve->end());
    fit = fitCacheSize(median, fitMin);
    fitSlowest = fitCacheSize(slowest, fitMin);
    fitFastest = fitCacheSize(fastest, fitMin);
  }

  /// " (fit C, hit H GB/s, miss M GB/s, rms R)" for the log.
  std::string summary() const {
    return " (fit " + number(fit.bytes) + ", hit " + number(fit.hitGbps) +
           " GB/s, miss " + number(fit.missGbps) + " GB/s, rms " +
           number(fit.rms) + ")";
  }

  /// The records of the points, one per line.
  std::string pointsJson() const { return joinLines(points, 8); }

  /// The fits, as the profile's measurements record them.
  std::string fitJson() const {
    return ObjectWriter()
        .num("cache_bytes", fit.bytes)
        .num("cache_bytes_from_slowest_runs", fitSlowest.bytes)
        .num("cache_bytes_from_fastest_runs", fitFastest.bytes)
        .str("model", fit.model)
        .num("hit_gbps", fit.hitGbps)
        .num("miss_gbps", fit.missGbps)
        .num("rms_relative_error", fit.rms)
        .integer("points", fit.points)
        .str("problem", fit.problem)
        .str(6);
  }
};

//===----------------------------------------------------------------------===//
// The probe
//===----------------------------------------------------------------------===//

/// Options from the command line.
struct Options {
  std::string backend = "vulkan";
  int device = -1;
  std::string output;
  std::string fitSweep;
  bool quick = false;
  bool verbose = false;
};

/// Fails with the runtime's message.
class ProbeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

void check(CachetStatus status, const char *what) {
  if (status != CACHET_SUCCESS)
    throw ProbeError(std::string(what) + ": " + cachetStatusString(status) +
                     ": " + cachetGetLastError());
}

/// Push constants of probe_read (see probe.spvasm).
struct ReadParams {
  uint32_t chunkShift = 0, chunkMask = 0, rowMask = 0x7fffffff, rowShift = 31;
  uint32_t pitch = 1, span = 0, perGroup = 0, sentinel = 0xdeadbeef;
};

/// The profile's own fields, as the stages of Probe::run fill them.
struct ProfileFields {
  std::string arch = "unknown";
  uint64_t cacheLine = 0, l2Bytes = 0, aliasStride = 0, aliasPad = 0;
  uint64_t computeUnits = 1;
  double dramGbps = 0, stridedReadPenalty = 1;
  bool pdl = false;
  std::string l2Prefetch = "none";
  /// Quoted "MxNxK:a->c" shapes.
  std::vector<std::string> coopMatrix;
  uint64_t subgroupSize = 32;
};

/// One stride sweep of the cache-line measurement: the cost per access of
/// one 16 B load every `stride` bytes over a set of `setBytes`, the points'
/// JSON records and the line fitted to the costs (0 where none fits).
struct LineSweep {
  uint64_t setBytes = 0;
  std::vector<std::pair<uint64_t, double>> cost;
  std::vector<std::string> points;
  uint64_t line = 0;
};

/// The dependent-load tour of the cache-line measurement: its region and
/// loads, the points' JSON records and the line fitted to the costs (0 where
/// the tour shows no step).
struct LineChase {
  uint64_t regionBytes = 0, loads = 0;
  std::vector<std::string> points;
  uint64_t line = 0;
};

/// One alias-stride measurement: the points' JSON records and the alias
/// stride they show (0 where no row size shows a cliff).
struct AliasScan {
  uint64_t stride = 0;
  std::vector<std::string> points;
};

/// Idle time per boundary of `launches` back-to-back launches taking `many`
/// against one launch over all of them taking `one`, with min/max pairing the
/// extremes.
Stats idlePerBoundary(const Stats &many, const Stats &one, uint64_t launches) {
  double gaps = double(launches - 1);
  return Stats{(many.median - one.median) / gaps, (many.min - one.max) / gaps,
               (many.max - one.min) / gaps};
}

/// Runs the micro-kernels on one runtime and collects the profile.
class Probe {
public:
  Probe(CachetRuntime runtime, const Options &options)
      : runtime(runtime), options(options) {
    check(cachetGetDeviceInfo(runtime, &info), "cachetGetDeviceInfo");
    isCpu = info.vendorId == 0x10005 ||
            std::string(info.name).find("llvmpipe") != std::string::npos;
    reps = options.quick ? 3 : isCpu ? 9 : 7;
    groupTarget = isCpu ? 64 : 8192;
    // llvmpipe runs each 8-wide subgroup of a workgroup to completion before
    // the next, so a workgroup's elements are read in 8 interleaved passes:
    // 8 KiB per workgroup keeps those passes within a window the CPU's caches
    // and prefetchers follow (a long range per workgroup reads at a third of
    // the bandwidth).
    if (isCpu)
      cpuPerGroup = 512;
    isCuda = std::string(info.backend) == "cuda";
    if (isCuda) {
      check(cachetModuleLoad(runtime, probePtx, sizeof(probePtx) - 1, &module),
            "cachetModuleLoad(probe.ptx)");
      // griddepcontrol needs sm_90: the PDL kernel is not even loaded below.
      if (info.computeCapabilityMajor >= 9) {
        check(cachetModuleLoad(runtime, probePdlPtx, sizeof(probePdlPtx) - 1,
                               &pdlModule),
              "cachetModuleLoad(probe-pdl.ptx)");
        check(cachetKernelGet(runtime, pdlModule, "probe_copy_pdl",
                              &pdlCopyKernel),
              "cachetKernelGet(probe_copy_pdl)");
      }
    } else if (std::string(info.backend) == "vulkan") {
      check(cachetModuleLoad(runtime, probeSpirv, sizeof(probeSpirv), &module),
            "cachetModuleLoad(probe.spvasm)");
    } else {
      throw ProbeError(std::string("the micro-kernels exist as SPIR-V and "
                                   "PTX only; the ") +
                       info.backend + " backend has neither");
    }
    check(cachetKernelGet(runtime, module, "probe_read", &readKernel),
          "cachetKernelGet(probe_read)");
    check(cachetKernelGet(runtime, module, "probe_read_l2", &readL2Kernel),
          "cachetKernelGet(probe_read_l2)");
    check(cachetKernelGet(runtime, module, "probe_copy", &copyKernel),
          "cachetKernelGet(probe_copy)");
    check(cachetKernelGet(runtime, module, "probe_chase", &chaseKernel),
          "cachetKernelGet(probe_chase)");
    check(cachetEventCreate(runtime, &startEvent), "cachetEventCreate");
    check(cachetEventCreate(runtime, &endEvent), "cachetEventCreate");
  }

  ~Probe() {
    cachetEventDestroy(runtime, startEvent);
    cachetEventDestroy(runtime, endEvent);
    for (CachetBuffer b : buffers)
      cachetBufferFree(runtime, b);
    cachetModuleUnload(runtime, pdlModule);
    cachetModuleUnload(runtime, module);
  }

  /// Runs every measurement and returns the profile JSON.
  std::string run();

private:
  /// Records what the measurements ran on and how they are timed.
  void describeRun();
  /// Allocates the two probe buffers and the output buffer and checks the
  /// kernels on them.
  void prepareBuffers();
  /// Times DRAM copies (kernel and driver) and reads; returns the faster copy
  /// rate in GB/s.
  double measureDram();
  /// Fits the last-level cache to read bandwidth versus working set; returns
  /// its size (the driver's or a default where the fit fails).
  uint64_t measureL2Sweep();
  /// Read bandwidth versus working set, each workgroup reading its own small
  /// chunk of the stream `sweepChunk` elements long (0: the CPU default).
  Sweep workingSetSweep(uint64_t sweepChunk);
  /// Fits the L2 to a sweep in which each workgroup re-reads its own slice;
  /// returns the fitted size, 0 where the sweep does not run or the fit
  /// fails.
  uint64_t measureL2Slices();
  /// Compute units of the device for the slice sweep, 0 where unknown or on
  /// a CPU.
  uint64_t sliceUnitCount();
  /// The slice sweep over `units` compute units.
  Sweep sliceSweep(uint64_t units);
  /// Measures the cache line: a dependent-load tour over a cached region of
  /// an L2 of `l2Bytes`, else the stride sweeps; 64 where none shows a line.
  uint64_t measureCacheLine(uint64_t l2Bytes);
  /// Cost per access of each of `strides` over a set of `setBytes`,
  /// `accesses` loads per launch where the set is smaller than the buffer.
  LineSweep strideSweep(uint64_t setBytes, const std::vector<uint64_t> &strides,
                        uint64_t accesses);
  /// Cost per load of a dependent-load tour versus the distance between
  /// loads, over a region that an L2 of `l2Bytes` holds.
  LineChase lineChase(uint64_t l2Bytes);
  /// Writes the tours of lineChase into buffer B, one region of
  /// `regionBytes` per distance; returns the first element of each tour.
  std::vector<uint32_t> uploadLineChase(const std::vector<uint64_t> &distances,
                                        uint64_t regionBytes);
  /// Device times of `steps` dependent loads from each element of `first`
  /// in buffer B, round-robin, each timed run after an untimed one that
  /// brings its region into the caches.
  std::vector<std::vector<double>>
  timeChases(const std::vector<uint32_t> &first, uint64_t steps);
  /// The measurements' cache_line record.
  std::string cacheLineJson(const LineChase &chase, const LineSweep &cached,
                            const LineSweep &dram, uint64_t lineAccesses,
                            uint64_t cacheLine);
  /// Measures the set-index alias stride and its pad for lines of
  /// `cacheLine` bytes, by a column walk and by a latency tour.
  void measureAlias(uint64_t cacheLine, uint64_t &aliasStride,
                    uint64_t &aliasPad);
  /// A column walk over rows of R bytes versus rows padded by one line of
  /// `cacheLine` bytes.
  AliasScan aliasColumnWalk(uint64_t cacheLine);
  /// A dependent-load tour of 16 rows of R bytes versus rows padded by one
  /// line of `cacheLine` bytes, `steps` loads per tour.
  AliasScan aliasLatencyTour(uint64_t cacheLine, uint64_t steps);
  /// Writes the tours of aliasLatencyTour into buffer B, one packed and one
  /// padded variant per row size of `rowSizes`, as far as the buffer holds
  /// them; returns the first element of each variant's tour.
  std::vector<uint32_t> uploadAliasTours(const std::vector<uint64_t> &rowSizes,
                                         uint64_t rows, uint64_t cacheLine);
  /// Times strided against sequential reads; returns the penalty, at least 1.
  double measureStridedRead();
  /// Times the idle time at a launch boundary, on CUDA sm_90+ also with
  /// programmatic dependent launch; returns whether the PDL launches ran.
  bool measureLaunchBoundary();
  /// Records whether the device has programmatic dependent launch (`pdl`:
  /// the PDL launches ran).
  void describePdl(bool pdl);
  /// Fills the fields the driver reports or the probe cannot measure.
  void reportDeviceFields(ProfileFields &fields);
  /// The cooperative-matrix shapes of the device, quoted, with their source.
  std::vector<std::string> coopMatrixShapes();
  /// "major.minor" of the device's compute capability.
  std::string computeCapability() const;
  /// The profile JSON of `fields` and the measurements.
  std::string writeProfile(const ProfileFields &fields);

  /// Bytes one launch of a working-set sweep reads at least.
  uint64_t minStreamBytes() const {
    return options.quick ? (8ull << 20)
                         : (isCpu ? (64ull << 20) : (1ull << 30));
  }
  /// The smallest working set of the whole-device sweep.
  uint64_t smallestWorkingSet() const {
    return isCpu ? (256ull << 10) : (1ull << 20);
  }
  /// The smallest working set the cache fits use. Below it, on a GPU, the
  /// per-SM L1s and the chunks in flight serve reads faster than the L2.
  uint64_t fitMinBytes() const {
    return isCpu ? smallestWorkingSet() : (4ull << 20);
  }

  CachetBuffer alloc(uint64_t bytes) {
    CachetBuffer b;
    check(cachetBufferAlloc(runtime, bytes, &b), "cachetBufferAlloc");
    check(cachetBufferFill(runtime, b, 0, bytes, 0), "cachetBufferFill");
    buffers.push_back(b);
    return b;
  }

  /// Device time in ns of what `record` launches, once per repetition after
  /// one warm-up (the times in `raw` where given).
  template <typename F>
  Stats timeIt(F record, std::vector<double> *raw = nullptr) {
    record();
    std::vector<double> times;
    for (int r = 0; r < reps; ++r)
      times.push_back(timeOnce(record));
    if (raw)
      *raw = times;
    return summarize(times);
  }

  /// A/B timing, interleaved (A, B, A, B, ...) after one warm-up of each, so
  /// that a slow phase of a shared machine hits both. Returns the times of A
  /// and of B and the per-repetition ratio A / B.
  template <typename F, typename G>
  void timePair(F recordA, G recordB, Stats &a, Stats &b, Stats &ratio) {
    recordA();
    recordB();
    std::vector<double> ta, tb, ratios;
    for (int r = 0; r < reps; ++r) {
      ta.push_back(timeOnce(recordA));
      tb.push_back(timeOnce(recordB));
      ratios.push_back(ta.back() / tb.back());
    }
    a = summarize(ta);
    b = summarize(tb);
    ratio = summarize(ratios);
  }

  /// One device-timed run of `record`, in ns.
  template <typename F> double timeOnce(F record) {
    check(cachetSynchronize(runtime), "cachetSynchronize");
    check(cachetEventRecord(runtime, startEvent), "cachetEventRecord");
    record();
    check(cachetEventRecord(runtime, endEvent), "cachetEventRecord");
    uint64_t ns = 0;
    check(cachetEventElapsedNs(runtime, startEvent, endEvent, &ns),
          "cachetEventElapsedNs");
    return static_cast<double>(std::max<uint64_t>(ns, 1));
  }

  /// Workgroups and elements per workgroup for a stream of `elements`: as
  /// close to the target count as whole multiples of 64 elements allow, or
  /// `chunk` elements per workgroup where it is non-zero.
  void split(uint64_t elements, uint32_t &groups, uint32_t &perGroup,
             uint64_t chunk = 0) {
    uint64_t per = chunk ? chunk
                   : cpuPerGroup
                       ? cpuPerGroup
                       : std::max<uint64_t>(workgroupSize,
                                            (elements / groupTarget) /
                                                workgroupSize * workgroupSize);
    while (elements / per > info.maxWorkgroupCount[0])
      per *= 2;
    uint64_t g = std::max<uint64_t>(1, elements / per);
    g = std::min<uint64_t>(g, info.maxWorkgroupCount[0]);
    groups = static_cast<uint32_t>(g);
    perGroup = static_cast<uint32_t>(per);
  }

  /// Records one probe_read over `src` reading `elements` stream elements
  /// (`chunk` elements per workgroup where non-zero).
  void launchRead(CachetBuffer src, uint64_t srcBytes, ReadParams p,
                  uint64_t elements, uint64_t chunk = 0) {
    uint32_t groups, perGroup;
    split(elements, groups, perGroup, chunk);
    p.perGroup = perGroup;
    CachetBinding bindings[2] = {{src, 0, srcBytes}, {outBuffer, 0, 0}};
    uint32_t grid[3] = {groups, 1, 1};
    check(cachetLaunchWithBlock(runtime, readKernel, grid, block, bindings, 2,
                                &p, sizeof(p)),
          "cachetLaunch(probe_read)");
  }

  /// Records one probe_copy of `elements` from element `base`.
  void launchCopy(CachetBuffer src, CachetBuffer dst, uint64_t bufferBytes,
                  uint64_t base, uint64_t elements) {
    uint32_t groups, perGroup;
    split(elements, groups, perGroup);
    uint32_t push[2] = {static_cast<uint32_t>(base), perGroup};
    CachetBinding bindings[2] = {{src, 0, bufferBytes}, {dst, 0, bufferBytes}};
    uint32_t grid[3] = {groups, 1, 1};
    check(cachetLaunchWithBlock(runtime, copyKernel, grid, block, bindings, 2,
                                push, sizeof(push)),
          "cachetLaunch(probe_copy)");
  }

  /// Records one probe_chase of `steps` dependent loads from element
  /// `start` of `src`.
  void launchChase(CachetBuffer src, uint64_t srcBytes, uint32_t start,
                   uint32_t steps) {
    uint32_t push[3] = {start, steps, 0xffffffffu};
    CachetBinding bindings[2] = {{src, 0, srcBytes}, {outBuffer, 0, 0}};
    uint32_t grid[3] = {1, 1, 1};
    check(cachetLaunchWithBlock(runtime, chaseKernel, grid, block, bindings, 2,
                                push, sizeof(push)),
          "cachetLaunch(probe_chase)");
  }

  /// Records one probe_copy_pdl (CUDA, sm_90+) of `elements` from element
  /// `base`, with CACHET_LAUNCH_PDL where `pdl` is set.
  void launchCopyPdl(CachetBuffer src, CachetBuffer dst, uint64_t base,
                     uint64_t elements, bool pdl) {
    uint32_t groups, perGroup;
    split(elements, groups, perGroup);
    uint64_t srcAddress = 0, dstAddress = 0;
    check(cachetBufferDeviceAddress(runtime, src, &srcAddress),
          "cachetBufferDeviceAddress");
    check(cachetBufferDeviceAddress(runtime, dst, &dstAddress),
          "cachetBufferDeviceAddress");
    uint32_t first = static_cast<uint32_t>(base);
    void *params[4] = {&srcAddress, &dstAddress, &first, &perGroup};
    uint32_t grid[3] = {groups, 1, 1};
    check(cachetLaunchKernel(runtime, pdlCopyKernel, grid, block, 0, params, 4,
                             pdl ? CACHET_LAUNCH_PDL : 0),
          "cachetLaunchKernel(probe_copy_pdl)");
  }

  /// Checks that the kernels do what the timings assume before timing them:
  /// probe_copy copies a pattern, probe_read sums it (its sentinel set to the
  /// expected sum so that it stores the sum), probe_chase follows a chain.
  /// Leaves both buffers zeroed.
  void selfCheck(CachetBuffer a, CachetBuffer b, uint64_t bytes) {
    uint64_t n = bytes / elementBytes;
    check(cachetBufferFill(runtime, a, 0, bytes, 1), "cachetBufferFill");
    launchCopy(a, b, bytes, 0, n);
    uint64_t last = covered(n) - 1;
    for (uint64_t element : {uint64_t(0), last / 2, last}) {
      uint32_t word = 0;
      check(cachetBufferDownload(runtime, b, element * elementBytes + 12, &word,
                                 sizeof(word)),
            "cachetBufferDownload");
      if (word != 1)
        throw ProbeError("self-check: probe_copy left element " +
                         std::to_string(element) + " at " +
                         std::to_string(word) + ", expected 1");
    }
    ReadParams p;
    p.span = static_cast<uint32_t>(n);
    uint32_t groups, perGroup;
    split(n, groups, perGroup);
    p.sentinel = perGroup / static_cast<uint32_t>(workgroupSize);
    launchRead(a, bytes, p, n);
    uint32_t sums[4] = {};
    check(cachetBufferDownload(runtime, outBuffer, 0, sums, sizeof(sums)),
          "cachetBufferDownload");
    for (uint32_t sum : sums)
      if (sum != p.sentinel)
        throw ProbeError("self-check: probe_read summed " +
                         std::to_string(sum) + ", expected " +
                         std::to_string(p.sentinel));
    // probe_chase: 0 -> 5 -> 9 in two steps, then stores element 9.
    uint32_t chain[3][4] = {{5, 0, 0, 0}, {9, 0, 0, 0}, {0, 777, 0, 0}};
    check(cachetBufferUpload(runtime, a, 0, chain[0], 16),
          "cachetBufferUpload");
    check(cachetBufferUpload(runtime, a, 5 * 16, chain[1], 16),
          "cachetBufferUpload");
    check(cachetBufferUpload(runtime, a, 9 * 16, chain[2], 16),
          "cachetBufferUpload");
    uint32_t push[3] = {0, 2, 9};
    CachetBinding chaseBindings[2] = {{a, 0, bytes}, {outBuffer, 0, 0}};
    uint32_t one[3] = {1, 1, 1};
    check(cachetLaunchWithBlock(runtime, chaseKernel, one, block, chaseBindings,
                                2, push, sizeof(push)),
          "cachetLaunch(probe_chase)");
    uint32_t reached[4] = {};
    check(cachetBufferDownload(runtime, outBuffer, 0, reached, sizeof(reached)),
          "cachetBufferDownload");
    if (reached[0] != 0 || reached[1] != 777)
      throw ProbeError("self-check: probe_chase stored (" +
                       std::to_string(reached[0]) + ", " +
                       std::to_string(reached[1]) +
                       "), expected element 9 = (0, 777)");
    check(cachetBufferFill(runtime, a, 0, bytes, 0), "cachetBufferFill");
    check(cachetBufferFill(runtime, b, 0, bytes, 0), "cachetBufferFill");
  }

  /// Elements one launch actually reads for a stream of `elements`.
  uint64_t covered(uint64_t elements) {
    uint32_t groups, perGroup;
    split(elements, groups, perGroup);
    return uint64_t(groups) * perGroup;
  }

  void log(const std::string &line) {
    if (options.verbose)
      std::cerr << "cachet-probe: " << line << "\n";
  }

  CachetRuntime runtime;
  const Options &options;
  CachetDeviceInfo info{};
  bool isCpu = false;
  int reps = 5;
  uint64_t groupTarget = 8192;
  /// Elements per workgroup on a CPU device (0 on GPUs).
  uint64_t cpuPerGroup = 0;
  /// Threads per workgroup of every launch (the kernels' own size).
  const uint32_t block[3] = {uint32_t(workgroupSize), 1, 1};
  /// Whether the device is a CUDA GPU (the PTX kernels).
  bool isCuda = false;
  CachetModule module = nullptr, pdlModule = nullptr;
  CachetKernel readKernel = nullptr, readL2Kernel = nullptr,
               copyKernel = nullptr, chaseKernel = nullptr,
               pdlCopyKernel = nullptr;
  CachetEvent startEvent = nullptr, endEvent = nullptr;
  CachetBuffer outBuffer = nullptr;
  /// The two probe buffers, `bufferBytes` each.
  CachetBuffer bufferA = nullptr, bufferB = nullptr;
  uint64_t bufferBytes = 0;
  std::vector<CachetBuffer> buffers;
  /// The profile's "measurements" object, stage by stage.
  ObjectWriter measurements;
  /// How each profile field was obtained ("field_sources").
  std::map<std::string, std::string> sources;
};

std::string vendorName(uint32_t vendorId) {
  switch (vendorId) {
  case 0x10de:
    return "nvidia";
  case 0x1002:
    return "amd";
  case 0x10005:
    return "mesa";
  default:
    return "generic";
  }
}

/// SM counts and chips the driver does not report, by device name.
struct KnownGpu {
  const char *nameFragment;
  const char *arch;
  uint64_t computeUnits;
};
const KnownGpu knownGpus[] = {
    {"H200", "sm_90", 132},     {"H100 80GB HBM3", "sm_90", 132},
    {"H100 SXM", "sm_90", 132}, {"H100 PCIe", "sm_90", 114},
    {"RTX 4070", "sm_89", 46},  {"RTX 2060 SUPER", "sm_75", 34},
};

std::string Probe::run() {
  describeRun();
  prepareBuffers();
  ProfileFields fields;
  fields.dramGbps = measureDram();
  fields.l2Bytes = measureL2Sweep();
  // Where the slice sweep's fit succeeds it is the physical capacity.
  if (uint64_t sliceBytes = measureL2Slices())
    fields.l2Bytes = sliceBytes;
  fields.cacheLine = measureCacheLine(fields.l2Bytes);
  measureAlias(fields.cacheLine, fields.aliasStride, fields.aliasPad);
  fields.stridedReadPenalty = measureStridedRead();
  fields.pdl = measureLaunchBoundary();
  describePdl(fields.pdl);
  reportDeviceFields(fields);
  return writeProfile(fields);
}

void Probe::describeRun() {
  ObjectWriter &m = measurements;
  m.str("tool", "cachet-probe");
  m.str("backend", info.backend);
  m.str("device", info.name);
  m.str("mode", options.quick ? "quick" : "full");
  m.integer("repetitions", reps);
  m.str("timing", "device time between two timestamp events "
                  "(cachetEventElapsedNs) around the launches, after one "
                  "warm-up run; median, min and max over the repetitions");
  m.str("kernels",
        std::string(isCuda ? "probe.ptx (the PTX twins of probe.spvasm)"
                           : "probe.spvasm") +
            ": uvec4 (16 B) loads, 64 invocations per workgroup, "
            "consecutive invocations on consecutive 16 B; each workgroup over "
            "a contiguous part of the access stream (probe_chase: one "
            "invocation's dependent 4-byte loads): " +
            (cpuPerGroup ? std::to_string(cpuPerGroup * elementBytes) +
                               " bytes per workgroup (CPU device)"
                         : "about " + std::to_string(groupTarget) +
                               " workgroups per launch"));
}

void Probe::prepareBuffers() {
  // Buffers: a power of two, at most maxBindingBytes (bound whole), at least
  // well above any cache the probe reports.
  uint64_t limit = std::min(info.maxBindingBytes, info.maxAllocationBytes);
  uint64_t target = options.quick ? (32ull << 20)
                    : isCpu       ? (128ull << 20)
                                  : (1ull << 30);
  bufferBytes = floorPow2(std::min(limit, target));
  bufferA = alloc(bufferBytes);
  bufferB = alloc(bufferBytes);
  outBuffer = alloc(uint64_t(info.maxWorkgroupCount[0] < 65536
                                 ? info.maxWorkgroupCount[0]
                                 : 65536) *
                    workgroupSize * elementBytes);
  measurements.integer("buffer_bytes", bufferBytes);
  selfCheck(bufferA, bufferB, bufferBytes);
  measurements.str("self_check",
                   "passed: probe_copy copied a pattern, probe_read "
                   "summed it and probe_chase followed a chain as the "
                   "CPU does");
}

double Probe::measureDram() {
  // DRAM copy (read + write bytes) and read-only (a reduction); the driver's
  // own device-to-device copy (cachetBufferCopy) as a second copy figure.
  uint64_t n = bufferBytes / elementBytes;
  uint64_t copied = covered(n);
  Stats copyNs =
      timeIt([&] { launchCopy(bufferA, bufferB, bufferBytes, 0, n); });
  Stats copyGbps = invert(copyNs, 2.0 * copied * elementBytes);
  Stats driverCopyNs = timeIt([&] {
    check(cachetBufferCopy(runtime, bufferA, 0, bufferB, 0, bufferBytes),
          "cachetBufferCopy");
  });
  Stats driverCopyGbps = invert(driverCopyNs, 2.0 * bufferBytes);
  ReadParams seq;
  seq.span = static_cast<uint32_t>(n);
  uint64_t readElems = covered(n);
  Stats readNs = timeIt([&] { launchRead(bufferA, bufferBytes, seq, n); });
  Stats readGbps = invert(readNs, double(readElems) * elementBytes);
  log("copy " + number(copyGbps.median) + " GB/s (driver copy " +
      number(driverCopyGbps.median) + "), read " + number(readGbps.median) +
      " GB/s");
  bool driverCopyFaster = driverCopyGbps.median > copyGbps.median;
  Stats dramGbps = driverCopyFaster ? driverCopyGbps : copyGbps;
  ObjectWriter &m = measurements;
  m.raw("dram_copy",
        ObjectWriter()
            .str("method", "probe_copy of one buffer into another; GB/s "
                           "counts read + write bytes")
            .integer("bytes_each_way", copied * elementBytes)
            .stats("gbps", copyGbps)
            .stats("ns", copyNs)
            .str(4));
  m.raw("driver_copy",
        ObjectWriter()
            .str("method", "cachetBufferCopy (the driver's device-to-device "
                           "copy: vkCmdCopyBuffer, cuMemcpyDtoDAsync) of one "
                           "buffer into another; GB/s counts read + write "
                           "bytes")
            .integer("bytes_each_way", bufferBytes)
            .stats("gbps", driverCopyGbps)
            .stats("ns", driverCopyNs)
            .str(4));
  m.raw("dram_read",
        ObjectWriter()
            .str("method", "probe_read, a sequential sum over the buffer")
            .integer("bytes", readElems * elementBytes)
            .stats("gbps", readGbps)
            .stats("ns", readNs)
            .str(4));
  sources["dram_gbps"] =
      driverCopyFaster ? "measured (driver_copy median, faster than dram_copy)"
                       : "measured (dram_copy median, faster than driver_copy)";
  return dramGbps.median;
}

uint64_t Probe::measureL2Sweep() {
  // Last-level cache: read bandwidth versus working set. A cyclic sweep
  // reads the working set again and again; on a GPU each workgroup reads a
  // small contiguous chunk so that the workgroups in flight at once cover
  // little of the working set (with long chunks, workgroups a pass apart
  // read the same bytes at the same time and hit whatever the cache size).
  uint64_t sweepChunk = isCpu ? 0 : 256;
  uint64_t sweepChunkBytes =
      (sweepChunk ? sweepChunk : cpuPerGroup) * elementBytes;
  Sweep ws = workingSetSweep(sweepChunk);
  uint64_t fitMin = fitMinBytes();
  // The spread: the same fit to every point's slowest and fastest run.
  ws.fitCache(fitMin);
  const CacheFit &l2Fit = ws.fit;
  uint64_t l2Bytes = static_cast<uint64_t>(l2Fit.bytes);
  if (l2Bytes) {
    sources["l2_bytes"] =
        "measured (working-set sweep, " + l2Fit.model + " replacement fit)";
  } else if (info.l2CacheBytes) {
    l2Bytes = info.l2CacheBytes;
    sources["l2_bytes"] =
        "reported (driver; the sweep fit failed: " + l2Fit.problem + ")";
  } else {
    l2Bytes = ws.median.front().first;
    sources["l2_bytes"] = "defaulted (the smallest working set; the sweep fit "
                          "failed: " +
                          l2Fit.problem + ")";
  }
  log("last-level cache " + std::to_string(l2Bytes) + ws.summary());
  ObjectWriter l2Object;
  l2Object
      .str(
          "method",
          "probe_read repeatedly over a working set W (at least 3 passes and " +
              std::to_string(minStreamBytes()) + " bytes per launch, " +
              std::to_string(sweepChunkBytes) +
              " contiguous bytes per workgroup); fit of a cache of C bytes "
              "to the points with W >= " +
              std::to_string(fitMin) +
              ": hit rate h = 1 for W <= C, beyond it the root of h = "
              "exp(-(1 - h) W / C) (random replacement) or 0 (LRU), "
              "whichever model fits better; time per byte h * t_hit + (1 - "
              "h) * t_miss; t_hit and t_miss by linear least squares for "
              "each C, C in 1% steps minimizing the squared relative time "
              "residuals")
      .integer("fit_min_bytes", fitMin)
      .integer("bytes_per_workgroup", sweepChunkBytes)
      .raw("points", ws.pointsJson())
      .raw("fit", ws.fitJson());
  if (info.l2CacheBytes)
    l2Object.integer("driver_reports", info.l2CacheBytes);
  measurements.raw("l2_bytes", l2Object.integer("result", l2Bytes).str(4));
  return l2Bytes;
}

Sweep Probe::workingSetSweep(uint64_t sweepChunk) {
  std::vector<uint64_t> sets;
  uint64_t smallest = smallestWorkingSet();
  const int quarters = options.quick ? 2 : 4;
  for (uint64_t p = smallest; p <= bufferBytes; p *= 2)
    for (int q = 0; q < quarters; ++q) {
      uint64_t w = p + p * q / quarters;
      if (w <= bufferBytes)
        sets.push_back(w);
    }
  Sweep ws;
  uint64_t minStream = minStreamBytes();
  for (uint64_t w : sets) {
    ReadParams p;
    uint64_t span = w / elementBytes;
    p.span = static_cast<uint32_t>(span);
    uint64_t stream = std::max<uint64_t>(minStream, 3 * w) / elementBytes;
    uint32_t groups, perGroup;
    split(stream, groups, perGroup, sweepChunk);
    uint64_t done = uint64_t(groups) * perGroup;
    std::vector<double> raw;
    Stats ns = timeIt(
        [&] { launchRead(bufferA, bufferBytes, p, stream, sweepChunk); }, &raw);
    Stats gbps = invert(ns, double(done) * elementBytes);
    ObjectWriter point;
    point.integer("working_set", w)
        .stats("gbps", gbps)
        .integer("stream_bytes", done * elementBytes)
        .integer("workgroups", groups);
    ws.add(w, gbps, raw, point);
  }
  return ws;
}

uint64_t Probe::measureL2Slices() {
  // The L2 read one slice per workgroup: every workgroup resident at once
  // (m per compute unit, m = 8..13, within the 16 workgroups of 64
  // invocations any NVIDIA SM since sm_75 holds), each re-reading its own
  // disjoint slice of W / N bytes, P passes, through loads that skip the L1
  // (probe_read_l2). A line is then only ever read by one SM, so a
  // partitioned L2 (H100/H200: two halves, each keeping a copy of what its
  // SMs read from the other) holds it at most once per side that reads it,
  // whereas in the whole-device sweep every line is read from both sides in
  // turn.
  uint64_t sliceUnits = sliceUnitCount();
  if (!sliceUnits || !readL2Kernel)
    return 0;
  Sweep slices = sliceSweep(sliceUnits);
  uint64_t fitMin = fitMinBytes();
  slices.fitCache(fitMin);
  const CacheFit &sFit = slices.fit;
  uint64_t l2SliceBytes = static_cast<uint64_t>(sFit.bytes);
  if (l2SliceBytes) {
    // Each line read by one SM only: no copies in both L2 halves, so the
    // fit sees the whole capacity (the whole-GPU sweep's figure stays in
    // measurements.l2_bytes).
    sources["l2_bytes"] = "measured (slice sweep: each workgroup re-reads "
                          "its own slice, " +
                          sFit.model + " replacement fit)";
  }
  log("L2 read one slice per workgroup " + std::to_string(l2SliceBytes) +
      slices.summary());
  measurements.raw(
      "l2_slices",
      ObjectWriter()
          .str("method",
               "probe_read_l2 (loads that skip the L1) by N = " +
                   std::to_string(sliceUnits) +
                   " compute units x m workgroups (m = 8, 10, 11, 13; all "
                   "resident at once), workgroup w re-reading its own "
                   "disjoint slice [w * S, (w + 1) * S) P times (P a power "
                   "of two, at least 4, P * W >= " +
                   std::to_string(minStreamBytes()) +
                   " bytes); W = N * S; each line is read by one SM only. "
                   "The same cache fit as l2_bytes, to the points with W "
                   ">= " +
                   std::to_string(fitMin) +
                   ". Where the fit succeeds it is the profile's l2_bytes "
                   "(the physical capacity); measurements.l2_bytes keeps "
                   "what one whole-GPU streaming sweep can use: see "
                   "docs/device-profiles.md")
          .integer("fit_min_bytes", fitMin)
          .integer("compute_units", sliceUnits)
          .raw("points", slices.pointsJson())
          .raw("fit", slices.fitJson())
          .integer("result", l2SliceBytes)
          .str(4));
  return l2SliceBytes;
}

uint64_t Probe::sliceUnitCount() {
  // Not on a CPU: lavapipe runs compute_units workgroups at a time, so the
  // whole-device sweep already has one reader per line there.
  if (isCuda)
    return info.multiprocessorCount;
  if (isCpu)
    return 0;
  uint64_t units = 0;
  for (const KnownGpu &gpu : knownGpus)
    if (std::string(info.name).find(gpu.nameFragment) != std::string::npos)
      units = gpu.computeUnits;
  return units;
}

Sweep Probe::sliceSweep(uint64_t units) {
  const uint64_t perUnit[] = {8, 10, 11, 13};
  uint64_t minStream = minStreamBytes();
  Sweep slices;
  for (uint64_t slice = 64;; slice *= 2) {
    bool any = false;
    for (uint64_t mPerUnit : perUnit) {
      uint64_t groups = units * mPerUnit;
      uint64_t w = groups * slice * elementBytes;
      if (w > bufferBytes || groups > info.maxWorkgroupCount[0])
        continue;
      any = true;
      uint64_t passes = 4;
      while (passes * w < minStream)
        passes *= 2;
      ReadParams p;
      p.chunkShift = log2Exact(slice);
      p.chunkMask = static_cast<uint32_t>(slice - 1);
      p.rowShift = log2Exact(passes);
      p.rowMask = static_cast<uint32_t>(passes - 1);
      p.pitch = 0;
      p.perGroup = static_cast<uint32_t>(passes * slice);
      p.span = static_cast<uint32_t>(groups * passes * slice);
      CachetBinding bindings[2] = {{bufferA, 0, bufferBytes},
                                   {outBuffer, 0, 0}};
      uint32_t grid[3] = {static_cast<uint32_t>(groups), 1, 1};
      std::vector<double> raw;
      Stats ns = timeIt(
          [&] {
            check(cachetLaunchWithBlock(runtime, readL2Kernel, grid, block,
                                        bindings, 2, &p, sizeof(p)),
                  "cachetLaunch(probe_read_l2)");
          },
          &raw);
      Stats gbps = invert(ns, double(passes * w));
      ObjectWriter point;
      point.integer("working_set", w)
          .stats("gbps", gbps)
          .integer("workgroups", groups)
          .integer("slice_bytes", slice * elementBytes)
          .integer("passes", passes);
      slices.add(w, gbps, raw, point);
    }
    if (!any)
      break;
  }
  return slices;
}

uint64_t Probe::measureCacheLine(uint64_t l2Bytes) {
  // Cache line: cost per access of one 16 B load every `stride` bytes, over
  // a set that the last-level cache holds (a quarter of it) but that a
  // workgroup's L1 does not keep between passes, and over the whole buffer
  // (from DRAM). The first shows how many bytes a load brings from the
  // cache into the core (the line, or on NVIDIA the 32 B sector); the
  // second the DRAM fetch granule, which prefetchers widen.
  uint64_t cachedSet = std::max<uint64_t>(
      256ull << 10, floorPow2(std::max<uint64_t>(1, l2Bytes / 4)));
  cachedSet = std::min(cachedSet, bufferBytes / 4);
  std::vector<uint64_t> strides;
  for (uint64_t stride = 16; stride <= 1024; stride *= 2)
    strides.push_back(stride);
  // Every launch makes the same number of loads.
  uint64_t lineAccesses = std::max<uint64_t>(
      cachedSet / elementBytes,
      (options.quick ? minStreamBytes() : bufferBytes / 4) / elementBytes);
  LineSweep cachedSweep = strideSweep(cachedSet, strides, lineAccesses);
  LineSweep dramSweep = strideSweep(bufferBytes, strides, lineAccesses);
  LineChase chase = lineChase(l2Bytes);

  // The chase decides where it shows a step; else the cached sweep where its
  // cost grows at least 1.3x from the smallest stride to the largest (else
  // per-access overhead hides it); else the DRAM sweep.
  uint64_t chaseLine = chase.line;
  bool cachedShows =
      cachedSweep.line &&
      cachedSweep.cost.back().second >= 1.3 * cachedSweep.cost.front().second;
  uint64_t cacheLine = chaseLine     ? chaseLine
                       : cachedShows ? cachedSweep.line
                                     : dramSweep.line;
  bool lineFound = cacheLine != 0;
  if (!lineFound)
    cacheLine = 64;
  sources["cache_line"] =
      !lineFound  ? "defaulted (64: neither the chase nor a stride sweep "
                    "shows a line)"
      : chaseLine ? "measured (dependent-load tour)"
      : cachedShows
          ? "measured (stride sweep over a cached set: the chase shows no "
            "step)"
          : "measured (stride sweep over DRAM: the chase shows no step and "
            "the cached sweep's cost grew less than 1.3x)";
  log("cache line " + std::to_string(cacheLine) + " (chase " +
      std::to_string(chaseLine) + ", cached sweep " +
      std::to_string(cachedSweep.line) + ", DRAM sweep " +
      std::to_string(dramSweep.line) + ")");
  measurements.raw("cache_line", cacheLineJson(chase, cachedSweep, dramSweep,
                                               lineAccesses, cacheLine));
  return cacheLine;
}

LineSweep Probe::strideSweep(uint64_t setBytes,
                             const std::vector<uint64_t> &strides,
                             uint64_t accesses) {
  LineSweep sweep;
  sweep.setBytes = setBytes;
  // All strides once per round, rounds repeated: drift on a shared machine
  // hits every stride alike.
  std::vector<std::vector<double>> strideTimes(strides.size());
  std::vector<uint64_t> accessCount(strides.size());
  for (int r = -1; r < reps; ++r)
    for (size_t i = 0; i < strides.size(); ++i) {
      ReadParams p;
      p.pitch = static_cast<uint32_t>(strides[i] / elementBytes);
      p.span = static_cast<uint32_t>(setBytes / strides[i]);
      uint64_t launchAccesses = setBytes == bufferBytes ? p.span : accesses;
      accessCount[i] = covered(launchAccesses);
      double ns = timeOnce(
          [&] { launchRead(bufferA, bufferBytes, p, launchAccesses); });
      if (r >= 0)
        strideTimes[i].push_back(ns);
    }
  for (size_t i = 0; i < strides.size(); ++i) {
    Stats perAccess =
        scaled(summarize(strideTimes[i]), 1.0 / double(accessCount[i]));
    sweep.cost.push_back({strides[i], perAccess.median});
    sweep.points.push_back(ObjectWriter()
                               .integer("stride", strides[i])
                               .stats("ns_per_access", perAccess)
                               .str(10));
  }
  sweep.line = fitLineSize(sweep.cost);
  return sweep;
}

LineChase Probe::lineChase(uint64_t l2Bytes) {
  // Cache line by latency: one chain of dependent loads tours a cached
  // region (larger than a first-level cache) in 1 KiB slots, the slots in a
  // random order and in each slot every d-th byte in a random order. A load
  // misses the first-level cache when it is the first of its line in the
  // slot, so the share of misses is min(d, L) / L for a line of L bytes (on
  // NVIDIA: the 32 B sector a miss fills) and the cost per load follows
  // c + m * min(d, L) / L: the same fit as the stride sweeps, on latency.
  // d stops at 256 B: with fewer loads per slot a CPU's prefetchers serve
  // less of each slot and the cost rises again.
  const std::vector<uint64_t> distances = {16, 32, 64, 128, 256};
  LineChase chase;
  chase.regionBytes = std::max<uint64_t>(
      256ull << 10, std::min<uint64_t>(isCpu ? (256ull << 10) : (8ull << 20),
                                       floorPow2(l2Bytes / 2)));
  chase.regionBytes =
      std::min(chase.regionBytes, floorPow2(bufferBytes / distances.size()));
  chase.loads = isCpu ? 65536 : 32768;
  std::vector<uint32_t> chaseFirst =
      uploadLineChase(distances, chase.regionBytes);
  std::vector<std::vector<double>> chaseTimes =
      timeChases(chaseFirst, chase.loads);
  // Latency: the fastest run of each distance (a shared machine only adds
  // time).
  std::vector<std::pair<uint64_t, double>> chaseCost;
  for (size_t i = 0; i < distances.size(); ++i) {
    Stats perLoad = scaled(summarize(chaseTimes[i]), 1.0 / double(chase.loads));
    chaseCost.push_back({distances[i], perLoad.min});
    chase.points.push_back(ObjectWriter()
                               .integer("distance", distances[i])
                               .stats("ns_per_load", perLoad)
                               .str(10));
  }
  // A rise under 3% of the cost at 16 B is not told apart from noise.
  if (chaseCost.back().second >= 1.03 * chaseCost.front().second)
    chase.line = fitLineSize(chaseCost);
  // The chase filled buffer B: zero it again for the copies below.
  check(cachetBufferFill(runtime, bufferB, 0, bufferBytes, 0),
        "cachetBufferFill");
  return chase;
}

std::vector<uint32_t>
Probe::uploadLineChase(const std::vector<uint64_t> &distances,
                       uint64_t regionBytes) {
  std::vector<uint32_t> chaseFirst(distances.size());
  uint64_t slots = regionBytes / 1024;
  std::mt19937 random(1);
  std::vector<uint32_t> order(slots);
  for (uint64_t i = 0; i < slots; ++i)
    order[i] = static_cast<uint32_t>(i);
  std::shuffle(order.begin(), order.end(), random);
  // Region r (distance distances[r]) at r * regionBytes of buffer B; words
  // hold element indices into the whole buffer.
  std::vector<uint32_t> words(regionBytes / 4), tour, within;
  for (size_t r = 0; r < distances.size(); ++r) {
    uint32_t regionBase = static_cast<uint32_t>(r * regionBytes / 16);
    uint32_t step = static_cast<uint32_t>(distances[r] / 16);
    tour.clear();
    for (uint32_t slot : order) {
      within.clear();
      for (uint32_t e = 0; e < 64; e += step)
        within.push_back(slot * 64 + e);
      std::shuffle(within.begin(), within.end(), random);
      tour.insert(tour.end(), within.begin(), within.end());
    }
    std::fill(words.begin(), words.end(), 0);
    for (size_t k = 0; k < tour.size(); ++k)
      words[uint64_t(tour[k]) * 4] = regionBase + tour[(k + 1) % tour.size()];
    chaseFirst[r] = regionBase + tour.front();
    check(cachetBufferUpload(runtime, bufferB, r * regionBytes, words.data(),
                             regionBytes),
          "cachetBufferUpload");
  }
  return chaseFirst;
}

std::vector<std::vector<double>>
Probe::timeChases(const std::vector<uint32_t> &first, uint64_t steps) {
  std::vector<std::vector<double>> times(first.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < first.size(); ++i) {
      auto chase = [&] {
        launchChase(bufferB, bufferBytes, first[i], uint32_t(steps));
      };
      chase();
      times[i].push_back(timeOnce(chase));
    }
  return times;
}

std::string Probe::cacheLineJson(const LineChase &chase,
                                 const LineSweep &cached, const LineSweep &dram,
                                 uint64_t lineAccesses, uint64_t cacheLine) {
  auto sweepJson = [&](const LineSweep &sweep) {
    return ObjectWriter()
        .integer("set_bytes", sweep.setBytes)
        .raw("points", joinLines(sweep.points, 10))
        .integer("fitted_line", sweep.line)
        .str(6);
  };
  return ObjectWriter()
      .str("method",
           "(1) probe_chase: " + std::to_string(chase.loads) +
               " dependent loads touring a " +
               std::to_string(chase.regionBytes) +
               " B region in 1 KiB slots (slots in a random order, "
               "every d-th byte of a slot in a random order), one "
               "invocation, each timed run after an untimed one; the "
               "fastest run's ns per load against d gets the model "
               "below where it rises at least 3% from d = 16 to 256. "
               "(2) "
               "probe_read of one 16 B element every `stride` bytes, "
               "the strides round-robin, (a) over a set a quarter of "
               "the "
               "measured last-level cache (" +
               std::to_string(lineAccesses) +
               " loads per launch), (b) over the whole buffer once; "
               "below the line size doubling the stride doubles the "
               "lines fetched, above it the cost stays flat: the line "
               "L in {32, 64, 128, 256} whose model cost(s) = c + m * "
               "min(s, L) / L fits the medians best (least squares, "
               "m > 0). The chase decides where it shows a step, "
               "else (a) where its cost grows at least 1.3x from 16 B "
               "to 1 KiB, else (b)")
      .raw("chase", ObjectWriter()
                        .integer("region_bytes", chase.regionBytes)
                        .integer("loads", chase.loads)
                        .raw("points", joinLines(chase.points, 10))
                        .integer("line", chase.line)
                        .str(6))
      .raw("cached", sweepJson(cached))
      .raw("dram", sweepJson(dram))
      .integer("result", cacheLine)
      .str(4);
}

void Probe::measureAlias(uint64_t cacheLine, uint64_t &aliasStride,
                         uint64_t &aliasPad) {
  const uint64_t tourSteps = isCpu ? 65536 : 32768;
  AliasScan walk = aliasColumnWalk(cacheLine);
  AliasScan tour = aliasLatencyTour(cacheLine, tourSteps);
  // Either walk's cliff counts: the smaller stride. The pad is one line
  // wherever a cliff shows.
  bool tourDecides = tour.stride && (!walk.stride || tour.stride < walk.stride);
  aliasStride = tourDecides ? tour.stride : walk.stride;
  aliasPad = aliasStride ? cacheLine : 0;
  sources["alias_stride"] =
      tourDecides ? "measured (latency tour of 16 rows)"
      : aliasStride
          ? "measured (column walk)"
          : "measured (no cliff in the column walk or the latency tour)";
  sources["alias_pad"] = "measured (one line where a cliff shows)";
  log("alias stride " + std::to_string(aliasStride) + ", pad " +
      std::to_string(aliasPad));
  measurements.raw(
      "alias",
      ObjectWriter()
          .str("method",
               "(1) probe_read walking " + std::to_string(aliasWalkRows) +
                   " rows of R bytes, 64 B per row, column after column, "
                   "versus rows padded by one cache line (same bytes); a "
                   "cliff where the packed walk takes more than " +
                   number(aliasCliffRatio) +
                   "x the padded one (median of the interleaved pairs, and "
                   "slower in every pair). (2) probe_chase touring the "
                   "first line of 16 rows of R bytes in a fixed random "
                   "order, " +
                   std::to_string(tourSteps) +
                   " dependent loads, versus rows of R + one line; a "
                   "cliff where the packed tour costs at least 1.2x the "
                   "padded one per load (fastest runs) at R and every "
                   "larger R. The alias stride "
                   "is the smallest R with a cliff in either, the pad one "
                   "line; 0 where no R shows a cliff")
          .raw("points", joinLines(walk.points, 8))
          .raw("tour_points", joinLines(tour.points, 8))
          .integer("tour_alias_stride", tour.stride)
          .integer("alias_stride", aliasStride)
          .integer("alias_pad", aliasPad)
          .str(4));
}

AliasScan Probe::aliasColumnWalk(uint64_t cacheLine) {
  // Set-index alias stride: a column walk (one line per row, all rows, then
  // the next column) over rows of R bytes versus rows of R + one line.
  const uint64_t rows = aliasWalkRows;
  AliasScan walk;
  // 64 B of each row per column: where the line is longer (or the hardware
  // fetches lines in pairs), the rest of the fetched bytes serve the next
  // column only if they survive the walk down the rows, which is what the
  // set-index aliasing of packed rows prevents.
  const uint64_t chunkBytes = 64;
  uint64_t chunkElems = chunkBytes / elementBytes;
  const uint64_t padBytes = cacheLine;
  uint64_t minStream = minStreamBytes();
  for (uint64_t rowBytes = 512; rowBytes <= 16384; rowBytes *= 2) {
    if (rows * (rowBytes + padBytes) > bufferBytes)
      break;
    ReadParams p;
    p.chunkShift = log2Exact(chunkElems);
    p.chunkMask = static_cast<uint32_t>(chunkElems - 1);
    p.rowMask = static_cast<uint32_t>(rows - 1);
    p.rowShift = log2Exact(rows);
    uint64_t span = rows * rowBytes / elementBytes;
    p.span = static_cast<uint32_t>(span);
    uint64_t stream = std::max<uint64_t>(span, minStream / elementBytes);
    uint64_t done = covered(stream);
    ReadParams padP = p;
    p.pitch = static_cast<uint32_t>(rowBytes / elementBytes);
    padP.pitch = static_cast<uint32_t>((rowBytes + padBytes) / elementBytes);
    Stats packed, padded, ratioStats;
    timePair([&] { launchRead(bufferA, bufferBytes, p, stream); },
             [&] { launchRead(bufferA, bufferBytes, padP, stream); }, packed,
             padded, ratioStats);
    double ratio = ratioStats.median;
    // A cliff must show in the median and in every repetition (min > 1): a
    // shared machine's noise alone gives medians above the threshold.
    if (!walk.stride && ratio > aliasCliffRatio && ratioStats.min > 1.0)
      walk.stride = rowBytes;
    double bytes = double(done) * elementBytes;
    walk.points.push_back(ObjectWriter()
                              .integer("row_bytes", rowBytes)
                              .stats("packed_gbps", invert(packed, bytes))
                              .stats("padded_gbps", invert(padded, bytes))
                              .num("packed_over_padded_time", ratio)
                              .stats("ratio_spread", ratioStats)
                              .str(8));
  }
  return walk;
}

AliasScan Probe::aliasLatencyTour(uint64_t cacheLine, uint64_t steps) {
  // Set-index aliasing by latency: one chain of dependent loads tours the
  // first line of 16 rows of R bytes (a fixed random order, again and
  // again), versus rows of R + one line. Where R is a multiple of the alias
  // stride (line x sets) the 16 lines share one set of the first-level
  // cache; more lines than it has ways miss there, the padded rows spread
  // over 16 sets and hit. The alias stride is the smallest R from which on
  // every packed tour costs at least 1.2x the padded one per load (fastest
  // runs).
  const uint64_t tourRows = 16;
  std::vector<uint64_t> tourStrides;
  for (uint64_t r = 1024; r <= 65536; r *= 2)
    tourStrides.push_back(r);
  std::vector<uint32_t> tourFirst =
      uploadAliasTours(tourStrides, tourRows, cacheLine);
  std::vector<std::vector<double>> tourTimes = timeChases(tourFirst, steps);
  AliasScan tour;
  for (size_t v = 0; v + 1 < tourFirst.size(); v += 2) {
    Stats packed = scaled(summarize(tourTimes[v]), 1.0 / double(steps));
    Stats padded = scaled(summarize(tourTimes[v + 1]), 1.0 / double(steps));
    double ratio = packed.min / padded.min;
    // Every multiple of the alias stride aliases too: a cliff counts when it
    // holds at every larger R as well.
    if (ratio < 1.2)
      tour.stride = 0;
    else if (!tour.stride)
      tour.stride = tourStrides[v / 2];
    tour.points.push_back(ObjectWriter()
                              .integer("row_bytes", tourStrides[v / 2])
                              .stats("packed_ns_per_load", packed)
                              .stats("padded_ns_per_load", padded)
                              .num("packed_over_padded_fastest", ratio)
                              .str(8));
  }
  log("alias stride by latency " + std::to_string(tour.stride));
  // The tours filled buffer B: zero it again for the copies below.
  check(cachetBufferFill(runtime, bufferB, 0, bufferBytes, 0),
        "cachetBufferFill");
  return tour;
}

std::vector<uint32_t>
Probe::uploadAliasTours(const std::vector<uint64_t> &rowSizes, uint64_t rows,
                        uint64_t cacheLine) {
  std::vector<uint32_t> tourFirst;
  std::mt19937 random(2);
  std::vector<uint32_t> order(rows);
  for (uint64_t i = 0; i < rows; ++i)
    order[i] = static_cast<uint32_t>(i);
  std::shuffle(order.begin(), order.end(), random);
  // Variant v (stride rowSizes[v / 2], padded when v is odd) at offset
  // 2 * rows * 65536 * (v / 2) + (v % 2) * rows * 65536 + ... of buffer B:
  // each variant gets `rows` rows of up to 64 KiB + one line.
  uint64_t variantBytes = rows * (65536 + cacheLine);
  for (size_t v = 0; v < 2 * rowSizes.size(); ++v) {
    uint64_t pitch = rowSizes[v / 2] + (v % 2 ? cacheLine : 0);
    uint64_t base = v * variantBytes;
    if (base + variantBytes > bufferBytes)
      break;
    for (uint64_t k = 0; k < rows; ++k) {
      uint32_t from =
          static_cast<uint32_t>((base + order[k] * pitch) / elementBytes);
      uint32_t to = static_cast<uint32_t>(
          (base + order[(k + 1) % rows] * pitch) / elementBytes);
      check(cachetBufferUpload(runtime, bufferB, uint64_t(from) * elementBytes,
                               &to, sizeof(to)),
            "cachetBufferUpload");
    }
    tourFirst.push_back(
        static_cast<uint32_t>((base + order[0] * pitch) / elementBytes));
  }
  return tourFirst;
}

double Probe::measureStridedRead() {
  // Strided-read penalty: 256 B chunks at a 1 KiB stride (four "heads" read
  // one at a time, token-major) versus the same bytes read sequentially.
  uint64_t n = bufferBytes / elementBytes;
  ReadParams seq;
  seq.span = static_cast<uint32_t>(n);
  uint64_t readElems = covered(n);
  ReadParams strided;
  strided.chunkShift = log2Exact(256 / elementBytes);
  strided.chunkMask = 256 / elementBytes - 1;
  uint64_t stridedRows = bufferBytes / 1024;
  strided.rowMask = static_cast<uint32_t>(stridedRows - 1);
  strided.rowShift = log2Exact(stridedRows);
  strided.pitch = 1024 / elementBytes;
  strided.span = static_cast<uint32_t>(n);
  Stats stridedNs, seqNs, penaltyStats;
  timePair([&] { launchRead(bufferA, bufferBytes, strided, n); },
           [&] { launchRead(bufferA, bufferBytes, seq, n); }, stridedNs, seqNs,
           penaltyStats);
  double penaltyRaw = penaltyStats.median;
  double penalty = std::max(1.0, penaltyRaw);
  sources["strided_read_penalty"] = "measured (strided vs sequential read)";
  measurements.raw(
      "strided_read",
      ObjectWriter()
          .str("method",
               "probe_read of 256 B chunks at a 1 KiB stride (all chunks of "
               "one column, then the next: a token-major read of four heads "
               "one at a time) versus a sequential read of the same " +
                   std::to_string(bufferBytes) +
                   " bytes; penalty = strided time / sequential time, at "
                   "least 1 in the profile")
          .stats("strided_gbps", invert(stridedNs, double(readElems) * 16))
          .stats("sequential_gbps", invert(seqNs, double(readElems) * 16))
          .num("ratio", penaltyRaw)
          .stats("ratio_spread", penaltyStats)
          .num("result", penalty)
          .str(4));
  log("strided penalty " + number(penaltyRaw));
  return penalty;
}

bool Probe::measureLaunchBoundary() {
  // Launch boundaries: N back-to-back copies of S bytes versus one copy of
  // N * S bytes; on CUDA sm_90+ also the PDL copy kernel launched plainly
  // and with programmatic dependent launch.
  uint64_t launchBytes = isCpu ? (256ull << 10) : (4ull << 20);
  uint64_t launches = options.quick ? 32 : 200;
  launches = std::max<uint64_t>(
      2, std::min<uint64_t>(launches, bufferBytes / launchBytes));
  uint64_t launchElems = launchBytes / elementBytes;
  Stats manyNs, oneNs, manyOverOne;
  timePair(
      [&] {
        for (uint64_t i = 0; i < launches; ++i)
          launchCopy(bufferA, bufferB, bufferBytes, i * launchElems,
                     launchElems);
      },
      [&] {
        launchCopy(bufferA, bufferB, bufferBytes, 0, launches * launchElems);
      },
      manyNs, oneNs, manyOverOne);
  Stats idleRange = idlePerBoundary(manyNs, oneNs, launches);
  log("launch boundary " + number(idleRange.median / 1000) + " us");
  ObjectWriter boundary;
  boundary
      .str("method",
           "probe_copy: " + std::to_string(launches) +
               " back-to-back launches of " + std::to_string(launchBytes) +
               " bytes each (in order on one queue" +
               std::string(isCuda ? "" : ", a barrier between launches") +
               ") versus one launch over all of them; idle per boundary = "
               "(many - one) / (launches - 1); min/max pair the extremes")
      .stats("many_ns", manyNs)
      .stats("one_ns", oneNs)
      .stats("idle_us", scaled(idleRange, 1e-3));
  bool pdl = false;
  if (pdlCopyKernel) {
    // The same chain of probe_copy_pdl launches without and with PDL.
    Stats plainNs, pdlNs, ratio;
    timePair(
        [&] {
          for (uint64_t i = 0; i < launches; ++i)
            launchCopyPdl(bufferA, bufferB, i * launchElems, launchElems,
                          false);
        },
        [&] {
          for (uint64_t i = 0; i < launches; ++i)
            launchCopyPdl(bufferA, bufferB, i * launchElems, launchElems, true);
        },
        plainNs, pdlNs, ratio);
    Stats plainIdle = idlePerBoundary(plainNs, oneNs, launches);
    Stats pdlIdle = idlePerBoundary(pdlNs, oneNs, launches);
    log("launch boundary of probe_copy_pdl " + number(plainIdle.median / 1000) +
        " us plain, " + number(pdlIdle.median / 1000) + " us with PDL");
    boundary.raw(
        "pdl",
        ObjectWriter()
            .str("method",
                 "probe_copy_pdl (griddepcontrol.launch_dependents, then "
                 "griddepcontrol.wait, then the copy): the same chain "
                 "launched through cachetLaunchKernel without and with "
                 "CACHET_LAUNCH_PDL (cuLaunchKernelEx, programmatic stream "
                 "serialization), interleaved; idle per boundary against "
                 "the one probe_copy launch")
            .stats("plain_ns", plainNs)
            .stats("pdl_ns", pdlNs)
            .stats("plain_idle_us", scaled(plainIdle, 1e-3))
            .stats("pdl_idle_us", scaled(pdlIdle, 1e-3))
            .stats("plain_over_pdl_time", ratio)
            .str(6));
    pdl = true;
  }
  measurements.raw("launch_boundary", boundary.str(4));
  return pdl;
}

void Probe::describePdl(bool pdl) {
  if (isCuda) {
    std::string cc = computeCapability();
    measurements.str("pdl", pdl ? "true: compute capability " + cc +
                                      " (sm_90+ has griddepcontrol) and the "
                                      "PDL launches above ran"
                                : "false: compute capability " + cc +
                                      " is below sm_90 (no griddepcontrol)");
    sources["pdl"] = "reported (compute capability; PDL launches timed in "
                     "launch_boundary)";
  } else {
    measurements.str("pdl", "false: " + std::string(info.backend) +
                                " has no programmatic dependent launch");
    sources["pdl"] = "reported (backend capability)";
  }
}

void Probe::reportDeviceFields(ProfileFields &fields) {
  sources["compute_units"] = "defaulted (1: not reported by the driver)";
  sources["arch"] = "defaulted (unknown)";
  sources["l2_prefetch"] = "reported (none: SPIR-V has no L2 prefetch)";
  if (isCuda) {
    fields.arch = "sm_" + std::to_string(info.computeCapabilityMajor) +
                  std::to_string(info.computeCapabilityMinor);
    fields.computeUnits = info.multiprocessorCount;
    sources["arch"] = "reported (compute capability)";
    sources["compute_units"] = "reported (multiprocessor count)";
    // prefetch.global.L2 exists on every supported chip;
    // cp.async.bulk.prefetch.L2 from sm_90.
    fields.l2Prefetch = info.computeCapabilityMajor >= 9 ? "bulk" : "l2";
    sources["l2_prefetch"] = "reported (compute capability " +
                             computeCapability() +
                             ": cp.async.bulk.prefetch.L2 from sm_90, "
                             "prefetch.global.L2 below)";
  } else if (isCpu) {
    struct utsname u;
    if (uname(&u) == 0)
      fields.arch = u.machine;
    sources["arch"] = "reported (host machine: lavapipe runs on the CPU)";
    fields.computeUnits = std::max(1u, std::thread::hardware_concurrency());
    if (const char *threads = std::getenv("LP_NUM_THREADS"))
      if (std::atoi(threads) > 0)
        fields.computeUnits = static_cast<uint64_t>(std::atoi(threads));
    sources["compute_units"] =
        "reported (host hardware threads, lavapipe's worker threads)";
  } else {
    for (const KnownGpu &gpu : knownGpus)
      if (std::string(info.name).find(gpu.nameFragment) != std::string::npos) {
        fields.arch = gpu.arch;
        fields.computeUnits = gpu.computeUnits;
        sources["arch"] = "tabulated by device name";
        sources["compute_units"] = "tabulated by device name";
        break;
      }
  }
  fields.subgroupSize = info.subgroupSize;
  if (!fields.subgroupSize || (fields.subgroupSize & (fields.subgroupSize - 1)))
    fields.subgroupSize = 32;
  sources["name"] = "reported (device name)";
  sources["vendor"] =
      "reported (vendor id " + std::to_string(info.vendorId) + ")";
  sources["unified_memory"] = "reported (device memory is host visible)";
  sources["subgroup_size"] = "reported";
  sources["shared_memory_bytes"] =
      isCuda ? "reported (opt-in shared memory per block)"
             : "reported (maxComputeSharedMemorySize)";
  fields.coopMatrix = coopMatrixShapes();
}

std::vector<std::string> Probe::coopMatrixShapes() {
  std::vector<std::string> coopMatrix;
  if (isCuda && info.computeCapabilityMajor >= 7) {
    // WMMA's f16 16x16x16 fragments exist from sm_70.
    coopMatrix = {quote("16x16x16:f16->f32"), quote("16x16x16:f16->f16")};
    sources["coop_matrix"] = "reported (compute capability " +
                             computeCapability() +
                             ": WMMA f16 16x16x16 from sm_70)";
  } else if (std::string(info.backend) == "vulkan") {
    CachetCooperativeMatrixInfo coop{};
    check(cachetGetCooperativeMatrixInfo(runtime, &coop),
          "cachetGetCooperativeMatrixInfo");
    // The driver's subgroup-scope shapes whose element types profiles name.
    std::stringstream shapes(coop.shapes);
    for (std::string shape; std::getline(shapes, shape, ',');) {
      std::string types = shape.substr(shape.find(':') + 1);
      std::string a = types.substr(0, types.find("->"));
      std::string c = types.substr(types.find("->") + 2);
      auto known = [](const std::string &type) {
        return type == "f16" || type == "f32" || type == "i8" || type == "i32";
      };
      if (known(a) && known(c))
        coopMatrix.push_back(quote(shape));
    }
    sources["coop_matrix"] =
        coop.enabled
            ? "reported (VK_KHR_cooperative_matrix: the subgroup-scope "
              "shapes the driver lists, f16/f32/i8/i32 ones)"
            : "reported (none: the device has no "
              "VK_KHR_cooperative_matrix the runtime could enable)";
  } else {
    sources["coop_matrix"] = "defaulted (none: the runtime does not report "
                             "cooperative-matrix shapes on " +
                             std::string(info.backend) + ")";
  }
  return coopMatrix;
}

std::string Probe::computeCapability() const {
  return std::to_string(info.computeCapabilityMajor) + "." +
         std::to_string(info.computeCapabilityMinor);
}

std::string Probe::writeProfile(const ProfileFields &fields) {
  ObjectWriter sourceObject;
  for (const auto &entry : sources)
    sourceObject.str(entry.first, entry.second);
  measurements.raw("field_sources", sourceObject.str(4));

  ObjectWriter profile;
  profile.str("name", info.name)
      .str("vendor", vendorName(info.vendorId))
      .str("arch", fields.arch)
      .integer("cache_line", fields.cacheLine)
      .integer("l2_bytes", fields.l2Bytes)
      .integer("alias_stride", fields.aliasStride)
      .integer("alias_pad", fields.aliasPad)
      .integer("compute_units", fields.computeUnits)
      .num("dram_gbps", fields.dramGbps)
      .boolean("unified_memory", info.unifiedMemory != 0)
      .num("strided_read_penalty", fields.stridedReadPenalty)
      .boolean("pdl", fields.pdl)
      .str("l2_prefetch", fields.l2Prefetch)
      .raw("coop_matrix", joinArray(fields.coopMatrix))
      .integer("subgroup_size", fields.subgroupSize)
      .integer("shared_memory_bytes", info.maxSharedMemoryBytes)
      .raw("measurements", measurements.str(2));
  return profile.str() + "\n";
}

int usage(const char *error = nullptr) {
  if (error)
    std::cerr << "cachet-probe: " << error << "\n";
  std::cerr << "usage: cachet-probe [--backend=vulkan|cuda|auto] [--device=N] "
               "[-o profile.json] [--quick] [-v]\n"
               "       cachet-probe --fit-sweep=profile.json\n";
  return 2;
}

/// Exit status of a probe that found no device of the requested backend.
constexpr int exitSkipped = 77;

/// Reads a working-set sweep of a profile cachet-probe wrote (the
/// "working_set" and the "median" GB/s after it of every point of
/// measurements.<section>.points, section l2_bytes or l2_slices) and the
/// fit's lower bound.
bool readSweep(const std::string &path, const std::string &sectionName,
               std::vector<std::pair<uint64_t, double>> &sweep,
               uint64_t &fitMin) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  size_t section = text.find("\"" + sectionName + "\": {");
  if (section == std::string::npos)
    return false;
  // The section ends at its fit, at the next sweep or (in profiles from
  // before the fit) at the alias measurements.
  size_t end = std::min({text.find("\"fit\": {", section),
                         text.find("\"l2_slices\": {", section + 1),
                         text.find("\"alias\"", section)});
  auto numberAfter = [&](const std::string &key, size_t from, size_t &at) {
    at = text.find("\"" + key + "\":", from);
    if (at == std::string::npos || at > end)
      return -1.0;
    at += key.size() + 3;
    return std::strtod(text.c_str() + at, nullptr);
  };
  size_t at = section;
  double value = numberAfter("fit_min_bytes", section, at);
  // Profiles from before the fit: 4 MiB on a GPU (the first point is 1 MiB
  // there, 256 KiB on a CPU).
  fitMin = value > 0 ? uint64_t(value) : 0;
  for (size_t pos = section;;) {
    double w = numberAfter("working_set", pos, at);
    if (w < 0)
      break;
    double gbps = numberAfter("median", at, pos);
    if (gbps < 0)
      return false;
    sweep.push_back({uint64_t(w), gbps});
  }
  if (!fitMin && !sweep.empty())
    fitMin = sweep.front().first >= (1ull << 20) ? (4ull << 20) : 0;
  return !sweep.empty();
}

/// --fit-sweep: fits the cache size to a stored sweep and prints the fit,
/// one object per sweep the profile has (l2_bytes, then l2_slices).
int fitStoredSweep(const std::string &path) {
  int found = 0;
  for (const char *section : {"l2_bytes", "l2_slices"}) {
    std::vector<std::pair<uint64_t, double>> sweep;
    uint64_t fitMin = 0;
    if (!readSweep(path, section, sweep, fitMin))
      continue;
    ++found;
    CacheFit fit = fitCacheSize(sweep, fitMin);
    std::cout << ObjectWriter()
                     .str("sweep", path)
                     .str("section", section)
                     .integer("points", sweep.size())
                     .integer("fit_min_bytes", fitMin)
                     .num("cache_bytes", fit.bytes)
                     .num("cache_mib", fit.bytes / double(1 << 20))
                     .str("model", fit.model)
                     .num("hit_gbps", fit.hitGbps)
                     .num("miss_gbps", fit.missGbps)
                     .num("rms_relative_error", fit.rms)
                     .str("problem", fit.problem)
                     .str()
              << "\n";
  }
  if (!found) {
    std::cerr << "cachet-probe: no working-set sweep in '" << path << "'\n";
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--backend=", 0) == 0)
      options.backend = arg.substr(10);
    else if (arg.rfind("--device=", 0) == 0)
      options.device = std::atoi(arg.c_str() + 9);
    else if (arg == "-o" && i + 1 < argc)
      options.output = argv[++i];
    else if (arg.rfind("-o=", 0) == 0)
      options.output = arg.substr(3);
    else if (arg.rfind("--fit-sweep=", 0) == 0)
      options.fitSweep = arg.substr(12);
    else if (arg == "--quick")
      options.quick = true;
    else if (arg == "-v" || arg == "--verbose")
      options.verbose = true;
    else if (arg == "-h" || arg == "--help") {
      usage();
      return 0;
    } else
      return usage(("unknown argument '" + arg + "'").c_str());
  }
  if (!options.fitSweep.empty())
    return fitStoredSweep(options.fitSweep);
  if (options.backend != "vulkan" && options.backend != "cuda" &&
      options.backend != "auto")
    return usage("--backend must be vulkan, cuda or auto");
  if (options.device >= 0) {
    std::string index = std::to_string(options.device);
    if (options.backend != "cuda")
      setenv("CACHET_VULKAN_DEVICE", index.c_str(), 1);
    if (options.backend != "vulkan")
      setenv("CACHET_CUDA_DEVICE", index.c_str(), 1);
  }

  CachetRuntime runtime = nullptr;
  CachetStatus created =
      cachetRuntimeCreate(options.backend.c_str(), 0, &runtime);
  if (created != CACHET_SUCCESS) {
    std::cerr << "cachet-probe: " << cachetGetLastError() << "\n";
    if (created == CACHET_ERROR_NO_DEVICE) {
      std::cerr << "cachet-probe: skipped: no " << options.backend
                << " device; nothing measured\n";
      return exitSkipped;
    }
    return 1;
  }
  int rc = 0;
  try {
    std::string json;
    {
      Probe probe(runtime, options);
      json = probe.run();
    }
    if (options.output.empty() || options.output == "-") {
      std::cout << json;
    } else {
      std::ofstream out(options.output);
      out << json;
      if (!out) {
        std::cerr << "cachet-probe: cannot write '" << options.output << "'\n";
        rc = 1;
      }
    }
  } catch (const ProbeError &e) {
    std::cerr << "cachet-probe: " << e.what() << "\n";
    rc = 1;
  }
  cachetRuntimeDestroy(runtime);
  return rc;
}
