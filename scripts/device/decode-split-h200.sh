#!/usr/bin/env bash
# One call: decode attention over a split q8_0 cache (i8 values and f16
# scales, as cachet-gen --kv=q8_0 and front ends write it) against the
# token-major packed q8_0 blocks and f16 / bf16, on the mma.sync decode
# kernel.
#
#   SUITES="dsp2 dsp" scripts/device/decode-split-h200.sh [REPEAT] [ROUNDS]
#
# Each SUITE is .device/SUITE from bench/make-suite.py --preset=h200
# --target=nvvm --only=decode (or --only="decode q8_0-split"). The split
# cases at d4096 and d32768 of the first suite are checked against the CPU
# reference (rewrites off and on byte-identical), then every suite's
# d32768 and d4096 cases are timed in turns, ROUNDS times (cachet-bench
# --repeat=REPEAT, default 10; DEPTHS, default "d32768 d4096"); results in
# $OUT/SUITE-*.json.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
SUITES=${SUITES:-dsp}
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.mem --format=csv
first=${SUITES%% *}
for c in $D/$first/decode-q8_0-split*-d4096 $D/$first/decode-q8_0-split*-d32768; do
  echo "== $c"
  timeout 60 $B/cachet-runner "$c" --check --compare-rewrites 2>&1 |
    grep -a "check\|differ\|rewrites off\|error"
done
for round in $(seq "${2:-2}"); do
  for depth in ${DEPTHS:-d32768 d4096}; do
    for suite in $SUITES; do
      echo "== $suite $depth round $round"
      timeout 200 $B/cachet-bench $D/$suite --filter="$depth" \
        --repeat="${1:-10}" --json="$OUT/$suite-$depth-$round.json" 2>&1 |
        grep -a "^|\|FAIL\|error"
    done
  done
done
