#!/usr/bin/env bash
# One call: the mma-sync decode kernel with each step's loads issued before
# the previous step's products (decode-mma-stages=2) and the split sized
# for the workgroups its registers let an SM hold
# (decode-workgroups-per-cu), against today's default, on the H200.
#
#   scripts/device/decode-pipeline-h200.sh 1 [REPEAT] [ROUNDS]
#
# Phase 1 (run 76) checks the random decode shapes of .device/fz76 (stages 2, 2 per CU),
# .device/fz77 (mma.sync forced, stages 2, 3 per CU) and .device/fz78
# (mma.sync forced, stages 2, 2 per CU) and the cases of .device/p2 against the
# CPU reference (rewrites off and on byte-identical), then times, in turns
# for ROUNDS rounds, .device/dm (the default), p2 (stages 2, 2 per CU), p0
# (stages 2, the default split), p3 (stages 2, 3 per CU) and b3 (stages 1,
# 3 per CU), then Nsight Compute on p2's f16 and q8_0 tg1 @ d32768 kernel.
#
#   scripts/device/decode-pipeline-h200.sh 3 [REPEAT]
#
# Phase 3 (run 78, blocks read 8 bytes at a time): checks the random decode
# shapes on mma.sync of .device/fz (bench/make-attention-fuzz.py --decode
# --seed 79 / 80 / 81 with decode-mma-sync=1, the cases that took mma.sync),
# times .device/dm3 (the default: 8-byte block loads) and dw4
# (decode-load-bytes=4: aligned 4-byte words, the kernel before) in turns,
# twice, then checks dm3's cases. Both suites: --only='@ d32768', the
# pp512 cases removed.
#
# Suites: bench/make-suite.py --preset=h200 --target=nvvm --only=decode
# (dm; p2 with --compile-options="attention-options={decode-mma-stages=2
# decode-workgroups-per-cu=2}"), p0 / p3 / b3 the same with their options
# and --only='@ d32768'; fuzz: bench/make-attention-fuzz.py --decode
# --count 24 --seed 76 / 77 / 78 with the same --compile-options (77 and 78
# with decode-mma-sync=1 too). .device/bin and
# .device/lib from build/. Logs: $OUT/pipe.tgz.
#
#   scripts/device/decode-pipeline-h200.sh 2 [REPEAT] [ROUNDS]
#
# Phase 2 (run 77, stages 2 the default): checks the d32768 cases of
# .device/dm2 (the default), times dm2, dmo (decode-mma-stages=1: the
# kernel before) and u2 (decode-mma-unroll=2) in turns, PyTorch SDPA
# (bench/torch_anchors.py), Nsight Compute on dm2's f16 and q8_0 tg1 @
# d32768 kernel, then scripts/device/vulkan-decode-h200.sh (the SPIR-V
# decode kernel on NVIDIA's Vulkan driver).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wp; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
P=${1:-1}; R=${2:-10}; N=${3:-2}; n=0
s() { tar czf $OUT/pipe.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
ncu_on() {
  [ -n "$NCU" ] || return 0
  for c in f16-tg1-d32768 q8_0-tg1-d32768; do
    timeout 40 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/$1/decode-$c > $W/ncu-$1-$c.log 2>&1; s
  done
}
if [ "$P" = 3 ]; then
  check $D/fz/*/ > $W/fz-check.log 2>&1; s
  for x in dm3 dw4 dm3 dw4; do
    timeout 40 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$((++n)).json > $W/$x-$n.log 2>&1; s
  done
  check $D/dm3/*/ > $W/dm3-check.log 2>&1; s
  exit 0
fi
if [ "$P" = 2 ]; then
  check $D/dm2/*d32768/ > $W/dm2-check.log 2>&1; s
  for i in $(seq 1 $N); do
    for x in dm2 dmo u2; do
      timeout 60 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
    done
  done
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
  ncu_on dm2
  OUT=$W timeout 200 "$(dirname "$0")/vulkan-decode-h200.sh" 5 > $W/vk-run.log 2>&1; s
  exit 0
fi
check $D/fz76/art/*/ > $W/fz76-check.log 2>&1; s
check $D/fz77/art/*/ > $W/fz77-check.log 2>&1; s
check $D/fz78/art/*/ > $W/fz78-check.log 2>&1; s
check $D/p2/*/ > $W/p2-check.log 2>&1; s
for i in $(seq 1 $N); do
  for x in dm p2 p0 p3 b3; do
    timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
ncu_on p2
