#!/usr/bin/env bash
# One call: in-kernel-decode prefill with q8_0 / q4_0 blocks decoded from
# 32-bit words of workgroup memory (decodePairs, natural order) instead of
# byte by byte.
#
#   GGML_DIR=.ggml scripts/device/prefill-words-h200.sh [REPEAT]
#       builds ggml's CUDA backend in the background where GGML_DIR is set
#       (bench/ggml-peers.sh); checks the random packed-KV attentions of
#       .device/pfz* (bench/make-attention-fuzz.py --seed 73 / 74 / 75)
#       against the CPU reference (rewrites off and on byte-identical);
#       times .device/pa (bench/make-suite.py --only=attention: pp512 at
#       d4096 / d32768 / d65536), .device/pa128 (the same with
#       attention-options={query-tile=128 resident-workgroups=2}),
#       .device/pa64 (attention-options={query-tile=64}) and .device/cB
#       (below) in turns, TURNS times (2); then llama.cpp's FLASH_ATTN_EXT at pp512.
#       Suites that are not there are left out. Run 73 had no pa64 and no
#       ggml; runs 74 and 75 timed the pa128 that run 73's binary built
#       (blocks decoded eight values at a time); run 75 had .device/pfz3
#       (--seed 75) too and no pa64, cB or ggml.
#
# .device/bin and .device/lib from build/. Logs: $OUT/words.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/ww; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/words.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
start_ggml_build $W/ggml-build.log
check $D/pfz*/art/*/ > $W/fuzz-check.log 2>&1; s
for i in $(seq 1 ${TURNS:-2}); do
  for x in pa pa128 pa64 cB; do
    [ -d $D/$x ] || continue
    timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
# Where the chunked dequant-once's time goes: the kernels of one call of
# .device/cB (q8_0 pp512 @ d32768, max-scratch-bytes=16777216: 9 chunks)
# and of the whole scratch (.device/pa), rewrites on, under Nsight Systems
# when the machine has it.
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  for x in cB pa; do
    [ -d $D/$x ] || continue
    timeout 120 $NSYS profile -o $W/nsys-$x --force-overwrite=true $B/cachet-runner $D/$x/attention-q8_0-pp512-d32768 --repeat=3 > $W/nsys-$x.log 2>&1
    timeout 60 $NSYS stats --report cuda_gpu_trace --format csv $W/nsys-$x.nsys-rep > $W/nsys-$x-trace.csv 2>&1
    rm -f $W/nsys-$x.nsys-rep $W/nsys-$x.sqlite; s
  done
else
  echo "no nsys" > $W/nsys.log; s
fi
if [ -n "${GGML_DIR:-}" ]; then
  wait $build
  timeout 120 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=512 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
fi
