#!/usr/bin/env bash
# The tiled attention kernel (attention_tiled: f32 fused multiply-adds on
# register tiles) on NVIDIA's Vulkan driver: correctness against the CPU
# reference, the prefill cases against the scalar kernel it replaces and
# the f16 cooperative-matrix kernel, then the 8B bf16 model at depth.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   bench/make-suite.py -o .device/atT --preset=h200 --target=spirv --only="pp512 @ d"
#   bench/make-suite.py -o .device/atS --preset=h200 --target=spirv --only="pp512 @ d" --attention-kernel=scalar
#   bench/make-suite.py -o .device/atTi --preset=h200 --target=spirv --only="pp512 @ d32768" --attention-kernel=tiled
#   bench/make-suite.py -o .device/atSmall --preset=small --target=spirv --only=attention
#   .device/fz/cN: cachet-run X.mlir --entry=attention --profile=h200 --emit=.device/fz/cN --no-run
#     for X = test/Integration/Inputs/attention.py with the shapes of the log
#   cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16 --kv=q8_0-packed
#     --target=spirv --profile=h200 --ctx=33280 --ubatch=512 --compile-only --cache-dir=.device/g8v4
#
#   scripts/device/attention-tiled-h200.sh
#
# Logs: $OUT/tiled.tgz (and bench JSON).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/tiled; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/tiled.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv,noheader > $W/device.log 2>&1
M=/tmp/llama3-8b-bf16.gguf
[ -n "${QUICK:-}" ] || ( $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M > $W/gguf.log 2>&1 ) &
gguf=$!
# QUICK=1: the fuzz checks and the kernel suites only (no model).
checks="$D/fz/c*"; [ -n "${QUICK:-}" ] || checks="$checks $D/atSmall/attention-*"
timeout 50 bash -c ". $(dirname "$0")/env.sh; B=$B; for c in $checks; do [ -d \$c ] && check \$c; done" > $W/check.log 2>&1
s
timeout 60 $B/cachet-bench $D/atT --repeat=5 --json=$OUT/tiled1.json > $W/bench-tiled1.log 2>&1; s
timeout 60 $B/cachet-bench $D/atS --repeat=2 --filter=d32768 --json=$OUT/scalar.json > $W/bench-scalar.log 2>&1; s
timeout 40 $B/cachet-bench $D/atTi --repeat=3 --json=$OUT/forced.json > $W/bench-forced.log 2>&1; s
[ -n "${QUICK:-}" ] && kill $gguf 2>/dev/null
wait $gguf
[ -n "${QUICK:-}" ] || timeout 200 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
  --prefill=$(ls -d $D/g8v4/prefill-*) --decode=$(ls -d $D/g8v4/decode-*) --ctx=33280 \
  --bench --bench-depths=4096,32768 --bench-gen=32 --bench-reps=2 > $W/model.log 2>&1
echo "rc $?" >> $W/model.log
s
cat $W/device.log
grep -a "==\|check\|rewrites off" $W/check.log | grep -v PASS | grep -v "byte-identical" | head -40
grep -ac PASS $W/check.log; grep -ac byte-identical $W/check.log
for f in tiled1 scalar forced; do echo "## $f"; grep -a "^|\|suite\|error" $W/bench-$f.log; done
grep -a "^|\|identical\|differ\|rc\|error\|time:\|model:" $W/model.log | head -30
