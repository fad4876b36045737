"""Writes a function of mat-vecs over block-quantized weights, the way a
front end emits them: each weight a packed ggml-format argument (or, with
--split, q8_0 as int8 values and f16 scales), a cachet.dequantize to the
activation type, a zero fill and a linalg.matvec; siblings over the same x
(Q/K/V), optionally followed by an element-wise epilogue (silu(gate) * up).

  block_matvec.py FORMAT ELEMENT ROWS[,ROWS...] COLS [--epilogue]
"""

import sys

BLOCK_BYTES = {"q8_0": 34, "q4_0": 18, "q4_1": 20, "q5_0": 22, "q5_1": 24,
               "iq4_nl": 18}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    epilogue = "--epilogue" in sys.argv
    fmt, element, rows, cols = args[0], args[1], args[2], int(args[3])
    rows = [int(r) for r in rows.split(",")]
    if fmt not in BLOCK_BYTES or cols % 32:
        sys.exit("block_matvec.py: bad format or columns")
    blocks = cols // 32
    params = [f"%w{i}: tensor<{r}x{blocks}x!cachet.{fmt}> {{cachet.weight}}"
              for i, r in enumerate(rows)]
    params.append(f"%x: tensor<{cols}x{element}>")
    results = [f"tensor<{r}xf32>" for r in rows]
    if epilogue:
        if len(rows) != 2 or rows[0] != rows[1]:
            sys.exit("block_matvec.py: --epilogue takes two equal row counts")
        results = [f"tensor<{rows[0]}xf32>"]
    print(f"func.func @block_matvec({', '.join(params)})")
    print(f"    -> ({', '.join(results)}) {{")
    print("  %z = arith.constant 0.0 : f32")
    for i, r in enumerate(rows):
        print(f"  %d{i} = cachet.dequantize %w{i} : "
              f"tensor<{r}x{blocks}x!cachet.{fmt}> -> "
              f"tensor<{r}x{cols}x{element}>")
        print(f"  %e{i} = tensor.empty() : tensor<{r}xf32>")
        print(f"  %f{i} = linalg.fill ins(%z : f32) outs(%e{i} : "
              f"tensor<{r}xf32>) -> tensor<{r}xf32>")
        print(f"  %y{i} = linalg.matvec ins(%d{i}, %x : "
              f"tensor<{r}x{cols}x{element}>, tensor<{cols}x{element}>) "
              f"outs(%f{i} : tensor<{r}xf32>) -> tensor<{r}xf32>")
    if epilogue:
        r = rows[0]
        print(f"  %he = tensor.empty() : tensor<{r}xf32>")
        print("  %h = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>,"
              " affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], "
              "iterator_types = [\"parallel\"]}")
        print(f"      ins(%y0, %y1 : tensor<{r}xf32>, tensor<{r}xf32>) "
              f"outs(%he : tensor<{r}xf32>) {{")
        print("    ^bb0(%g: f32, %u: f32, %o: f32):")
        print("      %one = arith.constant 1.0 : f32")
        print("      %ng = arith.negf %g : f32")
        print("      %ex = math.exp %ng : f32")
        print("      %den = arith.addf %one, %ex : f32")
        print("      %sig = arith.divf %g, %den : f32")
        print("      %p = arith.mulf %sig, %u : f32")
        print("      linalg.yield %p : f32")
        print(f"  }} -> tensor<{r}xf32>")
        print(f"  return %h : tensor<{r}xf32>")
    else:
        names = ", ".join(f"%y{i}" for i in range(len(rows)))
        print(f"  return {names} : {', '.join(results)}")
    print("}")


if __name__ == "__main__":
    main()
