"""Writes a function of mat-vecs over block-quantized weights, the way a
front end emits them: each weight a packed ggml-format argument (or, with
--split, q8_0 as int8 values and f16 scales), a cachet.dequantize to the
activation type, a zero fill and a linalg.matvec; siblings over the same x
(Q/K/V), optionally followed by an element-wise epilogue (silu(gate) * up).

  block_matvec.py FORMAT ELEMENT ROWS[,ROWS...] COLS [--epilogue]
                  [--split=flat|f32|blocks|signed] [--batch=M]

--batch=M: a batch of M tokens (speculative decoding, batched decode): x is
[M][COLS] and each projection a linalg.matmul reading the weight transposed
(indexing maps (m, k), (n, k), (m, n): x W^T, as front ends write a linear
layer), its result [M][ROWS]; the epilogue is then two-dimensional.

--split (q8_0, q4_0): each weight is two arguments, i8 values [R][C] (q4_0:
i4 values) and f16 scales [R][C/32], dequantized by a linalg.generic as
front ends write it: flat: float(q) * s[c floordiv 32] in the element type;
f32: the same in f32, then truncated; blocks: the values reshaped to
[R][C/32][32], multiplied by s[r][b] and collapsed back. q4_0 subtracts the
zero point 8 from the unsigned i4 values: in floats after uitofp(extui q)
(flat), in integers before sitofp (f32), as + -8 after uitofp q (blocks);
signed (q4_0 only): sitofp(q) * s, symmetric int4, which cachet does not
raise (the generic kernels run it).
"""

import sys

BLOCK_BYTES = {"q8_0": 34, "q4_0": 18, "q4_1": 20, "q5_0": 22, "q5_1": 24,
               "iq4_nl": 18, "q2_K": 84, "q3_K": 110, "q4_K": 144, "q5_K": 176, "q6_K": 210,
               "tq2_0": 66,
               "tq1_0": 54}
# Values per block: 32, or the super-blocks of 256 (k-quants, ternary).
BLOCK_VALUES = {f: 32 if b < 40 else 256 for f, b in BLOCK_BYTES.items()}


def value(form, ty, nibbles):
    """Lines computing %f, the float value of %qv in `ty`."""
    if not nibbles:
        return [f"%f = arith.sitofp %qv : i8 to {ty}"]
    if form == "signed":
        return [f"%f = arith.sitofp %qv : i4 to {ty}"]
    if form == "f32":
        return ["%c8 = arith.constant 8 : i8", "%i = arith.extui %qv : i4 to i8",
                "%c = arith.subi %i, %c8 : i8",
                f"%f = arith.sitofp %c : i8 to {ty}"]
    if form == "blocks":
        return [f"%m8 = arith.constant -8.0 : {ty}",
                f"%u = arith.uitofp %qv : i4 to {ty}",
                f"%f = arith.addf %m8, %u : {ty}"]
    return [f"%zp = arith.constant 8.0 : {ty}",
            "%i = arith.extui %qv : i4 to i32",
            f"%u = arith.uitofp %i : i32 to {ty}",
            f"%f = arith.subf %u, %zp : {ty}"]


def body(element, in_f32=False, form=None, nibbles=False):
    """The dequantize generic's body over %qv (i8 or i4) and %sv (f16): in
    the element type, or (bf16, or with in_f32) in f32 and then truncated."""
    if element == "f16" and not in_f32:
        return value(form, "f16", nibbles) + [
            "%m = arith.mulf %f, %sv : f16", "linalg.yield %m : f16"]
    lines = value(form, "f32", nibbles) + [
        "%sf = arith.extf %sv : f16 to f32", "%m = arith.mulf %sf, %f : f32"]
    if element == "f32":
        return lines + ["linalg.yield %m : f32"]
    return lines + [f"%t = arith.truncf %m : f32 to {element}",
                    f"linalg.yield %t : {element}"]


def print_split(form, i, r, cols, element, nibbles):
    """%d{i}: the split q8_0 (q4_0) weight %q{i}, %s{i} dequantized by a
    generic."""
    blocks = cols // 32
    lines = body(element, form == "f32", form, nibbles)
    qt = "i4" if nibbles else "i8"
    if form == "blocks":
        print(f"  %qb{i} = tensor.expand_shape %q{i} [[0], [1, 2]] "
              f"output_shape [{r}, {blocks}, 32] : tensor<{r}x{cols}x{qt}> "
              f"into tensor<{r}x{blocks}x32x{qt}>")
        print(f"  %de{i} = tensor.empty() : "
              f"tensor<{r}x{blocks}x32x{element}>")
        print(f"  %db{i} = linalg.generic {{indexing_maps = ["
              "affine_map<(r, b, i) -> (r, b, i)>, "
              "affine_map<(r, b, i) -> (r, b)>, "
              "affine_map<(r, b, i) -> (r, b, i)>], iterator_types = "
              "[\"parallel\", \"parallel\", \"parallel\"]}")
        print(f"      ins(%qb{i}, %s{i} : tensor<{r}x{blocks}x32x{qt}>, "
              f"tensor<{r}x{blocks}xf16>) outs(%de{i} : "
              f"tensor<{r}x{blocks}x32x{element}>) {{")
        print(f"    ^bb0(%qv: {qt}, %sv: f16, %o: {element}):")
        for line in lines:
            print("      " + line)
        print(f"  }} -> tensor<{r}x{blocks}x32x{element}>")
        print(f"  %d{i} = tensor.collapse_shape %db{i} [[0], [1, 2]] : "
              f"tensor<{r}x{blocks}x32x{element}> into "
              f"tensor<{r}x{cols}x{element}>")
        return
    print(f"  %de{i} = tensor.empty() : tensor<{r}x{cols}x{element}>")
    print(f"  %d{i} = linalg.generic {{indexing_maps = ["
          "affine_map<(r, c) -> (r, c)>, "
          "affine_map<(r, c) -> (r, c floordiv 32)>, "
          "affine_map<(r, c) -> (r, c)>], iterator_types = "
          "[\"parallel\", \"parallel\"]}")
    print(f"      ins(%q{i}, %s{i} : tensor<{r}x{cols}x{qt}>, "
          f"tensor<{r}x{blocks}xf16>) outs(%de{i} : "
          f"tensor<{r}x{cols}x{element}>) {{")
    print(f"    ^bb0(%qv: {qt}, %sv: f16, %o: {element}):")
    for line in lines:
        print("      " + line)
    print(f"  }} -> tensor<{r}x{cols}x{element}>")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    epilogue = "--epilogue" in sys.argv
    split = next((a.split("=", 1)[1] for a in sys.argv[1:]
                  if a.startswith("--split=")), None)
    batch = int(next((a.split("=", 1)[1] for a in sys.argv[1:]
                      if a.startswith("--batch=")), 0))
    fmt, element, rows, cols = args[0], args[1], args[2], int(args[3])
    rows = [int(r) for r in rows.split(",")]
    if fmt not in BLOCK_BYTES or cols % BLOCK_VALUES[fmt]:
        sys.exit("block_matvec.py: bad format or columns")
    if split not in (None, "flat", "f32", "blocks", "signed") or (
            split and fmt not in ("q8_0", "q4_0")) or (
            split == "signed" and fmt != "q4_0"):
        sys.exit("block_matvec.py: --split=flat|f32|blocks takes q8_0 or "
                 "q4_0, --split=signed q4_0")
    blocks = cols // BLOCK_VALUES[fmt]
    nibbles = fmt == "q4_0"
    if split:
        params = [p for i, r in enumerate(rows) for p in (
            f"%q{i}: tensor<{r}x{cols}x{'i4' if nibbles else 'i8'}> "
            "{cachet.weight}",
            f"%s{i}: tensor<{r}x{blocks}xf16> {{cachet.weight}}")]
    else:
        params = [f"%w{i}: tensor<{r}x{blocks}x!cachet.{fmt}> "
                  "{cachet.weight}" for i, r in enumerate(rows)]
    # The shapes of x and of a result of `r` rows ([M][...] with --batch).
    lead = f"{batch}x" if batch else ""
    def out(r):
        return f"tensor<{lead}{r}xf32>"
    params.append(f"%x: tensor<{lead}{cols}x{element}>")
    results = [out(r) for r in rows]
    if epilogue:
        if len(rows) != 2 or rows[0] != rows[1]:
            sys.exit("block_matvec.py: --epilogue takes two equal row counts")
        results = [out(rows[0])]
    print(f"func.func @block_matvec({', '.join(params)})")
    print(f"    -> ({', '.join(results)}) {{")
    print("  %z = arith.constant 0.0 : f32")
    for i, r in enumerate(rows):
        if split:
            print_split(split, i, r, cols, element, nibbles)
        else:
            print(f"  %d{i} = cachet.dequantize %w{i} : "
                  f"tensor<{r}x{blocks}x!cachet.{fmt}> -> "
                  f"tensor<{r}x{cols}x{element}>")
        print(f"  %e{i} = tensor.empty() : {out(r)}")
        print(f"  %f{i} = linalg.fill ins(%z : f32) outs(%e{i} : "
              f"{out(r)}) -> {out(r)}")
        if batch:
            print(f"  %y{i} = linalg.matmul indexing_maps = ["
                  "affine_map<(m, n, k) -> (m, k)>, "
                  "affine_map<(m, n, k) -> (n, k)>, "
                  "affine_map<(m, n, k) -> (m, n)>] "
                  f"ins(%x, %d{i} : tensor<{batch}x{cols}x{element}>, "
                  f"tensor<{r}x{cols}x{element}>) "
                  f"outs(%f{i} : {out(r)}) -> {out(r)}")
        else:
            print(f"  %y{i} = linalg.matvec ins(%d{i}, %x : "
                  f"tensor<{r}x{cols}x{element}>, tensor<{cols}x{element}>) "
                  f"outs(%f{i} : {out(r)}) -> {out(r)}")
    if epilogue:
        r = rows[0]
        dims = "(m, i)" if batch else "(i)"
        par = ", ".join(['"parallel"'] * (2 if batch else 1))
        print(f"  %he = tensor.empty() : {out(r)}")
        print(f"  %h = linalg.generic {{indexing_maps = [affine_map<{dims} -> "
              f"{dims}>, affine_map<{dims} -> {dims}>, affine_map<{dims} -> "
              f"{dims}>], iterator_types = [{par}]}}")
        print(f"      ins(%y0, %y1 : {out(r)}, {out(r)}) "
              f"outs(%he : {out(r)}) {{")
        print("    ^bb0(%g: f32, %u: f32, %o: f32):")
        print("      %one = arith.constant 1.0 : f32")
        print("      %ng = arith.negf %g : f32")
        print("      %ex = math.exp %ng : f32")
        print("      %den = arith.addf %one, %ex : f32")
        print("      %sig = arith.divf %g, %den : f32")
        print("      %p = arith.mulf %sig, %u : f32")
        print("      linalg.yield %p : f32")
        print(f"  }} -> {out(r)}")
        print(f"  return %h : {out(r)}")
    else:
        names = ", ".join(f"%y{i}" for i in range(len(rows)))
        print(f"  return {names} : {', '.join(results)}")
    print("}")


if __name__ == "__main__":
    main()
