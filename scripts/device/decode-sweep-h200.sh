#!/usr/bin/env bash
# One lease: the decode kernel's configurations side by side (issue 20),
# each suite in .device/sw-*/ one setting (bench/make-suite.py --only=...
# --compile-options="attention-options={decode-...}"), all run with
# cachet-bench --repeat=REPEAT, then every case of .device/dec-spirv checked
# against the CPU reference on the NVIDIA driver's Vulkan and run twice
# (are two runs of one artifact the same bytes). Logs and JSON go to
# $OUT/sweep.tgz after each stage. Usage, from the repository root on the
# GPU server:
#
#   scripts/device/decode-sweep-h200.sh [REPEAT]
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/sweep.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for x in $D/sw-*/; do
  n=$(basename $x)
  timeout 60 $B/cachet-bench $x --repeat=$R --json=$W/$n.json > $W/$n.log 2>&1
done; s
for c in $D/dec-spirv/*/; do
  echo "== $c"
  timeout 40 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"
  timeout 40 $B/cachet-runner $c --print-results > $W/r1 2>/dev/null
  timeout 40 $B/cachet-runner $c --print-results > $W/r2 2>/dev/null
  cmp -s $W/r1 $W/r2 && echo "two runs: same printed results" || echo "two runs: DIFFERENT printed results"
done > $W/spirv-check.log 2>&1; s
for x in $D/sw-*/; do n=$(basename $x); echo "== $n $(grep -o '"name": "[^"]*"' $x/suite.json)"; grep -a "^| " $W/$n.log | grep -v -- "---\|case"; done
grep -ac PASS $W/spirv-check.log; grep -a "FAIL\|DIFFERENT\|error" $W/spirv-check.log | sort | uniq -c | head
