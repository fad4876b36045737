#!/usr/bin/env python3
"""Emits random prefill attentions over packed KV caches as AOT artifacts.

For a GPU server without MLIR: each artifact is run there with
`cachet-runner ART --check --compare-rewrites` (scripts/device/
run-artifacts.sh), which checks the result against the CPU reference and
rewrites off against rewrites on byte for byte. Rewrites off decode the
token-major blocks inside the attention kernel; rewrites on dequantize them
once into the head-major f16 scratch (forced: `force=true min-queries=1`), so
the comparison is between the two paths whatever the cost function says.
With --decode the cases are decode shapes (the decode kernel's), float
caches included.

Each case draws: K and V formats (the six ggml formats, sometimes different
for K and V, sometimes f16 K with packed V), the head dimension (64, 128,
256), KV heads and the group, the new queries (17..200, more than the decode
kernel's rows per KV head), the cached depth (0..2000, so positions are
rarely a multiple of a tile), causal or not, f16 or bf16.

With --chunk-positions=N the scratch is capped at N positions' f16 K+V
(max-scratch-bytes), so that the rewrites-on side runs the chunked
dequant-once: the same bytes as rewrites off are expected.

Usage: bench/make-attention-fuzz.py -o DIR [--seed=N] [--count=N]
                                    [--target=nvvm] [--chip=sm_90]
                                    [--profile=h200] [--cachet-run=PATH]
                                    [--chunk-positions=N]
DIR gets art/<case>/, mlir/<case>.mlir and <case>.remarks, and bin/ and
lib/ with the runner and runtime from build/.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

FORMATS = ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"]


def case_mlir(r, decode=False):
    d = r.choice([64, 128, 128, 256])
    hkv = r.choice([1, 2, 4, 8])
    group = r.choice([1, 2, 4, 8])
    while hkv * group > 16:
        group //= 2
    hq = hkv * group
    if decode:
        # At most 16 rows per KV head: the decode kernel's, at depths that
        # give every split several steps, or none.
        sq = r.choice([1, 1, 2, 4])
        while group * sq > 16:
            sq //= 2
        depth = r.randint(0, 9000)
    else:
        sq = r.randint(17, 200)
        depth = r.randint(0, 2000)
    positions = depth + sq
    causal = r.random() < 0.7
    elem = "bf16" if r.random() < 0.25 else "f16"
    kf = r.choice(FORMATS)
    vf = kf if r.random() < 0.7 else r.choice(FORMATS)
    f16_key = r.random() < 0.1
    if decode and r.random() < 0.2:
        # A float cache: K and V of the query's type, read as they are.
        kf = vf = elem
    name = (f"{'f16' if f16_key else kf}-{vf}-d{d}-h{hq}x{hkv}-sq{sq}"
            f"-p{positions}{'-causal' if causal else ''}-{elem}")
    q = f"tensor<{hq}x{sq}x{d}x{elem}>"
    ft = f"tensor<{positions}x{hkv}x{d}x{elem}>"
    blocks = d // 32

    def packed(fmt):
        return f"tensor<{positions}x{hkv}x{blocks}x!cachet.{fmt}>"

    args = [f"%q: {q}"]
    body = []
    if f16_key:
        args.append(f"%k: {ft}")
        kv = "%k"
    else:
        args.append(f"%kq: {packed(kf)}")
        body.append(f"  %k = cachet.dequantize %kq : {packed(kf)} -> {ft}")
        kv = "%k"
    if kf == elem:
        args = [f"%q: {q}", f"%k: {ft}", f"%v: {ft}"]
        body = []
    else:
        args.append(f"%vq: {packed(vf)}")
        body.append(f"  %v = cachet.dequantize %vq : {packed(vf)} -> {ft}")
    scale = 1.0 / d ** 0.5
    opts = f" causal {depth}" if causal else ""
    body.append(f"  %o = cachet.attention %q, {kv}, %v layout <token_major> "
                f"scale {scale:.9f}{opts}\n      : {q}, {ft}, {ft} -> {q}")
    text = (f"func.func @attention({', '.join(args)}) -> {q} {{\n" +
            "\n".join(body) + f"\n  return %o : {q}\n}}\n")
    # f16 K+V bytes per position (the dequant-once scratch's).
    return name, text, 2 * hkv * 2 * d


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-o", dest="out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=24)
    p.add_argument("--target", default="nvvm")
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--profile", default="h200")
    p.add_argument("--cachet-run", default="build/bin/cachet-run")
    p.add_argument("--decode", action="store_true",
                   help="decode shapes (1, 2 or 4 new tokens, at most 16 "
                        "rows per KV head) and float caches too")
    p.add_argument("--chunk-positions", type=int, default=0,
                   help="cap the scratch at this many positions' f16 K+V "
                        "(max-scratch-bytes), so that it is chunked")
    p.add_argument("--compile-options", default="",
                   help="more cachet-compile options, e.g. "
                        "'attention-options={decode-mma-stages=2}'")
    a = p.parse_args()
    r = random.Random(a.seed)
    for sub in ("art", "mlir", "bin", "lib"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    shutil.copy("build/bin/cachet-runner", os.path.join(a.out, "bin"))
    shutil.copy("build/lib/libcachet_runtime.so", os.path.join(a.out, "lib"))
    env = dict(os.environ)
    env.setdefault("CUDA_HOME", "/usr/local/cuda")
    failed = 0
    for i in range(a.count):
        name, text, position_bytes = case_mlir(r, a.decode)
        name = f"{i:02d}-{name}"
        scratch = ""
        if a.chunk_positions:
            scratch = f" max-scratch-bytes={a.chunk_positions * position_bytes}"
        path = os.path.join(a.out, "mlir", name + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        cmd = [a.cachet_run, path, "--entry=attention", f"--target={a.target}",
               f"--profile={a.profile}", f"--inputs=random:{a.seed + i}",
               "--compile-options=dequant-once-options={force=true "
               f"min-queries=1{scratch}}} {a.compile_options}".rstrip(),
               f"--emit={os.path.join(a.out, 'art', name)}", "--no-run"]
        if a.target != "spirv":
            cmd.append(f"--chip={a.chip}")
        with open(os.path.join(a.out, name + ".remarks"), "w") as log:
            rc = subprocess.call(cmd, stderr=log, env=env)
        staging = "?"
        chunks = ""
        for line in open(os.path.join(a.out, name + ".remarks")):
            m = re.search(r"(\d+) KV chunks of (\d+) positions", line)
            if m:
                chunks = f", {m.group(1)} chunks of {m.group(2)}"
            if "decode flash-attention kernel on mma.sync" in line:
                staging = "decode, mma.sync"
            elif "decode flash-attention kernel" in line:
                staging = ("decode, staged rows" if "double-buffered" in line
                           else "decode")
            elif "K/V blocks double-buffered" in line:
                staging = "async blocks"
            elif "K/V through registers" in line and staging == "?":
                staging = "registers"
        print(f"{name}: {'emitted' if rc == 0 else 'FAILED'} "
              f"({staging}{chunks})")
        failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
