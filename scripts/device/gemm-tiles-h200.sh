#!/usr/bin/env bash
# One call: the wgmma GEMM's workgroup tiles at 512 tokens (issue 24's K/V
# projections: 32 workgroups of 128 x 128 on 132 SMs), and optionally where
# a pp512 call at DEPTH goes (profile-decode-h200.sh STEP=prefill).
# Prepared here:
#   for v in g0: g1:'matvec-options={gemm-tile-n=64}' \
#            g2:'matvec-options={gemm-tile-m=64}' \
#            g3:'matvec-options={gemm-tile-m=64 gemm-tile-n=64}'; do
#     bench/make-suite.py -o .device/${v%%:*} --preset=h200 --target=nvvm \
#       --chip=sm_90a --profile=h200 --only="gemm512 bf16" \
#       --compile-options="${v#*:}"; done
# There: each suite's artifacts (but the 14336-row ones) checked against
# the CPU reference, then
# `cachet-bench --repeat=10` of the suites in turns (ROUNDS rounds), the
# cuBLAS anchors (torch_anchors.py --only=gemm), then PROFILE=1 the profile.
# SUITES names the suites (folders of .device); CHECKS more folders whose
# artifacts (each a folder, or variants of them, as make-gemm-check.py
# writes) are all checked; NCU=DIR profiles every case of the suite DIR
# (cachet-runner, one call each) under Nsight Compute (SpeedOfLight, occupancy, scheduler and warp-state
# sections; NCU_FILTER: ncu's kernel filter options) into $OUT/ncu.txt;
# SUITE_CHECKS=0 skips the SUITES' own checks.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
SUITES=${SUITES:-"g0 g1 g2 g3"}
nvidia-smi -L > $OUT/device.log; nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/device.log
for s in $SUITES; do
  [ "${SUITE_CHECKS:-1}" = 1 ] || break
  # Not the 14336-row cases: their CPU reference runs past the 60 s.
  check $(ls -d $D/$s/*/ | grep -v 14336 | sed 's,/$,,') > $OUT/check-$s.log 2>&1
done
for c in ${CHECKS:-}; do
  check $(find $D/$c -name manifest.json | xargs -n1 dirname | sort) > $OUT/check-$(basename $c).log 2>&1
done
for r in $(seq ${ROUNDS:-2}); do
  for s in $SUITES; do
    echo "== round $r $s" >> $OUT/gemm.log
    timeout 60 $B/cachet-bench $D/$s --repeat=10 >> $OUT/gemm.log 2>&1
  done
done
timeout 120 python3 bench/torch_anchors.py 20 --only=gemm > $OUT/cublas.log 2>&1
if [ -n "${NCU:-}" ]; then
  N=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  for c in $D/$NCU/*/; do
    echo "== $c"
    timeout 60 ${N:-ncu} --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      ${NCU_FILTER:-} $B/cachet-runner $c
    echo "ncu rc $?"
  done > $OUT/ncu.txt 2>&1
fi
if [ "${PROFILE:-0}" = 1 ]; then
  STEP=prefill DEPTH=${DEPTH:-4096} GEN=${GEN:-gen} LIMIT_S=$((${LIMIT_S:-590} - SECONDS)) \
    OUT=$OUT "$(dirname "$0")/profile-decode-h200.sh" > $OUT/profile.log 2>&1
fi
cat $OUT/device.log; grep -h "PASS\|FAIL\|identical\|differ" $OUT/check-*.log | sort | uniq -c
cat $OUT/gemm.log | grep -v "^$" | head -80; grep -a "gemm512\|glu512\|8192" $OUT/cublas.log
tail -40 $OUT/profile.log 2>/dev/null
