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
#   .device/bin (cachet-bench, cachet-runner, cachet-gguf,
#       cachet-generate-runner), .device/lib
#   with MODEL=1: .device/gen-gw = cachet-generate --random=llama3-8b
#       --type=q8_0 --dtype=bf16 --kv=q8_0-packed --target=nvvm
#       --chip=sm_90a --profile=h200 --ctx=33280 --ubatch=512 --compile-only
#       (the wgmma GEMM) beside .device/gen-q8old (the same at sm_90, the
#       mma-sync GEMM), and .device/smallw (--random=small --type=q8_0
#       --dtype=bf16 --ctx=256 --ubatch=16 at sm_90a)
#
#   scripts/device/gemm-sweep-h200.sh [REPEAT]
#
# There: every .device/gchk artifact through cachet-runner --check
# --compare-rewrites; the gsw suites timed by cachet-bench in turns (REPEAT
# calls each, default 20; two rounds, the second in reverse order);
# bench/torch_anchors.py --only=gemm (F.linear through cuBLAS); with
# MODEL=1 the small sm_90a model against the CPU reference (off / on) and
# the q8_0 8B model's pp512 @ d4096 with either GEMM, in turns. Logs:
# $OUT/gemm-sweep.tgz; a table of medians on stdout.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gemm-sweep; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/gemm-sweep.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
# Each artifact through the CPU reference (20 s at most). The wgmma
# variants (chip=sm_90a in variants.txt, w* suites) are skipped after one
# times out: a hang must not eat the call.
SKIPW=0
for v in $D/gchk/v*/; do
  grep -q "^$(basename $v) chip=sm_90a" $D/gchk/variants.txt 2>/dev/null && wg=1 || wg=0
  for c in $v*/; do
    [ $wg = 1 ] && [ $SKIPW = 1 ] && { echo "== $c skipped (a wgmma artifact hung)"; continue; }
    echo "== $c"
    timeout 20 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"
    rc=${PIPESTATUS[0]}
    [ $rc = 124 ] && { echo "TIMEOUT"; [ $wg = 1 ] && SKIPW=1; }
  done
done > $W/check.log 2>&1
grep -q "skipped\|TIMEOUT" $W/check.log && grep -q "sm_90a" $D/gchk/variants.txt && SKIPW=1
s
suites=$(ls -d $D/gsw/*/)
[ $SKIPW = 1 ] && suites=$(ls -d $D/gsw/g*/)
for round in 1 2; do
  order=$suites
  [ $round = 2 ] && order=$(echo "$suites" | tac)
  for k in $order; do
    n=$(basename $k)
    echo "== $n round $round" >> $W/sweep.log
    timeout 40 $B/cachet-bench $k --repeat=$R --json=$W/$n-$round.json >> $W/sweep.log 2>&1
  done
  s
done
timeout 120 python3 bench/torch_anchors.py $R --only=gemm --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $?" >> $W/torch.log
s
if [ "${MODEL:-0}" = 1 ]; then
  if [ -d $D/smallw/decode ] && [ $SKIPW = 0 ]; then
    $B/cachet-gguf random small --type=q8_0 --seed=1 -o /tmp/sq8.gguf > /dev/null 2>&1
    timeout 60 $B/cachet-generate-runner --model=/tmp/sq8.gguf --prefill=$D/smallw/prefill \
      --decode=$D/smallw/decode --kv=q8_0-packed --dtype=bf16 --ctx=256 --ubatch=16 \
      --prompt-length=20 --n-predict=8 --check --compare-rewrites > $W/smallw.log 2>&1
    echo "rc $?" >> $W/smallw.log
  fi
  M=/tmp/llama3-8b-q8_0.gguf
  [ -s $M ] || $B/cachet-gguf random llama3-8b --type=q8_0 --seed=1 -o $M > $W/gguf.log 2>&1
  for round in 1 2; do
    for a in gen-q8old gen-gw; do
      [ $SECONDS -lt 520 ] || break
      [ $a = gen-gw ] && [ $SKIPW = 1 ] && continue
      echo "== $a round $round" >> $W/model.log
      timeout 90 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 \
        --ubatch=512 --prefill=$D/$a/prefill --decode=$D/$a/decode --ctx=33280 \
        --bench-on-only --bench-depths=4096 --bench-gen=0 --bench-reps=3 >> $W/model.log 2>&1
    done
  done
  s
fi
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -aci 'FAIL\|error' $W/check.log) FAIL/error lines"
grep -a "FAIL\|error" $W/check.log | head -20
grep -a "==\|gemm" $W/sweep.log
cat $W/torch.log
grep -a "check\|rewrites\|rc" $W/smallw.log 2>/dev/null | tail -4
grep -a "==\|pp512" $W/model.log 2>/dev/null
