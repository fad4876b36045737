#!/usr/bin/env bash
# One lease: Nsight Compute's view (where the server has ncu) of the decode
# kernel's first launch at tg1 @ d32768 q8_0, staged (.device/dec-nvvm) and
# unstaged (.device/sw-regs), then the random decode shapes of .device/dfz
# checked, then every suite of .device/ (dec-nvvm, sw-*) timed with
# cachet-bench, the first two alternated twice. Logs go to $OUT/probe.tgz.
# Usage, from the repository root on the GPU server:
#
#   scripts/device/decode-probe-h200.sh [REPEAT]
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w2; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/probe.tgz -C $W .; }
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}" > $W/ncu.log
if [ -n "$NCU" ]; then
  for x in dec-nvvm sw-regs; do
    timeout 90 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/$x/decode-q8_0-tg1-d32768 > $W/ncu-$x.log 2>&1
  done
fi; s
for c in $D/dfz/art/*/; do
  echo "== $c"
  timeout 60 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"
done > $W/fuzz-check.log 2>&1; s
for i in 1 2; do
  for x in dec-nvvm sw-regs; do
    timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
for x in $D/sw-*/; do
  n=$(basename $x); [ $n = sw-regs ] && continue
  timeout 60 $B/cachet-bench $x --repeat=$R --json=$W/$n.json > $W/$n.log 2>&1; s
done
echo "fuzz: $(grep -ac PASS $W/fuzz-check.log) PASS, $(grep -ac byte-identical $W/fuzz-check.log) byte-identical of $(grep -c '^==' $W/fuzz-check.log)"
grep -a "FAIL\|DIFFERENT\|error" $W/fuzz-check.log | head
for f in $W/*.log; do case $f in *ncu*|*fuzz*) continue;; esac; echo "== $(basename $f)"; grep -a "^| " $f | grep -v -- "---\|case" | grep "tg1 @ d32768\|tg4 @ d32768"; done
for x in dec-nvvm sw-regs; do echo "== ncu $x"; grep -a "Duration\|Throughput\|Achieved Occupancy\|Registers Per\|Stall\|Issued Ipc\|No Eligible\|Block Limit\|Warp Cycles Per Issued" $W/ncu-$x.log | head -40; done; head -3 $W/ncu.log
