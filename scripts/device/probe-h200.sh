#!/usr/bin/env bash
# Measures the device profile of the GPU server's H200 with cachet-probe, on
# CUDA and on Vulkan (through the NVIDIA driver), twice each, and writes the
# profiles, the logs and an offline re-fit of each working-set sweep to $OUT.
# The server needs no MLIR: only the probe, libcachet_runtime and the driver.
# Usage (from the repository root there):
#
#   scripts/device/probe-h200.sh DIR
#
# DIR holds bin/cachet-probe and lib/libcachet_runtime.so (from this
# machine's build/bin and build/lib). A .gl/ folder of Debian packages with
# the Vulkan loader is unpacked first where the server lacks one. Each probe
# run is limited to 50 s (a full run takes seconds on an H200), so the script
# ends within about 4 minutes even if every run hangs.
#
# $OUT/ (./probe-out where OUT is unset) receives:
#   h200-cuda-1.json, h200-cuda-2.json        profiles probed through CUDA
#   h200-vulkan-1.json, h200-vulkan-2.json    profiles probed through Vulkan
#   *.log                                     each run's -v log and status
#   *.fit.json                                cachet-probe --fit-sweep of each:
#                                             one object per sweep, the
#                                             whole-GPU one (l2_bytes), then
#                                             the per-workgroup slices
#                                             (l2_slices)
#   nvidia-smi.txt                            the GPU, driver and clocks
# Everything lands directly in $OUT (no subfolders). The line to read first
# in each log: "L2 read one slice per workgroup N" (docs/device-profiles.md,
# "The H200's L2 through a whole-GPU sweep", says what each outcome means).
# Exit status: 0 when every run wrote its profile, 1 otherwise.
#
# Saving a run: its logs, profiles and fits go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/device-profiles.md
# or docs/BENCHMARKS.md quotes from them go to bench/results/runNN.json
# (bench/results/README.md).
set -u
dir=${1:?usage: probe-h200.sh DIR}
out=${OUT:-probe-out}
mkdir -p "$out"
. "$(dirname "$0")/env.sh"
probe="$dir/bin/cachet-probe"
if command -v nvidia-smi >/dev/null; then
  {
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem --format=csv
  } > "$out/nvidia-smi.txt" 2>&1
  cat "$out/nvidia-smi.txt"
fi
status=0
for run in 1 2; do
  for backend in cuda vulkan; do
    name="h200-$backend-$run"
    start=$(date +%s)
    timeout 50 "$probe" --backend="$backend" -v -o "$out/$name.json" \
      > "$out/$name.log" 2>&1
    rc=$?
    echo "exit status $rc after $(( $(date +%s) - start )) s" >> "$out/$name.log"
    echo "== $name: exit status $rc"
    cat "$out/$name.log"
    if [ "$rc" -eq 0 ] && [ -s "$out/$name.json" ]; then
      "$probe" --fit-sweep="$out/$name.json" > "$out/$name.fit.json" 2>&1
      cat "$out/$name.fit.json"
    else
      status=1
    fi
  done
done
exit $status
