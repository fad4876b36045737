#!/usr/bin/env bash
# One call: an A/B of two builds of the 8B-shaped decoder, prefill (and
# TG=N decode) tok/s, the builds run one after the other in the order
# GENS gives (the first with rewrites on and off: same tokens,
# byte-identical logits), then SUITES (cachet-bench suites, each run
# twice) if given. Prepared here (carry .device and .gl):
#   .device/bin, .device/lib   as for generate-h200.sh
#   .device/GEN/{prefill,decode} for each GEN of GENS: gpu.so,
#     gpu-norewrite.so, manifest.json of `cachet-generate --random=llama3-8b
#     --type=$TYPE --dtype=bf16 --kv=q8_0-packed --target=nvvm
#     --profile=h200 --ctx=33280 --ubatch=512 --compile-only`, and
#     .device/GEN/kv naming another --kv than q8_0-packed
#
#   GENS="gen-new gen-old gen-new" SUITES=g TYPE=bf16 \
#     scripts/device/model-ab-h200.sh
#
# DEPTHS (32768,4096), TG (tokens of the tg rows, 0), REPS (3) and
# BENCH_S (150, seconds per build) shape the bench.
# Logs: $OUT/model-ab.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/model-ab; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/model-ab.tgz -C $W .; }
TYPE=${TYPE:-bf16}; DEPTHS=${DEPTHS:-32768,4096}
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1
cat $W/device.log
for g in ${SUITES:-}; do
  check $(ls -d $D/$g/*/ | grep -v 14336 | sed 's,/$,,') > $W/check-$g.log 2>&1
  for r in 1 2; do
    timeout 60 $B/cachet-bench $D/$g --repeat=10 > $W/suite-$g-$r.log 2>&1
  done
  cat $W/check-$g.log; grep -h "^|" $W/suite-$g-*.log
done
s
M=/tmp/llama3-8b-$TYPE.gguf
{ time $B/cachet-gguf random llama3-8b --type=$TYPE --seed=1 -o $M; } > $W/gguf.log 2>&1
s
n=0
for g in $GENS; do
  n=$((n + 1)); only=--bench-on-only
  [ $n = 1 ] && only=
  kv=q8_0-packed; [ -f $D/$g/kv ] && kv=$(cat $D/$g/kv)
  echo "== $g --kv=$kv ${only:-(rewrites on and off)}"
  timeout ${BENCH_S:-150} $B/cachet-generate-runner --model=$M --kv=$kv \
    --dtype=bf16 --ubatch=512 --prefill=$D/$g/prefill --decode=$D/$g/decode \
    --ctx=33280 --bench $only --bench-depths=$DEPTHS --bench-gen=${TG:-0} \
    --bench-reps=${REPS:-3} > $W/bench-$n-$g.log 2>&1
  echo "rc $?" >> $W/bench-$n-$g.log
  grep -a "^|\|identical\|DIFFER\|rc" $W/bench-$n-$g.log
  s
done > $W/bench.log 2>&1
s; cat $W/bench.log
echo "after ${SECONDS}s"
