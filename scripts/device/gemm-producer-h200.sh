#!/usr/bin/env bash
# The wgmma GEMM whose producer warpgroup decodes block weights, checked
# and timed against the copy path in one call. Prepared here:
#   bench/make-gemm-check.py -o .device/gbk --blocks --count=8 --seed=11
#       --chip=sm_90a with matvec-options {gemm-decode-blocks=true}, and
#       with gemm-tile-n=256, gemm-stages=3, gemm-decode-producer=false
#   bench/make-suite.py -o .device/gqp (gqp2) --preset=h200 --target=nvvm
#       --chip=sm_90a --only="gemm512 q" --compile-options=
#       "matvec-options={gemm-decode-blocks=true [gemm-tile-n=256]}"
#   .device/gqo: the same without the options (the copy path)
# Usage: scripts/device/gemm-producer-h200.sh [REPEAT]
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gemm-producer; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/gemm-producer.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $W/device.log 2>&1
HUNG=0
for c in $D/gbk/v*/*/; do
  [ $HUNG = 1 ] && { echo "== $c skipped"; continue; }
  echo "== $c"
  timeout 20 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error:"
  [ ${PIPESTATUS[0]} = 124 ] && { echo "TIMEOUT"; HUNG=1; }
done > $W/check.log 2>&1
s
for round in 1 2; do
  order="gqo gqp gqp2"; [ $round = 2 ] && order="gqp2 gqp gqo"
  for k in $order; do
    [ $HUNG = 1 ] && [ $k != gqo ] && continue
    echo "== $k round $round" >> $W/suite.log
    timeout 60 $B/cachet-bench $D/$k --repeat=$R --json=$W/$k-$round.json >> $W/suite.log 2>&1
  done
done
s
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -ac 'byte-identical' $W/check.log) byte-identical, $(grep -aci "FAIL\|error:\|TIMEOUT" $W/check.log) FAIL/error lines"
grep -a "FAIL\|error:\|TIMEOUT\|skipped" -B1 $W/check.log | head -20
grep -a "==\|^| gemm" $W/suite.log
