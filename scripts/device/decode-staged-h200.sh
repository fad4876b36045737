#!/usr/bin/env bash
# One lease for the staged decode kernel of issue 20 (config stages = 2:
# each step's K/V rows copied into double-buffered workgroup memory by
# cp.async): correctness first (random decode shapes from
# bench/make-attention-fuzz.py --decode in .device/dfz, and every case of
# the suite, each checked against the CPU reference and rewrites off
# against on), then the A/B against the unstaged kernel (decode-stages=1,
# .device/sw-regs), the two suites alternated twice, the split-32 variant
# (.device/sw-split32), PyTorch SDPA and llama.cpp's FLASH_ATTN_EXT (ggml
# built here for sm_90 from GGML_DIR) at the same shapes. Logs and JSON go
# to $OUT/staged.tgz after each stage. Usage, from the repository root on
# the GPU server:
#
#   GGML_DIR=.ggml GGML_COMMIT=<sha> scripts/device/decode-staged-h200.sh [REPEAT]
#
# with .device/bin, .device/lib and the suites from bench/make-suite.py
# --preset=h200 --target=nvvm --only=decode (dec-nvvm: defaults; sw-regs:
# --compile-options="attention-options={decode-stages=1}"; sw-split32:
# "attention-options={decode-split=32}").
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/w; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
s() { tar czf $OUT/staged.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
start_ggml_build $W/ggml-build.log
check $D/dfz/art/*/ > $W/fuzz-check.log 2>&1; s
check $D/dec-nvvm/*/ > $W/nvvm-check.log 2>&1; s
for i in 1 2; do
  for x in dec-nvvm sw-regs; do
    timeout 120 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
[ -d $D/sw-split32 ] && timeout 120 $B/cachet-bench $D/sw-split32 --repeat=$R --json=$W/sw-split32.json > $W/sw-split32.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
if [ -n "${GGML_DIR:-}" ]; then
  wait $build
  timeout 150 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=1,4 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
fi
echo "fuzz: $(grep -ac PASS $W/fuzz-check.log) PASS, $(grep -ac byte-identical $W/fuzz-check.log) byte-identical of $(grep -c '^==' $W/fuzz-check.log)"
grep -a "FAIL\|DIFFERENT\|error" $W/fuzz-check.log | head
echo "suite: $(grep -ac PASS $W/nvvm-check.log) PASS, $(grep -ac byte-identical $W/nvvm-check.log) byte-identical of $(grep -c '^==' $W/nvvm-check.log)"
grep -a "FAIL\|DIFFERENT\|error" $W/nvvm-check.log | head
for x in dec-nvvm-1 sw-regs-1 dec-nvvm-2 sw-regs-2 sw-split32; do echo "== $x"; grep -a "^| " $W/$x.log | grep -v -- "---\|case"; done
grep -a "decode\|copy" $W/torch.log; tail -30 $W/ggml-fa.log 2>/dev/null; tail -3 $W/ggml-build.log
