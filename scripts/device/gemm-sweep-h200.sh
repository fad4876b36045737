#!/usr/bin/env bash
# One call for the mma-sync GEMM's tilings (issue 23's warp-MMA GEMM, issue
# 24's pp512): which tile, step, subgroups and buffered steps run fastest,
# each checked, beside cuBLAS in the same lease. Prepared here:
#
#   bench/make-suite.py -o .device/gsw/gM-N-K-sS-stT --preset=h200
#       --target=nvvm --only="gemm512 bf16" --compile-options=
#       'matvec-options={gemm-tile-m=M gemm-tile-n=N gemm-step=K
#        gemm-subgroups=S gemm-stages=T}'       (one folder per tiling)
#   bench/make-gemm-check.py -o .device/gchk --count=6
#       --compile-options=... (one per tiling checked: random shapes whose
#       tiles lie partly outside)
#   .device/bin (cachet-bench, cachet-runner), .device/lib
#
#   scripts/device/gemm-sweep-h200.sh [REPEAT]
#
# There: every .device/gchk artifact through cachet-runner --check
# --compare-rewrites; the gsw suites timed by cachet-bench in turns (REPEAT
# calls each, default 20; two rounds, the second in reverse order);
# bench/torch_anchors.py --only=gemm (F.linear through cuBLAS). Logs:
# $OUT/gemm-sweep.tgz; a table of medians on stdout.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gemm-sweep; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/gemm-sweep.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
[ -d $D/gchk ] && for v in $D/gchk/v*/; do check $v*/; done > $W/check.log 2>&1
s
suites=$(ls -d $D/gsw/*/)
for round in 1 2; do
  order=$suites
  [ $round = 2 ] && order=$(echo "$suites" | tac)
  for k in $order; do
    n=$(basename $k)
    echo "== $n round $round" >> $W/sweep.log
    timeout 60 $B/cachet-bench $k --repeat=$R --json=$W/$n-$round.json >> $W/sweep.log 2>&1
  done
  s
done
timeout 120 python3 bench/torch_anchors.py $R --only=gemm --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $?" >> $W/torch.log
s
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -aci 'FAIL\|error' $W/check.log) FAIL/error lines"
grep -a "FAIL\|error" $W/check.log | head -20
grep -a "==\|gemm" $W/sweep.log
cat $W/torch.log
