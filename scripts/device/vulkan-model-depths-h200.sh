#!/usr/bin/env bash
# The Llama-3-8B-shaped bf16 model with a q8_0 KV cache on NVIDIA's Vulkan
# driver at the depths issue 24 names (d4096, d32768): pp512 and tg32,
# rewrites off and on interleaved.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16
#     --kv=q8_0-packed --target=spirv --profile=h200 --ctx=33280
#     --ubatch=512 --compile-only --cache-dir=.device/g8v3
#
#   scripts/device/vulkan-model-depths-h200.sh
#
# Logs: $OUT/depths.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/depths; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/depths.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $W/device.log 2>&1
M=/tmp/llama3-8b-bf16.gguf
[ -f $M ] || $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M > $W/gguf.log 2>&1
timeout 400 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
  --prefill=$(ls -d $D/g8v3/prefill-*) --decode=$(ls -d $D/g8v3/decode-*) --ctx=33280 \
  --bench --bench-depths=4096,32768 --bench-gen=32 --bench-reps=2 > $W/model.log 2>&1
echo "rc $?" >> $W/model.log
s
cat $W/device.log
grep -a "^|\|identical\|differ\|rc\|error\|time:\|model:" $W/model.log | head -30
