#!/usr/bin/env bash
# Whole generated decoder layers, models and reductions on a GPU server:
# CUDA (nvvm-*) and Vulkan through the NVIDIA driver (spirv-*) artifacts, each
# checked against its CPU reference and rewrites off vs on, then timed (3
# calls). DIR is what scripts/device/build-layers-h200.sh built here:
# DIR/bin/cachet-runner, DIR/bin/cachet-runtime-test,
# DIR/lib/libcachet_runtime.so and DIR/art/. Run from the repository root
# there: scripts/device/layers-h200.sh DIR
#
# Saving a run: its console log goes on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from it go to bench/results/runNN.json (bench/results/README.md).
set -u
dir=${1:?usage: layers-h200.sh DIR}
. "$(dirname "$0")/env.sh"
nvidia-smi -L
"$dir/bin/cachet-runtime-test" --probe 2>&1 | head -5
pass=0; fail=0
for art in "$dir"/art/*/; do
  out=$(timeout 120 "$dir/bin/cachet-runner" "$art" --check --compare-rewrites --repeat=3 2>&1); rc=$?
  echo "== $(basename "$art") rc=$rc"
  echo "$out" | grep -E "device:|check |rewrites off|rewrites o[nf]+ *:|speedup|cachet-runner:|FAIL"
  if [ $rc = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "SUMMARY: $pass passed, $fail failed"
[ $fail = 0 ]
