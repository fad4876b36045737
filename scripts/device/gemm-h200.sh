#!/usr/bin/env bash
# One lease for the mma-sync GEMM of prefill linear layers (issue 23's warp-MMA
# GEMM, issue 24's pp512): correctness first, then speed beside cuBLAS.
# Prepared here:
#
#   bench/make-suite.py -o .device/gemm --preset=h200 --target=nvvm --only=gemm
#       (gemm512 bf16 / f16 at 4096x4096, 14336x4096, 4096x14336)
#   .device/gemmchk/NAME/: cachet-run SRC --entry=matvec --target=nvvm
#       --profile=h200 --emit=.device/gemmchk/NAME --no-run for small
#       mat-muls whose tiles are partly outside (rows of x or weight rows not
#       multiples of the tile), from bench/make-suite.py's matvec_mlir
#   .device/bin (cachet-bench, cachet-runner), .device/lib
#
#   scripts/device/gemm-h200.sh [REPEAT]
#
# There: every .device/gemmchk artifact and the 4096x4096 suite cases
# through cachet-runner --check --compare-rewrites (the CPU reference of the
# same IR); the suite timed by cachet-bench (REPEAT calls, default 20, two
# rounds); bench/torch_anchors.py --only=gemm (F.linear through cuBLAS, and a
# bf16 8192^3 matmul). Logs: $OUT/gemm.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gemm; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/gemm.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
{ [ -d $D/gemmchk ] && check $D/gemmchk/*/; check $D/gemm/*4096x4096*/; } > $W/check.log 2>&1
s
for round in 1 2; do
  timeout 120 $B/cachet-bench $D/gemm --repeat=$R --json=$W/gemm-$round.json > $W/gemm-$round.log 2>&1
  s
done
timeout 120 python3 bench/torch_anchors.py $R --only=gemm --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $?" >> $W/torch.log
s
cat $W/check.log; cat $W/gemm-1.log $W/gemm-2.log | grep -a "gemm\|error"; cat $W/torch.log
