#!/usr/bin/env bash
# One call for the wgmma GEMM that decodes block weights itself (issue 23's
# "quantized weights decoded in the GEMM", issue 24's pp512): checked, timed
# against the dequantized-copy path, and in the q8_0 8B model. Prepared here:
#
#   bench/make-gemm-check.py -o .device/gbk --blocks --count=10 --seed=7
#       --chip=sm_90a --compile-options="matvec-options={gemm-decode-blocks=true}"
#       (and with gemm-tile-n=256, gemm-stages=2, and without the option:
#       random block and f16/bf16 mat-muls whose tiles lie partly outside)
#   bench/make-suite.py -o .device/gq --preset=h200 --target=nvvm
#       --chip=sm_90a --only="gemm512"        (bf16, f16, q8_0, q4_0)
#       --compile-options="matvec-options={gemm-decode-blocks=true}"
#   bench/make-suite.py -o .device/gqo ... --only="gemm512 q" (the copy
#       path, the default)
#   .device/smallf: cachet-generate --random=small --type=q8_0 --dtype=bf16
#       --kv=q8_0-packed --target=nvvm --chip=sm_90a --profile=h200 --ctx=256
#       --ubatch=16 --compile-only
#   .device/gen-f: cachet-generate --random=llama3-8b --type=q8_0
#       --dtype=bf16 --kv=q8_0-packed --target=nvvm --profile=h200
#       --ctx=33280 --ubatch=512 --compile-only, built at 1230a60's tree
#       (where gemm-decode-blocks was on by default; cachet-generate takes
#       no compile options); .device/gen-wb the same at d981019 (the GEMM
#       reading a dequantized copy)
#
#   scripts/device/gemm-blocks-h200.sh [REPEAT]
#
# There: every .device/gbk artifact through cachet-runner --check
# --compare-rewrites (20 s each; the rest skipped after a hang); the small
# model against the CPU reference; the gq / gqo suites in turns (REPEAT
# calls each, default 20, two rounds); F.linear through cuBLAS
# (bench/torch_anchors.py --only=gemm); the 8B model's pp512 at d4096 and
# d32768 with gen-f and gen-wb in turns. Logs: $OUT/gemm-blocks.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gemm-blocks; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/gemm-blocks.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid --format=csv > $W/device.log 2>&1
HUNG=0
for c in $D/gbk/v*/*/; do
  [ $HUNG = 1 ] && { echo "== $c skipped"; continue; }
  echo "== $c"
  timeout 20 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"
  [ ${PIPESTATUS[0]} = 124 ] && { echo "TIMEOUT"; HUNG=1; }
done > $W/check.log 2>&1
$B/cachet-gguf random small --type=q8_0 --seed=1 -o /tmp/sq8.gguf > /dev/null 2>&1
timeout 60 $B/cachet-generate-runner --model=/tmp/sq8.gguf --prefill=$D/smallf/prefill \
  --decode=$D/smallf/decode --kv=q8_0-packed --dtype=bf16 --ctx=256 --ubatch=16 \
  --prompt-length=20 --n-predict=8 --check --compare-rewrites > $W/smallf.log 2>&1
echo "rc $?" >> $W/smallf.log
s
if [ $HUNG = 0 ]; then
  for round in 1 2; do
    order="gq gqo"; [ $round = 2 ] && order="gqo gq"
    for k in $order; do
      echo "== $k round $round" >> $W/suite.log
      timeout 60 $B/cachet-bench $D/$k --repeat=$R --json=$W/$k-$round.json >> $W/suite.log 2>&1
    done
  done
  s
fi
timeout 120 python3 bench/torch_anchors.py $R --only=gemm --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $?" >> $W/torch.log
s
if [ $HUNG = 0 ]; then
  M=/tmp/llama3-8b-q8_0.gguf
  $B/cachet-gguf random llama3-8b --type=q8_0 --seed=1 -o $M > $W/gguf.log 2>&1
  for round in 1 2; do
    order="gen-f gen-wb"; [ $round = 2 ] && order="gen-wb gen-f"
    for a in $order; do
      [ $SECONDS -lt 500 ] || break
      echo "== $a round $round" >> $W/model.log
      timeout 100 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 \
        --ubatch=512 --prefill=$D/$a/prefill --decode=$D/$a/decode --ctx=33280 \
        --bench-on-only --bench-depths=4096,32768 --bench-gen=0 --bench-reps=3 \
        >> $W/model.log 2>&1
    done
  done
  s
fi
cat $W/device.log
echo "check: $(grep -ac 'PASS' $W/check.log) PASS, $(grep -ac 'byte-identical' $W/check.log) byte-identical, $(grep -aci "FAIL\|error:\|TIMEOUT" $W/check.log) FAIL/error lines"
grep -a "FAIL\|error:\|TIMEOUT" -B1 $W/check.log | head -20
grep -a "check\|rewrites\|rc" $W/smallf.log | tail -4
grep -a "==\|gemm" $W/suite.log
grep -a "gemm\|linear\|rc" $W/torch.log
grep -a "==\|pp512\|tg\|identical\|differ" $W/model.log
