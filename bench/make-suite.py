#!/usr/bin/env python3
"""Compiles a cachet-bench suite: AOT artifacts plus suite.json.

Runs where MLIR is (it calls cachet-run --emit --no-run); the suite folder
then travels to the GPU server, where `cachet-bench DIR` runs it with the
runtime alone. Cases:

  attention  pp{Sq} @ d{depth}: Sq new tokens after `depth` cached ones,
             causal, GQA; KV f16 (head-major cache) and q8_0 / q4_0 (packed
             ggml blocks, token-major as llama.cpp stores them; rewrites on,
             cachet-dequant-once-kv dequantizes them once into head-major f16);
             a bf16 model's: bf16 Q with a bf16 or q8_0 token-major cache
             (dequantized to bf16)
  decode     tg{1,4} @ d{depth}: 1 or 4 new tokens after `depth` cached ones,
             causal, GQA, token-major KV f16 / bf16 / q8_0 / q4_0, and split
             q8_0 (i8 values and f16 scales dequantized by generics, as
             cachet-gen --kv=q8_0 writes them; the rate is K+V bytes per
             second)
  tg         a Llama-3-8B-shaped bf16 mat-vec chain (bench/llama3_decode_chain.py)
  kernel     one kernel each: a mat-vec, a small-batch mat-mul (mm4, mm8: 4
             or 8 tokens' x times the weight read transposed), a prefill
             linear layer (gemm512: 512 tokens, bf16 and f16 at the
             mat-vec shapes and Llama-3-8B's K/V projection 1024x4096, and
             q8_0 / q4_0 blocks dequantized to bf16; FLOP/s), a
             prefill's gate / up / SiLU (glu512: two GEMMs over the same
             x and their epilogue, one kernel), and
             the dequant-transpose of one K cache (bytes read + written)
  launch     launch overhead: 1 and 64 dependent 64x64 f32 mat-vecs (a
             kernel each, next to nothing to compute); cachet-bench prints
             the kernel span and the host's wall time per launch
  grid       with --grid only: q8_0 / q4_0 token-major caches, GQA 1 / 4 / 8
             (Hq 32), 1, 4, 16, 64 and 512 new tokens after 512, 4096, 32768
             and 65536 cached ones: the dequant-once decision's A/B

Usage:
  bench/make-suite.py -o DIR [--preset=h200|small] [--target=nvvm|spirv|rocdl]
                      [--chip=sm_90] [--profile=h200] [--prefetch=auto]
                      [--matvec-kernel=...] [--attention-kernel=...]
                      [--compile-options=...] [--only=TEXT] [--grid]
                      [--cachet-run=PATH]

`small` has shapes a CPU (lavapipe) runs in seconds; `h200` has the shapes of
docs/BENCHMARKS.md (Hq 32, Hkv 8, D 128; Llama-3-8B mat-vecs).
`--target=spirv --attention-kernel=mma` builds the attention cases with the
mma kernel's KHR cooperative matrices (a Vulkan device with
VK_KHR_cooperative_matrix runs them; elsewhere cachet-bench reports them
unsupported).
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ggml block formats: (bytes per block, values per block).
BLOCKS = {"q8_0": (34, 32), "q4_0": (18, 32), "q4_1": (20, 32),
          "q5_0": (22, 32), "q5_1": (24, 32), "iq4_nl": (18, 32),
          "q2_K": (84, 256), "q3_K": (110, 256), "q4_K": (144, 256),
          "q5_K": (176, 256),
          "q6_K": (210, 256), "tq2_0": (66, 256),
          "tq1_0": (54, 256)}

PRESETS = {
    "h200": {
        "attention": dict(hq=32, hkv=8, d=128, sq=512,
                          depths=[4096, 32768, 65536],
                          decode_depths=[4096, 32768, 65536]),
        "chain": dict(layers=2, dims=(4096, 1024, 14336)),
        "matvec": [(4096, 4096), (14336, 4096), (4096, 14336)],
        "transpose": dict(hkv=8, d=128, depth=32768),
        "gemm": 512,
        # The prefill GEMMs' shapes beyond the mat-vec ones: Llama-3-8B's K
        # and V projections (1024 weight rows: 32 workgroups of 128 x 128
        # tiles at 512 tokens, run 133).
        "gemm_extra": [(1024, 4096)],
        "glu": (4096, 14336),
    },
    "small": {
        "attention": dict(hq=8, hkv=2, d=64, sq=16, depths=[64, 256],
                          decode_depths=[256]),
        "chain": dict(layers=1, dims=(256, 64, 512)),
        "matvec": [(512, 256)],
        "transpose": dict(hkv=2, d=64, depth=256),
        "gemm": 64,
        "glu": (256, 512),
    },
}


def decode_mlir(kv, hq, hkv, d, sq, depth):
    """Attention of `sq` new tokens (decode; or a bf16 model's prefill) over
    a token-major cache (as llama.cpp and front ends
    with an appended KV cache keep it): f16 / bf16 values or packed blocks
    (dequantized to f16, or to bf16 with bf16 queries for "q8_0-bf16" /
    "q4_0-bf16", as a bf16 model has them)."""
    s = depth + sq
    scale = 1.0 / math.sqrt(d)
    elt = "bf16" if kv.endswith("bf16") else "f16"
    kv = kv.removesuffix("-bf16")
    q = f"tensor<{hq}x{sq}x{d}x{elt}>"
    cache = f"tensor<{s}x{hkv}x{d}x{elt}>"
    attend = (f"  %o = cachet.attention %q, %k, %v layout <token_major> scale"
              f" {scale!r} causal {depth} : {q}, {cache}, {cache} -> {q}")
    if kv in ("f16", "bf16"):
        return "\n".join([
            f"func.func @attention(%q: {q}, %k: {cache}, %v: {cache}) -> {q} {{",
            attend, f"  return %o : {q}", "}"])
    if kv == "q8_0-split":
        # i8 values and f16 scales per 32 values, dequantized by generics as
        # cachet-gen's layers (--kv=q8_0) and front ends write them.
        values = f"tensor<{s}x{hkv}x{d}xi8>"
        scales = f"tensor<{s}x{hkv}x{d // 32}xf16>"
        lines = [f"func.func @attention(%q: {q}, %kq: {values}, %ks: {scales},"
                 f" %vq: {values}, %vs: {scales}) -> {q} {{"]
        for name in ("k", "v"):
            lines += [
                f"  %{name}e = tensor.empty() : {cache}",
                f"  %{name} = linalg.generic {{indexing_maps = ["
                "affine_map<(p, h, x) -> (p, h, x)>, "
                "affine_map<(p, h, x) -> (p, h, x floordiv 32)>, "
                "affine_map<(p, h, x) -> (p, h, x)>], iterator_types = "
                "[\"parallel\", \"parallel\", \"parallel\"]}"
                f" ins(%{name}q, %{name}s : {values}, {scales})"
                f" outs(%{name}e : {cache}) {{",
                f"  ^bb0(%qv: i8, %sv: f16, %o: {elt}):",
                "    %f = arith.sitofp %qv : i8 to f32",
                "    %sf = arith.extf %sv : f16 to f32",
                "    %m = arith.mulf %f, %sf : f32",
                f"    %y = arith.truncf %m : f32 to {elt}",
                f"    linalg.yield %y : {elt}",
                f"  }} -> {cache}"]
        return "\n".join(lines + [attend, f"  return %o : {q}", "}"])
    _, per_block = BLOCKS[kv]
    packed = f"tensor<{s}x{hkv}x{d // per_block}x!cachet.{kv}>"
    return "\n".join([
        f"func.func @attention(%q: {q}, %kq: {packed}, %vq: {packed}) -> {q} {{",
        f"  %k = cachet.dequantize %kq : {packed} -> {cache}",
        f"  %v = cachet.dequantize %vq : {packed} -> {cache}",
        attend, f"  return %o : {q}", "}"])


def kv_bytes(kv, hkv, d, positions):
    """Bytes of K and V of `positions` positions."""
    if kv in ("f16", "bf16"):
        return 2 * positions * hkv * d * 2
    block_bytes, per_block = BLOCKS[kv]
    return 2 * positions * hkv * d // per_block * block_bytes


def attention_mlir(kv, hq, hkv, d, sq, depth):
    s = depth + sq
    scale = 1.0 / math.sqrt(d)
    q = f"tensor<{hq}x{sq}x{d}xf16>"
    if kv == "f16":
        cache = f"tensor<{hkv}x{s}x{d}xf16>"
        return "\n".join([
            f"func.func @attention(%q: {q}, %k: {cache}, %v: {cache}) -> {q} {{",
            f"  %o = cachet.attention %q, %k, %v layout <head_major> scale {scale!r}"
            f" causal {depth} : {q}, {cache}, {cache} -> {q}",
            f"  return %o : {q}",
            "}"])
    _, per_block = BLOCKS[kv]
    packed = f"tensor<{s}x{hkv}x{d // per_block}x!cachet.{kv}>"
    cache = f"tensor<{s}x{hkv}x{d}xf16>"
    return "\n".join([
        f"func.func @attention(%q: {q}, %kq: {packed}, %vq: {packed}) -> {q} {{",
        f"  %k = cachet.dequantize %kq : {packed} -> {cache}",
        f"  %v = cachet.dequantize %vq : {packed} -> {cache}",
        f"  %o = cachet.attention %q, %k, %v layout <token_major> scale {scale!r}"
        f" causal {depth} : {q}, {cache}, {cache} -> {q}",
        f"  return %o : {q}",
        "}"])


def attention_flops(hq, d, sq, depth):
    # Query i sees depth + i + 1 keys; QK^T and PV are 2 flops per product.
    keys = sq * depth + sq * (sq + 1) // 2
    return 4 * hq * d * keys


def product(w, x, rows, cols, element, batch):
    """The lines of %y = w x (a linalg.matvec), or with `batch` tokens
    x w^T (a linalg.matmul reading w transposed, as front ends write a
    linear layer), accumulated in f32 from zero; and the types of x and
    y."""
    lead = f"{batch}x" if batch else ""
    xt = f"tensor<{lead}{cols}x{element}>"
    yt = f"tensor<{lead}{rows}xf32>"
    wt = f"tensor<{rows}x{cols}x{element}>"
    if batch:
        op = (f"  %y = linalg.matmul indexing_maps = ["
              "affine_map<(m, n, k) -> (m, k)>, "
              "affine_map<(m, n, k) -> (n, k)>, "
              "affine_map<(m, n, k) -> (m, n)>] "
              f"ins({x}, {w} : {xt}, {wt}) outs(%f : {yt}) -> {yt}")
    else:
        op = (f"  %y = linalg.matvec ins({w}, {x} : {wt}, {xt})"
              f" outs(%f : {yt}) -> {yt}")
    return [f"  %e = tensor.empty() : {yt}",
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {yt}) -> {yt}",
            op], xt, yt


def matvec_mlir(rows, cols, batch=0, element="bf16"):
    lines, xt, yt = product("%w", "%x", rows, cols, element, batch)
    return "\n".join([
        f"func.func @matvec(%w: tensor<{rows}x{cols}x{element}> {{cachet.weight}},"
        f" %x: {xt}) -> {yt} {{",
        "  %z = arith.constant 0.0 : f32"] + lines + [
        f"  return %y : {yt}",
        "}"])


def launch_mlir(launches, size=64):
    """`launches` dependent mat-vecs y_i = w y_{i-1} of a `size`-square f32
    weight: one small kernel each (a mat-vec is never fused with the next),
    so the kernel span per launch is the cost of a launch."""
    t = f"tensor<{size}xf32>"
    wt = f"tensor<{size}x{size}xf32>"
    lines = [f"func.func @launches(%w: {wt} {{cachet.weight}}, %x: {t}) -> {t} {{",
             "  %z = arith.constant 0.0 : f32",
             f"  %e = tensor.empty() : {t}",
             f"  %f = linalg.fill ins(%z : f32) outs(%e : {t}) -> {t}"]
    prev = "%x"
    for i in range(launches):
        lines.append(f"  %y{i} = linalg.matvec ins(%w, {prev} : {wt}, {t})"
                     f" outs(%f : {t}) -> {t}")
        prev = f"%y{i}"
    lines += [f"  return {prev} : {t}", "}"]
    return "\n".join(lines)


def glu_mlir(tokens, hidden, ffn, element="bf16"):
    """A Llama MLP's first half as the model generator writes it: gate and
    up projections of the same x (linalg.matmul reading each weight
    transposed, f32 results from zero) and silu(gate) * up rounded to
    `element` (cachet-lower-matvec makes it one GEMM kernel with the
    element-wise op in its epilogue)."""
    xt = f"tensor<{tokens}x{hidden}x{element}>"
    wt = f"tensor<{ffn}x{hidden}x{element}>"
    yt = f"tensor<{tokens}x{ffn}xf32>"
    ot = f"tensor<{tokens}x{ffn}x{element}>"
    maps = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
            "affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]")
    ident = "affine_map<(m, n) -> (m, n)>"
    lines = [f"func.func @glu(%x: {xt}, %wg: {wt} {{cachet.weight}},"
             f" %wu: {wt} {{cachet.weight}}) -> {ot} {{",
             "  %z = arith.constant 0.0 : f32"]
    for n in ("g", "u"):
        lines += [f"  %{n}e = tensor.empty() : {yt}",
                  f"  %{n}f = linalg.fill ins(%z : f32) outs(%{n}e : {yt}) -> {yt}",
                  f"  %{n} = linalg.matmul {maps} ins(%x, %w{n} : {xt}, {wt})"
                  f" outs(%{n}f : {yt}) -> {yt}"]
    lines += [f"  %oe = tensor.empty() : {ot}",
              f"  %o = linalg.generic {{indexing_maps = [{ident}, {ident}, {ident}],"
              " iterator_types = [\"parallel\", \"parallel\"]}"
              f" ins(%g, %u : {yt}, {yt}) outs(%oe : {ot}) {{",
              f"  ^bb0(%a: f32, %b: f32, %c: {element}):",
              "    %one = arith.constant 1.0 : f32",
              "    %n = arith.negf %a : f32",
              "    %ex = math.exp %n : f32",
              "    %den = arith.addf %one, %ex : f32",
              "    %sig = arith.divf %a, %den : f32",
              "    %p = arith.mulf %sig, %b : f32",
              f"    %t = arith.truncf %p : f32 to {element}",
              f"    linalg.yield %t : {element}",
              f"  }} -> {ot}",
              f"  return %o : {ot}",
              "}"]
    return "\n".join(lines)


def block_matvec_mlir(fmt, rows, cols, batch=0, element="f16"):
    """A mat-vec over packed ggml blocks as a front end writes it: the
    weight dequantized to `element` (f16, or bf16 as a bf16 model's
    decoder has it) by cachet.dequantize, activations of that type. For
    "q8_0-split", i8 values and f16 scales dequantized by a generic; for
    "q4_0-split", i4 values (two per byte) less 8 and f16 scales. With
    `batch`, the mat-mul of `batch` tokens (see product)."""
    if fmt.endswith("-split"):
        qt = "i4" if fmt == "q4_0-split" else "i8"
        params = (f"%q: tensor<{rows}x{cols}x{qt}> {{cachet.weight}},"
                  f" %s: tensor<{rows}x{cols // 32}xf16> {{cachet.weight}}")
        value = (["    %zp = arith.constant 8.0 : f16",
                  "    %i = arith.extui %qv : i4 to i32",
                  "    %u = arith.uitofp %i : i32 to f16",
                  "    %f = arith.subf %u, %zp : f16"] if qt == "i4" else
                 ["    %f = arith.sitofp %qv : i8 to f16"])
        dequantize = [
            f"  %de = tensor.empty() : tensor<{rows}x{cols}xf16>",
            "  %d = linalg.generic {indexing_maps = ["
            "affine_map<(r, c) -> (r, c)>, "
            "affine_map<(r, c) -> (r, c floordiv 32)>, "
            "affine_map<(r, c) -> (r, c)>], "
            "iterator_types = [\"parallel\", \"parallel\"]}"
            f" ins(%q, %s : tensor<{rows}x{cols}x{qt}>, "
            f"tensor<{rows}x{cols // 32}xf16>)"
            f" outs(%de : tensor<{rows}x{cols}xf16>) {{",
            f"  ^bb0(%qv: {qt}, %sv: f16, %o: f16):"] + value + [
            "    %m = arith.mulf %f, %sv : f16",
            "    linalg.yield %m : f16",
            f"  }} -> tensor<{rows}x{cols}xf16>"]
    else:
        w = f"tensor<{rows}x{cols // BLOCKS[fmt][1]}x!cachet.{fmt}>"
        params = f"%w: {w} {{cachet.weight}}"
        dequantize = [f"  %d = cachet.dequantize %w : {w} -> "
                      f"tensor<{rows}x{cols}x{element}>"]
    lines, xt, yt = product("%d", "%x", rows, cols, element, batch)
    return "\n".join([
        f"func.func @matvec({params}, %x: {xt}) -> {yt} {{",
        "  %z = arith.constant 0.0 : f32"] + dequantize + lines + [
        f"  return %y : {yt}",
        "}"])


def transpose_mlir(kv, hkv, d, depth):
    _, per_block = BLOCKS[kv]
    packed = f"tensor<{depth}x{hkv}x{d // per_block}x!cachet.{kv}>"
    out = f"tensor<{hkv}x{depth}x{d}xf16>"
    return "\n".join([
        f"func.func @dequant_transpose(%kq: {packed}) -> {out} {{",
        f"  %e = tensor.empty() : {out}",
        f"  %k = cachet.dequant_transpose %kq into %e : {packed} -> {out}",
        f"  return %k : {out}",
        "}"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="h200")
    parser.add_argument("--target", default="nvvm")
    parser.add_argument("--chip", default="")
    parser.add_argument("--profile", default="h200")
    parser.add_argument("--prefetch", default="auto")
    parser.add_argument("--matvec-kernel", default="")
    parser.add_argument("--attention-kernel", default="",
                        help="auto (cachet-run's default), scalar, tiled, "
                             "mma or reference")
    parser.add_argument("--compile-options", default="",
                        help="more cachet-compile options, e.g. "
                             "'matvec-options={rows-per-subgroup=2}'")
    parser.add_argument("--grid", action="store_true",
                        help="also the dequant-once grid: q8_0 / q4_0, GQA "
                             "1 / 4 / 8, 1..512 new tokens, depth "
                             "512..65536")
    parser.add_argument("--only", default="",
                        help="only cases whose table, label or test contain this")
    parser.add_argument("--cachet-run",
                        default=os.path.join(HERE, "..", "build", "bin",
                                             "cachet-run"))
    args = parser.parse_args()
    preset = PRESETS[args.preset]
    os.makedirs(args.output, exist_ok=True)

    cases = []

    def add(table, label, test, entry, mlir, **numbers):
        if args.only and args.only not in f"{table} {label} {test}":
            return
        name = f"{table}-{label}-{test}".replace(" @ ", "-").replace(" ", "-")
        name = "".join(c for c in name if c.isalnum() or c in "-_.")
        source = os.path.join(args.output, name + ".mlir")
        with open(source, "w") as f:
            f.write(mlir + "\n")
        command = [args.cachet_run, source, f"--entry={entry}",
                   f"--target={args.target}", f"--profile={args.profile}",
                   f"--prefetch={args.prefetch}",
                   f"--emit={os.path.join(args.output, name)}", "--no-run"]
        if args.chip:
            command.append(f"--chip={args.chip}")
        if args.matvec_kernel:
            command.append(f"--matvec-kernel={args.matvec_kernel}")
        if args.attention_kernel:
            command.append(f"--attention-kernel={args.attention_kernel}")
        if args.compile_options:
            command.append(f"--compile-options={args.compile_options}")
        print(" ".join(command), file=sys.stderr)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        cases.append(dict(artifact=name, table=table, label=label, test=test,
                          command=" ".join(command[1:]), **numbers))

    a = preset["attention"]
    for depth in a["depths"]:
        for kv in ["f16", "q8_0", "q4_0"]:
            add("attention", kv, f"pp{a['sq']} @ d{depth}", "attention",
                attention_mlir(kv, a["hq"], a["hkv"], a["d"], a["sq"], depth),
                tokens=a["sq"],
                flops=attention_flops(a["hq"], a["d"], a["sq"], depth))
        # A bf16 model's prefill: bf16 Q and a bf16 cache, or a q8_0 cache
        # dequantized to bf16 (token-major, as its decoder appends it).
        for kv in ["bf16", "q8_0-bf16"]:
            add("attention", kv, f"pp{a['sq']} @ d{depth}", "attention",
                decode_mlir(kv, a["hq"], a["hkv"], a["d"], a["sq"], depth),
                tokens=a["sq"],
                flops=attention_flops(a["hq"], a["d"], a["sq"], depth))

    for depth in a["decode_depths"]:
        for sq in (1, 4):
            for kv in ["f16", "bf16", "q8_0", "q4_0", "q8_0-bf16",
                       "q4_0-bf16", "q8_0-split", "q8_0-split-bf16"]:
                add("decode", kv, f"tg{sq} @ d{depth}", "attention",
                    decode_mlir(kv, a["hq"], a["hkv"], a["d"], sq, depth),
                    tokens=sq,
                    bytes=kv_bytes(kv.removesuffix("-bf16")
                                   .removesuffix("-split"), a["hkv"],
                                   a["d"], depth + sq))

    if args.grid:
        # Issue 20's dequant-once grid: rewrites off (blocks decoded in the
        # attention kernel) against on (dequant-once; force it with
        # --compile-options='dequant-once-options={force=true
        # min-queries=1}') over depth, new tokens and GQA.
        for kv in ["q8_0", "q4_0"]:
            for group in (1, 4, 8):
                hkv = a["hq"] // group
                for sq in (1, 4, 16, 64, 512):
                    for depth in (512, 4096, 32768, 65536):
                        add("grid", f"{kv} g{group}", f"pp{sq} @ d{depth}",
                            "attention",
                            decode_mlir(kv, a["hq"], hkv, a["d"], sq, depth),
                            tokens=sq,
                            flops=attention_flops(a["hq"], a["d"], sq, depth))

    c = preset["chain"]
    h, kvd, f = c["dims"]
    chain = subprocess.run(
        [sys.executable, os.path.join(HERE, "llama3_decode_chain.py"),
         str(c["layers"]), f"{h},{kvd},{f}"],
        check=True, capture_output=True, text=True).stdout
    weights = c["layers"] * 2 * (2 * h * h + 2 * kvd * h + 3 * f * h)
    add("tg", f"bf16 {c['layers']} layers {h}/{kvd}/{f}", "tg1", "decode_chain",
        chain, bytes=weights, tokens=1)
    for fmt in ["q8_0", "q4_0", "q8_0-split", "q4_0-split", "q4_K"]:
        # The same chain over packed weights, f16 activations (a GGUF
        # model's), and over split q8_0 (i8 values and f16 scales, the same
        # bytes); bytes: the packed weights.
        block_bytes, per_block = BLOCKS[fmt.removesuffix("-split")]
        packed = subprocess.run(
            [sys.executable, os.path.join(HERE, "llama3_decode_chain.py"),
             str(c["layers"]), f"{h},{kvd},{f}", f"--weights={fmt}"],
            check=True, capture_output=True, text=True).stdout
        add("tg", f"{fmt} {c['layers']} layers {h}/{kvd}/{f}", "tg1",
            "decode_chain", packed.replace("bf16", "f16"),
            bytes=weights // 2 // per_block * block_bytes, tokens=1)

    for rows, cols in preset["matvec"]:
        add("kernel", "matvec bf16", f"{rows}x{cols}", "matvec",
            matvec_mlir(rows, cols), bytes=2 * rows * cols + 2 * cols + 4 * rows)
    for fmt in ["q8_0", "q4_0", "q8_0-split", "q4_0-split", "q2_K", "q3_K", "q4_K",
                "q5_K", "q6_K", "q4_1",
                "q5_0", "q5_1", "iq4_nl", "tq2_0", "tq1_0"]:
        block_bytes, per_block = BLOCKS[fmt.removesuffix("-split")]
        for rows, cols in preset["matvec"]:
            # Bytes: the packed weight (what the targets count), x and y.
            add("kernel", f"matvec {fmt}", f"{rows}x{cols}", "matvec",
                block_matvec_mlir(fmt, rows, cols),
                bytes=rows * cols // per_block * block_bytes + 2 * cols
                + 4 * rows)

    # The packed formats a bf16 model's decoder reads: each value rounded
    # to bf16 (the dequantize's element type), bf16 x.
    for fmt in ["q8_0", "q4_0", "q4_K", "q6_K"]:
        block_bytes, per_block = BLOCKS[fmt]
        for rows, cols in preset["matvec"]:
            add("kernel", f"matvec {fmt} bf16", f"{rows}x{cols}", "matvec",
                block_matvec_mlir(fmt, rows, cols, element="bf16"),
                bytes=rows * cols // per_block * block_bytes + 2 * cols
                + 4 * rows)

    # Small-batch mat-muls (speculative decoding, batched decode): the
    # weight read once for 4 or 8 tokens; bytes as for the mat-vecs.
    for batch in (4, 8):
        for rows, cols in preset["matvec"]:
            add("kernel", f"mm{batch} bf16", f"{rows}x{cols}", "matvec",
                matvec_mlir(rows, cols, batch),
                bytes=2 * rows * cols + batch * (2 * cols + 4 * rows),
                tokens=batch)
        for fmt in ["q8_0", "q4_0", "q4_0-split", "q4_K", "q6_K"]:
            block_bytes, per_block = BLOCKS[fmt.removesuffix("-split")]
            for rows, cols in preset["matvec"]:
                add("kernel", f"mm{batch} {fmt}", f"{rows}x{cols}", "matvec",
                    block_matvec_mlir(fmt, rows, cols, batch),
                    bytes=rows * cols // per_block * block_bytes
                    + batch * (2 * cols + 4 * rows), tokens=batch)

    # Prefill linear layers: a ubatch of tokens' x times the weight read
    # transposed (the mma-sync GEMM on NVVM); the rate is FLOP/s.
    g = preset["gemm"]
    for element in ("bf16", "f16"):
        for rows, cols in preset["matvec"] + preset.get("gemm_extra", []):
            add("kernel", f"gemm{g} {element}", f"{rows}x{cols}", "matvec",
                matvec_mlir(rows, cols, g, element),
                flops=2 * g * rows * cols, tokens=g)
    # A prefill's gate / up / SiLU: two GEMMs over the same x in one kernel
    # with the element-wise op in its epilogue (the model's largest GEMM).
    if "glu" in preset:
        hidden, ffn = preset["glu"]
        add("kernel", f"glu{g} bf16", f"2x{ffn}x{hidden}", "glu",
            glu_mlir(g, hidden, ffn), flops=2 * g * 2 * ffn * hidden, tokens=g)
    # A quantized model's prefill linear layers: packed blocks dequantized
    # to bf16 (a bf16 model's), bf16 x.
    for fmt in ("q8_0", "q4_0"):
        for rows, cols in preset["matvec"]:
            add("kernel", f"gemm{g} {fmt} bf16", f"{rows}x{cols}", "matvec",
                block_matvec_mlir(fmt, rows, cols, g, element="bf16"),
                flops=2 * g * rows * cols, tokens=g)

    for launches in (1, 64):
        add("launch", "matvec f32 64x64",
            f"{launches} launch{'es' if launches > 1 else ''}", "launches",
            launch_mlir(launches))

    t = preset["transpose"]
    for kv in ["q8_0", "q4_0"]:
        block_bytes, per_block = BLOCKS[kv]
        values = t["depth"] * t["hkv"] * t["d"]
        add("kernel", f"dequant_transpose {kv}",
            f"{t['depth']}x{t['hkv']}x{t['d']}", "dequant_transpose",
            transpose_mlir(kv, t["hkv"], t["d"], t["depth"]),
            bytes=values // per_block * block_bytes + 2 * values)

    with open(os.path.join(args.output, "suite.json"), "w") as f:
        extra = "".join(f" {o}" for o in [
            f"prefetch={args.prefetch}" if args.prefetch != "auto" else "",
            f"attention-kernel={args.attention_kernel}"
            if args.attention_kernel else "",
            args.compile_options] if o)
        json.dump(dict(name=f"{args.preset} {args.target} profile={args.profile}{extra}",
                       cases=cases), f, indent=1)
    print(f"{len(cases)} cases in {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
