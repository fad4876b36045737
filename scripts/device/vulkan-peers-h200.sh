#!/usr/bin/env bash
# Issue 22 (parts 2 and 3), one lease with bench/ggml-vulkan/build.sh and
# scripts/device/ggml-vulkan-peers-h200.sh: cachet's side. (1) The exit
# status of cachet-runner on Vulkan with and without the CUDA context the
# Vulkan backend holds (CACHET_VULKAN_CUDA_CONTEXT); (2) where the host time
# of a Vulkan and a CUDA call goes (CACHET_MGPU_PROFILE=1 over the
# 64-launch chain of the launch suites); (3) cachet-bench of the decode
# (tg1 @ d32768) and mat-vec (bf16, q8_0) suites on both backends, for the
# Vulkan / CUDA ratios and beside ggml's Vulkan kernels. Logs in $OUT.
# Suites built here (see scripts/device/launch-fallback-h200.sh for
# .device/bin, lib, fb and launch-*):
#   for t in spirv nvvm; do
#     bench/make-suite.py -o .device/dec-$t --preset=h200 --target=$t --only="tg1 @ d32768"
#     bench/make-suite.py -o .device/mv-$t --preset=h200 --target=$t --only="matvec bf16"
#     bench/make-suite.py -o .device/mvq-$t --preset=h200 --target=$t --only="matvec q8_0 "
#   done
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=$OUT; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
for ctx in 1 0; do
  CACHET_VULKAN_CUDA_CONTEXT=$ctx timeout 60 $B/cachet-runner $D/fb/f16 --check \
    --compare-rewrites > $W/exit-ctx$ctx.log 2>&1
  echo "cachet-runner fb/f16, CACHET_VULKAN_CUDA_CONTEXT=$ctx: exit $?"
done
for t in spirv nvvm; do
  CACHET_MGPU_PROFILE=1 timeout 60 $B/cachet-runner \
    $D/launch-$t/launch-matvec-f32-64x64-64-launches --repeat=20 \
    > $W/profile-$t.log 2>&1
  echo "== host profile, $t: exit $?"
  grep -a "launches$\|  mgpu" $W/profile-$t.log
done
for round in ${ROUNDS:-1}; do
  for s in dec mv mvq; do
    for t in spirv nvvm; do
      [ -d $D/$s-$t ] || continue
      timeout 120 $B/cachet-bench $D/$s-$t --repeat=$R --json=$W/$s-$t-$round.json \
        > $W/$s-$t-$round.log 2>&1
      echo "$s-$t round $round: exit $?"
    done
  done
done
grep -ah "^| \|^suite" $W/dec-*.log $W/mv-*.log $W/mvq-*.log | grep -v -- "---\|case"
