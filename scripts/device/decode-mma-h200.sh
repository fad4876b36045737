#!/usr/bin/env bash
# One call: the decode kernel on mma.sync (attention_decode_mma_sync, auto
# on NVVM) against the kernels before it, on the H200, beside PyTorch SDPA
# and llama.cpp's FLASH_ATTN_EXT, and the decode kernel on Vulkan.
#
#   GGML_DIR=.ggml scripts/device/decode-mma-h200.sh 1 [REPEAT]
#       builds ggml's CUDA backend in the background (bench/ggml-peers.sh),
#       checks the random decode shapes of .device/dfz and .device/dfz2 and
#       the cases of .device/dm against the CPU reference (rewrites off and
#       on byte-identical), times .device/dm (mma.sync) and .device/dn
#       (decode-mma-sync=-1: the kernels before it) alternated twice, then
#       .device/dm16 (tg4 with 16 rows per workgroup), PyTorch SDPA
#       (bench/torch_anchors.py), Nsight Compute's view of the mma.sync
#       kernel at tg1 @ d32768 f16 and q8_0, the SPIR-V decode suite
#       .device/dv on NVIDIA's Vulkan driver (checked, then timed), and
#       last FLASH_ATTN_EXT at the decode shapes (run 70's first call
#       ended at its 600 s limit after dm and dn's first turns);
#   GGML_DIR=.ggml scripts/device/decode-mma-h200.sh 2 [REPEAT]
#       the same in a shorter order: ggml's build in the background,
#       Nsight Compute on the mma.sync kernel (f16, bf16, q8_0 tg1 @
#       d32768), dm and dn then the variants .device/vu2
#       (decode-mma-unroll=2), vt256 (decode-threads=256), vs128
#       (decode-split=128) and v16 (decode-workgroup-rows=16) at d32768,
#       the fuzz of .device/dfz2, PyTorch SDPA, the Vulkan suite .device/dv
#       (d32768), FLASH_ATTN_EXT;
#   scripts/device/decode-mma-h200.sh 3 [REPEAT]
#       after the changes that run 71 led to: the fuzz of .device/dfz and
#       dfz2 and dm's d4096 cases checked, dm against dn in turns at
#       d32768, once at d4096 and d65536, Nsight Compute on f16 and q8_0.
#
# Suites from bench/make-suite.py --preset=h200 --only=decode (dm, dn:
# --target=nvvm, dn with --compile-options="attention-options=
# {decode-mma-sync=-1}"; dm16: --only=tg4 with decode-workgroup-rows=16;
# dv: --target=spirv --attention-kernel=decode), fuzz from
# bench/make-attention-fuzz.py --decode; .device/bin and .device/lib from
# build/. Logs: $OUT/mma-PHASE.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wm; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
P=${1:-1}; R=${2:-20}
s() { tar czf $OUT/mma-$P.tgz -C $W .; }
if [ "$P" = 1 ]; then
  nvidia-smi -L > $W/device.log 2>&1
  start_ggml_build $W/ggml-build.log
  check $D/dfz/art/*/ > $W/fuzz-check.log 2>&1; s
  check $D/dm/*/ > $W/dm-check.log 2>&1; s
  for i in 1 2; do
    for x in dm dn; do
      timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
    done
  done
  timeout 60 $B/cachet-bench $D/dm16 --repeat=$R --json=$W/dm16.json > $W/dm16.log 2>&1; s
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  if [ -n "$NCU" ]; then
    for c in f16-tg1-d32768 q8_0-tg1-d32768; do
      timeout 40 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/dm/decode-$c > $W/ncu-$c.log 2>&1; s
    done
  fi
  check $D/dfz2/art/*/ > $W/fuzz2-check.log 2>&1; s
  check $D/dv/*/ > $W/dv-check.log 2>&1; s
  timeout 60 $B/cachet-bench $D/dv --repeat=10 --json=$W/dv.json > $W/dv.log 2>&1; s
  if [ -n "${GGML_DIR:-}" ]; then
    wait $build
    timeout 100 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=1,4 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
  fi
elif [ "$P" = 3 ]; then
  # After the f16 operands went through nvvm.mma.sync as bf16's do, K/V
  # floats in runs of 8 and 16 rows per workgroup: checks, dm against dn
  # in turns, Nsight Compute on f16 and q8_0.
  nvidia-smi -L > $W/device.log 2>&1
  check $D/dfz/art/*/ $D/dfz2/art/*/ > $W/fuzz-check.log 2>&1; s
  check $D/dm/*d4096/ > $W/dm-check.log 2>&1; s
  for i in 1 2; do
    for x in dm dn; do
      timeout 60 $B/cachet-bench $D/$x --filter=d32768 --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
    done
  done
  for t in d4096 d65536; do
    for x in dm dn; do
      timeout 60 $B/cachet-bench $D/$x --filter=$t --repeat=$R --json=$W/$x-$t.json > $W/$x-$t.log 2>&1; s
    done
  done
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  for c in f16-tg1-d32768 q8_0-tg1-d32768; do
    [ -n "$NCU" ] && timeout 30 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/dm/decode-$c > $W/ncu-$c.log 2>&1; s
  done
else
  nvidia-smi -L > $W/device.log 2>&1
  start_ggml_build $W/ggml-build.log
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  for c in f16-tg1-d32768 bf16-tg1-d32768 q8_0-tg1-d32768; do
    [ -n "$NCU" ] && timeout 40 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/dm/decode-$c > $W/ncu-$c.log 2>&1; s
  done
  for x in dm dn vu2 vt256 vs128 v16; do
    timeout 60 $B/cachet-bench $D/$x --filter=d32768 --repeat=$R --json=$W/$x-1.json > $W/$x-1.log 2>&1; s
  done
  check $D/dfz2/art/*/ > $W/fuzz2-check.log 2>&1; s
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
  check $D/dv/*/ > $W/dv-check.log 2>&1; s
  timeout 60 $B/cachet-bench $D/dv --repeat=5 --json=$W/dv.json > $W/dv.log 2>&1; s
  if [ -n "${GGML_DIR:-}" ]; then
    wait $build
    timeout 100 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=1,4 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
  fi
fi
for f in fuzz fuzz2 dm dv; do
  echo "$f: $(grep -ac PASS $W/$f-check.log) PASS, $(grep -ac byte-identical $W/$f-check.log) byte-identical of $(grep -c '^==' $W/$f-check.log)"
  grep -a "FAIL\|DIFFERENT\|error" $W/$f-check.log | head -5
done
for f in $W/dm-*.log $W/dn-*.log $W/v*.log $W/dm16.log $W/dv.log; do
  [ -f $f ] || continue
  echo "== $(basename $f)"; grep -a "^| " $f | grep -v -- "---\|case"
done
grep -a "decode\|copy" $W/torch.log
tail -2 $W/ggml-build.log; grep -a "^| " $W/ggml-fa.log | head -40
for f in $W/ncu-*.log; do echo "== $f"; grep -a "Duration\|L1/TEX Cache Throughput\|DRAM Throughput\|Achieved Occupancy\|Registers Per\|No Eligible" $f | head -8; done
