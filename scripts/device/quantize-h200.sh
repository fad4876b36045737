#!/usr/bin/env bash
# The KV cache append's quantize kernels on the GPU server: each artifact
# folder of DIRS (cachet-run --emit of a 512 x 8 x 128 bf16 append into a
# 1024-position cache, one folder per format) through cachet-runner
# --check --compare-rewrites --repeat=REPS, whole verdict lines kept.
# Usage (repository root there): DIRS="qsub qchk qchk-gen" REPS=20
#   scripts/device/quantize-h200.sh
set -u
dir=.device
. "$(dirname "$0")/env.sh"
nvidia-smi -L
nvidia-smi --query-gpu=uuid,clocks.max.sm,clocks.max.mem --format=csv
for d in ${DIRS:-qsub}; do
  for art in "$dir/$d"/*/; do
    [ -f "$art/manifest.json" ] || continue
    echo "== $d/$(basename "$art")"
    timeout 120 "$dir/bin/cachet-runner" "$art" --check --compare-rewrites \
      --repeat="${REPS:-20}" 2>&1 |
      grep -a "check\|differ\|rewrites off\|kernels\|error"
    echo "rc ${PIPESTATUS[0]}"
  done
done
