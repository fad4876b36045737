#!/usr/bin/env bash
# One call on the H200: where a decode step (or, STEP=prefill, a pp512
# call at a depth) of the 8B-shaped decoder goes (Nsight Compute, kernel by
# kernel), and optionally the PyTorch peers.
# Prepared here as for generate-h200.sh (.device/bin, .device/lib, the
# artifacts in .device/$GEN/{prefill,decode}; carry .device and .gl).
#
#   TYPE=bf16 GEN=gen TORCH=1 scripts/device/profile-decode-h200.sh
#
# There:
# 1. TORCH=1: bench/torch_llama.py bench (eager, torch.compile with CUDA
#    graphs; cuDNN SDPA) at d4096 and d32768, 3 repetitions, first, so
#    that it runs in the same lease as the cachet rows of the other calls;
# 2. the GGUF of TYPE (bf16 or q8_0) written by cachet-gguf;
# 3. `ncu --clock-control none --metrics gpu__time_duration.sum --csv` of
#    cachet-generate-runner for a one-token prompt and two decode steps
#    (the prompt at position 0: a short cache; the kernels are the same at
#    any depth except attention's, whose grid is sized at run time);
#    bench/ncu-steps.py sums the last decode step's kernels by shape;
#    STEP=prefill instead profiles `--bench --bench-on-only` with pp512 @
#    d$DEPTH (default 32768; the caches filled, a warm-up and one timed
#    call) and sums the last of the two identical prefill calls
#    (ncu-steps.py --repeated).
# Logs: $OUT/profile-$TYPE.tgz (profile-$TYPE-prefill.tgz).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
TYPE=${TYPE:-bf16}; GEN=${GEN:-gen}; STEP=${STEP:-decode}
TAG=$TYPE; [ "$STEP" = prefill ] && TAG=$TYPE-prefill
W=/tmp/profile-$TAG; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/profile-$TAG.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1

if [ "${TORCH:-0}" = 1 ]; then
  PYTHONUNBUFFERED=1 timeout ${TORCH_S:-330} python3 bench/torch_llama.py bench \
    --depths=4096,32768 --reps=3 --json=$W/torch.json > $W/torch.log 2>&1
  echo "rc $? after ${SECONDS}s" >> $W/torch.log
  s
fi

M=/tmp/llama3-8b-$TYPE.gguf
[ -f $M ] || { time $B/cachet-gguf random llama3-8b --type=$TYPE --seed=1 -o $M; } > $W/gguf.log 2>&1
s
NCU=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
NCU=${NCU:-ncu}
if [ "$STEP" = prefill ]; then
  RUN=(--bench --bench-on-only --bench-depths=${DEPTH:-32768} --bench-gen=0
       --bench-reps=1); SUM=--repeated
else
  RUN=(--prompt-length=1 --n-predict=2); SUM=
fi
timeout $((${LIMIT_S:-590} - SECONDS)) $NCU --clock-control none --metrics gpu__time_duration.sum --csv \
  $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
  --prefill=$D/$GEN/prefill --decode=$D/$GEN/decode --ctx=33280 \
  "${RUN[@]}" > $W/ncu.csv 2> $W/ncu.err
echo "rc $? after ${SECONDS}s" >> $W/ncu.err
python3 bench/ncu-steps.py $W/ncu.csv $SUM > $W/ncu-summary.txt 2>&1
s
[ -f $W/torch.log ] && grep -a "^|\|model\|rc" $W/torch.log
tail -3 $W/gguf.log; tail -3 $W/ncu.err; cat $W/ncu-summary.txt
