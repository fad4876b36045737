"""Writes a working-set sweep in cachet-probe's profile format (the part
`cachet-probe --fit-sweep` reads) from a cache model, to test the fit:

  sweep.py random|lru CACHE_MIB [NOISE [SLICES_MIB]]

GPU-like points: 1 MiB to 1 GiB in quarter-octave steps; a hit reads at
10 TB/s, a miss at 4.4 TB/s; `random` is the random-replacement hit rate of a
cyclic sweep, `lru` none at all beyond the cache. NOISE (default 0.02) is the
largest relative error added, deterministic. With SLICES_MIB the file also
has an `l2_slices` sweep (the per-workgroup slice sweep: W = 132 x m x 2^j
KiB, m = 8, 10, 11, 13) of a cache of SLICES_MIB."""
import json
import math
import sys

model, cache = sys.argv[1], float(sys.argv[2]) * 2 ** 20
noise = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02


slices = float(sys.argv[4]) * 2 ** 20 if len(sys.argv) > 4 else 0


def hit_rate(ratio):
    if ratio <= 1:
        return 1.0
    if model == "lru":
        return 0.0
    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(100):
        mid = (lo + hi) / 2
        if mid - math.exp(-(1 - mid) * ratio) < 0:
            lo = mid
        else:
            hi = mid
    return lo


def point(w, cache_bytes, index):
    h = hit_rate(w / cache_bytes)
    gbps = 1 / (h / 10000 + (1 - h) / 4400)
    gbps *= 1 + noise * math.sin(index * 2.4)
    return {"working_set": w, "gbps": {"median": gbps, "min": gbps, "max": gbps}}


points = []
size = 2 ** 20
while size <= 2 ** 30:
    for quarter in range(4):
        points.append(point(size + size * quarter // 4, cache, len(points)))
    size *= 2
measurements = {"l2_bytes": {"fit_min_bytes": 4 * 2 ** 20, "points": points}}
if slices:
    slice_points = []
    for j in range(10, 26):
        for m in (8, 10, 11, 13):
            w = 132 * m * 2 ** j
            if w <= 2 ** 30:
                slice_points.append(point(w, slices, len(slice_points)))
    measurements["l2_slices"] = {"fit_min_bytes": 4 * 2 ** 20,
                                 "points": slice_points}
measurements["alias"] = {}
print(json.dumps({"measurements": measurements}, indent=1))
