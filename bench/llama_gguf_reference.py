#!/usr/bin/env python3
"""An independent reference of cachet-generate: a llama model read from a
GGUF file with bench/gguf_reader.py and run the way llama.cpp defines it
(RoPE on adjacent pairs over the file's permuted Q/K rows, RMSNorm, GQA
causal attention, SwiGLU), in float32 numpy, one token at a time.

It shares no code with cachet: not the GGUF reader, not the model writer,
not the RoPE convention (cachet un-permutes Q/K and rotates halves).

    llama_gguf_reference.py MODEL.gguf LOGITS.bin --prompt=1,2,3 --tokens=4,5
        [--ubatch=N] [--tolerance=0.03]

LOGITS.bin is cachet-generate --dump-logits: float32 rows of `vocab`
logits, one per step (the prompt's last token, then each generated token but
the last). The reference runs the prompt and then cachet's tokens (teacher
forcing), and compares each step's logits: |cachet - ref| <= tolerance x
(1 + max |ref|). It prints one line per step and `reference: PASS` or FAIL
(exit 1).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_reader  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("logits")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--tolerance", type=float, default=0.03)
    args = parser.parse_args()

    import numpy as np
    xp = np

    def array(a):
        return np.asarray(a, dtype=np.float32)

    f = gguf_reader.GGUFFile(args.model)
    md = f.metadata
    if md.get("general.architecture") != "llama":
        sys.exit("not a llama model")
    hidden = md["llama.embedding_length"]
    layers = md["llama.block_count"]
    heads = md["llama.attention.head_count"]
    kv_heads = md.get("llama.attention.head_count_kv", heads)
    head_dim = md.get("llama.rope.dimension_count", hidden // heads)
    eps = md.get("llama.attention.layer_norm_rms_epsilon", 1e-5)
    theta = md.get("llama.rope.freq_base", 10000.0)

    def weight(name):
        return array(f.tensor(name))

    embd = f.tensor("token_embd.weight")
    lm_head = weight("output.weight" if "output.weight" in f.tensor_infos
                     else "token_embd.weight")
    blocks = []
    for i in range(layers):
        p = "blk.%d." % i
        blocks.append({k: weight(p + k + ".weight") for k in (
            "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
            "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")})
    out_norm = weight("output_norm.weight")

    prompt = [int(t) for t in args.prompt.split(",")]
    tokens = [int(t) for t in args.tokens.split(",")]
    sequence = prompt + tokens[:-1]
    n = len(sequence)
    cache_k = [[] for _ in range(layers)]
    cache_v = [[] for _ in range(layers)]

    def rms(x, w):
        return x / xp.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(x, pos):
        # llama.cpp's NORM RoPE: pairs (2i, 2i + 1) rotated by
        # pos * theta^(-2i / head_dim).
        i = np.arange(head_dim // 2)
        angle = pos * theta ** (-2.0 * i / head_dim)
        c, s = array(np.cos(angle)), array(np.sin(angle))
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = xp.stack([x0 * c - x1 * s, x0 * s + x1 * c], -1)
        return out.reshape(x.shape)

    def silu(x):
        return x / (1 + xp.exp(-x))

    def softmax(x):
        x = x - x.max(-1, keepdims=True)
        e = xp.exp(x)
        return e / e.sum(-1, keepdims=True)

    group = heads // kv_heads
    logits_steps = []
    for pos, token in enumerate(sequence):
        x = array(embd[token])
        for i, b in enumerate(blocks):
            h = rms(x, b["attn_norm"])
            q = (b["attn_q"] @ h).reshape(heads, head_dim)
            k = (b["attn_k"] @ h).reshape(kv_heads, head_dim)
            v = (b["attn_v"] @ h).reshape(kv_heads, head_dim)
            q, k = rope(q, pos), rope(k, pos)
            cache_k[i].append(k)
            cache_v[i].append(v)
            keys = xp.stack(cache_k[i])      # [pos + 1, kv_heads, head_dim]
            values = xp.stack(cache_v[i])
            ctx = []
            for hq in range(heads):
                g = hq // group
                scores = keys[:, g, :] @ q[hq] / np.sqrt(head_dim)
                ctx.append(softmax(scores) @ values[:, g, :])
            x = x + b["attn_output"] @ xp.concatenate(ctx)
            h = rms(x, b["ffn_norm"])
            x = x + b["ffn_down"] @ (silu(b["ffn_gate"] @ h) *
                                     (b["ffn_up"] @ h))
        if pos >= len(prompt) - 1:
            logits_steps.append(lm_head @ rms(x, out_norm))

    vocab = lm_head.shape[0]
    got = np.fromfile(args.logits, dtype=np.float32)
    if got.size != len(logits_steps) * vocab:
        sys.exit("%s holds %d floats, expected %d steps x %d" %
                 (args.logits, got.size, len(logits_steps), vocab))
    got = got.reshape(len(logits_steps), vocab)
    ok = True
    for step, ref in enumerate(logits_steps):
        err = float(np.abs(got[step] - ref).max())
        bound = args.tolerance * (1 + float(np.abs(ref).max()))
        same = int(np.argmax(got[step])) == int(np.argmax(ref))
        print("step %d: max error %.3e (bound %.3e), argmax %s" %
              (step, err, bound, "same" if same else "different"))
        ok = ok and err <= bound
    print("reference: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
