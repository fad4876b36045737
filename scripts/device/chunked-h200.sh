#!/usr/bin/env bash
# One lease for issue 20, part 3 (chunked dequant-once): random packed-KV
# attentions with the scratch capped at 256 positions (the mma-sync kernel
# continuing its state chunk by chunk) checked against the CPU reference
# and rewrites off byte for byte, then cachet-bench's prefill attention with
# the whole-layer scratch (.device/cA) and capped at 32 MiB (.device/cB),
# in turns. Logs and JSON go to $OUT/chunked.tgz after each stage. Usage,
# from the repository root on the GPU server:
#
#   scripts/device/chunked-h200.sh [REPEAT]
#
# with .device/bin (cachet-bench, cachet-runner), .device/lib
# (libcachet_runtime.so), .device/fuzzc (bench/make-attention-fuzz.py
# --chunk-positions=256 -o .device/fuzzc), .device/cA (bench/make-suite.py
# --only=attention -o .device/cA) and .device/cB (bench/make-suite.py
# --only='attention q' --compile-options='dequant-once-options={max-scratch-bytes=33554432}'
# -o .device/cB).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/chunked.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for a in $D/fuzzc/art/*/; do echo "== $a"; timeout 60 $B/cachet-runner $a --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"; done > $W/fuzz-check.log 2>&1; s
for turn in 1 2; do
  timeout 150 $B/cachet-bench $D/cA --repeat=$R --json=$W/cA$turn.json > $W/cA$turn.log 2>&1; s
  timeout 150 $B/cachet-bench $D/cB --repeat=$R --json=$W/cB$turn.json > $W/cB$turn.log 2>&1; s
done
echo "fuzz: $(grep -ac PASS $W/fuzz-check.log) PASS, $(grep -ac byte-identical $W/fuzz-check.log) byte-identical"
grep -a "FAIL\|DIFFERENT\|error" $W/fuzz-check.log | head
for f in $W/cA1.log $W/cB1.log $W/cA2.log $W/cB2.log; do echo "== $f"; grep -a "^| " $f | grep -v -- "---\|case"; done
