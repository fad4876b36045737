"""The PyTorch/cuBLAS anchor for bench/llama3_decode_chain.py, on the GPU.

Times the same chain (LAYERS Llama-3-8B-shaped layers of bf16 mat-vecs:
q, k, v, o, gate, up, down) with torch.mv, eagerly and replayed from a CUDA
graph, with CUDA events: median [min, max] of REPS runs after warm-up.
Prints ms and GB/s of weights read. Runs where PyTorch is (the GPU server);
the project does not depend on it.

Usage: python3 torch_chain.py [LAYERS] [REPS]
"""
import statistics
import sys

import torch

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
H, KV, F = 4096, 1024, 14336
shapes = [(H, H), (KV, H), (KV, H), (H, H), (F, H), (F, H), (H, F)]
torch.manual_seed(0)
weights = [[torch.randn(r, c, device="cuda", dtype=torch.bfloat16) for r, c in shapes]
           for _ in range(layers)]
nbytes = sum(w.numel() * 2 for layer in weights for w in layer)
x0 = torch.randn(H, device="cuda", dtype=torch.bfloat16)


def chain():
    x = x0
    for wq, wk, wv, wo, wg, wu, wd in weights:
        q = torch.mv(wq, x)
        torch.mv(wk, x)
        torch.mv(wv, x)
        o = torch.mv(wo, q)
        g = torch.mv(wg, o)
        u = torch.mv(wu, o)
        h = torch.nn.functional.silu(g) * u
        x = torch.mv(wd, h)
    return x


def timed(fn):
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times), max(times)


for _ in range(3):
    chain()
torch.cuda.synchronize()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    chain()
graph.replay()
torch.cuda.synchronize()
print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {layers} layers, "
      f"{nbytes / 1e6:.1f} MB of weights, {reps} runs")
for name, fn in [("eager", chain), ("cuda graph", graph.replay)]:
    med, lo, hi = timed(fn)
    print(f"{name}: {med:.3f} ms [{lo:.3f}, {hi:.3f}], {nbytes / med / 1e6:.1f} GB/s")
