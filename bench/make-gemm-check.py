#!/usr/bin/env python3
"""Emits random prefill mat-muls for the mma-sync GEMM as AOT artifacts.

For a GPU server without MLIR: each artifact is run there with
`cachet-runner ART --check --compare-rewrites` (the CPU reference of the
same IR, and rewrites off against on byte for byte). Each case draws the
element (f16 or bf16), the rows of x (9..320: more than small-batch, tiles
partly outside), the weight rows (even, 2..640) and the columns (a multiple
of 64, 64..1024), written as bench/make-suite.py writes a linear layer (x
times the weight read transposed into a zero-filled f32 result). With
--blocks, the weight is also drawn as packed ggml blocks dequantized to
the element by cachet.dequantize (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl,
which the wgmma GEMM decodes itself, and q4_K, which it does not; columns
then a multiple of 256). Every case is compiled once per --compile-options given, so one set of shapes
checks every GEMM tiling.

Usage: bench/make-gemm-check.py -o DIR [--seed=N] [--count=N]
           [--compile-options=OPTS ...] [--profile=h200] [--chip=CHIP]
           [--target=nvvm|spirv|rocdl]
           [--blocks]
           [--cachet-run=PATH]
DIR gets <variant>/<case>/ (variant v0, v1, ... in the order of the
options; v0 alone without any) and variants.txt (each variant's options).
"""
import argparse
import importlib.util
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_suite():
    spec = importlib.util.spec_from_file_location(
        "make_suite", os.path.join(HERE, "make-suite.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-o", dest="out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=6)
    p.add_argument("--compile-options", action="append", default=[])
    p.add_argument("--profile", default="h200")
    p.add_argument("--target", default="nvvm",
                   help="nvvm (the mma-sync / wgmma GEMMs), spirv or rocdl "
                   "(the tiled GEMM)")
    p.add_argument("--chip", default="",
                   help="e.g. sm_90a (the wgmma GEMM)")
    p.add_argument("--blocks", action="store_true",
                   help="draw block weights too")
    p.add_argument("--cachet-run",
                   default=os.path.join(ROOT, "build", "bin", "cachet-run"))
    args = p.parse_args()
    suite = load_suite()
    rng = random.Random(args.seed)
    cases = []
    for i in range(args.count):
        element = rng.choice(["f16", "bf16"])
        batch = rng.randint(9, 320)
        rows = 2 * rng.randint(1, 320)
        cols = 64 * rng.randint(1, 16)
        fmt = rng.choice(["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl",
                          "q4_K", ""]) if args.blocks else ""
        if fmt:
            if fmt == "q4_K":
                cols = 256 * rng.randint(1, 4)
            cases.append((f"c{i}-{fmt}-{element}-{batch}x{rows}x{cols}",
                          suite.block_matvec_mlir(fmt, rows, cols, batch,
                                                  element)))
            continue
        cases.append((f"c{i}-{element}-{batch}x{rows}x{cols}",
                      suite.matvec_mlir(rows, cols, batch, element)))
    variants = args.compile_options or [""]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "variants.txt"), "w") as f:
        for v, options in enumerate(variants):
            f.write(f"v{v} {options}\n")
    for v, options in enumerate(variants):
        folder = os.path.join(args.out, f"v{v}")
        os.makedirs(folder, exist_ok=True)
        for name, mlir in cases:
            source = os.path.join(folder, name + ".mlir")
            with open(source, "w") as f:
                f.write(mlir + "\n")
            command = [args.cachet_run, source, "--entry=matvec",
                       f"--target={args.target}", f"--profile={args.profile}",
                       f"--emit={os.path.join(folder, name)}", "--no-run"]
            if args.chip:
                command.append(f"--chip={args.chip}")
            if options:
                command.append(f"--compile-options={options}")
            print(" ".join(command), file=sys.stderr)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print(f"{len(cases)} cases x {len(variants)} variants in {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
