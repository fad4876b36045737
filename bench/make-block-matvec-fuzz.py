#!/usr/bin/env python3
"""Emits random mat-vecs over block-quantized weights as AOT artifacts.

For a GPU server without MLIR: each artifact is run there with
`cachet-runner ART --check --compare-rewrites`, which checks the result
against the CPU reference (decoding the same blocks) and rewrites off
against on byte for byte. Each case draws a format (the six ggml formats),
the dequantized element type (f16, bf16, f32), 1-3 sibling mat-vecs over
one x with random row counts (odd ones included, so that two rows per
subgroup falls back to one), the columns (32 x 2..160 blocks, even counts
mostly: odd q8_0 / q4_0 / q5_0 / iq4_nl counts are rows that are not whole
words, which keep the dequantize's kernel), and for two equal siblings
sometimes a silu(gate) * up epilogue. The function is written by
test/Integration/Inputs/block_matvec.py.

Split q8_0 weights (i8 values and f16 scales dequantized by a generic, in
one of block_matvec.py's --split forms) are drawn as a seventh format, and
the k-quants q2_K, q3_K, q4_K, q5_K and q6_K and the ternary tq2_0 and
tq1_0 (super-blocks of 256 values: 256 x 1..20 columns; odd q3_K / q6_K /
tq2_0 / tq1_0 counts are rows that are not whole words) as seven more.

--gemm gives every random case a batch of 9..64 tokens (block_matvec.py
--batch: x W^T as a linalg.matmul, more rows of x than small-batch) and
an f16 or bf16 element: on NVVM the mma-sync GEMM, whose weight copy is
written by cachet-lower-matvec's dequantization kernel (one thread per 8
values of a row); odd row counts and f32 keep the generic kernels.

--case="ARGS[;COMPILE-OPTIONS]" (repeatable) emits the given
block_matvec.py ARGS (e.g. "q4_0 f16 275,275 4160 --epilogue") instead of
random cases, compiled with cachet-run's --compile-options when given.

Usage: bench/make-block-matvec-fuzz.py -o DIR [--seed=N] [--count=N]
           [--gemm] [--target=nvvm] [--chip=sm_90] [--profile=h200] [--cachet-run=PATH]
           [--case=SPEC ...]
DIR gets art/<case>/ and mlir/<case>.mlir.
"""
import argparse
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FORMATS = ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "q8_0-split",
           "q4_0-split",
           "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "tq2_0", "tq1_0"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-o", dest="out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=16)
    p.add_argument("--target", default="nvvm")
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--profile", default="h200")
    p.add_argument("--cachet-run",
                   default=os.path.join(ROOT, "build", "bin", "cachet-run"))
    p.add_argument("--case", action="append", default=[])
    p.add_argument("--gemm", action="store_true",
                   help="random cases of 9..64 tokens (prefill GEMMs)")
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.out, "mlir"), exist_ok=True)
    failed = 0
    cases = []
    for spec in a.case:
        args, _, options = spec.partition(";")
        name = "x-" + "-".join(w.lstrip("-").replace("=", "_").replace(",", "_")
                               for w in args.split())
        if options:
            name += "-o" + str(len(cases))
        cases.append((name, args.split(), options))
    for i in range(0 if a.case else a.count):
        fmt = rng.choice(FORMATS)
        element = rng.choice(["f16", "f16", "bf16", "f32"])
        per_block = 256 if fmt.endswith("_K") or fmt.startswith("tq") \
            else 32
        blocks = rng.randrange(2, 161) if per_block == 32 else \
            rng.randrange(1, 21)
        if rng.random() < 0.85:
            blocks += blocks % 2
        siblings = rng.choice([1, 1, 2, 3])
        rows = [rng.randrange(1, 300) for _ in range(siblings)]
        extra = []
        if siblings == 2 and rng.random() < 0.5:
            rows[1] = rows[0]
            extra = ["--epilogue"]
        if fmt.endswith("-split"):
            fmt = fmt.removesuffix("-split")
            extra.append("--split=" + rng.choice(["flat", "f32", "blocks"]))
            element = rng.choice(["f16", "bf16", "f32"])
        if a.gemm:
            # Mostly even row counts (the GEMM stores pairs of results).
            rows = [r + r % 2 if rng.random() < 0.85 else r for r in rows]
            if extra and extra[0] == "--epilogue":
                rows[1] = rows[0]
            element = rng.choice(["f16", "bf16"])
            extra.append(f"--batch={rng.randrange(9, 65)}")
        name = (f"c{a.seed}-{i}-{fmt}-{element}-{'_'.join(map(str, rows))}"
                f"x{per_block * blocks}" + "".join(
                    e.replace("--split=", "-split_").replace("--batch=", "-m")
                    for e in extra
                    if e.startswith("--split") or e.startswith("--batch")))
        cases.append((name, [fmt, element, ",".join(map(str, rows)),
                             str(per_block * blocks)] + extra, ""))
    for name, args, options in cases:
        mlir = subprocess.run(
            [sys.executable,
             os.path.join(ROOT, "test", "Integration", "Inputs",
                          "block_matvec.py")] + args,
            check=True, capture_output=True, text=True).stdout
        source = os.path.join(a.out, "mlir", name + ".mlir")
        with open(source, "w") as f:
            f.write(mlir)
        cmd = [a.cachet_run, source, "--entry=block_matvec",
               f"--target={a.target}", f"--profile={a.profile}",
               f"--emit={os.path.join(a.out, 'art', name)}", "--no-run"]
        if a.target == "nvvm":
            cmd.append(f"--chip={a.chip}")
        if options:
            cmd.append(f"--compile-options={options}")
        rc = subprocess.call(cmd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        failed += rc != 0
        print(f"{name}: {'emitted' if rc == 0 else 'FAILED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
