#!/usr/bin/env bash
# One call on the GPU server (CUDA): the host code of the GPU artifacts at
# -O0 (FastISel, what cachet builds since the change named in
# docs/BENCHMARKS.md) against -O3 (before), the same kernels: the
# Llama-3-8B-shaped bf16 decoder's tg rows at d512 and the launch suite,
# in turns.
#
# Prepared here with the -O0 build and a build whose kGpuHostOptLevel
# (lib/Target/Artifact.cpp) was set back to Aggressive:
#   cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=4352 --ubatch=512
#     --compile-only --cache-dir=.device/gen0 (-O3: .device/gen3);
#   bench/make-suite.py -o .device/launch0 --target=nvvm --only=launch
#     (-O3: .device/launch3);
#   build/bin -> .device/bin, build/lib/libcachet_runtime.so -> .device/lib.
#
#   scripts/device/hostopt-h200.sh [ROUNDS]
#
# Logs: $OUT/hostopt.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/hostopt; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
ROUNDS=${1:-2}
s() { tar czf $OUT/hostopt.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; } > $W/device.log 2>&1
M=/tmp/llama3-8b-bf16.gguf
{ time $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M; } > $W/gguf.log 2>&1
s
for r in $(seq $ROUNDS); do
  for v in 0 3; do
    timeout 60 $B/cachet-bench $D/launch$v --repeat=30 --json=$W/launch$v-$r.json > $W/launch$v-$r.log 2>&1
    timeout 150 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 \
      --ubatch=512 --ctx=4352 --prefill=$(ls -d $D/gen$v/prefill-*) \
      --decode=$(ls -d $D/gen$v/decode-*) --bench --bench-on-only \
      --bench-depths=512 --bench-prompt=0 --bench-gen=32 --bench-reps=3 \
      > $W/gen$v-$r.log 2> $W/gen$v-$r.err
    echo "rc $?" >> $W/gen$v-$r.log
    s
  done
done
