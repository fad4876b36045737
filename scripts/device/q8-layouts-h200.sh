#!/usr/bin/env bash
# One lease for issue 21's layout question: bench/q8-matvec-layouts.cu
# (cachet's word reads vs a 16-byte stream of the packed rows vs a split
# repack vs dense bf16 vs a plain read) at 14336x4096 and 4096x4096, Nsight
# Compute's stall and memory sections for those kernels and for cachet's own
# q8_0 mat-vec (.device/mvq: bench/make-suite.py --only="matvec q8_0"),
# cachet-bench over .device/mvq, and the GPU check of every artifact of the
# make-block-matvec-fuzz.py folders named in $CHECKS. Usage, from the
# repository root on the GPU server: scripts/device/q8-layouts-h200.sh
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/q8-layouts.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
nvcc -O3 -arch=sm_90a bench/q8-matvec-layouts.cu -o /tmp/q8lay > $W/nvcc.log 2>&1
for shape in "14336 4096" "4096 4096"; do
  timeout 60 /tmp/q8lay $shape ${ROUNDS:-40} >> $W/layouts.log 2>&1
done; s
[ -d $D/mvq ] && timeout 120 $B/cachet-bench $D/mvq --repeat=20 --json=$W/mvq.json > $W/mvq.log 2>&1; s
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SchedulerStats"
if [ -n "$NCU" ]; then
  timeout 120 $NCU $SEC -k regex:'words|stream|split|dense' -c 4 /tmp/q8lay 14336 4096 1 > $W/ncu-layouts.log 2>&1; s
  for c in kernel-matvec-q8_0-bf16-14336x4096 kernel-matvec-q8_0-14336x4096; do
    timeout 60 $NCU $SEC --kernel-name-base function -k regex:'matvec' -c 1 $B/cachet-runner $D/mvq/$c > $W/ncu-$c.log 2>&1; s
  done
fi
for v in ${CHECKS:-}; do
  [ -d $D/$v/art ] && check $D/$v/art/*/ > $W/$v-check.log 2>&1; s
done
cat $W/device.log; grep -a "error" $W/nvcc.log; cat $W/layouts.log
grep -a "^| " $W/mvq.log | grep -v -- "---"
for f in $W/ncu-*.log; do echo "== $f"; grep -a "  [a-z_]*Kernel\|^  [a-z_]*kernel\|Duration\|DRAM Throughput\|L1/TEX Hit\|L2 Hit\|Mem Busy\|Max Bandwidth\|Achieved Occupancy\|Registers Per\|No Eligible\|Issued Warp\|Stall\|Warp Cycles Per Issued" $f | head -60; done
for v in ${CHECKS:-}; do
  [ -f $W/$v-check.log ] || continue
  echo "== $v: $(grep -ac PASS $W/$v-check.log) PASS, $(grep -ac FAIL $W/$v-check.log) FAIL"
  grep -a "^==\|FAIL\|rror" $W/$v-check.log | grep -B1 "FAIL\|rror" | head -40
done
