#!/usr/bin/env bash
# One lease, two cachet-bench suites built at two commits (.device/old and
# .device/new, each `bench/make-suite.py --preset=h200 --target=nvvm`),
# interleaved old, new, old, new over the chain (tg) and the attention cases
# (pp512 @ d32768, f16 / q8_0 / q4_0), then the mat-vec and dequant-transpose
# kernels once each, the CPU check of the new chain (rewrites off vs on) and
# the PyTorch / cuBLAS anchors. Logs and JSON go to $OUT/ab.tgz after each
# stage. Usage, from the repository root on the GPU server:
#
#   scripts/device/ab-suites-h200.sh [REPEAT]
#
# with .device/bin (cachet-bench, cachet-runner) and .device/lib
# (libcachet_runtime.so).
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/ab.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for round in 1 2; do
  for v in old new; do
    for f in tg d32768; do
      timeout 120 $B/cachet-bench $D/$v --filter=$f --repeat=$R --json=$W/$v-$f-$round.json > $W/$v-$f-$round.log 2>&1
    done
  done
  s
done
timeout 60 $B/cachet-bench $D/new --filter=kernel --repeat=$R --json=$W/new-kernel.json > $W/new-kernel.log 2>&1; s
tg=$(ls -d $D/new/tg-*/ | head -1)
timeout 120 $B/cachet-runner $tg --inputs=random:1 --check --compare-rewrites > $W/check-tg.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
tail -3 $W/check-tg.log
for f in $W/old-*.log $W/new-*.log; do echo "== $(basename $f)"; grep -ah "^| " $f | grep -v -- "---\|case"; done
tail -14 $W/torch.log
