"""PyTorch/cuBLAS anchors for the cases of bench/make-suite.py --preset=h200.

Runs on the GPU server, in the same lease as cachet-bench, so the two sets of
figures share a device and a moment. The project does not depend on PyTorch.
Every figure: CUDA events around one call (or one graph replay), median
[min, max] of REPS calls after warm-up. Before each start event a GPU-side
sleep of about 200 us (torch.cuda._sleep) keeps the device busy while the
host records the event and launches the call, so the start event completes
when the call can start; on an idle device it would complete at once and
the figure would hold the host's launch time (20-30 us on the H200), as
cachet's kernel spans did before the runtime queued the same kind of wait.

  copy        device-to-device copy of 1 GiB: bytes read + written per second
  attention   F.scaled_dot_product_attention, f16, Hq 32, Hkv 8 (enable_gqa),
              D 128, 512 new tokens after DEPTH cached ones, causal aligned to
              the last key (the causal offset of the cachet cases)
  decode      SDPA with 1 and 4 new tokens after DEPTH cached ones (Hq 32,
              Hkv 8, D 128, f16), cuDNN, FlashAttention and efficient
              backends each alone; the rate is K+V bytes per second
  tg          the Llama-3-8B bf16 mat-vec chain of bench/llama3_decode_chain.py
              (2 layers), eager and replayed from a CUDA graph
  kernel      torch.mv over each mat-vec shape of the suite; F.linear of 512
              tokens (the gemm512 cases; bf16 / f16 in, their type out) and
              a bf16 8192^3 matmul; the q8_0 K cache dequantized and
              transposed with PyTorch ops

Usage: python3 bench/torch_anchors.py [REPS] [--json=FILE] [--only=GROUP,...]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

reps = int(next((a for a in sys.argv[1:] if not a.startswith("--")), 20))
json_path = next((a[7:] for a in sys.argv[1:] if a.startswith("--json=")), None)
# --only=NAME,...: only those groups (copy, attention, decode, tg, matvec,
# gemm, dequant).
only = next((a[7:].split(",") for a in sys.argv[1:] if a.startswith("--only=")),
            [])
torch.manual_seed(0)
dev = "cuda"
rows = []


# GPU clock cycles of the sleep before each start event (about 200 us).
SLEEP_CYCLES = 400_000


def timed(fn, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times), max(times)


def record(table, label, test, t, bytes_=0, flops=0, tokens=0):
    med, lo, hi = t
    rate = []
    if tokens:
        rate.append(f"{tokens / med * 1e3:.0f} t/s")
    if flops:
        rate.append(f"{flops / med / 1e9:.1f} TFLOP/s")
    if bytes_:
        rate.append(f"{bytes_ / med / 1e9:.3f} TB/s")
    print(f"| {table} | {label} | {test} | {med:.3f} [{lo:.3f}, {hi:.3f}] | "
          f"{', '.join(rate)} |", flush=True)
    rows.append(dict(table=table, label=label, test=test, median_ms=med,
                     min_ms=lo, max_ms=hi, bytes=bytes_, flops=flops,
                     tokens=tokens))


print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {reps} calls each")
print("| table | case | test | ms: median [min, max] | rate |")
print("| --- | --- | --- | --- | --- |")

hq, hkv, d, sq = 32, 8, 128, 512

def copy_anchors():
    # Copy bandwidth.
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    record("copy", "d2d", "1 GiB", timed(lambda: dst.copy_(src)), bytes_=2 * n)
    del src, dst


def sdpa_alone(name, q, k, v, mask, gqa):
    """A call of SDPA with only the backend `name` allowed."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"cuDNN": SDPBackend.CUDNN_ATTENTION,
               "FlashAttention": SDPBackend.FLASH_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}[name]

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=d ** -0.5, enable_gqa=gqa)
    return call


def unsupported(call, group, name, case):
    """Runs `call` once; prints a row and returns True where the backend
    refuses the case."""
    try:
        call()
    except RuntimeError as e:
        print(f"| {group} | f16 SDPA {name} | {case} | unsupported: "
              f"{str(e).splitlines()[0][:80]} | |", flush=True)
        return True
    return False


def attention_anchors():
    # Attention.
    for depth in [4096, 32768, 65536]:
        s = depth + sq
        q = torch.randn(1, hq, sq, d, device=dev, dtype=torch.float16)
        k = torch.randn(1, hkv, s, d, device=dev, dtype=torch.float16)
        v = torch.randn(1, hkv, s, d, device=dev, dtype=torch.float16)
        mask = causal_lower_right(sq, s)
        keys = sq * depth + sq * (sq + 1) // 2
        record("attention", "f16 SDPA", f"pp{sq} @ d{depth}",
               timed(lambda: F.scaled_dot_product_attention(
                   q, k, v, attn_mask=mask, scale=d ** -0.5, enable_gqa=True)),
               flops=4 * hq * d * keys, tokens=sq)
        # Each backend asked for alone: with GQA where it takes it, else with
        # K/V repeated to the query heads (the copy not timed).
        kr = k.repeat_interleave(hq // hkv, dim=1)
        vr = v.repeat_interleave(hq // hkv, dim=1)
        for name in ["cuDNN", "FlashAttention"]:
            for form, kk, vv, gqa in [("GQA", k, v, True),
                                      ("repeated KV", kr, vr, False)]:
                call = sdpa_alone(name, q, kk, vv, mask, gqa)
                if unsupported(call, "attention", f"{name} ({form})",
                               f"pp{sq} @ d{depth}"):
                    continue
                record("attention", f"f16 SDPA {name} ({form})",
                       f"pp{sq} @ d{depth}", timed(call),
                       flops=4 * hq * d * keys, tokens=sq)
                break
        del q, k, v, kr, vr


def decode_anchors():
    # Decode attention: 1 or 4 new tokens, each SDPA backend asked for alone
    # (head-major contiguous K/V, their best case); bytes are K + V read.
    for depth in [4096, 32768, 65536]:
        for tg in [1, 4]:
            s = depth + tg
            q = torch.randn(1, hq, tg, d, device=dev, dtype=torch.float16)
            k = torch.randn(1, hkv, s, d, device=dev, dtype=torch.float16)
            v = torch.randn(1, hkv, s, d, device=dev, dtype=torch.float16)
            mask = causal_lower_right(tg, s) if tg > 1 else None
            for name in ["cuDNN", "FlashAttention", "efficient"]:
                call = sdpa_alone(name, q, k, v, mask, True)
                if unsupported(call, "decode", name, f"tg{tg} @ d{depth}"):
                    continue
                record("decode", f"f16 SDPA {name}", f"tg{tg} @ d{depth}",
                       timed(call), bytes_=2 * 2 * s * hkv * d, tokens=tg)
            del q, k, v


def tg_anchors():
    # The decode chain.
    H, KV, FF = 4096, 1024, 14336
    layers = 2
    shapes = [(H, H), (KV, H), (KV, H), (H, H), (FF, H), (FF, H), (H, FF)]
    weights = [[torch.randn(r, c, device=dev, dtype=torch.bfloat16) for r, c in shapes]
               for _ in range(layers)]
    nbytes = sum(w.numel() * 2 for layer in weights for w in layer)
    x0 = torch.randn(H, device=dev, dtype=torch.bfloat16)


    def chain():
        x = x0
        for wq, wk, wv, wo, wg, wu, wd in weights:
            q = torch.mv(wq, x)
            torch.mv(wk, x)
            torch.mv(wv, x)
            o = torch.mv(wo, q)
            g = torch.mv(wg, o)
            u = torch.mv(wu, o)
            x = torch.mv(wd, F.silu(g) * u)
        return x


    label = f"bf16 {layers} layers {H}/{KV}/{FF}"
    record("tg", label + " cuBLAS eager", "tg1", timed(chain), bytes_=nbytes, tokens=1)
    chain()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain()
    record("tg", label + " cuBLAS graph", "tg1", timed(graph.replay), bytes_=nbytes,
           tokens=1)
    del weights, graph


def matvec_anchors():
    # Single kernels.
    for r, c in [(4096, 4096), (14336, 4096), (4096, 14336)]:
        w = torch.randn(r, c, device=dev, dtype=torch.bfloat16)
        x = torch.randn(c, device=dev, dtype=torch.bfloat16)
        record("kernel", "matvec bf16 cuBLAS", f"{r}x{c}", timed(lambda: torch.mv(w, x)),
               bytes_=2 * r * c + 2 * c + 2 * r)


def gemm_anchors():
    # Prefill linear layers (cachet's gemm512 cases): x [512][c] times the
    # weight [r][c] read transposed, as torch.nn.functional.linear runs it
    # (cuBLAS; its result in the input type, cachet's f32); and a bf16 8192^3
    # matmul, the tensor-core rate cuBLAS reaches.
    for element, dtype in [("bf16", torch.bfloat16), ("f16", torch.float16)]:
        for r, c in [(4096, 4096), (14336, 4096), (4096, 14336), (1024, 4096)]:
            w = torch.randn(r, c, device=dev, dtype=dtype)
            x = torch.randn(512, c, device=dev, dtype=dtype)
            record("kernel", f"gemm512 {element} cuBLAS", f"{r}x{c}",
                   timed(lambda: F.linear(x, w)), flops=2 * 512 * r * c,
                   tokens=512)
    # The gate / up / SiLU of a prefill (cachet's glu512 case): one cuBLAS
    # GEMM over the two weights side by side, then silu(gate) * up (eager:
    # the GEMM and two element-wise kernels; torch.compile: its own fusion
    # of the same).
    c, f = 4096, 14336
    wgu = torch.randn(2 * f, c, device=dev, dtype=torch.bfloat16)
    x = torch.randn(512, c, device=dev, dtype=torch.bfloat16)

    def glu(x, wgu):
        g, u = F.linear(x, wgu).chunk(2, dim=-1)
        return F.silu(g) * u

    flops = 2 * 512 * 2 * f * c
    record("kernel", "glu512 bf16 cuBLAS GEMM alone", f"2x{f}x{c}",
           timed(lambda: F.linear(x, wgu)), flops=flops, tokens=512)
    record("kernel", "glu512 bf16 torch eager", f"2x{f}x{c}",
           timed(lambda: glu(x, wgu)), flops=flops, tokens=512)
    compiled = torch.compile(glu)
    record("kernel", "glu512 bf16 torch.compile", f"2x{f}x{c}",
           timed(lambda: compiled(x, wgu), warmup=5), flops=flops, tokens=512)
    del wgu
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    record("kernel", "matmul bf16 cuBLAS", "8192^3", timed(lambda: a @ a),
           flops=2 * 8192 ** 3)
    del a, w, x


def dequant_anchors():
    depth = 32768
    qs = torch.randint(-128, 128, (depth, hkv, d), device=dev, dtype=torch.int8)
    scales = torch.rand(depth, hkv, d // 32, device=dev, dtype=torch.float16)

    def dequant_transpose():
        x = qs.view(depth, hkv, d // 32, 32).to(torch.float16) * scales[..., None]
        return x.view(depth, hkv, d).transpose(0, 1).contiguous()

    values = depth * hkv * d
    record("kernel", "dequant_transpose q8_0 torch ops", f"{depth}x{hkv}x{d}",
           timed(dequant_transpose), bytes_=values // 32 * 34 + 2 * values)


for name, anchors in [("copy", copy_anchors), ("attention", attention_anchors),
                      ("decode", decode_anchors), ("tg", tg_anchors),
                      ("matvec", matvec_anchors), ("gemm", gemm_anchors),
                      ("dequant", dequant_anchors)]:
    if not only or name in only:
        anchors()

if json_path:
    with open(json_path, "w") as f:
        json.dump(dict(torch=torch.__version__, device=torch.cuda.get_device_name(),
                       reps=reps, rows=rows), f, indent=1)
