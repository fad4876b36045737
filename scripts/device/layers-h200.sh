#!/usr/bin/env bash
# Whole generated decoder layers and a model on a GPU server: CUDA (nvvm-*)
# and Vulkan through the NVIDIA driver (spirv-*) artifacts, each checked
# against its CPU reference and rewrites off vs on, then timed (5 calls).
# Usage, from the repository root there: scripts/device/layers-h200.sh DIR,
# with DIR/bin/cachet-runner, DIR/bin/cachet-runtime-test,
# DIR/lib/libcachet_runtime.so and DIR/art/ built here by
#
#   G="build/bin/cachet-gen --hidden=512 --heads=8 --kv-heads=2 --head-dim=64 --ffn=1024"
#   $G --tokens=16 --past=48 --kv=q8_0 -o h_q8.mlir          # and the others
#   build/bin/cachet-run h_q8.mlir --entry=layer --target=nvvm --profile=h200 \
#     --chip=sm_90 --compile-options=features=+ptx80 --emit=DIR/art/nvvm-h_q8 --no-run
#   build/bin/cachet-run h_q8.mlir --entry=layer --target=spirv --profile=h200 \
#     --emit=DIR/art/spirv-h_q8 --no-run
set -u
dir=${1:?usage: layers-h200.sh DIR}
. "$(dirname "$0")/env.sh"
nvidia-smi -L
"$dir/bin/cachet-runtime-test" --probe 2>&1 | head -5
status=0
for art in "$dir"/art/*/; do
  echo "== $(basename "$art")"
  timeout 120 "$dir/bin/cachet-runner" "$art" --check --compare-rewrites --repeat=5 || status=1
done
exit $status
