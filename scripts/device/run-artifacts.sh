#!/usr/bin/env bash
# Runs cachet artifacts on a GPU server that has no MLIR: the runtime-only
# runner checks each against its CPU reference, compares rewrites off and on
# byte for byte and times both. Usage (from the repository root there):
#
#   scripts/device/run-artifacts.sh DIR [runner options...]
#
# DIR holds bin/cachet-runner, lib/libcachet_runtime.so and art/*/ (artifact
# folders from `cachet-run --emit=...`). A .gl/ folder of Debian packages
# with the Vulkan loader is unpacked first where the server lacks one.
#
# Saving a run: its console log goes on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from it go to bench/results/runNN.json (bench/results/README.md).
set -u
dir=${1:?usage: run-artifacts.sh DIR [runner options...]}
shift
. "$(dirname "$0")/env.sh"
command -v nvidia-smi >/dev/null && nvidia-smi -L
status=0
for art in "$dir"/art/*/; do
  echo "== $(basename "$art")"
  "$dir/bin/cachet-runner" "$art" "$@" || status=1
done
exit $status
