#!/usr/bin/env bash
# The Llama-3-8B-shaped f16 model (q8_0 KV cache) on NVIDIA's Vulkan driver
# with its prefill GEMMs on the mma GEMM (gemm_mma, cooperative matrices)
# and on the tiled GEMM, at issue 24's depths: pp512 and tg32, rewrites off
# and on, the two builds one after the other.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   cachet-generate --random=llama3-8b --type=f16 --dtype=f16 --kv=q8_0-packed
#     --target=spirv --profile=h200 --ctx=33280 --ubatch=512 --compile-only
#     --cache-dir=.device/f16-on --compile-options='matvec-options={gemm-mma=true}'
#   the same without --compile-options into .device/f16-off
#
#   scripts/device/vulkan-f16-model-h200.sh [DEPTHS]
#
# Logs: $OUT/f16.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/f16; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/f16.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $W/device.log 2>&1
M=/tmp/llama3-8b-f16.gguf
[ -f $M ] || $B/cachet-gguf random llama3-8b --type=f16 --seed=1 -o $M > $W/gguf.log 2>&1
for v in on off; do
  timeout ${T:-200} $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=f16 --ubatch=512 \
    --prefill=$(ls -d $D/f16-$v/prefill-*) --decode=$(ls -d $D/f16-$v/decode-*) --ctx=33280 \
    --bench --bench-depths=${1:-4096,32768} --bench-gen=32 --bench-reps=2 > $W/model-$v.log 2>&1
  echo "rc $?" >> $W/model-$v.log
  s
done
cat $W/device.log
for v in on off; do echo "## gemm-mma $v"; grep -a "^|\|identical\|differ\|rc\|error\|time:\|model:" $W/model-$v.log | head -30; done
