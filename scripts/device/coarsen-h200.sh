#!/usr/bin/env bash
# One call on the H200: cachet-coarsen-elementwise (a large element-wise
# generic kernel's threads take 4 elements each) on the 8B-shaped bf16
# decoder's prefill, and the prefill attention's variants as the model runs
# it. Prepared here (carry .device and .gl):
#   .device/bin, .device/lib        as for generate-h200.sh
#   .device/gen-b2/{prefill,decode} the bf16 model with the pass
#   .device/gen-b/{prefill,decode}  the same before it (the A/B's baseline)
#     (cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16
#      --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=33280
#      --ubatch=512 --compile-only; gpu.so, gpu-norewrite.so, manifest.json)
#   .device/lay   cachet-run --emit of `cachet-gen --kind=layer --hidden=1024
#                 --heads=8 --kv-heads=2 --head-dim=128 --ffn=2816
#                 --tokens=512 --past=512 --max-seq=1024 --dtype=bf16
#                 --kv=q8_0-packed` (--target=nvvm --chip=sm_90a
#                 --profile=h200): coarsened kernels against the CPU reference
#   .device/att/{s,d}-{f16,bf16}  cachet.attention pp512 @ d32768, head-major
#                 K/V, the causal offset static (s) or at run time (d, as the
#                 model's), f16 or bf16
#
#   scripts/device/coarsen-h200.sh
#
# There: 1. the layer's --check --compare-rewrites; 2. the attention
# variants, cachet-runner --repeat=10, two rounds in turns; 3. the bf16
# GGUF; pp512 @ d32768 and d4096 (3 repetitions) with gen-b2 (rewrites on
# and off), gen-b (on), gen-b2 (on) again (model-ab-h200.sh); 4. if time is left,
# profile-decode-h200.sh STEP=prefill on gen-b2. Logs: $OUT/coarsen.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/coarsen; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/coarsen.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1

timeout 150 $B/cachet-runner $D/lay --check --compare-rewrites > $W/check.log 2>&1
echo "rc $?" >> $W/check.log
grep -a "check\|rewrites off\|error\|rc" $W/check.log
for r in 1 2; do
  for a in s-f16 s-bf16 d-f16 d-bf16; do
    echo "== $a round $r"
    timeout 60 $B/cachet-runner $D/att/$a --repeat=10 2>&1 | grep -a -A3 "^timing\|error"
  done
done > $W/att.log 2>&1
s; cat $W/att.log

GENS="gen-b2 gen-b gen-b2" DEPTHS=32768,4096 OUT=$W \
  "$(dirname "$0")/model-ab-h200.sh"
s
echo "after ${SECONDS}s"
if [ $SECONDS -lt 450 ]; then
  OUT=$W STEP=prefill TYPE=bf16 GEN=gen-b2 LIMIT_S=$((585 - SECONDS)) \
    "$(dirname "$0")/profile-decode-h200.sh" > /dev/null 2>&1
  s; cat /tmp/profile-bf16-prefill/ncu-summary.txt | head -30
fi
