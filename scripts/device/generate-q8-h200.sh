#!/usr/bin/env bash
# One call on the H200: the whole decoder with packed q8_0 weights (issue
# 24's >= 330 tok/s row), cachet-generate-runner on artifacts compiled here:
#
#   build/bin/cachet-generate --random=llama3-8b --type=q8_0 --dtype=bf16 \
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=33280 \
#     --ubatch=512 --compile-only            -> .device/gen-q8/{prefill,decode}
#   (gpu.so, gpu-norewrite.so, manifest.json), and the binaries and runtime
#   as for generate-h200.sh (.device/bin, .device/lib; carry .gl too).
#
#   scripts/device/generate-q8-h200.sh
#
# There: the 8.5 GB q8_0 GGUF written by cachet-gguf, then --bench at d4096
# and d32768 (tg128 and pp512, 3 repetitions, rewrites on and off
# interleaved, their tokens and logits compared). Logs: $OUT/generate-q8.tgz.
# Options (variables): OLD=DIR (tg128 and pp512 of an earlier build's
# artifacts, the A/B), KSUITE=DIR (a bench/make-suite.py folder timed and checked), NCU=1
# (a decode step under Nsight Compute), BENCH_S (the bench's time limit),
# BENCH=0 (no bench).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gen-q8; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/generate-q8.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1
# The small model (4 layers, packed q4_K weights) first, if its artifacts
# are there (.device/small, as generate-h200.sh builds them): CPU reference
# and rewrites off / on on the GPU.
if [ -d $D/small/decode ]; then
  $B/cachet-gguf random small --type=q4_K --seed=1 -o /tmp/small.gguf > $W/small.log 2>&1
  timeout 120 $B/cachet-generate-runner --model=/tmp/small.gguf --prefill=$D/small/prefill \
    --decode=$D/small/decode --kv=q8_0-packed --dtype=f16 --ctx=256 --ubatch=16 \
    --prompt-length=20 --n-predict=8 --check --compare-rewrites >> $W/small.log 2>&1
  echo "rc $?" >> $W/small.log
  s
fi
M=/tmp/llama3-8b-q8_0.gguf
# (Kept from an earlier call on the same warm machine.)
[ -s $M ] || { time $B/cachet-gguf random llama3-8b --type=q8_0 --seed=1 -o $M; } > $W/gguf.log 2>&1
s
if [ "${BENCH:-1}" = 1 ]; then
  timeout ${BENCH_S:-420} $B/cachet-generate-runner --model=$M --kv=q8_0-packed \
    --dtype=bf16 --ubatch=512 --prefill=$D/gen-q8/prefill --decode=$D/gen-q8/decode \
    --ctx=33280 --bench --bench-depths=4096,32768 --bench-reps=3 \
    > $W/bench-cuda.log 2> $W/bench-cuda.err
  echo "rc $? after ${SECONDS}s" >> $W/bench-cuda.log
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $W/device.log 2>&1
s
# OLD=DIR: artifacts built at an earlier commit (DIR/decode, DIR/prefill),
# tg128 and pp512, rewrites on, in the same lease: the A/B of a kernel
# change.
if [ -n "${OLD:-}" ]; then
  timeout ${OLD_S:-200} $B/cachet-generate-runner --model=$M --kv=q8_0-packed \
    --dtype=bf16 --ubatch=512 --prefill=$OLD/prefill --decode=$OLD/decode \
    --ctx=33280 --bench-on-only --bench-depths=4096,32768 \
    --bench-reps=3 > $W/bench-old.log 2> $W/bench-old.err
  echo "rc $? after ${SECONDS}s" >> $W/bench-old.log
  s
fi
# KSUITE="DIR..": cachet-bench suites (bench/make-suite.py) timed in
# turns, two rounds, and checked against the CPU reference, off / on.
if [ -n "${KSUITE:-}" ]; then
  for round in 1 2; do
    for k in $KSUITE; do
      echo "== $k round $round" >> $W/ksuite.log
      timeout 60 $B/cachet-bench $k --repeat=10 --json=$W/ksuite-$(basename $k)-$round.json >> $W/ksuite.log 2>&1
    done
  done
  for k in $KSUITE; do check $k/*/; done > $W/ksuite-check.log 2>&1
  s
fi
# NCU=1: Nsight Compute over a one-token prompt and two decode steps, as
# profile-decode-h200.sh does (bench/ncu-steps.py sums the last step).
if [ "${NCU:-0}" = 1 ] && [ $SECONDS -lt 520 ]; then
  NCUBIN=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  timeout $((590 - SECONDS)) ${NCUBIN:-ncu} --clock-control none \
    --metrics gpu__time_duration.sum --csv $B/cachet-generate-runner --model=$M \
    --kv=q8_0-packed --dtype=bf16 --ubatch=512 --prefill=$D/gen-q8/prefill \
    --decode=$D/gen-q8/decode --ctx=33280 --prompt-length=1 --n-predict=2 \
    > $W/ncu.csv 2> $W/ncu.err
  echo "rc $? after ${SECONDS}s" >> $W/ncu.err
  python3 bench/ncu-steps.py $W/ncu.csv > $W/ncu-summary.txt 2>&1
  s
fi
[ -f $W/ncu-summary.txt ] && { tail -2 $W/ncu.err; cat $W/ncu-summary.txt; }
grep -a "check\|rewrites\|rc" $W/small.log 2>/dev/null | tail -5; tail -3 $W/gguf.log 2>/dev/null
[ -f $W/bench-cuda.log ] && { cat $W/bench-cuda.log; tail -3 $W/bench-cuda.err; }
[ -f $W/bench-old.log ] && { echo "== OLD ($OLD)"; cat $W/bench-old.log; tail -3 $W/bench-old.err; }
[ -f $W/ksuite.log ] && { grep -a "^| \|^==" $W/ksuite.log | grep -v -- "---\|^| case"; echo "checks PASS: $(grep -ac PASS $W/ksuite-check.log)"; grep -a "FAIL\|DIFFERENT\|rror:" $W/ksuite-check.log | head; }
