#!/usr/bin/env bash
# One lease, NVIDIA's Vulkan driver with CUDA beside it: the tiled GEMM
# (gemm_tiled, SPIR-V's prefill linear layers; before it the generic
# kernel), its tilings, the mma GEMM on CUDA and cuBLAS; the 8B model's
# prefill and decode on Vulkan; the SPIR-V decode split (issue 20) and
# cachet-runner --repeat (exit 139 before 0c8e893).
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   bench/make-suite.py -o .device/gt/def --preset=h200 --target=spirv --only=gemm512
#   bench/make-suite.py -o .device/gt/glu --preset=h200 --target=spirv --only=glu512
#   bench/make-suite.py -o .device/gt/V --preset=h200 --target=spirv --only="gemm512 bf16"
#     --compile-options="matvec-options={...}" for V = t64 (gemm-tile-m=64
#     gemm-tile-n=64), t128 (128 / 128), t12864 (128 / 64), s32
#     (gemm-step=32), gen (gemm=false; its 4096x4096 case alone)
#   bench/make-suite.py -o .device/gt/nvvm --preset=h200 --target=nvvm --only="gemm512 bf16"
#   bench/make-gemm-check.py -o .device/gt/chk --target=spirv --count=8
#     --seed=48 --blocks --compile-options="" --compile-options="matvec-options=
#     {gemm-tile-m=128 gemm-tile-n=128}"
#   cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16
#     --kv=q8_0-packed --target=spirv --profile=h200 --ctx=1024 --ubatch=512
#     --compile-only --cache-dir=.device/g8v
#   .device/sw2: see scripts/device/vulkan-decode-split-h200.sh
#
#   scripts/device/vulkan-gemm-h200.sh [REPEAT]
#
# Logs and JSON: $OUT/gt.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gt; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/gt.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv,noheader > $W/device.log 2>&1
{ check $D/gt/chk/v*/*/ $D/gt/def/*bf16-4096x4096*/; } > $W/check.log 2>&1
s
bench() { timeout ${3:-100} $B/cachet-bench $D/gt/$1 --repeat=$R --json=$W/$1-$2.json > $W/$1-$2.log 2>&1; }
for v in def t64 t128 t12864 s32 nvvm glu; do bench $v 1; done
R=3 bench gen 1
s
timeout 120 python3 bench/torch_anchors.py $R --only=gemm --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $?" >> $W/torch.log
s
M=/tmp/llama3-8b-bf16.gguf
[ -f $M ] || $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M > $W/gguf.log 2>&1
timeout 240 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
  --prefill=$(ls -d $D/g8v/prefill-*) --decode=$(ls -d $D/g8v/decode-*) --ctx=1024 \
  --bench --bench-depths=512 --bench-gen=32 --bench-reps=2 > $W/model.log 2>&1
echo "rc $?" >> $W/model.log
s
for v in nvvm def t64 t128 t12864 s32 glu; do [ $SECONDS -lt 480 ] && bench $v 2; done
s
art=$(ls -d $D/sw2/def-4096/decode-q8_0-tg1-*/ | head -1)
timeout 60 $B/cachet-runner $art --repeat=3 > $W/repeat.log 2>&1; echo "rc $?" >> $W/repeat.log
for d in 4096 65536; do for v in def wpu2; do
  [ $SECONDS -lt 540 ] || continue
  timeout 30 $B/cachet-bench $D/sw2/$v-$d --repeat=10 --json=$W/split-$v-$d.json > $W/split-$v-$d.log 2>&1
done; done
s
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -ac 'byte-identical' $W/check.log) byte-identical, $(grep -aci "FAIL\|error\|TIMEOUT\|DIFFERENT" $W/check.log) FAIL/error lines"
grep -a "FAIL\|error\|DIFFERENT" -B1 $W/check.log | head -10
for f in $W/*-1.log $W/*-2.log $W/gen-1.log; do echo "== $f"; grep -a "gemm\|glu\|error" $f | cut -c1-160; done
grep -a "gemm\|glu\|matmul\|rc" $W/torch.log
grep -a "pp512\|tg32\|identical\|differ\|rc\|error\|load\|compil" $W/model.log | head -20
tail -2 $W/repeat.log
for f in $W/split-*.log; do echo "== $f"; grep -a "tg\|error" $f | cut -c1-160; done
