#!/usr/bin/env bash
# Times llama.cpp's Vulkan kernels (ggml's FLASH_ATTN_EXT and MUL_MAT through
# bench/ggml-peers.sh --backend=vulkan) on the GPU server, after
# bench/ggml-vulkan/build.sh built glslc and ggml's Vulkan backend there
# (same lease: its build lives in $WORK, /tmp). Shapes as cachet-bench's:
# FLASH_ATTN_EXT at pp512 and tg1 @ d32768 (f16, q8_0, q4_0), MUL_MAT at
# 4096x4096, 14336x4096, 4096x14336 with one column (every format). Usage,
# from the repository root: scripts/device/ggml-vulkan-peers-h200.sh, output
# in $OUT/ggml-vk-*.{log,json}.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
dir=.device
. "$(dirname "$0")/env.sh"
WORK=${WORK:-/tmp/peers-vk}
commit=$(awk '$1 == "ggml" {print $3}' .peers/COMMITS)
export GGML_PEERS_CMAKE_ARGS="$(cat $WORK/cmake-args)" GGML_COMMIT=$commit JOBS=16
peers="bash bench/ggml-peers.sh $WORK/ggml $WORK/ggml-vk-build --backend=vulkan"
timeout ${FA_S:-240} $peers --only=fa --depths=32768 --batches=1,512 --reps=10 \
  --json=$OUT/ggml-vk-fa.json > $OUT/ggml-vk-fa.log 2>&1
echo "fa exit $?" >> $OUT/ggml-vk-fa.log
timeout ${MM_S:-200} $peers --only=mm --batches=1 --reps=20 \
  --json=$OUT/ggml-vk-mm.json > $OUT/ggml-vk-mm.log 2>&1
echo "mm exit $?" >> $OUT/ggml-vk-mm.log
grep -a "^|\|exit\|Vulkan\|ggml_vulkan" $OUT/ggml-vk-fa.log $OUT/ggml-vk-mm.log | grep -v -- "---"
