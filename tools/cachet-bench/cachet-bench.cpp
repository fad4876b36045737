//===- cachet-bench.cpp - benchmark suites of cachet artifacts -----------===//
//
// cachet-bench SUITE_DIR [--repeat=N] [--warmup=N] [--filter=TEXT]
//              [--seed=N] [--json=FILE]
//
// Runs every case of a suite (SUITE_DIR/suite.json, written with the
// artifacts by bench/make-suite.py) on the artifacts' GPU backend: both GPU
// variants of each artifact (rewrites off and on) are called once and their
// results compared byte for byte, then timed in interleaved calls (off, on,
// off, on, ...). Prints one table per kind of case, seed style:
//
//   attention  pp512 @ dDEPTH per KV type: ms, tokens/s, TFLOP/s, off/on
//   tg         mat-vec chains: ms, TB/s (weight bytes over kernel time)
//   kernel     one kernel: ms, achieved TB/s (bytes read + written) or TFLOP/s
//   launch     chains of tiny kernels: kernel span and host wall time per
//              launch, us (the launch overhead of the backend)
//
// Times are the device time from the first kernel's start to the last one's
// end of a call (uploads excluded), medians with [min, max]. Needs only
// libcachet_runtime and the GPU driver.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Runner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace cachet;

namespace {

struct Case {
  std::string artifact, table, label, test;
  double bytes = 0, flops = 0, tokens = 0;
  BenchResult result;
  bool ran = false;
  std::string error;
};

int usage(const char *error = nullptr) {
  if (error)
    std::cerr << "cachet-bench: " << error << "\n";
  std::cerr << "usage: cachet-bench SUITE_DIR [--repeat=N] [--warmup=N] "
               "[--filter=TEXT] [--seed=N] [--json=FILE]\n";
  return 2;
}

/// --help: what each option does, on stdout.
int help() {
  std::cout
      << "usage: cachet-bench SUITE_DIR [--repeat=N] [--warmup=N] "
         "[--filter=TEXT] [--seed=N] [--json=FILE]\n"
         "\n"
         "Runs every case of a benchmark suite (SUITE_DIR/suite.json, "
         "written with\nthe artifacts by bench/make-suite.py): both GPU "
         "variants of each artifact\n(rewrites off and on) are called once "
         "and compared byte for byte, then\ntimed in interleaved calls. "
         "Times are the device time from the first\nkernel's start to the "
         "last one's end (medians with [min, max]).\n"
         "\n"
         "  --repeat=N     timed calls of each variant (default 20)\n"
         "  --warmup=N     untimed calls of each variant first (default 2)\n"
         "  --filter=TEXT  only the cases whose table, label or test contains "
         "TEXT\n"
         "  --seed=N       seed of the random inputs (default 1)\n"
         "  --json=FILE    also write every result as JSON\n"
         "  --help         this text\n";
  return 0;
}

bool readSuite(const std::string &folder, std::string &name,
               std::vector<Case> &cases, std::string &error) {
  std::ifstream file(folder + "/suite.json");
  if (!file) {
    error = "cannot read " + folder + "/suite.json";
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  json::Value root;
  if (!json::parse(text.str(), root, error)) {
    error = folder + "/suite.json: " + error;
    return false;
  }
  if (const json::Value *v = root.get("name"))
    name = v->string;
  const json::Value *list = root.get("cases");
  if (!list || list->kind != json::Value::Kind::Array) {
    error = folder + "/suite.json: missing \"cases\"";
    return false;
  }
  for (const json::Value &item : list->array) {
    Case c;
    auto str = [&](const char *key) {
      const json::Value *v = item.get(key);
      return v ? v->string : std::string();
    };
    auto num = [&](const char *key) {
      const json::Value *v = item.get(key);
      return v ? v->number : 0.0;
    };
    c.artifact = str("artifact");
    c.table = str("table");
    c.label = str("label");
    c.test = str("test");
    c.bytes = num("bytes");
    c.flops = num("flops");
    c.tokens = num("tokens");
    if (c.artifact.empty() || c.table.empty()) {
      error = folder + "/suite.json: a case needs \"artifact\" and \"table\"";
      return false;
    }
    c.artifact = folder + "/" + c.artifact;
    cases.push_back(c);
  }
  return true;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

/// "median [min, max]" in ms.
std::string ms(const Spread &s) {
  return fixed(s.median, 3) + " [" + fixed(s.min, 3) + ", " + fixed(s.max, 3) +
         "]";
}

/// `perSecond` with a unit prefix: "3.812 TB/s", "41.2 GB/s".
std::string scaled(double perSecond, const char *unit) {
  if (perSecond >= 1e11)
    return fixed(perSecond / 1e12, 3) + " T" + unit;
  if (perSecond >= 1e8)
    return fixed(perSecond / 1e9, 1) + " G" + unit;
  return fixed(perSecond / 1e6, 1) + " M" + unit;
}

/// The rate the table reports for `c` at `seconds`: tokens/s and FLOP/s for
/// attention, bytes/s for chains and kernels that move bytes, else FLOP/s.
std::string rate(const Case &c, double seconds) {
  if (seconds <= 0)
    return "-";
  if (c.table == "attention")
    return fixed(c.tokens / seconds, 0) + " t/s, " +
           scaled(c.flops / seconds, "FLOP/s");
  if (c.bytes > 0)
    return scaled(c.bytes / seconds, "B/s");
  if (c.flops > 0)
    return scaled(c.flops / seconds, "FLOP/s");
  return "-";
}

/// "median [min, max]" of `samples` divided by `launches`, in us.
std::string perLaunch(const std::vector<double> &samples, uint64_t launches) {
  if (!launches)
    return "-";
  Spread s = spread(samples);
  double scale = 1e3 / static_cast<double>(launches);
  return fixed(s.median * scale, 2) + " [" + fixed(s.min * scale, 2) + ", " +
         fixed(s.max * scale, 2) + "]";
}

/// The launch table: the kernel span and the host's wall time of a call
/// per kernel it launched.
void printLaunchTable(const std::vector<Case> &cases, int repeat) {
  std::cout << "\nlaunch (per kernel launched, us: median [min, max] of "
            << repeat
            << " interleaved calls; span = device time from the first "
               "kernel's start to the last one's end, wall = the host's "
               "time of the call)\n";
  std::cout << "| case | test | launches off / on | span off | span on | "
               "wall off | wall on | values |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Case &c : cases) {
    if (c.table != "launch")
      continue;
    std::cout << "| " << c.label << " | " << c.test << " | ";
    if (!c.ran) {
      std::cout << "error: " << c.error << " | | | | | |\n";
      continue;
    }
    const VariantTimes *t = c.result.times;
    std::cout << t[0].launches << " / " << t[1].launches << " | "
              << perLaunch(t[0].kernels, t[0].launches) << " | "
              << perLaunch(t[1].kernels, t[1].launches) << " | "
              << perLaunch(t[0].wall, t[0].launches) << " | "
              << perLaunch(t[1].wall, t[1].launches) << " | "
              << (c.result.identical ? "identical" : "DIFFERENT") << " |\n";
  }
}

void printTables(const std::vector<Case> &cases, int repeat) {
  std::vector<std::string> tables;
  for (const Case &c : cases)
    if (std::find(tables.begin(), tables.end(), c.table) == tables.end())
      tables.push_back(c.table);
  for (const std::string &table : tables) {
    if (table == "launch") {
      printLaunchTable(cases, repeat);
      continue;
    }
    std::cout << "\n"
              << table << " (kernel time, ms: median [min, max] of " << repeat
              << " interleaved calls)\n";
    std::cout << "| case | test | rewrites off | rewrites on | off/on | "
                 "rate off | rate on | values |\n"
                 "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Case &c : cases) {
      if (c.table != table)
        continue;
      std::cout << "| " << c.label << " | " << c.test << " | ";
      if (!c.ran) {
        std::cout << "error: " << c.error << " | | | | | |\n";
        continue;
      }
      Spread off = spread(c.result.times[0].kernels);
      Spread on = spread(c.result.times[1].kernels);
      std::cout << ms(off) << " | " << ms(on) << " | "
                << (on.median > 0 ? fixed(off.median / on.median, 3) : "-")
                << " | " << rate(c, off.median / 1e3) << " | "
                << rate(c, on.median / 1e3) << " | "
                << (c.result.identical ? "identical" : "DIFFERENT") << " |\n";
    }
  }
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20)
      continue;
    out += ch;
  }
  return out + "\"";
}

std::string spreadJson(const std::vector<double> &samples) {
  Spread s = spread(samples);
  std::ostringstream os;
  os << std::setprecision(6) << "{\"median\": " << s.median
     << ", \"min\": " << s.min << ", \"max\": " << s.max << ", \"samples\": [";
  for (size_t i = 0; i < samples.size(); ++i)
    os << (i ? ", " : "") << samples[i];
  os << "]}";
  return os.str();
}

bool writeJson(const std::string &path, const std::string &suite,
               const std::vector<Case> &cases, int warmup, int repeat,
               unsigned seed) {
  std::ofstream out(path);
  out << "{\n  \"suite\": " << quote(suite) << ",\n  \"warmup\": " << warmup
      << ",\n  \"repeat\": " << repeat << ",\n  \"seed\": " << seed
      << ",\n  \"time\": \"kernel span: device time from the first kernel's "
         "start to the last one's end of a call, ms\",\n  \"cases\": [";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    out << (i ? "," : "") << "\n    {\"artifact\": " << quote(c.artifact)
        << ", \"table\": " << quote(c.table)
        << ", \"label\": " << quote(c.label) << ", \"test\": " << quote(c.test)
        << std::setprecision(12) << ", \"bytes\": " << c.bytes
        << ", \"flops\": " << c.flops << ", \"tokens\": " << c.tokens;
    if (!c.ran) {
      out << ", \"error\": " << quote(c.error) << "}";
      continue;
    }
    const BenchResult &r = c.result;
    out << ", \"device\": " << quote(r.device)
        << ", \"backend\": " << quote(r.backend)
        << ", \"target\": " << quote(r.target)
        << ", \"profile\": " << quote(r.profile)
        << ", \"identical\": " << (r.identical ? "true" : "false");
    const char *names[2] = {"off", "on"};
    for (int v = 0; v < 2; ++v)
      out << ",\n     \"" << names[v]
          << "\": {\"kernels_ms\": " << spreadJson(r.times[v].kernels)
          << ",\n            \"device_ms\": " << spreadJson(r.times[v].device)
          << ",\n            \"wall_ms\": " << spreadJson(r.times[v].wall)
          << ",\n            \"launches\": " << r.times[v].launches << "}";
    out << "}";
  }
  out << "\n  ]\n}\n";
  return static_cast<bool>(out);
}

} // namespace

int main(int argc, char **argv) {
  std::string folder, filter, jsonPath;
  int repeat = 20, warmup = 2;
  unsigned seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--repeat="))
      repeat = std::atoi(v);
    else if (const char *v = value("--warmup="))
      warmup = std::atoi(v);
    else if (const char *v = value("--filter="))
      filter = v;
    else if (const char *v = value("--seed="))
      seed = std::strtoul(v, nullptr, 10);
    else if (const char *v = value("--json="))
      jsonPath = v;
    else if (arg == "--help" || arg == "-h")
      return help();
    else if (arg.rfind("--", 0) == 0 || !folder.empty())
      return usage(("unknown argument " + arg).c_str());
    else
      folder = arg;
  }
  if (folder.empty())
    return usage("no suite folder given");
  if (repeat < 1 || warmup < 0)
    return usage("--repeat must be at least 1 and --warmup at least 0");

  std::string suite, error;
  std::vector<Case> cases;
  if (!readSuite(folder, suite, cases, error)) {
    std::cerr << "cachet-bench: " << error << "\n";
    return 2;
  }
  std::vector<Case> selected;
  for (const Case &c : cases)
    if (filter.empty() ||
        (c.table + " " + c.label + " " + c.test).find(filter) !=
            std::string::npos)
      selected.push_back(c);
  if (selected.empty()) {
    std::cerr << "cachet-bench: no case of " << folder << " matches '" << filter
              << "'\n";
    return 2;
  }

  int status = 0;
  std::string device;
  for (Case &c : selected) {
    std::cerr << "cachet-bench: " << c.table << " " << c.label << " " << c.test
              << " ..." << std::endl;
    c.ran = benchArtifact(c.artifact, seed, warmup, repeat, c.result, c.error);
    if (!c.ran) {
      std::cerr << "cachet-bench: " << c.artifact << ": " << c.error << "\n";
      status = 2;
      continue;
    }
    device = c.result.device + " (" + c.result.backend + ")";
    if (!c.result.identical) {
      std::cerr << "cachet-bench: " << c.artifact
                << ": rewrites off and on give DIFFERENT results\n";
      status = status ? status : 1;
    }
  }
  std::cout << "suite " << suite << " on " << (device.empty() ? "-" : device)
            << ", " << repeat << " timed calls of each variant after " << warmup
            << " warm-up calls\n";
  printTables(selected, repeat);
  if (!jsonPath.empty() &&
      !writeJson(jsonPath, suite, selected, warmup, repeat, seed)) {
    std::cerr << "cachet-bench: cannot write " << jsonPath << "\n";
    return 2;
  }
  return status;
}
