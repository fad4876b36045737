#!/usr/bin/env bash
# One lease for the in-kernel-decode prefill of issue 20 (part 2): random
# packed-KV attentions checked against the CPU reference and rewrites off
# against on byte for byte (bench/make-attention-fuzz.py), cachet-bench's
# prefill attention cases (rewrites off: the blocks decoded in the kernel;
# on: dequant-once), PyTorch SDPA and llama.cpp's FLASH_ATTN_EXT (ggml built
# here for sm_90 from a copy carried in GGML_DIR) at the same shapes. Logs
# and JSON go to $OUT/prefill.tgz after each stage. Usage, from the
# repository root on the GPU server:
#
#   GGML_DIR=.ggml GGML_COMMIT=<sha> scripts/device/prefill-packed-h200.sh [REPEAT]
#
# with .device/bin (cachet-bench, cachet-runner), .device/lib
# (libcachet_runtime.so), .device/fuzz (bench/make-attention-fuzz.py -o
# .device/fuzz) and .device/att (bench/make-suite.py --preset=h200
# --only=attention -o .device/att).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/prefill.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
start_ggml_build $W/ggml-build.log
for a in $D/fuzz/art/*/; do echo "== $a"; timeout 60 $B/cachet-runner $a --check --compare-rewrites 2>&1 | grep -a "check\|rewrites off\|error"; done > $W/fuzz-check.log 2>&1; s
timeout 240 $B/cachet-bench $D/att --repeat=$R --json=$W/att.json > $W/att.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
if [ -n "${GGML_DIR:-}" ]; then
  wait $build
  timeout 200 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=512 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
fi
echo "fuzz: $(grep -ac PASS $W/fuzz-check.log) PASS, $(grep -ac byte-identical $W/fuzz-check.log) byte-identical"
grep -a "FAIL\|DIFFERENT\|error" $W/fuzz-check.log | head
grep -a "^| " $W/att.log | grep -v -- "---\|case"
grep -ai "sdpa\|copy" $W/torch.log | head; tail -30 $W/ggml-fa.log 2>/dev/null; tail -3 $W/ggml-build.log
