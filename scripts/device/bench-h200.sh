#!/usr/bin/env bash
# Runs cachet-bench suites and the PyTorch/cuBLAS anchors in one lease on a
# GPU server, after checking each kernel/chain artifact against its CPU
# reference. Usage (from the repository root there):
#
#   scripts/device/bench-h200.sh DIR FILTER... 
#
# DIR holds bin/ (cachet-bench, cachet-runner), lib/libcachet_runtime.so and
# suite folders from bench/make-suite.py: DIR/nvvm (CUDA) and DIR/spirv
# (Vulkan), either may be missing. Each FILTER is a cachet-bench --filter
# (e.g. "kernel", "tg", "d4096"); REPEAT (default 20) sets --repeat, LIMIT
# (default 150) the seconds each cachet-bench run may take. Logs
# and JSON go to $WORK (default ./bench-out).
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
dir=${1:?usage: bench-h200.sh DIR FILTER...}
shift
work=${WORK:-bench-out}
repeat=${REPEAT:-20}
mkdir -p "$work"
. "$(dirname "$0")/env.sh"
command -v nvidia-smi >/dev/null && nvidia-smi -L > "$work/nvidia-smi.txt"
status=0
for target in nvvm spirv; do
  suite="$dir/$target"
  [ -d "$suite" ] || continue
  # Correctness first: the kernel and chain cases against the CPU.
  for art in "$suite"/kernel-*/ "$suite"/tg-*/; do
    [ -d "$art" ] || continue
    echo "== $(basename "$art")"
    "$dir/bin/cachet-runner" "$art" --check --compare-rewrites || status=1
  done > "$work/check-$target.log" 2>&1
  for filter in "$@"; do
    name=$(echo "$filter" | tr -c 'A-Za-z0-9_.-' '_')
    timeout "${LIMIT:-150}" "$dir/bin/cachet-bench" "$suite" --filter="$filter" --repeat="$repeat" \
      --json="$work/bench-$target-$name.json" \
      > "$work/bench-$target-$name.log" 2>&1 || status=1
  done
done
exit $status
