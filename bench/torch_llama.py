#!/usr/bin/env python3
"""A llama decoder in PyTorch: cachet-generate's peer and its GPU reference.

It shares no code with cachet: its own model (written the way Hugging Face
and gpt-fast write it: F.linear projections, a static KV cache updated in
place, scaled_dot_product_attention with grouped KV heads), its own RoPE
(llama.cpp's adjacent pairs over a GGUF file's permuted Q/K rows), and
bench/gguf_reader.py to read GGUF files.

Check mode: the logits that cachet-generate wrote (--dump-logits) against
this model run on the GPU in float32 from the same GGUF file, one step per
token, as bench/llama_gguf_reference.py does in numpy:

    torch_llama.py check MODEL.gguf LOGITS.bin --prompt=1,2,3 --tokens=4,5
        [--tolerance=0.03]

Bench mode: llama-bench's rows, pp<N> @ d<D> and tg<N> @ d<D>, for a
Llama-3-8B-shaped model with seeded random bf16 weights and an f16 KV cache
(activations bf16, attention in f16 through SDPA), eager and torch.compile
(decode with CUDA graphs: mode="reduce-overhead"). A depth D is the cache
filled with random values up to D, as cachet-generate --bench fills its
caches: the kernels read the same bytes as after a prompt.

    torch_llama.py bench [--config=llama3-8b] [--depths=4096,32768]
        [--pp=512] [--tg=128] [--reps=5] [--modes=eager,compile]
        [--sdpa=cudnn|flash|efficient] [--json=FILE]

--sdpa names the backend tried first; the first that runs the model's
attention (decode and a prefill chunk) runs the whole depth, and its row
says which.

Each row prints the median tokens/s and min..max over the repetitions, the
SDPA backend that ran, and the compile time of torch.compile.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {
    # hidden, layers, heads, kv heads, ffn, vocab, rope theta
    "llama3-8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8,
                      ffn=14336, vocab=128256, theta=500000.0, eps=1e-5),
    "small": dict(hidden=256, layers=4, heads=8, kv_heads=2, ffn=768,
                  vocab=4096, theta=10000.0, eps=1e-5),
}


def rope_tables(torch, ctx, head_dim, theta, device):
    i = torch.arange(head_dim // 2, dtype=torch.float64, device=device)
    pos = torch.arange(ctx, dtype=torch.float64, device=device)
    angle = pos[:, None] * theta ** (-2.0 * i / head_dim)[None, :]
    return torch.cos(angle).float(), torch.sin(angle).float()


def rope_pairs(torch, x, cos, sin):
    """llama.cpp's NORM RoPE: pairs (2i, 2i + 1); x [T, H, D], cos [T, D/2]."""
    xf = x.float()
    x0, x1 = xf[..., 0::2], xf[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], -1)
    return out.flatten(-2).to(x.dtype)


def make_llama(torch):
    class Llama(torch.nn.Module):
        """Weights and a static KV cache as buffers; forward(ids, pos)."""

        def __init__(self, cfg, weights, act_dtype, kv_dtype, device):
            super().__init__()
            self.cfg = cfg
            self.hd = cfg["hidden"] // cfg["heads"]
            self.act = act_dtype
            self.kv_dtype = kv_dtype
            self.device_ = device
            # Buffers, so that torch.compile treats them as static inputs
            # (the caches are updated in place under CUDA graphs).
            self.names = {}
            for name, t in weights.items():
                key = name.replace(".", "_")
                self.names[name] = key
                self.register_buffer(key, t, persistent=False)
            self.masked = False
            # Grouped KV heads repeated for an SDPA backend that takes no
            # enable_gqa with a mask (chosen by bench's probe).
            self.expand_kv = False
            self.ctx = 0

        def set_ctx(self, ctx):
            """A fresh cache of `ctx` positions (and its RoPE tables)."""
            t = torch
            L, hkv = self.cfg["layers"], self.cfg["kv_heads"]
            for i in range(L):
                for kv in ("k", "v"):
                    self.register_buffer(
                        "%s%d" % (kv, i),
                        t.zeros(1, hkv, ctx, self.hd, dtype=self.kv_dtype,
                                device=self.device_), persistent=False)
            cos, sin = rope_tables(t, ctx, self.hd, self.cfg["theta"],
                                   self.device_)
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)
            self.ctx = ctx

        def caches(self):
            L = self.cfg["layers"]
            return [getattr(self, "k%d" % i) for i in range(L)] + \
                [getattr(self, "v%d" % i) for i in range(L)]

        def fill(self, seed):
            g = torch.Generator(device=self.device_)
            g.manual_seed(seed)
            for c in self.caches():
                c.uniform_(-1, 1, generator=g)

        def w(self, name):
            return getattr(self, self.names[name])

        def rms(self, x, w):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) +
                                     self.cfg["eps"])).to(x.dtype) * w

        def attend(self, q, layer, pos, n):
            """q [n, Hq, D] at positions pos..pos+n-1 over the cache."""
            F = torch.nn.functional
            kc, vc = getattr(self, "k%d" % layer), getattr(self, "v%d" % layer)
            qh = q.transpose(0, 1)[None].to(self.kv_dtype)   # [1, Hq, n, D]
            if not self.masked and n == 1:
                o = F.scaled_dot_product_attention(
                    qh, kc[:, :, :pos + 1], vc[:, :, :pos + 1],
                    enable_gqa=True)
            else:
                # A prefill chunk (keys up to its last row), or a static
                # decode step (the whole cache, as gpt-fast does: CUDA
                # graphs need one shape; pos is then a 0-d tensor).
                end = self.ctx if self.masked else pos + n
                k, v = kc[:, :, :end], vc[:, :, :end]
                keys = torch.arange(end, device=q.device)
                rows = pos + torch.arange(n, device=q.device)
                mask = (keys[None, :] <= rows[:, None])[None, None]
                if self.expand_kv:
                    g = self.cfg["heads"] // self.cfg["kv_heads"]
                    k = k.repeat_interleave(g, dim=1)
                    v = v.repeat_interleave(g, dim=1)
                o = F.scaled_dot_product_attention(
                    qh, k, v, attn_mask=mask, enable_gqa=not self.expand_kv)
            return o[0].transpose(0, 1).reshape(n, -1).to(self.act)

        def forward(self, ids, pos):
            """ids [n]; pos an int, or a 0-d tensor when self.masked."""
            F = torch.nn.functional
            cfg = self.cfg
            n = ids.shape[0]
            H, Hkv, D = cfg["heads"], cfg["kv_heads"], self.hd
            if self.masked:
                rows = pos + torch.arange(n, device=ids.device)
                cos, sin = self.cos[rows], self.sin[rows]
            else:
                cos, sin = self.cos[pos:pos + n], self.sin[pos:pos + n]
            x = self.w("tok_embd")[ids]
            for i in range(cfg["layers"]):
                p = "blk.%d." % i
                kc, vc = getattr(self, "k%d" % i), getattr(self, "v%d" % i)
                h = self.rms(x, self.w(p + "attn_norm"))
                q = F.linear(h, self.w(p + "attn_q")).view(n, H, D)
                k = F.linear(h, self.w(p + "attn_k")).view(n, Hkv, D)
                v = F.linear(h, self.w(p + "attn_v")).view(n, Hkv, D)
                q, k = rope_pairs(torch, q, cos, sin), rope_pairs(torch, k, cos,
                                                                  sin)
                kt = k.transpose(0, 1)[None].to(self.kv_dtype)
                vt = v.transpose(0, 1)[None].to(self.kv_dtype)
                if self.masked:
                    idx = pos + torch.arange(n, device=ids.device)
                    kc.index_copy_(2, idx, kt)
                    vc.index_copy_(2, idx, vt)
                else:
                    kc[:, :, pos:pos + n] = kt
                    vc[:, :, pos:pos + n] = vt
                x = x + F.linear(self.attend(q, i, pos, n),
                                 self.w(p + "attn_output"))
                h = self.rms(x, self.w(p + "ffn_norm"))
                x = x + F.linear(F.silu(F.linear(h, self.w(p + "ffn_gate"))) *
                                 F.linear(h, self.w(p + "ffn_up")),
                                 self.w(p + "ffn_down"))
            last = self.rms(x[-1:], self.w("output_norm"))
            return F.linear(last, self.w("output")).float()[0]

    return Llama


def gguf_weights(torch, path, device):
    import gguf_reader
    import numpy as np
    f = gguf_reader.GGUFFile(path)
    md = f.metadata
    if md.get("general.architecture") != "llama":
        sys.exit("%s: not a llama model" % path)
    hidden = md["llama.embedding_length"]
    heads = md["llama.attention.head_count"]
    cfg = dict(hidden=hidden, layers=md["llama.block_count"], heads=heads,
               kv_heads=md.get("llama.attention.head_count_kv", heads),
               ffn=md["llama.feed_forward_length"],
               theta=md.get("llama.rope.freq_base", 10000.0),
               eps=md.get("llama.attention.layer_norm_rms_epsilon", 1e-5))
    w = {}
    for name in f.tensor_infos:
        a = np.asarray(f.tensor(name), dtype=np.float32)
        w[name[:-len(".weight")] if name.endswith(".weight") else name] = \
            torch.from_numpy(a).to(device)
    if "output" not in w:
        w["output"] = w["token_embd"]
    w["tok_embd"] = w.pop("token_embd")
    cfg["vocab"] = w["output"].shape[0]
    return cfg, w


def check(args):
    import numpy as np
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    cfg, w = gguf_weights(torch, args.model, device)
    prompt = [int(t) for t in args.prompt.split(",")]
    tokens = [int(t) for t in args.tokens.split(",")]
    seq = prompt + tokens[:-1]
    torch.backends.cuda.matmul.allow_tf32 = False
    m = make_llama(torch)(cfg, w, torch.float32, torch.float32, device)
    m.set_ctx(len(seq))
    steps = []
    with torch.no_grad():
        for pos, tok in enumerate(seq):
            logits = m(torch.tensor([tok], device=device), pos)
            if pos >= len(prompt) - 1:
                steps.append(logits.cpu().numpy())
    got = np.fromfile(args.logits, dtype=np.float32)
    vocab = cfg["vocab"]
    if got.size != len(steps) * vocab:
        sys.exit("%s holds %d floats, expected %d steps x %d" %
                 (args.logits, got.size, len(steps), vocab))
    got = got.reshape(len(steps), vocab)
    ok = True
    for s, ref in enumerate(steps):
        err = float(np.abs(got[s] - ref).max())
        bound = args.tolerance * (1 + float(np.abs(ref).max()))
        same = int(np.argmax(got[s])) == int(np.argmax(ref))
        print("step %d: max error %.3e (bound %.3e), argmax %s" %
              (s, err, bound, "same" if same else "different"))
        ok = ok and err <= bound
    print("torch reference (%s): %s" % (device, "PASS" if ok else "FAIL"))
    return 0 if ok else 1


def random_weights(torch, cfg, device, seed):
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    H, D = cfg["hidden"], cfg["hidden"] // cfg["heads"]
    kv = cfg["kv_heads"] * D

    def mat(rows, cols):
        return (torch.randn(rows, cols, device=device, generator=g,
                            dtype=torch.bfloat16) * 0.02)

    w = {"tok_embd": mat(cfg["vocab"], H), "output": mat(cfg["vocab"], H),
         "output_norm": torch.ones(H, dtype=torch.bfloat16, device=device)}
    for i in range(cfg["layers"]):
        p = "blk.%d." % i
        w[p + "attn_norm"] = torch.ones(H, dtype=torch.bfloat16, device=device)
        w[p + "ffn_norm"] = torch.ones(H, dtype=torch.bfloat16, device=device)
        w[p + "attn_q"] = mat(H, H)
        w[p + "attn_k"] = mat(kv, H)
        w[p + "attn_v"] = mat(kv, H)
        w[p + "attn_output"] = mat(H, H)
        w[p + "ffn_gate"] = mat(cfg["ffn"], H)
        w[p + "ffn_up"] = mat(cfg["ffn"], H)
        w[p + "ffn_down"] = mat(H, cfg["ffn"])
    return w


def bench(args):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    device = "cuda"
    cfg = CONFIGS[args.config]
    depths = [int(d) for d in args.depths.split(",")]
    order = {"cudnn": ["CUDNN_ATTENTION", "FLASH_ATTENTION",
                       "EFFICIENT_ATTENTION", "MATH"],
             "flash": ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"],
             "efficient": ["EFFICIENT_ATTENTION", "MATH"]}[args.sdpa]
    w = random_weights(torch, cfg, device, args.seed)
    params = sum(t.numel() for t in w.values())
    m = make_llama(torch)(cfg, w, torch.bfloat16, torch.float16, device)
    prompt = torch.randint(0, cfg["vocab"], (max(args.pp, 1),),
                           device=device,
                           generator=torch.Generator(device).manual_seed(1))
    info = {"config": args.config, "params": params,
            "weight_bytes": sum(t.numel() * t.element_size()
                                for t in w.values()),
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name(), "rows": []}
    hq, hkv = cfg["heads"], cfg["kv_heads"]
    hd = cfg["hidden"] // hq

    def choose(n, keys, masked):
        """The first backend of --sdpa's order (and whether it needs the KV
        heads repeated) that takes this attention: n queries, `keys` keys,
        a mask or none."""
        q = torch.randn(1, hq, n, hd, device=device, dtype=torch.float16)
        k = torch.randn(1, hkv, keys, hd, device=device, dtype=torch.float16)
        mask = None
        if masked:
            rows = keys - n + torch.arange(n, device=device)
            mask = (torch.arange(keys, device=device)[None, :] <=
                    rows[:, None])[None, None]
        for name in order:
            for expand in (False, True) if masked else (False,):
                kk = k.repeat_interleave(hq // hkv, 1) if expand else k
                try:
                    with sdpa_kernel([getattr(SDPBackend, name)]):
                        F.scaled_dot_product_attention(
                            q, kk, kk, attn_mask=mask,
                            enable_gqa=not expand)
                    torch.cuda.synchronize()
                    return name, expand
                except RuntimeError as e:
                    print("sdpa %s%s refused n=%d keys=%d: %s" %
                          (name, " (KV repeated)" if expand else "", n, keys,
                           str(e).strip().splitlines()[0][:160]),
                          file=sys.stderr)
        sys.exit("no SDPA backend runs")

    def timed(fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    def row(test, d, mode, sdpa, n, secs, compile_s, ctx):
        rates = sorted(n / s for s in secs)
        k = len(rates)
        med = rates[k // 2] if k % 2 else \
            (rates[k // 2 - 1] + rates[k // 2]) / 2
        info["rows"].append(dict(test=test, depth=d, mode=mode, sdpa=sdpa,
                                 tps_median=med, tps_min=rates[0],
                                 tps_max=rates[-1], seconds=secs,
                                 compile_s=compile_s, ctx=ctx))
        print("| %s @ d%d | torch %s | %s | %.2f | %.2f .. %.2f | %d |"
              " %.1f s |" % (test, d, mode, sdpa, med, rates[0], rates[-1],
                             k, compile_s), flush=True)

    print("| test | peer | SDPA | t/s (median) | spread (min .. max) | reps |"
          " compile |")
    print("|---|---|---|---|---|---|---|")
    n_pp = min(512, args.pp)
    for d in depths:
        # A cache just long enough for the depth's tests, filled with
        # random values up to the depth.
        ctx = (d + max(args.pp, args.tg) + 255) // 256 * 256
        m.set_ctx(ctx)
        m.fill(args.seed)
        info["kv_bytes_d%d" % d] = sum(c.numel() * c.element_size()
                                       for c in m.caches())
        pre = choose(n_pp, d + n_pp, True)
        dec = choose(1, d + 1, False)
        graph = choose(1, ctx, True)

        def label(c):
            return c[0] + (" (KV repeated)" if c[1] else "")

        for mode in args.modes.split(","):
            torch._dynamo.reset()
            with torch.no_grad():
                if mode == "eager":
                    def prefill():
                        with sdpa_kernel([getattr(SDPBackend, pre[0])]):
                            m.masked, m.expand_kv = False, pre[1]
                            for i in range(0, args.pp, 512):
                                m(prompt[i:i + 512], d + i)

                    def decode_n():
                        with sdpa_kernel([getattr(SDPBackend, dec[0])]):
                            m.masked, m.expand_kv = False, False
                            tok = prompt[:1]
                            for t in range(args.tg):
                                tok = m(tok, d + t).argmax()[None]
                    compile_pp = compile_tg = 0.0
                else:
                    # Prefill: shapes static per depth; decode: the whole
                    # cache under a mask, recorded as a CUDA graph.
                    chunk = torch.compile(m, fullgraph=True, dynamic=False)
                    step = torch.compile(m, mode="reduce-overhead",
                                         fullgraph=True, dynamic=False)
                    positions = [torch.tensor(p, device=device)
                                 for p in range(ctx)]

                    def prefill():
                        with sdpa_kernel([getattr(SDPBackend, pre[0])]):
                            m.masked, m.expand_kv = False, pre[1]
                            for i in range(0, args.pp, 512):
                                chunk(prompt[i:i + 512], d + i)

                    def decode_n():
                        with sdpa_kernel([getattr(SDPBackend, graph[0])]):
                            m.masked, m.expand_kv = True, graph[1]
                            tok = prompt[:1]
                            for t in range(args.tg):
                                tok = step(tok, positions[d + t]).argmax()[
                                    None].clone()
                            m.masked = False
                    # The first calls compile (and record the graph).
                    compile_pp = timed(prefill) if args.pp > 0 else 0.0
                    compile_tg = timed(decode_n) if args.tg > 0 else 0.0
                for test, fn, n, sdpa, cs in (
                        ("pp%d" % args.pp, prefill, args.pp, label(pre),
                         compile_pp),
                        ("tg%d" % args.tg, decode_n, args.tg,
                         label(dec if mode == "eager" else graph),
                         compile_tg)):
                    if n <= 0:
                        continue
                    fn()  # warm-up
                    secs = [timed(fn) for _ in range(args.reps)]
                    row(test, d, mode, sdpa, n, secs, cs, ctx)
    print("model: %s, %.2f B params, weights %.2f GiB bf16, KV f16; torch %s"
          " on %s; compile: the first call's time (compiling and, for tg, "
          "recording the CUDA graph, plus that call's own run)" %
          (args.config, params / 1e9, info["weight_bytes"] / 2**30,
           torch.__version__, info["device"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("model")
    c.add_argument("logits")
    c.add_argument("--prompt", required=True)
    c.add_argument("--tokens", required=True)
    c.add_argument("--tolerance", type=float, default=0.03)
    b = sub.add_parser("bench")
    b.add_argument("--config", default="llama3-8b", choices=sorted(CONFIGS))
    b.add_argument("--depths", default="4096,32768")
    b.add_argument("--pp", type=int, default=512)
    b.add_argument("--tg", type=int, default=128)
    b.add_argument("--reps", type=int, default=5)
    b.add_argument("--modes", default="eager,compile")
    b.add_argument("--sdpa", default="cudnn",
                   choices=["cudnn", "flash", "efficient"])
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--json", default="")
    args = p.parse_args()
    return check(args) if args.cmd == "check" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
