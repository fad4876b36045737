"""Writes a working-set sweep in cachet-probe's profile format (the part
`cachet-probe --fit-sweep` reads) from a cache model, to test the fit:

  sweep.py random|lru CACHE_MIB [NOISE]

GPU-like points: 1 MiB to 1 GiB in quarter-octave steps; a hit reads at
10 TB/s, a miss at 4.4 TB/s; `random` is the random-replacement hit rate of a
cyclic sweep, `lru` none at all beyond the cache. NOISE (default 0.02) is the
largest relative error added, deterministic."""
import json
import math
import sys

model, cache = sys.argv[1], float(sys.argv[2]) * 2 ** 20
noise = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02


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


points = []
size = 2 ** 20
index = 0
while size <= 2 ** 30:
    for quarter in range(4):
        w = size + size * quarter // 4
        h = hit_rate(w / cache)
        gbps = 1 / (h / 10000 + (1 - h) / 4400)
        gbps *= 1 + noise * math.sin(index * 2.4)
        index += 1
        points.append({"working_set": w,
                       "gbps": {"median": gbps, "min": gbps, "max": gbps}})
    size *= 2
print(json.dumps({"measurements": {"l2_bytes": {
    "fit_min_bytes": 4 * 2 ** 20, "points": points}, "alias": {}}},
    indent=1))
