#!/usr/bin/env bash
# One lease for the attention kernels: the CPU checks of the CUDA artifacts
# (bench/make-attention-artifacts.sh .device/attn: odd shapes and pp64 @
# d448, rewrites off vs on byte for byte), the cachet-bench attention suite
# (bench/make-suite.py -o .device/nvvm --only=attention) and PyTorch SDPA
# measured by bench/torch_anchors.py in the same lease. Logs and JSON go to
# $OUT/attention.tgz after each stage. Usage, from the repository root on the
# GPU server: scripts/device/attention-h200.sh [REPEAT]
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/attention.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for a in $D/attn/art/nvvm-*/; do echo "== $a"; timeout 40 $B/cachet-runner $a --check --compare-rewrites; done > $W/attn-check.log 2>&1; s
for f in d4096 d32768 d65536; do timeout 100 $B/cachet-bench $D/nvvm --filter=$f --repeat=${1:-10} --json=$W/nvvm-att-$f.json > $W/nvvm-att-$f.log 2>&1; s; done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*" $W/attn-check.log | sort | uniq -c
grep -ah "^| " $W/nvvm-att-*.log | grep -v -- "---\|case"
grep -ai "sdpa" $W/torch.log
