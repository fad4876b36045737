#!/usr/bin/env bash
# One lease for issue 22: (1) the launch overhead per kernel of the CUDA and
# the Vulkan backend (cachet-bench's launch table: 1 and 64 dependent tiny
# mat-vecs, the kernel span and the host's wall time per launch), two
# rounds in turns; (2) the SPIR-V attention with the mma kernel (KHR
# cooperative matrices) by default and its fallback chosen at run time:
# the runtime's cooperative-matrix module checks, the CPU checks of the
# check-sized artifacts with cooperative matrices on (the mma kernel runs)
# and off (CACHET_VULKAN_COOP_MATRIX=0: the fallback runs), and cachet-bench
# of the default SPIR-V attention suite. Logs and JSON go to $OUT. Usage,
# from the repository root on the GPU server:
# scripts/device/launch-fallback-h200.sh [REPEAT], with .device/ built here by
#
#   cmake --build build
#   mkdir -p .device/bin .device/lib
#   cp build/bin/cachet-runner build/bin/cachet-bench \
#      build/bin/cachet-runtime-test .device/bin/
#   cp build/lib/libcachet_runtime.so .device/lib/
#   /usr/lib/llvm-22/bin/mlir-translate --no-implicit-module --serialize-spirv \
#      test/Runtime/Inputs/coop-matmul.mlir -o .device/coop-matmul.spv
#   for t in nvvm spirv; do
#     bench/make-suite.py -o .device/launch-$t --preset=h200 --target=$t --only=launch
#   done
#   bench/make-suite.py -o .device/attn-spirv --preset=h200 --target=spirv \
#      --only=attention                  # pp512 @ d4096 / d32768 / d65536
#   build/bin/cachet-run test/Integration/Inputs/attention-f16.mlir \
#      --entry=attention --profile=h200 --emit=.device/fb/f16 --no-run
#   sed "s/FMT/q8_0/; s/OPTS/causal 40/" test/Integration/Inputs/attention-flash.mlir \
#      > /tmp/q8.mlir && build/bin/cachet-run /tmp/q8.mlir --entry=attention \
#      --profile=h200 --emit=.device/fb/q8_0 --no-run
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=$OUT; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $W/device.log 2>&1
$B/cachet-runtime-test --coop-module=$D/coop-matmul.spv > $W/coop-matmul.log 2>&1
CACHET_VULKAN_COOP_MATRIX=0 $B/cachet-runtime-test --coop-module=$D/coop-matmul.spv \
  > $W/coop-matmul-off.log 2>&1
for round in 1 2; do
  for s in launch-nvvm launch-spirv; do
    timeout 60 $B/cachet-bench $D/$s --repeat=$R --json=$W/$s-$round.json \
      > $W/$s-$round.log 2>&1
  done
done
for coop in 1 0; do
  for a in $D/fb/*/; do
    echo "== $a CACHET_VULKAN_COOP_MATRIX=$coop"
    CACHET_VULKAN_COOP_MATRIX=$coop timeout 60 $B/cachet-runner $a --check \
      --compare-rewrites --repeat=3
    echo "exit $?"
  done
done > $W/fb-check.log 2>&1
[ -d $D/attn-spirv ] && timeout 240 $B/cachet-bench $D/attn-spirv --repeat=${ATTN_REPEAT:-10} \
  --json=$W/attn-spirv.json > $W/attn-spirv.log 2>&1
cat $W/device.log
grep -ah "PASS\|FAIL\|failure\|cooperative matrix:" $W/coop-matmul.log $W/coop-matmul-off.log
grep -ah "^| \|^suite" $W/launch-*.log | grep -v -- "---\|case"
grep -aoh "^== .*\|PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|skipped.*\|exit [0-9]*\|rewrites o[nf]f*: kernels.*" $W/fb-check.log
grep -ah "^| \|^suite\|error" $W/attn-spirv.log | grep -v -- "---\|case"
