#!/usr/bin/env bash
# One call on the H200: the whole decoder of issue 24 with
# cachet-generate-runner on artifacts compiled here. Prepared here:
#
#   build/bin/cachet-generate --random=llama3-8b --type=bf16 --dtype=bf16 \
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=33280 \
#     --ubatch=512 --compile-only            -> .device/gen/{prefill,decode}
#   the same with --target=spirv --ctx=4352   -> .device/vk/{prefill,decode}
#   build/bin/cachet-generate --random=small --type=q4_K --dtype=f16 \
#     --kv=q8_0-packed --target=nvvm --profile=h200 --ctx=256 --ubatch=16 \
#     --compile-only --check                  -> .device/small/{prefill,decode}
#   (gpu.so, gpu-norewrite.so, manifest.json; ref.so for small), and
#   build/bin/{cachet-gguf,cachet-generate-runner} -> .device/bin,
#   build/lib/libcachet_runtime.so -> .device/lib.
#
#   scripts/device/generate-h200.sh
#
# There:
# 1. small (4 layers, q4_K weights): the runner with --check (CPU reference
#    of the same IR) and --compare-rewrites, its logits against
#    bench/torch_llama.py's own model on the GPU;
# 2. the 16 GB Llama-3-8B-shaped bf16 GGUF written by cachet-gguf;
# 3. CUDA: --bench at d4096 and d32768 (tg128 and pp512, 3 repetitions,
#    rewrites on and off interleaved, their tokens and logits compared);
# 4. bench/torch_llama.py bench (eager, torch.compile) if time is left;
# 5. Vulkan (NVIDIA's driver), if the time is left: tg at d4096.
# Logs: $OUT/generate.tgz. The q8_0-weight row of the same model:
# scripts/device/generate-q8-h200.sh (a call of its own).
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gen; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/generate.tgz -C $W .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.mem,memory.used --format=csv; } > $W/device.log 2>&1
R="$B/cachet-generate-runner"

# 1. small: CPU reference, off / on, PyTorch.
$B/cachet-gguf random small --type=q4_K --seed=1 -o /tmp/small.gguf > $W/small.log 2>&1
timeout 120 $R --model=/tmp/small.gguf --prefill=$D/small/prefill \
  --decode=$D/small/decode --kv=q8_0-packed --dtype=f16 --ctx=256 --ubatch=16 \
  --prompt-length=20 --n-predict=8 --check --compare-rewrites \
  --dump-logits=/tmp/small.bin >> $W/small.log 2>&1
echo "rc $?" >> $W/small.log
P=$(grep -a '^prompt:' $W/small.log | cut -d' ' -f2- | tr ' ' ,)
T=$(grep -a '^tokens:' $W/small.log | cut -d' ' -f2- | tr ' ' ,)
timeout 120 python3 bench/torch_llama.py check /tmp/small.gguf /tmp/small.bin \
  --prompt=$P --tokens=$T > $W/small-torch.log 2>&1
echo "rc $?" >> $W/small-torch.log
s

# 2. The 8B model file.
M=/tmp/llama3-8b-bf16.gguf
{ time $B/cachet-gguf random llama3-8b --type=bf16 --seed=1 -o $M; } > $W/gguf.log 2>&1
s

# 3. CUDA bench.
common="--model=$M --kv=q8_0-packed --dtype=bf16 --ubatch=512"
timeout ${BENCH_S:-300} $R $common --prefill=$D/gen/prefill --decode=$D/gen/decode \
  --ctx=33280 --bench --bench-depths=4096,32768 --bench-reps=3 \
  > $W/bench-cuda.log 2> $W/bench-cuda.err
echo "rc $? after ${SECONDS}s" >> $W/bench-cuda.log
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $W/device.log 2>&1
s

# 4. The PyTorch peers in the same lease (eager and torch.compile), with
#    the time that is left.
if [ "${TORCH:-1}" = 1 ] && [ $SECONDS -lt 400 ]; then
  PYTHONUNBUFFERED=1 timeout $((585 - SECONDS)) python3 bench/torch_llama.py bench \
    --depths=4096,32768 --reps=3 --json=$W/torch.json > $W/torch.log 2>&1
  echo "rc $? after ${SECONDS}s" >> $W/torch.log
  s
fi

# 5. Vulkan, tg only (generic SPIR-V kernels: issue 22), if time is left.
if [ -d $D/vk/decode ] && [ $SECONDS -lt ${VK_BEFORE_S:-420} ]; then
  timeout $((560 - SECONDS)) $R $common --prefill=$D/vk/prefill --decode=$D/vk/decode \
    --ctx=4352 --bench --bench-depths=4096 --bench-prompt=0 --bench-gen=8 \
    --bench-reps=1 --bench-on-only > $W/bench-vk.log 2> $W/bench-vk.err
  echo "rc $? after ${SECONDS}s" >> $W/bench-vk.log
  s
fi
cat $W/small.log | grep -a "check\|rewrites\|tokens\|rc"; cat $W/small-torch.log | tail -3
cat $W/gguf.log | tail -4; cat $W/bench-cuda.log; tail -5 $W/bench-cuda.err
[ -f $W/torch.log ] && grep -a "^|\|model\|rc" $W/torch.log
[ -f $W/bench-vk.log ] && { cat $W/bench-vk.log; tail -5 $W/bench-vk.err; }
