#!/usr/bin/env bash
# One call on the H200 (CUDA): correctness checks, then cachet-bench suites
# timed in turns (A/B interleaved), and the KV read ceiling.
#
#   CHECKS="fz94 nd" SUITES="od nd" ROUNDS=2 scripts/device/ab-h200.sh [REPEAT]
#
# CHECKS: folders under .device whose artifacts (DIR/art/*/ for
# bench/make-attention-fuzz.py's, else DIR/*/) go through cachet-runner
# --check --compare-rewrites (CHECK_FILTER: only artifact names with this
# text). SUITES: bench/make-suite.py folders under .device, each timed with
# cachet-bench --repeat=REPEAT (default 10) once per round, the suites in
# turns. CEILING=1 builds and runs bench/kv-read-ceiling.cu. SASS: cubins
# under .device/sass disassembled (cuobjdump -sass). .device/bin and
# .device/lib from build/. Logs and JSON: $OUT/ab.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/ab; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/ab.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $W/device.log 2>&1
if [ -d $D/sass ]; then
  OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
  for c in $D/sass/*.cubin; do
    $OBJ -sass "$c" > $W/$(basename "$c" .cubin).sass 2>&1
  done
  s
fi
if [ "${CEILING:-0}" = 1 ]; then
  nvcc -O3 -arch=sm_90 -o /tmp/kv-read-ceiling bench/kv-read-ceiling.cu &&
    /tmp/kv-read-ceiling 32768 30 > $W/ceiling.log 2>&1
  s
fi
for x in ${CHECKS:-}; do
  if [ -d $D/$x/art ]; then set -- $D/$x/art/*/; else set -- $D/$x/*/; fi
  for a in "$@"; do
    case "$a" in *"${CHECK_FILTER:-}"*) check "$a" ;; esac
  done > $W/$x-check.log 2>&1
  s
done
for i in $(seq 1 ${ROUNDS:-2}); do
  for x in ${SUITES:-}; do
    timeout 90 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1
    s
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $W/device.log 2>&1
s
