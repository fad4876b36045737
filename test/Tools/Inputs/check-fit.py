"""Checks `cachet-probe --fit-sweep` output: the fitted cache size of the
sweep SECTION (l2_bytes where not given; the output has one object per
sweep) is within TOLERANCE (a fraction) of EXPECTED_MIB. Usage:
check-fit.py FIT EXPECTED_MIB TOLERANCE [SECTION]."""
import json
import sys

text = open(sys.argv[1]).read()
expected, tolerance = float(sys.argv[2]), float(sys.argv[3])
section = sys.argv[4] if len(sys.argv) > 4 else "l2_bytes"
fits, at = [], 0
decoder = json.JSONDecoder()
while text[at:].strip():
    at += len(text[at:]) - len(text[at:].lstrip())
    fit, at = decoder.raw_decode(text, at)
    fits.append(fit)
fit = next(f for f in fits if f.get("section", "l2_bytes") == section)
got = fit["cache_bytes"] / 2 ** 20
ok = fit["problem"] == "" and abs(got - expected) <= tolerance * expected
print("%s fitted %.1f MiB, expected %.1f MiB +- %d%%" %
      ("ok" if ok else "FAIL", got, expected, round(100 * tolerance)))
sys.exit(0 if ok else 1)
