#!/usr/bin/env bash
# One call on the H200: a whole Llama-3-8B-shaped decoder with
# cachet-generate-runner (issue 24). Prepared here:
#
#   build/bin/cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16 \
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=CTX --ubatch=512 \
#     --compile-only --cache-dir=.device/gen
#   (its two printed folders -> .device/gen/prefill, .device/gen/decode)
#   cp build/bin/{cachet-gguf,cachet-generate-runner} .device/bin
#   cp build/lib/libcachet_runtime.so .device/lib
#
#   CTX=4224 scripts/device/generate-h200.sh [N_PREDICT]
#
# There: writes the random 16 GB GGUF with cachet-gguf (same seed and type),
# runs a few steps with --compare-rewrites (the CPU reference of an 8B model
# would take the whole call: check it on `small` here), then a longer run whose
# "time:" line is the rough rate (the runner's timing is wall clock over the
# whole generation). Logs: $OUT/generate.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gen; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
N=${1:-64}
CTX=${CTX:-4224}
s() { tar czf $OUT/generate.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
M=/tmp/llama3-8b-bf16.gguf
{ time $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M; } \
  > $W/gguf.log 2>&1
s
common="--model=$M --prefill=$D/gen/prefill --decode=$D/gen/decode --kv=q8_0-packed --dtype=bf16 --ctx=$CTX --ubatch=512"
timeout 500 $B/cachet-generate-runner $common --prompt-length=8 --n-predict=4 \
  --compare-rewrites > $W/check.log 2>&1
echo "rc $?" >> $W/check.log
s
timeout 300 $B/cachet-generate-runner $common --prompt-length=512 \
  --n-predict=$N > $W/run.log 2>&1
echo "rc $?" >> $W/run.log
s
