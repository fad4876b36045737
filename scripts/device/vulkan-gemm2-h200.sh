#!/usr/bin/env bash
# The second call of run 159's session, at the defaults it chose: the tiled
# GEMM's tiles from gemm-fill-eighths and 32-column steps for 64 x 64
# tiles; the SPIR-V decode kernel over blocks at 2 workgroups per compute
# unit (decode-block-workgroups-per-cu). NVIDIA's Vulkan driver with CUDA
# beside it.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   bench/make-suite.py -o .device/gt2/def --preset=h200 --target=spirv --only="gemm512 bf16"
#   bench/make-suite.py -o .device/gt2/glu --preset=h200 --target=spirv --only=glu512
#   bench/make-suite.py -o .device/gt2/dec --preset=h200 --target=spirv --only="@ d32768"
#   bench/make-suite.py -o .device/gt2/decn --preset=h200 --target=nvvm --only="tg1 @ d32768"
#   cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16
#     --kv=q8_0-packed --target=spirv --profile=h200 --ctx=1024 --ubatch=512
#     --compile-only --cache-dir=.device/g8v2
#
#   scripts/device/vulkan-gemm2-h200.sh [REPEAT]
#
# Logs and JSON: $OUT/gt2.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gt2; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/gt2.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv,noheader > $W/device.log 2>&1
{ check $D/gt2/def/*4096x4096*/ $D/gt2/dec/decode-q8_0-tg1*/ $D/gt2/dec/decode-q4_0-tg4*/; } > $W/check.log 2>&1
s
for v in def glu dec decn; do
  timeout 120 $B/cachet-bench $D/gt2/$v --repeat=$R --json=$W/$v.json > $W/$v.log 2>&1
done
s
M=/tmp/llama3-8b-bf16.gguf
[ -f $M ] || $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M > $W/gguf.log 2>&1
timeout 200 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
  --prefill=$(ls -d $D/g8v2/prefill-*) --decode=$(ls -d $D/g8v2/decode-*) --ctx=1024 \
  --bench --bench-depths=512 --bench-gen=32 --bench-reps=2 > $W/model.log 2>&1
echo "rc $?" >> $W/model.log
s
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -ac 'byte-identical' $W/check.log) byte-identical, $(grep -aci "FAIL\|error\|TIMEOUT\|DIFFERENT" $W/check.log) FAIL/error lines"
for f in def glu dec decn; do echo "== $f"; grep -a "^| [a-z0-9]" $W/$f.log | cut -c1-150; done
grep -a "pp512\|tg32\|identical\|differ\|rc\|error\|time:" $W/model.log | head -20
