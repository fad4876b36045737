#!/usr/bin/env bash
# One call: the dequant-once bounded by the causal position (only the
# positions the attention reads). Prepared here (carry .device and .gl):
#   .device/nvla, .device/nvlb  cachet-run --emit (--target=nvvm
#     --chip=sm_90a --profile=h200) of `cachet-gen --kind=layer
#     --hidden=512 --heads=4 --kv-heads=2 --head-dim=128 --ffn=1024
#     --tokens=512 --dtype=bf16 --position=dynamic` with --past=700
#     --max-seq=4096 --kv=q8_0-packed (a) and --past=3000 --max-seq=4090
#     --kv=q4_0 (b: the bound clamped to a cache that is no whole number of
#     16-position groups), with the inputs of --write-inputs and their
#     `args` file;
#   .device/gen-new, .device/gen-old as for model-ab-h200.sh.
#
#   scripts/device/bounded-dequant-h200.sh
#
# There: both layers --check --compare-rewrites with their inputs, then
# GENS="gen-new gen-old" model-ab-h200.sh (pp512 @ d4096 and d32768).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
for a in nvla nvlb; do
  echo "== $a"
  timeout 60 $B/cachet-runner $D/$a $(cat $D/$a/args) --check --compare-rewrites 2>&1 |
    grep -a "check\|rewrites off\|error"
done > $OUT/layers.log 2>&1
cat $OUT/layers.log
GENS=${GENS:-"gen-new gen-old"} OUT=$OUT "$(dirname "$0")/model-ab-h200.sh"
