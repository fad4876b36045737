#!/usr/bin/env bash
# Builds, here, the payload that scripts/device/layers-h200.sh runs on a GPU
# server: whole generated layers and models as AOT artifacts for CUDA
# (nvvm-*, sm_90) and Vulkan (spirv-*), both with the h200 profile, plus
# cachet-runner, cachet-runtime-test and libcachet_runtime.
#
# scripts/device/build-layers-h200.sh [--build=DIR] [--jobs=N] OUT
#
# Cases: every KV format (f16, bf16, split q8_0 and each packed ggml format),
# f16 and bf16 activations (bf16 with quantized KV runs the bf16 mma-sync
# kernel), GQA 4 and 8, prefill and decode, constant weights (resident on the
# device), a model, layers of hidden size 1024 (RMSNorm rows that
# cachet-lower-reductions takes), the reductions of
# test/Integration/Inputs/reductions.mlir, and the fuzz seeds 1-8 of
# scripts/fuzz-layers.sh.
set -eu
build=build
jobs=2
while [ $# -gt 1 ]; do
  case "$1" in
  --build=*) build="${1#--build=}" ;;
  --jobs=*) jobs="${1#--jobs=}" ;;
  *) echo "build-layers-h200.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
out=${1:?usage: build-layers-h200.sh [--build=DIR] [--jobs=N] OUT}
mkdir -p "$out/art" "$out/src" "$out/bin" "$out/lib"
cp "$build/bin/cachet-runner" "$build/bin/cachet-runtime-test" "$out/bin/"
cp -L "$build/lib/libcachet_runtime.so" "$out/lib/"

gen="$build/bin/cachet-gen"
G="--hidden=512 --heads=8 --kv-heads=2 --head-dim=64 --ffn=1024"
P="--tokens=16 --past=48"
while read -r name entry opts; do
  [ -n "$name" ] && "$gen" $opts -o "$out/src/$name.mlir"
  echo "$name $entry"
done > "$out/src/cases" <<CASES
f16_f16 layer $G $P --kv=f16
bf16_bf16 layer $G $P --dtype=bf16 --kv=bf16
f16_q8 layer $G $P --kv=q8_0
bf16_q8 layer $G $P --dtype=bf16 --kv=q8_0
bf16_q4_0 layer $G $P --dtype=bf16 --kv=q4_0
f16_q4_1 layer $G $P --kv=q4_1
f16_q5_0 layer $G $P --kv=q5_0
f16_q5_1 layer $G $P --kv=q5_1 --matmul=generic --softmax=decomposed
f16_iq4_nl layer $G $P --kv=iq4_nl
f16_q8p layer $G $P --kv=q8_0-packed
gqa8_q8 layer --hidden=512 --heads=8 --kv-heads=1 --head-dim=64 --ffn=1024 $P --kv=q8_0
dec_q8 layer $G --tokens=1 --past=63 --kv=q8_0 --matmul=matvec
dec_bf16_q4_0 layer $G --tokens=1 --past=63 --dtype=bf16 --kv=q4_0
const_q8 layer --hidden=256 --heads=4 --kv-heads=2 --head-dim=64 --ffn=512 $P --kv=q8_0 --weights=constants
red_dec layer --hidden=1024 --heads=8 --kv-heads=2 --head-dim=128 --ffn=2816 --tokens=1 --past=511 --kv=q8_0 --matmul=matvec
red_pre layer --hidden=1024 --heads=8 --kv-heads=2 --head-dim=128 --ffn=2816 --tokens=16 --past=240 --kv=q4_0 --dtype=bf16
model_bf16_q8 model --kind=model --hidden=256 --heads=4 --kv-heads=1 --head-dim=64 --ffn=512 --vocab=512 --layers=2 --tokens=8 --past=0 --dtype=bf16 --kv=q8_0
CASES
# The fuzz seeds' layers, as scripts/fuzz-layers.sh draws them.
keep=$(mktemp -d)
scripts/fuzz-layers.sh --build="$build" --seeds=1,2,3,4,5,6,7,8 --keep="$keep" \
  -- --no-run >/dev/null || true
for f in "$keep"/seed*.mlir; do
  name=fuzz_$(basename "$f" .mlir)
  cp "$f" "$out/src/$name.mlir"
  echo "$name layer" >> "$out/src/cases"
done
rm -rf "$keep"
cp test/Integration/Inputs/reductions.mlir "$out/src/red_ops.mlir"
echo "red_ops reductions" >> "$out/src/cases"

compile() { # compile NAME ENTRY TARGET
  local extra=()
  [ "$3" = nvvm ] && extra=(--chip=sm_90 --compile-options=features=+ptx80)
  rm -rf "$out/art/$3-$1"
  "$build/bin/cachet-run" "$out/src/$1.mlir" --entry="$2" --target="$3" \
    --profile=h200 "${extra[@]}" --emit="$out/art/$3-$1" --no-run \
    >"$out/src/$3-$1.log" 2>&1 || { echo "FAILED $3-$1"; tail -3 "$out/src/$3-$1.log"; }
}
export -f compile
export build out
while read -r name entry; do
  for target in nvvm spirv; do echo "$name $entry $target"; done
done < "$out/src/cases" | xargs -P "$jobs" -n 3 bash -c 'compile "$@"' _
du -sh "$out"
