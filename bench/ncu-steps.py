#!/usr/bin/env python3
"""Sums a cachet-generate-runner run profiled by Nsight Compute
(`ncu --metrics gpu__time_duration.sum --csv`) step by step.

Every kernel of a generated model is named model_kernel, so kernels are
told apart by their grid and block. Each call (prefill or decode step) ends
with the LM head (the launch with the largest grid) and the argmax after
it; the last call is the last decode step. Prints each call's kernel count
and time, then the last step's kernels grouped by (grid, block), largest
total first.

With --repeated the profile ends with two identical calls (a benchmark's
warm-up and one timed prefill, after whatever filled the caches): the last
call is the longest tail whose grids and blocks repeat the kernels just
before it.

  python3 bench/ncu-steps.py ncu.csv [--repeated] [--json=FILE]
"""
import csv
import json
import sys

UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}


def read(path):
    kernels = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        us = value * UNITS.get(row.get("Metric Unit", "nsecond"), 1e-3)
        kernels.append((row.get("Grid Size", "?"), row.get("Block Size", "?"), us))
    return kernels


def grid_size(grid):
    n = 1
    for v in grid.strip("()").split(","):
        try:
            n *= int(v)
        except ValueError:
            pass
    return n


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = next((a.split("=", 1)[1] for a in sys.argv[1:]
                if a.startswith("--json=")), "")
    kernels = read(args[0])
    if not kernels:
        sys.exit("no kernels with gpu__time_duration.sum in " + args[0])
    if "--repeated" in sys.argv[1:]:
        shapes = [(g, b) for g, b, _ in kernels]
        n = len(shapes)
        period = next((p for p in range(n // 2, 0, -1)
                       if shapes[n - p:] == shapes[n - 2 * p:n - p]), 0)
        if not period:
            sys.exit("--repeated: the profile does not end with two identical calls")
        calls = [kernels[:n - 2 * period], kernels[n - 2 * period:n - period],
                 kernels[n - period:]]
    else:
        largest = max(grid_size(g) for g, _, _ in kernels)
        heads = [i for i, (g, _, _) in enumerate(kernels)
                 if grid_size(g) == largest]
        calls, start = [], 0
        for h in heads:
            end = min(h + 2, len(kernels))  # the LM head and the argmax after it
            calls.append(kernels[start:end])
            start = end
    for i, c in enumerate(calls):
        print(f"call {i}: {len(c)} kernels, {sum(k[2] for k in c):.1f} us")
    last = calls[-1]
    groups = {}
    for g, b, us in last:
        n, total = groups.get((g, b), (0, 0.0))
        groups[(g, b)] = (n + 1, total + us)
    total = sum(k[2] for k in last)
    print(f"\nlast call: {len(last)} kernels, {total:.1f} us")
    print("| grid | block | kernels | total us | mean us | share |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    rows = sorted(groups.items(), key=lambda kv: -kv[1][1])
    for (g, b), (n, t) in rows:
        print(f"| {g} | {b} | {n} | {t:.1f} | {t / n:.2f} | {100 * t / total:.1f}% |")
    if out:
        with open(out, "w") as f:
            json.dump({"calls": [[len(c), sum(k[2] for k in c)] for c in calls],
                       "last": [{"grid": g, "block": b, "kernels": n, "us": t}
                                for (g, b), (n, t) in rows]}, f, indent=1)


if __name__ == "__main__":
    main()
