#!/usr/bin/env bash
# One lease for the mma attention kernel on Vulkan (KHR cooperative
# matrices through NVIDIA's driver): what the runtime enables, a 16x16x16
# cooperative-matrix product against the CPU, the CPU checks of the
# check-sized spirv-mma artifacts (rewrites off vs on byte for byte), then
# the f16 / q8_0 / q4_0 dequant-once (rewrites on) vs in-kernel (off) A/B of
# cachet-bench, mma and, where present, the scalar SPIR-V kernel. Logs and
# JSON go to $OUT/vulkan-coop.tgz after each stage. Usage, from the
# repository root on the GPU server: scripts/device/vulkan-coop-h200.sh
# [REPEAT], with .device/ built here by
#
#   cmake --build build
#   mkdir -p .device/bin .device/lib
#   cp build/bin/cachet-runner build/bin/cachet-bench build/bin/cachet-probe \
#      build/bin/cachet-runtime-test .device/bin/
#   cp build/lib/libcachet_runtime.so .device/lib/
#   /usr/lib/llvm-22/bin/mlir-translate --no-implicit-module --serialize-spirv \
#      test/Runtime/Inputs/coop-matmul.mlir -o .device/coop-matmul.spv
#   TARGETS=spirv-mma DEPTHS=448 bench/make-attention-artifacts.sh .device/vkattn
#   bench/make-suite.py -o .device/spirv-mma --preset=h200 --target=spirv \
#      --attention-kernel=mma --only=attention
#   bench/make-suite.py -o .device/spirv --preset=h200 --target=spirv \
#      --only=attention                                  # optional: scalar
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/vulkan-coop.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
$B/cachet-runtime-test --probe >> $W/device.log 2>&1
$B/cachet-runtime-test --coop-module=$D/coop-matmul.spv > $W/coop-matmul.log 2>&1; s
timeout 60 $B/cachet-probe --quick -o $W/vulkan-profile.json > $W/probe.log 2>&1; s
for a in $D/vkattn/art/spirv-mma-*/; do
  case $a in *-d448/ | *-odd-*/) ;; *) continue ;; esac
  echo "== $a"; timeout 60 $B/cachet-runner $a --check --compare-rewrites; echo "exit $?"
done > $W/attn-check.log 2>&1; s
for suite in spirv-mma spirv; do
  [ -d $D/$suite ] || continue
  for f in d4096 d32768; do
    timeout 150 $B/cachet-bench $D/$suite --filter=$f --repeat=${1:-10} \
      --json=$W/$suite-$f.json > $W/$suite-$f.log 2>&1; s
  done
done
cat $W/device.log; grep -a "PASS\|FAIL\|failure" $W/coop-matmul.log
grep -a '"coop_matrix"' $W/vulkan-profile.json
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|skipped.*\|exit [0-9]*" $W/attn-check.log | sort | uniq -c
grep -ah "^| \|^suite" $W/spirv*-d*.log | grep -v -- "---\|case"
