#!/usr/bin/env python3
"""Prints one prefill attention as a front end writes it.

Usage: attention.py HQ HKV SQ S D TYPE KV [causal=N] [mask] [head_major]

Q [HQ][SQ][D] of TYPE (f16, bf16 or f32); K and V of S positions: TYPE
(token-major [S][HKV][D], or head-major [HKV][S][D] with head_major), or
KV = q8_0 / q4_0 blocks token-major, dequantized to TYPE by
cachet.dequantize; an additive [SQ][S] mask of TYPE with mask.
"""
import sys

hq, hkv, sq, s, d = (int(v) for v in sys.argv[1:6])
t, kv = sys.argv[6], sys.argv[7]
opts = sys.argv[8:]
causal = next((o.split("=")[1] for o in opts if o.startswith("causal=")), None)
mask = "mask" in opts
head_major = "head_major" in opts

q_type = f"tensor<{hq}x{sq}x{d}x{t}>"
kv_shape = f"{hkv}x{s}x{d}" if head_major else f"{s}x{hkv}x{d}"
kv_type = f"tensor<{kv_shape}x{t}>"
args = [f"%q: {q_type}"]
body = []
if kv in ("f16", "bf16", "f32"):
    args += [f"%k: {kv_type}", f"%v: {kv_type}"]
else:
    packed = f"tensor<{s}x{hkv}x{d // 32}x!cachet.{kv}>"
    args += [f"%kq: {packed}", f"%vq: {packed}"]
    for n in ("k", "v"):
        body.append(f"  %{n} = cachet.dequantize %{n}q : {packed} -> {kv_type}")
operands = "%q, %k, %v"
types = [q_type, kv_type, kv_type]
if mask:
    args.append(f"%m: tensor<{sq}x{s}x{t}>")
    operands += " mask %m"
    types.append(f"tensor<{sq}x{s}x{t}>")
layout = "head_major" if head_major else "token_major"
extra = f" causal {causal}" if causal is not None else ""
scale = 1.0 / d ** 0.5
print(f"func.func @attention({', '.join(args)}) -> {q_type} {{")
print("\n".join(body))
print(f"  %o = cachet.attention {operands} layout <{layout}> "
      f"scale {scale:.6f}{extra}")
print(f"      : {', '.join(types)} -> {q_type}")
print(f"  return %o : {q_type}")
print("}")
