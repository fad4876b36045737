#!/usr/bin/env bash
# One call on the GPU server, NVIDIA's Vulkan driver:
# 1. the subgroup-size requirement (cachet-spirv-subgroup-size): the
#    default tg1 @ d32768 decode suite and the tiny bf16 model compiled for
#    the h200 profile checked against the CPU reference (the runtime asks
#    for 32-lane subgroups where the module records them);
# 2. the SPIR-V decode kernel's options, tg1 @ d32768 f16 / q8_0 / q4_0,
#    suites in turns (.device/sw/<variant>), beside the CUDA default
#    (.device/sw-cuda) in the same lease;
# 3. cachet-runner --repeat's exit 139 on this driver under a debugger.
#
# Prepared here (see the BENCHMARKS entry for the exact commands):
#   .device/sw/<v>: bench/make-suite.py --target=spirv --only='tg1 @ d32768'
#     [--compile-options='attention-options={...}'], f16/q8_0/q4_0 kept;
#   .device/sw-cuda: the same with --target=nvvm;
#   .device/tiny: cachet-generate --random=tiny --dtype=bf16
#     --kv=q8_0-packed --target=spirv --profile=h200 --ctx=64 --ubatch=8
#     --check --compile-only, and its GGUF;
#   build/bin -> .device/bin, build/lib/libcachet_runtime.so -> .device/lib.
#
#   scripts/device/vulkan-decode-sweep-h200.sh [ROUNDS] [REPEAT]
#
# Logs and JSON: $OUT/sweep.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/sweep; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
ROUNDS=${1:-3}; R=${2:-20}
s() { tar czf $OUT/sweep.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; } > $W/device.log 2>&1
vulkaninfo 2>/dev/null | grep -iE "deviceName|subgroupSize|SubgroupSize|requiredSubgroupSizeStages|computeFullSubgroups|maxComputeWorkgroupSubgroups" > $W/vulkan.log 2>&1

# 1. Checks.
check $D/sw/def/*/ > $W/check.log 2>&1
pre=$(ls -d $D/tiny/prefill-*); dec=$(ls -d $D/tiny/decode-*)
timeout 120 $B/cachet-generate-runner --model=$D/tiny/tiny-f16-1.gguf \
  --prefill=$pre --decode=$dec --kv=q8_0-packed --dtype=bf16 --ctx=64 \
  --ubatch=8 --prompt-length=8 --n-predict=4 --check --compare-rewrites \
  > $W/tiny.log 2>&1
echo "rc $?" >> $W/tiny.log
s

# 2. The sweep, variants in turns.
for r in $(seq $ROUNDS); do
  for v in $(ls $D/sw) cuda; do
    if [ $v = cuda ]; then suite=$D/sw-cuda; else suite=$D/sw/$v; fi
    timeout 60 $B/cachet-bench $suite --repeat=$R --json=$W/$v-$r.json > $W/$v-$r.log 2>&1
  done
  s
done

# 3. The exit 139 of cachet-runner --repeat under a debugger.
art=$(ls -d $D/sw/def/decode-f16-*/ | head -1)
timeout 60 $B/cachet-runner $art --repeat=3 > $W/repeat.log 2>&1; echo "rc $?" >> $W/repeat.log
GDB=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
echo "debugger: ${GDB:-none}" > $W/gdb.log
if [ -n "$GDB" ]; then
  timeout 150 $GDB -q -batch -ex run -ex bt -ex "info sharedlibrary" \
    -ex "info threads" --args $B/cachet-runner $art --repeat=3 >> $W/gdb.log 2>&1
fi
s
