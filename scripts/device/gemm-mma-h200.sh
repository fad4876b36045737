#!/usr/bin/env bash
# The mma GEMM (gemm_mma: gpu.subgroup_mma 16x16x16 f16 cooperative
# matrices, matvec-options={gemm-mma=true}) on NVIDIA's Vulkan driver:
# correctness against the CPU reference (the mma kernel runs only where the
# device has VK_KHR_cooperative_matrix, so this is its first check), then
# the f16 pp512 GEMM cases beside the tiled GEMM it would replace (suites
# alternated: mma, tiled, mma, tiled) and cuBLAS (torch.matmul) in the same
# lease.
#
# Prepared here (build/bin -> .device/bin, libcachet_runtime -> .device/lib):
#   bench/make-suite.py -o .device/gm/mma --preset=h200 --target=spirv --only="gemm512 f16" \
#     --compile-options='matvec-options={gemm-mma=true}'
#   bench/make-suite.py -o .device/gm/tiled --preset=h200 --target=spirv --only="gemm512 f16"
#   for s in "65 130 32" "300 256 64" "512 4096 4096"; do set -- $s;
#     python3 test/Integration/Inputs/gemm.py $1 $2 $3 f16 > /tmp/g.mlir;
#     cachet-run /tmp/g.mlir --entry=gemm --profile=h200 --emit=.device/gm/c-$1-$2-$3 --no-run
#       "--compile-options=matvec-options={gemm-mma=true}"; done
#   mlir-translate --no-implicit-module --serialize-spirv \
#     test/Runtime/Inputs/coop-matmul.mlir -o .device/coop.spv (and coop-matmul-bf16.mlir
#     into .device/coop-bf16.spv)
#
#   scripts/device/gemm-mma-h200.sh [REPEAT]
#
# Logs and JSON: $OUT/gm.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/gm; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}
s() { tar czf $OUT/gm.tgz -C $W .; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv,noheader > $W/device.log 2>&1
# The driver's cooperative-matrix shapes (bf16 ones too, where it lists them)
# and the 16x16x16 f16 product against the CPU.
timeout 30 $B/cachet-runtime-test --coop-module=$D/coop.spv >> $W/device.log 2>&1
timeout 30 $B/cachet-runtime-test --coop-bf16-module=$D/coop-bf16.spv >> $W/device.log 2>&1
timeout 45 bash -c ". $(dirname "$0")/env.sh; B=$B; for c in $D/gm/c-*; do echo \"== \$c\"; check \$c; done" > $W/check.log 2>&1
s
for i in 1 2; do
  for v in mma tiled; do
    timeout 20 $B/cachet-bench $D/gm/$v --repeat=$R --json=$W/$v$i.json > $W/$v$i.log 2>&1; s
  done
done
timeout 40 python3 - > $W/cublas.log 2>&1 <<'PY'
import torch
for n, k in [(4096, 4096), (14336, 4096), (4096, 14336)]:
    x = torch.randn(512, k, dtype=torch.float16, device="cuda")
    w = torch.randn(n, k, dtype=torch.float16, device="cuda")
    for _ in range(5):
        y = x @ w.t()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); y = x @ w.t(); b.record(); torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    print(f"cuBLAS f16 512x{n}x{k}: median {times[10]:.4f} ms [{times[0]:.4f}, {times[-1]:.4f}]"
          f" {2 * 512 * n * k / times[10] / 1e9:.1f} TFLOP/s")
PY
s
cat $W/device.log
grep -a "==\|check\|rewrites off\|error\|skip" $W/check.log | head -40
for f in mma1 tiled1 mma2 tiled2; do echo "## $f"; grep -a "^|\|suite\|error" $W/$f.log; done
cat $W/cublas.log
