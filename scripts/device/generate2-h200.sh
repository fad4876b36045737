#!/usr/bin/env bash
# A short call: the 2-layer Llama-3-8B-shaped model (bf16 weights, q8_0 KV,
# the full vocabulary), compiled here with
#   cachet-generate --random=llama3-8b,layers=2 --type=bf16 --dtype=bf16 \
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=33280 --ubatch=512 \
#     --compile-only          -> .device/g2/{prefill,decode}
# and --bench at d4096 / d32768 (tg128, pp512; rewrites on and off).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
M=/tmp/l2.gguf
$B/cachet-gguf random llama3-8b,layers=2 --type=bf16 --seed=1 -o $M > $OUT/g2.log 2>&1
timeout ${BENCH_S:-150} $B/cachet-generate-runner --model=$M --prefill=$D/g2/prefill \
  --decode=$D/g2/decode --kv=q8_0-packed --dtype=bf16 --ubatch=512 --ctx=33280 \
  --bench --bench-depths=4096,32768 --bench-reps=3 >> $OUT/g2.log 2> $OUT/g2.err
echo "rc $? after ${SECONDS}s" >> $OUT/g2.log
cat $OUT/g2.log; tail -4 $OUT/g2.err
