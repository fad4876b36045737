#!/usr/bin/env bash
# One call: in-kernel-decode prefill with q8_0 / q4_0 blocks decoded from
# 32-bit words of workgroup memory (decodePairs, natural order) instead of
# byte by byte.
#
#   scripts/device/prefill-words-h200.sh [REPEAT]
#       checks the random packed-KV attentions of .device/pfz and pfz2
#       (bench/make-attention-fuzz.py --seed 73 / 74) and the d4096 cases
#       of .device/pa against the CPU reference (rewrites off and on
#       byte-identical), then times .device/pa (bench/make-suite.py
#       --only=attention: pp512 at d4096 / d32768 / d65536) and .device/pa128
#       (the same with attention-options={query-tile=128
#       resident-workgroups=2}) in turns, twice.
#
# .device/bin and .device/lib from build/. Logs: $OUT/words.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/ww; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/words.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
check $D/pfz/art/*/ $D/pfz2/art/*/ > $W/fuzz-check.log 2>&1; s
check $D/pa/*d4096/ > $W/pa-check.log 2>&1; s
for i in 1 2; do
  for x in pa pa128; do
    timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
