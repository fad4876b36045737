#!/usr/bin/env bash
# One lease, two calls: the decode kernel with K/V rows read by lanes
# together (decode-row-values, the default 8) against the position-per-
# thread kernel (.device/sw-regs, decode-row-values=1), its variants
# (.device/sw-*), PyTorch SDPA and llama.cpp's FLASH_ATTN_EXT.
#
#   GGML_DIR=.ggml scripts/device/decode-lanes-h200.sh 1 [REPEAT]
#       starts ggml's build in the background (left in /tmp/ggml-build),
#       checks the random decode shapes of .device/dfz and the cases of
#       .device/dec-nvvm against the CPU reference (rewrites off and on
#       byte-identical), times dec-nvvm and sw-regs alternated twice, then
#       every other .device/sw-* suite, then bench/torch_anchors.py;
#   GGML_DIR=.ggml scripts/device/decode-lanes-h200.sh 2
#       (a fresh machine) builds ggml in the background, checks the chunked
#       dequant-once cases of .device/fuzzc (bench/make-attention-fuzz.py
#       --chunk-positions=256) and times .device/cA against .device/cB
#       (bench/make-suite.py --only='attention q', cB with
#       dequant-once-options={max-scratch-bytes=33554432}), takes Nsight
#       Compute's view of both decode kernels at tg1 @ d32768 f16 and q8_0,
#       then times FLASH_ATTN_EXT at the decode shapes (bench/ggml-peers.sh
#       --only=fa --batches=1,4).
#
# Suites from bench/make-suite.py --preset=h200 --target=nvvm --only=decode
# (the variants --only="tg1 @ d32768" with --compile-options="attention-
# options={...}"), fuzz from bench/make-attention-fuzz.py --decode; with
# .device/bin and .device/lib from build/. Logs: $OUT/lanes-PHASE.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wl; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
P=${1:-1}; R=${2:-20}
s() { tar czf $OUT/lanes-$P.tgz -C $W .; }
if [ "$P" = 1 ]; then
  nvidia-smi -L > $W/device.log 2>&1
  # Detached: the build outlives this call for the second one.
  if [ -n "${GGML_DIR:-}" ]; then
    setsid bash -c "JOBS=12 timeout 540 bench/ggml-peers.sh '$GGML_DIR' /tmp/ggml-build --backend=cuda --help > /tmp/ggml-build.log 2>&1; echo build rc \$? >> /tmp/ggml-build.log" < /dev/null > /dev/null 2>&1 &
  fi
  check $D/dfz/art/*/ > $W/fuzz-check.log 2>&1; s
  check $D/dec-nvvm/*/ > $W/nvvm-check.log 2>&1; s
  for i in 1 2; do
    for x in dec-nvvm sw-regs; do
      timeout 100 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
    done
  done
  for x in $D/sw-*/; do
    n=$(basename $x); [ $n = sw-regs ] && continue
    timeout 40 $B/cachet-bench $x --repeat=$R --json=$W/$n.json > $W/$n.log 2>&1; s
  done
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
  echo "fuzz: $(grep -ac PASS $W/fuzz-check.log) PASS, $(grep -ac byte-identical $W/fuzz-check.log) byte-identical of $(grep -c '^==' $W/fuzz-check.log)"
  grep -a "FAIL\|DIFFERENT\|error" $W/fuzz-check.log | head
  echo "suite: $(grep -ac PASS $W/nvvm-check.log) PASS, $(grep -ac byte-identical $W/nvvm-check.log) byte-identical of $(grep -c '^==' $W/nvvm-check.log)"
  grep -a "FAIL\|DIFFERENT\|error" $W/nvvm-check.log | head
  for f in $W/dec-nvvm-1.log $W/sw-regs-1.log $W/dec-nvvm-2.log $W/sw-regs-2.log $W/sw-[a-qs-z]*.log; do
    echo "== $(basename $f)"; grep -a "^| " $f | grep -v -- "---\|case"
  done
  grep -a "decode\|copy" $W/torch.log
else
  # A fresh machine: ggml's build in the background while the chunked
  # dequant-once cases run (cachet-stream-loops on the chunk loop).
  if [ -n "${GGML_DIR:-}" ]; then
    (JOBS=14 timeout 420 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --help > $W/ggml-build.log 2>&1; echo "build rc $?" >> $W/ggml-build.log) &
    build=$!
  fi
  check $D/fuzzc/art/*/ > $W/chunked-check.log 2>&1; s
  for turn in 1 2; do
    for x in cA cB; do
      timeout 60 $B/cachet-bench $D/$x --repeat=5 --json=$W/$x-$turn.json > $W/$x-$turn.log 2>&1; s
    done
  done
  # V loads issued with K's (.device/sw-ve, decode-row-values=8) against
  # after the scores (dec-nvvm), in turns.
  for turn in 1 2; do
    for x in dec-nvvm sw-ve; do
      [ -d $D/$x ] && timeout 80 $B/cachet-bench $D/$x --repeat=20 --json=$W/$x-$turn.json > $W/$x-$turn.log 2>&1; s
    done
  done
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  if [ -n "$NCU" ]; then
    for x in dec-nvvm sw-regs; do
      for c in f16-tg1-d32768 q8_0-tg1-d32768; do
        timeout 60 $NCU --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats --kernel-name-base function -k regex:'^attention_kernel$' -c 1 $B/cachet-runner $D/$x/decode-$c > $W/ncu-$x-$c.log 2>&1; s
      done
    done
  fi
  if [ -n "${GGML_DIR:-}" ]; then
    wait $build
    timeout 150 bench/ggml-peers.sh "$GGML_DIR" /tmp/ggml-build --backend=cuda --only=fa --batches=1,4 --json=$W/ggml-fa.json > $W/ggml-fa.log 2>&1; s
  fi
  echo "chunked: $(grep -ac PASS $W/chunked-check.log) PASS, $(grep -ac byte-identical $W/chunked-check.log) byte-identical of $(grep -c '^==' $W/chunked-check.log)"
  grep -a "FAIL\|DIFFERENT\|error" $W/chunked-check.log | head
  for f in $W/c[AB]-*.log $W/sw-ve-*.log; do echo "== $(basename $f)"; grep -a "^| " $f | grep -v -- "---\|case"; done
  for f in $W/dec-nvvm-*.log; do echo "== $(basename $f)"; grep -a "^| " $f | grep "tg1 @ d32768"; done
  tail -2 $W/ggml-build.log; grep -a "^| " $W/ggml-fa.log | head -40
  for f in $W/ncu-*.log; do echo "== $f"; grep -a "Duration\|L1/TEX Cache Throughput\|DRAM Throughput\|Achieved Occupancy\|Registers Per\|No Eligible" $f | head -8; done
fi
