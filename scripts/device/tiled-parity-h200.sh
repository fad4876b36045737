#!/usr/bin/env bash
# The forced tiled attention over q8_0 / q4_0 blocks with f16 activations
# (run 162: rewrites off / on DIFFERENT on NVIDIA's Vulkan at pp512 @
# d32768) after roundToF16, then the f16 8B model with the mma GEMM (the
# default since run 162) at d4096: its GGUF takes about 3 minutes to write.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   bench/make-suite.py -o .device/atTi --preset=h200 --target=spirv \
#     --only="pp512 @ d32768" --attention-kernel=tiled
#   cachet-generate --random=llama3-8b --type=f16 --dtype=f16 --kv=q8_0-packed
#     --target=spirv --profile=h200 --ctx=33280 --ubatch=512 --compile-only
#     --cache-dir=.device/f16-on
#
#   scripts/device/tiled-parity-h200.sh
#
# Logs: $OUT/parity.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/parity; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/parity.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $W/device.log 2>&1
M=/tmp/llama3-8b-f16.gguf
( $B/cachet-gguf random llama3-8b --type=f16 --seed=1 -o $M > $W/gguf.log 2>&1 ) &
gguf=$!
timeout 60 $B/cachet-bench $D/atTi --repeat=3 --json=$W/forced.json > $W/forced.log 2>&1; s
wait $gguf
timeout 300 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=f16 --ubatch=512 \
  --prefill=$(ls -d $D/f16-on/prefill-*) --decode=$(ls -d $D/f16-on/decode-*) --ctx=33280 \
  --bench --bench-depths=4096 --bench-gen=32 --bench-reps=2 > $W/model.log 2>&1
echo "rc $?" >> $W/model.log
s
cat $W/device.log
grep -a "^|\|suite\|error" $W/forced.log
grep -a "^|\|identical\|differ\|rc\|error\|time:\|model:" $W/model.log | head -30
