#!/usr/bin/env bash
# One lease for the decode attention of issue 20: cachet-bench's decode
# cases on CUDA (NVVM) and Vulkan (SPIR-V on the NVIDIA driver), each case's
# GPU result checked against the CPU reference, PyTorch SDPA's backends and
# llama.cpp's FLASH_ATTN_EXT (ggml built here for sm_90 from a copy carried
# in GGML_DIR) at the same shapes. Logs and JSON go to $OUT/decode.tgz after
# each stage. Usage, from the repository root on the GPU server:
#
#   GGML_DIR=.ggml GGML_COMMIT=<sha> scripts/device/decode-h200.sh [REPEAT]
#
# with .device/bin (cachet-bench, cachet-runner), .device/lib
# (libcachet_runtime.so), .device/dec-nvvm and .device/dec-spirv
# (bench/make-suite.py --preset=h200 --only=decode, --target=nvvm / spirv).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/decode.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
start_ggml_build $W/ggml-build.log
timeout 150 $B/cachet-bench $D/dec-nvvm --repeat=$R --json=$W/nvvm-decode.json > $W/nvvm-decode.log 2>&1; s
for c in $D/dec-nvvm/*/; do echo "== $c"; timeout 30 $B/cachet-runner $c --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"; done > $W/nvvm-check.log 2>&1; s
timeout 150 $B/cachet-bench $D/dec-spirv --repeat=$R --json=$W/spirv-decode.json > $W/spirv-decode.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
if [ -n "${GGML_DIR:-}" ]; then
  wait $build
  timeout 200 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=1,4 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
fi
grep -a "^| " $W/nvvm-decode.log $W/spirv-decode.log | grep -v -- "---\|case"
grep -ac PASS $W/nvvm-check.log; grep -a "FAIL\|DIFFERENT\|error" $W/nvvm-check.log | head
grep -a "decode\|copy" $W/torch.log; tail -40 $W/ggml-fa.log 2>/dev/null; tail -5 $W/ggml-build.log
