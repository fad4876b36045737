#!/usr/bin/env bash
# The wgmma attention's default tiles checked and in the model: random
# attentions (.device/fz, .device/fzc: bench/make-attention-fuzz.py
# --chip=sm_90a, the second with --chunk-positions=256) against the CPU
# reference and off vs on byte for byte, then the q8_0 8B model's pp512
# with key tiles of 128 (.device/gen-wb) and of 64 (.device/gen-wa) in
# turns (ROUNDS of them, default 2; the first gen-wb one with tg128 unless
# NOGEN is set). Logs go to $OUT. Usage:
# [ROUNDS=N] [NOGEN=1] scripts/device/attention-wgmma-model-h200.sh
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; dir=$D; B=$D/bin
. "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/device.log 2>&1
check $D/fz/art/*/ $D/fzc/art/*/ > $OUT/fuzz.log 2>&1
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|differ.*" $OUT/fuzz.log | sort | uniq -c
$B/cachet-gguf random llama3-8b --type=q8_0 --seed=1 -o /tmp/q8.gguf > /dev/null
for round in $(seq ${ROUNDS:-2}); do
  for g in gen-wb gen-wa; do
    echo "== $g round $round"
    timeout 150 $B/cachet-generate-runner --model=/tmp/q8.gguf --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
      --prefill=$D/$g/prefill --decode=$D/$g/decode --ctx=33280 --bench --bench-depths=32768,4096 --bench-reps=2 \
      $([ -z "${NOGEN:-}" ] && [ $round = 1 ] && [ $g = gen-wb ] || echo --bench-gen=0)
  done
done > $OUT/model.log 2>&1
grep -a "^==\|^| \(pp\|tg\)\|identical\|differ" $OUT/model.log
cat $OUT/device.log
