#!/usr/bin/env bash
# One call on the H200: the bf16 8B-shaped decoder (.device/$GEN, as
# generate-h200.sh prepares it) and torch.compile of the same model in the
# same lease. There: the bf16 GGUF; cachet-generate-runner --bench at
# d32768 and d4096 (tg128 and pp512, rewrites on and off interleaved, 2
# repetitions); then, in the time left (TORCH_S, default 240 s),
# bench/torch_llama.py bench --modes=compile (bf16, f16 KV, cuDNN SDPA, CUDA
# graphs for decode; 2 repetitions). Logs: $OUT/peers.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/peers; mkdir -p $W; D=.device; B=$D/bin; dir=$D; GEN=${GEN:-gen}
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/peers.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1
cat $W/device.log
M=/tmp/llama3-8b-bf16.gguf
{ time $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M; } > $W/gguf.log 2>&1
timeout 150 $B/cachet-generate-runner --model=$M --kv=q8_0-packed --dtype=bf16 \
  --ubatch=512 --prefill=$D/$GEN/prefill --decode=$D/$GEN/decode --ctx=33280 \
  --bench --bench-depths=32768,4096 --bench-reps=2 > $W/cachet.log 2>&1
echo "rc $?" >> $W/cachet.log
s; grep -a "^|\|identical\|DIFFER\|rc\|weights" $W/cachet.log
rm -f $M
PYTHONUNBUFFERED=1 timeout ${TORCH_S:-240} python3 bench/torch_llama.py bench \
  --modes=compile --depths=32768,4096 --reps=2 --json=$W/torch.json > $W/torch.log 2>&1
echo "rc $? after ${SECONDS}s" >> $W/torch.log
s; grep -a "^|\|model\|rc\|compile" $W/torch.log | tail -15
