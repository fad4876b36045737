#!/usr/bin/env bash
# One call: the GEMM epilogues (silu(gate) * up on the sums of one
# gate/up kernel, the residual adds after O and down). Prepared here
# (carry .device and .gl):
#   .device/lay/{a,b,c,d,a90}  cachet-run --emit --no-run (--target=nvvm
#     --profile=h200) of `cachet-gen --kind=layer` layers:
#     a  --dtype=bf16 --hidden=512 --heads=8 --kv-heads=2 --head-dim=64
#        --ffn=1408 --tokens=200 --past=56 --kv=q8_0-packed
#     b  --dtype=f16 --hidden=256 --heads=4 --kv-heads=4 --head-dim=64
#        --ffn=704 --tokens=77 --past=0 --kv=f16 --matmul=generic
#     c  --dtype=bf16 --hidden=512 --heads=8 --kv-heads=2 --head-dim=64
#        --ffn=2816 --tokens=128 --past=64 --kv=q4_0 --weight-format=q8_0
#     d  --dtype=bf16 --hidden=256 --heads=4 --kv-heads=2 --head-dim=64
#        --ffn=768 --tokens=96 --past=32 --kv=q8_0 --matmul=transposed
#        --weights=constants
#     a90  a with --chip=sm_90 (the mma-sync GEMM: epilogues, no siblings);
#   .device/gen-fuse, .device/gen-new as for model-ab-h200.sh.
#
#   GENS="gen-fuse gen-new" scripts/device/gemm-epilogue-h200.sh
#
# There: each layer --check --compare-rewrites (random inputs), then
# model-ab-h200.sh with GENS (pp512 @ DEPTHS), then PROFILE=1 the profile
# of a pp512 call of PGEN (profile-decode-h200.sh STEP=prefill).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
if [ "${LAYERS:-1}" = 1 ]; then
  check $(ls -d $D/lay/*/ | sed 's,/$,,') > $OUT/layers.log 2>&1
  cat $OUT/layers.log
fi
GENS=${GENS:-"gen-fuse gen-new"} OUT=$OUT "$(dirname "$0")/model-ab-h200.sh"
if [ "${PROFILE:-0}" = 1 ]; then
  STEP=prefill DEPTH=${DEPTH:-4096} GEN=${PGEN:-gen-fuse} \
    OUT=$OUT "$(dirname "$0")/profile-decode-h200.sh" > $OUT/profile.log 2>&1
  tail -45 $OUT/profile.log
fi
