#!/usr/bin/env bash
# One lease for the sm_90a wgmma attention kernel: the CPU checks and the
# rewrites-off / rewrites-on byte comparison of the wgmma artifacts
# (.device/awg: bench/make-attention-artifacts.sh with CHIP=sm_90a, plus
# odd shapes), then pp512 timings of the mma-sync artifacts (.device/asy,
# CHIP=sm_90) and the wgmma ones in turns, then PyTorch SDPA (cuDNN,
# FlashAttention-2) at the same shapes. Logs go to $OUT. Usage, from the
# repository root on the GPU server: scripts/device/attention-wgmma-h200.sh
# [REPEAT]
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; dir=$D; B=$D/bin
. "$(dirname "$0")/env.sh"
nvidia-smi -L > $OUT/device.log 2>&1
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.sm --format=csv >> $OUT/device.log 2>&1
check $D/awg/art/*-pp64-* $D/awg/art/nvvm-odd-* $D/awg/art/nvvm-mixed > $OUT/check.log 2>&1
for round in 1 2; do
  for d in d4096 d32768; do
    for kv in f16hm f16 q8_0 q4_0; do
      for v in asy awg; do
        a=$D/$v/art/nvvm-$kv-pp512-$d
        echo "== $v $kv $d round $round"
        timeout 60 $B/cachet-runner $a --repeat=${1:-10} --compare-rewrites
      done
    done
  done
done > $OUT/time.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --only=attention --json=$OUT/torch.json > $OUT/torch.log 2>&1
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|differ.*" $OUT/check.log | sort | uniq -c
cat $OUT/device.log
