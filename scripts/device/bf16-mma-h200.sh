#!/usr/bin/env bash
# One call for the bf16-block-mma decision (82fa839): a bf16 model's
# quantized mat-vecs on the mma-sync kernel (bf16 pairs on mma.sync) against
# the FMA kernel, in one lease. Prepared here (a build of 82fa839 or later):
#
#   bench/make-suite.py -o .device/bfA --preset=h200 --only="0 bf16"
#   bench/make-suite.py -o .device/bfM --preset=h200 --only="0 bf16" \
#     --compile-options='matvec-options={bf16-block-mma=true}'
#   bench/make-suite.py -o .device/bbA --preset=h200 --only="mm8 bf16"
#   bench/make-suite.py -o .device/bbF --preset=h200 --only="mm8 bf16" \
#     --compile-options='matvec-options={small-batch-mma=false}'
#   bench/make-block-matvec-fuzz.py -o .device/mfz --case="FMT bf16 ROWS COLS;
#     matvec-options={bf16-block-mma=true}" ... (rows of 16, columns of 128)
#   .device/gen-q8: cachet-generate --random=llama3-8b --type=q8_0
#     --dtype=bf16 --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=33280
#     --ubatch=512 --compile-only, built with bf16-block-mma's default
#     flipped to true in include/cachet/Passes.td; .device/gen-q8old the
#     same with it false; .device/smallq8 (--random=small --type=q8_0
#     --dtype=bf16 --ctx=256 --ubatch=16) with it true.
#
#   scripts/device/bf16-mma-h200.sh      (carry .device and .gl)
#
# There: the mfz functions and the small q8_0 model against the CPU
# reference (off / on); then generate-q8-h200.sh with KSUITE (the four
# suites, two rounds in turns, checked) and OLD=.device/gen-q8old (the
# whole q8_0 model with the FMA kernel, tg128 / pp512, same lease).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
nvidia-smi -L > $OUT/device.txt 2>&1
[ -d $D/mfz/art ] && check $D/mfz/art/*/ > $OUT/mfz-check.log 2>&1
if [ -d $D/smallq8/decode ]; then
  $B/cachet-gguf random small --type=q8_0 --seed=1 -o /tmp/sq8.gguf > /dev/null 2>&1
  timeout 120 $B/cachet-generate-runner --model=/tmp/sq8.gguf --prefill=$D/smallq8/prefill \
    --decode=$D/smallq8/decode --kv=q8_0-packed --dtype=bf16 --ctx=256 --ubatch=16 \
    --prompt-length=20 --n-predict=8 --check --compare-rewrites > $OUT/smallq8.log 2>&1
  echo "rc $?" >> $OUT/smallq8.log
fi
KSUITE="$D/bfA $D/bfM $D/bbA $D/bbF" OLD=$D/gen-q8old BENCH_S=${BENCH_S:-150} \
  OLD_S=${OLD_S:-120} "$(dirname "$0")/generate-q8-h200.sh" > $OUT/generate-q8.txt 2>&1
for f in bench-cuda.log bench-old.log ksuite.log; do cp /tmp/gen-q8/$f $OUT/ 2>/dev/null; done
cat $OUT/device.txt
echo "mfz: $(grep -ac PASS $OUT/mfz-check.log 2>/dev/null) PASS, $(grep -ac FAIL $OUT/mfz-check.log 2>/dev/null) FAIL"
grep -a "check\|rewrites\|rc" $OUT/smallq8.log 2>/dev/null | tail -5
cat $OUT/generate-q8.txt
