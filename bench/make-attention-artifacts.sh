#!/usr/bin/env bash
# Emits the AOT artifacts of the flash-attention kernels for a GPU server
# (compile here, run there with cachet-runner; see scripts/device/
# run-artifacts.sh). Prefill attention as llama-bench's "pp512 @ dN": 512 new
# tokens after N cached positions (causal offset N, N + 512 KV positions),
# Hq 32, Hkv 8, D 128, f16 queries and output, with K/V as
#
#   f16hm  f16, head-major [Hkv][pos][D] (what dequant-once's scratch gives)
#   f16    f16, token-major [pos][Hkv][D] (a llama.cpp cache)
#   q8_0   q8_0 blocks, token-major: rewrites on dequantize K/V once into the
#          head-major f16 scratch (where the profile's cost function says it
#          pays), rewrites off decode the blocks inside the attention kernel
#          (the in-kernel-dequantization baseline)
#   q4_0   the same with q4_0 blocks
#
# for target nvvm (sm_90) and spirv, both with the h200 profile (and, asked
# for with TARGETS, spirv-mma: SPIR-V with the mma kernel's KHR cooperative
# matrices, which needs a Vulkan device with VK_KHR_cooperative_matrix), at
# depth 448
# (pp64, small enough for the CPU reference: --check) and at depths 4096 and
# 32768 (pp512, for timing with --repeat; the CPU reference is far too slow
# there). Inputs are generated on the device (--inputs=random:SEED), so each
# artifact holds only code.
#
# Also the integration tests' odd shapes (nvvm-odd-*, CUDA; spirv-mma-odd-*
# with TARGETS spirv-mma), for --check.
#
# Usage (from the repository root): bench/make-attention-artifacts.sh OUT
#   OUT gets art/<name>/ per artifact, the MLIR inputs under mlir/, and
#   bin/cachet-runner and lib/libcachet_runtime.so from build/, so that
#   scripts/device/run-artifacts.sh OUT [runner options] runs them all.
set -eu
out=${1:?usage: make-attention-artifacts.sh OUT}
run=build/bin/cachet-run
# libdevice (expf) comes from the CUDA toolkit that gpu-module-to-binary finds.
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out/art" "$out/mlir" "$out/bin" "$out/lib"
cp build/bin/cachet-runner "$out/bin/"
cp build/lib/libcachet_runtime.so "$out/lib/"

# emit NAME TARGET QUERIES DEPTH KV
emit() {
  local name=$1 target=$2 queries=$3 depth=$4 kv=$5 kernel=()
  if [ "$target" = spirv-mma ]; then
    target=spirv
    kernel=(--attention-kernel=mma)
  fi
  local positions=$((depth + queries)) file="$out/mlir/$name.mlir"
  local q="tensor<32x${queries}x128xf16>"
  local kt vt body
  case $kv in
  f16hm)
    kt="tensor<8x${positions}x128xf16>"
    body="  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 causal $depth
      : $q, $kt, $kt -> $q"
    ;;
  f16)
    kt="tensor<${positions}x8x128xf16>"
    body="  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal $depth
      : $q, $kt, $kt -> $q"
    ;;
  q8_0 | q4_0)
    kt="tensor<${positions}x8x4x!cachet.$kv>"
    local ft="tensor<${positions}x8x128xf16>"
    body="  %kf = cachet.dequantize %k : $kt -> $ft
  %vf = cachet.dequantize %v : $kt -> $ft
  %o = cachet.attention %q, %kf, %vf layout <token_major> scale 0.0883883461 causal $depth
      : $q, $ft, $ft -> $q"
    ;;
  esac
  vt=$kt
  cat >"$file" <<MLIR
func.func @attention(%q: $q, %k: $kt, %v: $vt) -> $q {
$body
  return %o : $q
}
MLIR
  local chip=()
  [ "$target" = nvvm ] && chip=(--chip=${CHIP:-sm_90})
  echo "== $name"
  "$run" "$file" --entry=attention --target="$target" "${chip[@]}" "${kernel[@]}" ${EXTRA:+"$EXTRA"} \
    --profile=h200 --emit="$out/art/$name" --no-run 2>"$out/art/$name.remarks"
  grep -h "cachet-dequant-once-kv: \|cachet-lower-attention: " \
    "$out/art/$name.remarks" | sed 's/^[^ ]* remark: /   /' | sort -u
}

# The integration tests' inputs (GQA, causal, additive mask, lengths that
# are not multiples of the tiles) for the CUDA kernels, and with TARGETS
# spirv-mma for the SPIR-V mma kernel (test/Integration/
# attention-mma-vulkan.test): emit_test NAME SED FILE CACHET-RUN-ARGS...
emit_test() {
  local name=$1 expr=$2 input=$3
  shift 3
  local file="$out/mlir/$name.mlir"
  sed "$expr" "test/Integration/Inputs/$input" >"$file"
  echo "== $name"
  "$run" "$file" --entry=attention --profile=h200 "$@" ${EXTRA:+"$EXTRA"} \
    --emit="$out/art/$name" --no-run 2>"$out/art/$name.remarks"
  grep -h "cachet-lower-attention: " "$out/art/$name.remarks" |
    sed 's/^[^ ]* remark: /   /' | sort -u
}
nvvm=(--target=nvvm --chip=${CHIP:-sm_90})
emit_test nvvm-odd-q8_0 "s/FMT/q8_0/; s/OPTS/causal 40/" attention-flash.mlir "${nvvm[@]}"
emit_test nvvm-odd-q4_0 "s/FMT/q4_0/; s/OPTS//" attention-flash.mlir "${nvvm[@]}"
emit_test nvvm-odd-f16-mask "" attention-f16.mlir "${nvvm[@]}"
case " ${TARGETS:-} " in
*" spirv-mma "*)
  mma=(--target=spirv --attention-kernel=mma)
  emit_test spirv-mma-odd-q8_0 "s/FMT/q8_0/; s/OPTS/causal 40/" attention-flash.mlir "${mma[@]}"
  emit_test spirv-mma-odd-f16-mask "" attention-f16.mlir "${mma[@]}"
  ;;
esac

# TARGETS (default "nvvm spirv"; also "spirv-mma") and DEPTHS (default
# "448 4096 32768"; 448 is pp64) choose what is emitted; EXTRA adds one
# cachet-run argument (e.g. "--compile-options=attention-options={row-blocks=2}").
for target in ${TARGETS:-nvvm spirv}; do
  for kv in f16hm f16 q8_0 q4_0; do
    for depth in ${DEPTHS:-448 4096 32768}; do
      queries=512
      [ "$depth" = 448 ] && queries=64
      emit "$target-$kv-pp$queries-d$depth" "$target" $queries "$depth" "$kv"
    done
  done
done
du -sh "$out"
