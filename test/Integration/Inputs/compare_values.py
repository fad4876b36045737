"""Compares the `values:` line cachet-run prints with expected values.

Usage: compare_values.py RUN_OUTPUT EXPECTED_VALUES [REL_TOL]
Prints `values match (N)` or the first mismatches, and exits non-zero on one.
"""
import sys

out = open(sys.argv[1]).read().split("values:")[1].split("\n")[0].split()
got = [float(v) for v in out]
want = [float(v) for v in open(sys.argv[2]).read().split()]
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-6
bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want))
       if abs(g - w) > tol * max(1.0, abs(w))]
if len(got) != len(want) or bad:
    print(f"MISMATCH: {len(got)} values vs {len(want)} expected; first: {bad[:4]}")
    sys.exit(1)
print(f"values match ({len(got)})")
