#!/usr/bin/env bash
# One lease for the block-quantized mat-vecs of issue 21: cachet-bench's
# kernel cases "matvec q8_0" / "matvec q4_0" (and bf16) at 4096x4096,
# 14336x4096 and 4096x14336 on CUDA, with variants of the kernel's options in
# turns, each case's GPU result checked against the CPU reference and off /
# on; the same suite on Vulkan (NVIDIA driver); the decode attention at
# d4096 (its blocks are read through the same word reader; run 79 only);
# the 2-layer chains over bf16, q8_0 and q4_0 weights; and ggml's
# MUL_MAT at the same shapes (bench/ggml-peers.sh --only=mm
# --batches=$GGML_BATCHES, default 1; 4,8 for the small-batch mat-muls; ggml
# built here for sm_90 from a copy carried in GGML_DIR). Usage, from the
# repository root on the GPU server:
#
#   GGML_DIR=.ggml GGML_COMMIT=<sha> scripts/device/block-matvec-h200.sh [REPEAT]
#
# with .device/bin (cachet-bench, cachet-runner), .device/lib, and the
# suites (bench/make-suite.py --preset=h200), timed in turns, two rounds:
#   NVVM ($SUITES, default "mvA mvR1 mvR4 mvS16 mvL8 mvL2"): --only="matvec
#       q" with the defaults (mvA) and --compile-options="matvec-options=
#       {block-rows-per-subgroup=1}" (mvR1), {block-rows-per-subgroup=4},
#       {block-slice=16}, {loads-per-lane=8}, {loads-per-lane=2};
#   .device/tg --only="layers" (the 2-layer chains: bf16, q8_0, q4_0) and
#       .device/tgP the same with --prefetch=pdl;
#   .device/tgV --target=spirv --only="q8_0 2 layers" (Vulkan, once).
# Every NVVM case (of the suites in $CHECKED, default all) is checked
# against the CPU reference and off / on, and so
# is every artifact of the bench/make-block-matvec-fuzz.py folders named in
# $CHECKS (e.g. "bfz vbug": .device/bfz/art/*/, CUDA or Vulkan as built).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
SUITES=${SUITES:-mvA mvR1 mvR4 mvS16 mvL8 mvL2}
s() { tar czf $OUT/block-matvec.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
start_ggml_build $W/ggml-build.log
for round in 1 2; do
  for v in $SUITES tg tgP; do
    [ -d $D/$v ] || continue
    timeout 60 $B/cachet-bench $D/$v --repeat=$R --json=$W/$v-$round.json > $W/$v-$round.log 2>&1
  done
  s
done
for v in ${CHECKED:-$SUITES tg tgP}; do [ -d $D/$v ] && check $D/$v/*/; done > $W/check.log 2>&1; s
if [ -d $D/tgV ]; then
  timeout 90 $B/cachet-bench $D/tgV --repeat=$R --json=$W/tgV.json > $W/tgV.log 2>&1
  check $D/tgV/*/ > $W/tgV-check.log 2>&1; s
fi
for v in ${CHECKS:-}; do
  [ -d $D/$v/art ] && check $D/$v/art/*/ > $W/$v-check.log 2>&1; s
done
if [ -n "${GGML_DIR:-}" ]; then
  wait $build
  timeout 150 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=mm --batches=${GGML_BATCHES:-1} --json=$W/ggml-mm.json > $W/ggml-mm.log 2>&1; s
fi
for f in $W/*-1.log $W/*-2.log $W/tgV.log; do echo "== $f"; grep -a "^| " $f | grep -v -- "---\|case"; done
echo "checks PASS: $(cat $W/*check.log | grep -ac PASS)"; grep -a "FAIL\|DIFFERENT\|rror:" $W/*check.log | head
for v in ${CHECKS:-}; do
  [ -f $W/$v-check.log ] || continue
  echo "== $v: $(grep -ac PASS $W/$v-check.log) PASS, $(grep -ac FAIL $W/$v-check.log) FAIL"
  grep -a "^==\|FAIL\|rror" $W/$v-check.log | grep -B1 "FAIL\|rror" | head -40
done
grep -a "^| MUL_MAT" $W/ggml-mm.log 2>/dev/null; tail -2 $W/ggml-build.log
