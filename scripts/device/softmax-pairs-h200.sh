#!/usr/bin/env bash
# One call on the H200: the attention kernels' softmax weights rounded in
# pairs (one cvt.rn.bf16x2.f32 per two bf16 weights instead of a scalar
# F2F each) against the code before, and the 8B-shaped bf16 decoder with
# it. Prepared here (carry .device and .gl):
#   .device/att, .device/att2: `cachet.attention` pp512 @ d32768 head-major
#     (s-f16, s-bf16: the causal offset static; d-bf16: at run time, as the
#     model's), cachet-run --emit --target=nvvm --chip=sm_90a
#     --profile=h200, before (att) and after (att2) the change;
#   .device/lay2, .device/dec2: the 1024-wide bf16 layer of
#     coarsen-h200.sh (pp512 after 512) and the same at one token after
#     4000 (the decode kernel on mma.sync, split-KV), for --check;
#   .device/gen-b2, .device/gen-b3: the bf16 8B model before / after
#     (cachet-generate ... --compile-only, as generate-h200.sh).
# Logs: $OUT/pairs.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/pairs; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/pairs.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1
check $D/lay2 $D/dec2 > $W/check.log 2>&1
sed -i 's/^/  /' $W/check.log; cat $W/check.log
for r in 1 2; do
  for a in s-f16 s-bf16 d-bf16; do
    for v in att att2; do
      echo "== $v/$a round $r"
      timeout 60 $B/cachet-runner $D/$v/$a --repeat=10 --compare-rewrites 2>&1 | grep -a "rewrites on :\|byte\|error"
    done
  done
done > $W/att.log 2>&1
s; cat $W/att.log
GENS="gen-b3 gen-b2 gen-b3" DEPTHS=32768 TG=128 REPS=2 BENCH_S=200 OUT=$W \
  "$(dirname "$0")/model-ab-h200.sh"
s; echo "after ${SECONDS}s"
