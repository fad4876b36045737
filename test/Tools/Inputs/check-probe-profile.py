"""Checks a profile that cachet-probe wrote: well-formed JSON, exactly the
profile fields plus "measurements", every figure within broad bounds (the
exact figures depend on the machine), and a record of how each was measured.
Usage: check-probe-profile.py PROFILE [BACKEND [no-bounds]]: BACKEND is
vulkan (the default) or cuda (sm_90); no-bounds skips the bounds of the
measured figures (for the host-memory stand-in driver, whose timings are the
host's).
Prints one "ok ..." line per check; exits non-zero on the first failure."""
import json
import sys

BACKEND = sys.argv[2] if len(sys.argv) > 2 else "vulkan"
BOUNDS = not (len(sys.argv) > 3 and sys.argv[3] == "no-bounds")

FIELDS = {
    "name", "vendor", "arch", "cache_line", "l2_bytes", "alias_stride",
    "alias_pad", "compute_units", "dram_gbps", "unified_memory",
    "strided_read_penalty", "pdl", "l2_prefetch", "coop_matrix",
    "subgroup_size", "shared_memory_bytes", "measurements",
}


def fail(message):
    print("FAIL " + message)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)
    print("ok " + message)


def stats_ok(s):
    return (isinstance(s, dict) and s["min"] <= s["median"] <= s["max"]
            and s["min"] > 0)


profile = json.load(open(sys.argv[1]))
expect(set(profile) == FIELDS, "exactly the profile fields")
expect(profile["vendor"] in ("nvidia", "amd", "mesa", "generic"), "vendor")
expect(profile["cache_line"] in (32, 64, 128, 256), "cache_line")
expect(64 * 1024 <= profile["l2_bytes"] <= 1024 ** 3, "l2_bytes")
stride, pad = profile["alias_stride"], profile["alias_pad"]
expect(stride == 0 and pad == 0 or
       (1024 <= stride <= 65536 or not BOUNDS) and
       stride & (stride - 1) == 0 and pad == profile["cache_line"],
       "alias_stride and alias_pad")
expect(profile["dram_gbps"] > 0.1, "dram_gbps")
expect(profile["strided_read_penalty"] >= 1, "strided_read_penalty")
expect(profile["compute_units"] >= 1, "compute_units")
sg = profile["subgroup_size"]
expect(sg > 0 and sg & (sg - 1) == 0, "subgroup_size")
if BACKEND == "vulkan":
    expect(profile["pdl"] is False and profile["l2_prefetch"] == "none",
           "no PDL or L2 prefetch through Vulkan")
else:
    expect(profile["pdl"] is True and profile["l2_prefetch"] == "bulk",
           "PDL and bulk L2 prefetch on sm_90")

m = profile["measurements"]
expect(m["tool"] == "cachet-probe" and m["backend"] == BACKEND,
       "measurements name the tool and backend")
expect(m["self_check"].startswith("passed"), "kernels checked before timing")
expect(stats_ok(m["dram_copy"]["gbps"]) and stats_ok(m["dram_read"]["gbps"])
       and stats_ok(m["driver_copy"]["gbps"]),
       "DRAM copy, driver copy and read with their spread")
expect(all(stats_ok(p["ns_per_access"])
           for sweep in ("cached", "dram")
           for p in m["cache_line"][sweep]["points"]),
       "stride sweeps with their spread")
points = m["l2_bytes"]["points"]
expect(len(points) >= 5 and
       all(stats_ok(p["gbps"]) and len(p["ns"]) == m["repetitions"] and
           p["stream_bytes"] >= p["working_set"] for p in points),
       "working-set sweep with its raw times")
# l2_bytes is the slice sweep's fit where it ran and fitted (GPUs), else the
# whole-GPU sweep's.
fit = m["l2_bytes"]["fit"]
slices = m.get("l2_slices", {}).get("fit", {"problem": "not run"})
if slices["problem"] == "" and slices["cache_bytes"] > 0:
    fit = slices
expect(fit["problem"] != "" or
       abs(fit["cache_bytes"] - profile["l2_bytes"]) <=
       1e-3 * profile["l2_bytes"] and
       fit["hit_gbps"] > fit["miss_gbps"] > 0,
       "cache-size fit")
expect(len(m["alias"]["points"]) >= 3 and
       all(p["packed_over_padded_time"] > 0 for p in m["alias"]["points"]),
       "column walks packed and padded")
expect(m["strided_read"]["ratio"] > 0, "strided-read ratio")
expect("idle_us" in m["launch_boundary"], "launch boundary")
if BACKEND == "cuda":
    expect(stats_ok(m["launch_boundary"]["pdl"]["pdl_ns"]) and
           stats_ok(m["launch_boundary"]["pdl"]["plain_ns"]),
           "launch boundary with and without PDL")
for field in ("cache_line", "l2_bytes", "alias_stride", "dram_gbps",
              "strided_read_penalty"):
    expect(m["field_sources"][field].startswith(
        ("measured", "defaulted", "reported")), "source of " + field)
for field in ("name", "vendor", "subgroup_size", "shared_memory_bytes", "pdl",
              "l2_prefetch"):
    expect(m["field_sources"][field].startswith("reported"),
           "source of " + field)
