#!/usr/bin/env bash
# One call: the mma-sync decode kernel with each subgroup's K/V rows staged
# in a ring in workgroup memory by cp.async (decode-mma-shared-stages=N)
# against today's default (each step's loads held in registers), on the
# H200 (CUDA).
#
#   scripts/device/decode-ring-h200.sh PHASE [REPEAT]
#
# Phase 1: checks the random decode shapes on mma.sync of .device/fz*/art/
# (bench/make-attention-fuzz.py --decode with decode-mma-sync=1 and shared
# stages 2-4) and r3's d32768 cases against the CPU reference (rewrites off
# and on byte-identical), then times .device/dm (the default), r2, r3 and
# r4 (shared stages 2, 3, 4) in turns, once.
# Phase 3 (run 89): SUITES (d32768 only: dm, a = shared stages 2 with
# decode-workgroups-per-cu=4, b = 3 with 3, d = 2 with 3, e = 4 with
# decode-mma-unroll=2) in turns for ROUNDS rounds, CHECKS' cases checked,
# Nsight Compute on NCUS' q8_0 tg1 @ d32768 kernel.
# Phase 2: the same suites in turns again, PyTorch SDPA
# (bench/torch_anchors.py) and Nsight Compute on r3's q8_0 and f16 tg1 @
# d32768 kernel.
#
# Suites: bench/make-suite.py --preset=h200 --target=nvvm --only=decode
# (dm), r2 / r3 / r4 the same with
# --compile-options="attention-options={decode-mma-shared-stages=N}".
# .device/bin and .device/lib from build/. Logs: $OUT/ring.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wr; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
P=${1:-1}; R=${2:-10}
s() { tar czf $OUT/ring.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
bench() {
  for x in ${SUITES:-dm r2 r3 r4}; do
    timeout 70 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$1.json > $W/$x-$1.log 2>&1; s
  done
}
if [ "$P" = 1 ]; then
  check $D/fz*/art/*/ > $W/fz-check.log 2>&1; s
  check $D/r3/*d32768/ > $W/r3-check.log 2>&1; s
  bench 1
  exit 0
fi
if [ "$P" = 3 ]; then
  # Run 89: SUITES in turns for ROUNDS rounds, checks of CHECKS' cases,
  # Nsight Compute on NCU suites' q8_0 tg1 @ d32768 kernel.
  for x in ${CHECKS:-}; do check $D/$x/*/ > $W/$x-check.log 2>&1; s; done
  for i in $(seq 1 ${ROUNDS:-2}); do bench $i; done
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  for x in ${NCUS:-}; do
    timeout 40 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/$x/decode-q8_0-tg1-d32768 > $W/ncu-$x.log 2>&1; s
  done
  exit 0
fi
bench 2
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  for c in q8_0-tg1-d32768 f16-tg1-d32768; do
    timeout 40 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/r3/decode-$c > $W/ncu-r3-$c.log 2>&1; s
  done
fi
