#!/usr/bin/env bash
# One lease, everything: the attention kernels' CPU checks (small shapes,
# CUDA and Vulkan), the cachet-bench suites (CUDA first, Vulkan last), the
# PyTorch/cuBLAS anchors and the H200 probe, saving a tarball of all logs and
# JSON to $OUT/run3.tgz after each stage (so a cut-short run still returns
# what it measured). Usage, from the repository root on the GPU server:
#
#   scripts/device/bench-all-h200.sh
#
# with .device/ holding bin/ (cachet-bench, cachet-runner, cachet-probe),
# lib/libcachet_runtime.so, nvvm/ and spirv/ (bench/make-suite.py
# --preset=h200), s/pf-*/ (one suite per --prefetch mode, --only=tg),
# s/dt-*/ (dequant-transpose variants) and attn/art/*-pp64-d448/
# (bench/make-attention-artifacts.sh).
#
# Saving a run: its logs and JSON go on branch bench-runs, under
# docs/runs/<run>/ (not in main's tree); the figures docs/BENCHMARKS.md
# quotes from them go to bench/results/runNN.json (bench/results/README.md).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W/p; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/run3.tgz -C $W .; }
for a in $D/attn/art/*-pp64-d448/; do echo "== $a"; timeout 40 $B/cachet-runner $a --check --compare-rewrites; done > $W/attn-check.log 2>&1; s
for f in d4096 d32768 d65536; do timeout 80 $B/cachet-bench $D/nvvm --filter=$f --repeat=10 --json=$W/nvvm-att-$f.json > $W/nvvm-att-$f.log 2>&1; s; done
for f in kernel tg; do timeout 60 $B/cachet-bench $D/nvvm --filter=$f --repeat=20 --json=$W/nvvm-$f.json > $W/nvvm-$f.log 2>&1; done; s
for x in $D/s/pf-*/; do n=$(basename $x); timeout 40 $B/cachet-bench $x --repeat=20 --json=$W/$n.json > $W/$n.log 2>&1; done; s
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
OUT=$W/p timeout 100 "$(dirname "$0")/probe-h200.sh" $D > $W/probe.log 2>&1; s
for x in $D/s/dt-*/; do n=$(basename $x); timeout 30 $B/cachet-bench $x --repeat=20 --json=$W/$n.json > $W/$n.log 2>&1; done; s
for f in kernel d4096 tg; do timeout 50 $B/cachet-bench $D/spirv --filter=$f --repeat=5 --json=$W/spirv-$f.json > $W/spirv-$f.log 2>&1; s; done
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT" $W/attn-check.log | sort | uniq -c; grep -ah "^| " $W/nvvm-*.log $W/pf-*.log $W/dt-*.log | grep -v -- "---\|case"; tail -12 $W/torch.log
