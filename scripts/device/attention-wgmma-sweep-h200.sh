#!/usr/bin/env bash
# Tiles of the wgmma attention kernel at pp512 @ d32768, f16 head-major K/V:
# each artifact of .device/sw/art (one query-tile x key-tile choice) timed
# in turns, two rounds, then PyTorch SDPA (each backend alone) at the same
# shapes. Logs go to $OUT. Usage: scripts/device/attention-wgmma-sweep-h200.sh [REPEAT]
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
D=.device; dir=$D; B=$D/bin
. "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/device.log 2>&1
# Random attentions (bench/make-attention-fuzz.py --chip=sm_90a: .device/fz,
# and with --chunk-positions=256: .device/fzc, the chunks' state carried
# across wgmma kernels) against the CPU reference, off vs on byte for byte.
check $D/fz/art/*/ $D/fzc/art/*/ > $OUT/fuzz.log 2>&1
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|differ.*" $OUT/fuzz.log | sort | uniq -c
for round in 1 2; do
  for a in $D/sw/art/*/; do
    echo "== $(basename $a) round $round"
    timeout 60 $B/cachet-runner $a --repeat=${1:-10}
  done
done > $OUT/sweep.log 2>&1
PYTHONUNBUFFERED=1 timeout 200 python3 bench/torch_anchors.py 20 --only=attention --json=$OUT/torch.json > $OUT/torch.log 2>&1
awk '/^== /{h=$2" r"$4} /rewrites on : kernels/{print h, $5, $6, $7}' $OUT/sweep.log
grep "^| attention" $OUT/torch.log
cat $OUT/device.log
# MODEL=1: the q8_0 8B model with the wgmma attention (.device/gen-wa, this
# commit) and without it (.device/gen-q8, dd446b7), pp512 in turns.
if [ -n "${MODEL:-}" ]; then
  $B/cachet-gguf random llama3-8b --type=q8_0 --seed=1 -o /tmp/q8.gguf > /dev/null
  for round in 1 2; do
    for g in gen-wa gen-q8; do
      echo "== $g round $round"
      timeout 150 $B/cachet-generate-runner --model=/tmp/q8.gguf --kv=q8_0-packed --dtype=bf16 --ubatch=512 \
        --prefill=$D/$g/prefill --decode=$D/$g/decode --ctx=33280 --bench --bench-depths=32768,4096 --bench-reps=2 --bench-gen=0
    done
  done > $OUT/model.log 2>&1
  grep -a "^==\|pp512" $OUT/model.log
fi
