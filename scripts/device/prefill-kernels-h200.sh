#!/usr/bin/env bash
# One call: Nsight Compute's full section set for a window of the kernels
# of a pp512 call of the 8B-shaped decoder (GEN's prefill artifact), to
# see why a small kernel (RMSNorm, RoPE, a transpose, the cache's
# quantize) runs below memory speed. Prepared here as for
# profile-decode-h200.sh (.device/bin, .device/lib, .device/$GEN; carry
# .device and .gl); writes the GGUF first where /tmp lacks it.
#
#   GEN=gen SKIP=40 COUNT=25 scripts/device/prefill-kernels-h200.sh
#
# SKIP kernels are skipped (the first call's first layers), COUNT are
# profiled (at least one whole layer). Logs: $OUT/prefill-kernels.tgz
# (ncu's details page as text).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
GEN=${GEN:-gen}; W=/tmp/prefill-kernels; mkdir -p $W; D=.device; B=$D/bin
dir=$D; . "$(dirname "$0")/env.sh"
s() { tar czf $OUT/prefill-kernels.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
M=/tmp/llama3-8b-bf16.gguf
[ -f $M ] || { time $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M; } > $W/gguf.log 2>&1
NCU=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
timeout $((${LIMIT_S:-590} - SECONDS)) ${NCU:-ncu} --set full \
  --launch-skip ${SKIP:-40} --launch-count ${COUNT:-25} \
  $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 \
  --ubatch=512 --prefill=$D/$GEN/prefill --decode=$D/$GEN/decode \
  --ctx=33280 --bench --bench-on-only --bench-depths=${DEPTH:-4096} \
  --bench-gen=0 --bench-reps=1 > $W/ncu.txt 2> $W/ncu.err
echo "rc $? after ${SECONDS}s" >> $W/ncu.err
s; tail -3 $W/ncu.err
