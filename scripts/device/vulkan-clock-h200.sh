#!/usr/bin/env bash
# One call: where NVIDIA's Vulkan driver takes the clocks during cachet's
# Vulkan runs (issue 22, part 2). nvidia-smi samples P-state, SM and memory
# clocks, load and the clock event reasons every 100 ms while:
#   idle (3 s); the Vulkan suites of the previous compiler (old: generic
#   mat-vec kernels); the Vulkan suites; the same CUDA suites; the Vulkan suites
#   again while another process holds a CUDA context (no work); the Vulkan
#   suites once more, alone.
# Each phase's samples go to $OUT/vclk/PHASE.csv, cachet-bench's output to
# PHASE-SUITE.log.
#
#   [SHORT=1 | VK_ONLY=1] scripts/device/vulkan-clock-h200.sh [REPEAT]
# (SHORT: without the last Vulkan round; VK_ONLY: the idle samples and the
# new Vulkan suites only.)
#
# Suites (.device/vclk): bench/make-suite.py --preset=h200 --target=spirv|nvvm
# --only="matvec bf16 14336x4096" | "matvec q8_0 14336x4096" | "tg bf16"
# (spirv-*: also the other bf16 mat-vec shapes; old-*: built at fb4cde6).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=$OUT/vclk; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-20}
Q=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,power.draw,clocks_event_reasons.active
nvidia-smi -L > $W/device.log 2>&1
nvidia-smi -q -d PERFORMANCE,CLOCK >> $W/device.log 2>&1
vulkaninfo --summary > $W/vulkan.log 2>&1
smi() { nvidia-smi --query-gpu=$Q --format=csv,noheader -lms 100 > $W/$1.csv 2>&1 & smipid=$!; }
stop() { kill $smipid 2>/dev/null; wait $smipid 2>/dev/null; }
suites() { # PHASE TARGET
  for s in $D/vclk/$2-*; do
    echo "== $(date +%T.%N) $s" >> $W/$1.marks
    timeout 100 $B/cachet-bench $s --repeat=$R > $W/$1-$(basename $s).log 2>&1
  done
}
smi idle; sleep 3; stop
if [ -n "${VK_ONLY:-}" ]; then
  # The Vulkan suites alone (the runtime's own CUDA context, if any).
  smi vk1; suites vk1 spirv; stop
  for f in $W/*-*.log; do echo "## $f"; grep -a "^| [a-z]\|error\|FAIL" $f | grep -v "^| case" | head -8; done
  for c in $W/*.csv; do echo "## $c $(wc -l < $c) samples"; awk -F', ' '{print $2, $3, $4, $5}' $c | sort | uniq -c | sort -rn | head -6; done
  exit 0
fi
smi vkold; suites vkold old; stop
smi vk1; suites vk1 spirv; stop
smi cuda; suites cuda nvvm; stop
cat > /tmp/hold.cu <<'CU'
#include <cuda_runtime.h>
#include <unistd.h>
#include <stdio.h>
int main(int argc, char **argv) {
  cudaFree(0);
  printf("context held\n"); fflush(stdout);
  sleep(argc > 1 ? atoi(argv[1]) : 60);
  return 0;
}
CU
nvcc -o /tmp/hold /tmp/hold.cu > $W/hold-build.log 2>&1
/tmp/hold 200 > $W/hold.log 2>&1 & hold=$!
sleep 2
smi vkhold; suites vkhold spirv; stop
kill $hold 2>/dev/null; wait $hold 2>/dev/null
sleep 2
if [ -z "${SHORT:-}" ]; then smi vk2; suites vk2 spirv; stop; fi
nvidia-smi -q -d PERFORMANCE,CLOCK > $W/device-after.log 2>&1
for f in $W/*-*.log; do echo "## $f"; grep -a "^| [a-z]\|error\|FAIL" $f | grep -v "^| case" | head -6; done
for c in $W/*.csv; do echo "## $c $(wc -l < $c) samples"; awk -F', ' '{print $2, $3, $4, $5}' $c | sort | uniq -c | sort -rn | head -8; done
