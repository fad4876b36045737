"""Checks `cachet-probe --fit-sweep` output: the fitted cache size is within
TOLERANCE (a fraction) of EXPECTED_MIB. Usage: check-fit.py FIT EXPECTED_MIB
TOLERANCE."""
import json
import sys

fit = json.load(open(sys.argv[1]))
expected, tolerance = float(sys.argv[2]), float(sys.argv[3])
got = fit["cache_bytes"] / 2 ** 20
ok = fit["problem"] == "" and abs(got - expected) <= tolerance * expected
print("%s fitted %.1f MiB, expected %.1f MiB +- %d%%" %
      ("ok" if ok else "FAIL", got, expected, round(100 * tolerance)))
sys.exit(0 if ok else 1)
