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
# Each kernel's time: Nsight Compute's gpu__time_duration of every launch
# of the artifacts in NCU_ARTS (dir/format), rewrites on and off, 5 calls.
NCU=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
NCU=${NCU:-ncu}
for a in ${NCU_ARTS:-}; do
  echo "== ncu $a"
  timeout 120 $NCU --clock-control none --metrics gpu__time_duration.sum --print-units base \
    --csv "$dir/bin/cachet-runner" "$dir/$a" --repeat=5 2>/dev/null |
    python3 -c '
import csv, statistics, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 10]
head = rows[0]
k, v = head.index("Kernel Name"), head.index("Metric Value")
times = {}
for r in rows[1:]:
    times.setdefault(r[k], []).append(float(r[v].replace(",", "")))
for name, t in times.items():
    print(f"  {name}: {len(t)} launches, median {statistics.median(t)/1000:.2f} us, min {min(t)/1000:.2f}, max {max(t)/1000:.2f}")
'
done
