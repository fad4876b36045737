"""Writes a Llama-3-8B-shaped batch-1 decode chain as linalg on tensors.

Each layer: q = Wq x, k = Wk x, v = Wv x (4096x4096, 1024x4096, 1024x4096),
o = Wo a (4096x4096, a = q + k[i mod 1024] + v[i mod 1024] rounded to bf16,
standing in for attention and keeping k and v live),
gate/up = Wg o, Wu o (14336x4096), h = silu(gate) * up, down = Wd h
(4096x14336); the next layer's x is down rounded to bf16. bf16 weights as
function arguments marked {cachet.weight}: 7 streaming mat-vecs a layer, the
shapes device-facts.md measures cuBLAS on.

Usage: llama3_decode_chain.py [LAYERS [H,KV,F]] [--weights=FMT] > chain.mlir
(H, KV, F default to Llama-3-8B's 4096, 1024, 14336; smaller ones make a
chain of the same structure for CPU runs.) --weights=q8_0 (or q4_0, ...):
each weight a packed ggml-format argument, dequantized by cachet.dequantize
before its mat-vec, as a front end over GGUF weights writes it; q4_K and q6_K
take super-blocks of 256 values (H, KV and F multiples of 256).
--weights=q8_0-split: each weight two arguments, i8 values and f16 scales
(one per 32 along the row), dequantized by a linalg.generic (float(q) *
scale in f32, rounded once), as a PyTorch-style front end writes q8_0; the
normalization then also divides by the dequantized weights' larger spread
(random i8 quants times scales of +-1/sqrt(cols/32): 418x the rms of float
weights in +-1/sqrt(cols)). --weights=q4_0-split: the same with i4 values
less the zero point 8 (uitofp(zext q) - 8, the int4 form of IREE and
torch-mlir; 26x the rms of float weights).
"""
import sys

weights = next((a.split("=", 1)[1] for a in sys.argv[1:]
                if a.startswith("--weights=")), "bf16")
argv = [a for a in sys.argv[1:] if not a.startswith("--")]
layers = int(argv[0]) if len(argv) > 0 else 4
H, KV, F = (int(d) for d in argv[1].split(",")) if len(argv) > 1 \
    else (4096, 1024, 14336)


split = weights in ("q8_0-split", "q4_0-split")
nibbles = weights == "q4_0-split"
qt = "i4" if nibbles else "i8"


def weight_type(rows, cols):
    if weights == "bf16":
        return f"tensor<{rows}x{cols}xbf16>"
    per_block = 256 if weights.endswith("_K") or weights.startswith("tq") \
        else 32
    return f"tensor<{rows}x{cols // per_block}x!cachet.{weights}>"


def weight_args(name, rows, cols):
    if split:
        return [f"%{name}_q: tensor<{rows}x{cols}x{qt}> {{cachet.weight}}",
                f"%{name}_s: tensor<{rows}x{cols // 32}xf16> {{cachet.weight}}"]
    return [f"%{name}: {weight_type(rows, cols)} {{cachet.weight}}"]
shapes = [("q", H, H), ("k", KV, H), ("v", KV, H), ("o", H, H),
          ("g", F, H), ("u", F, H), ("d", H, F)]

args = [f"%x0: tensor<{H}xbf16>"]
for l in range(layers):
    for name, rows, cols in shapes:
        args += weight_args(f"w{name}{l}", rows, cols)

out = []
out.append("#id1 = affine_map<(i) -> (i)>")
out.append(f"#kv = affine_map<(i) -> (i mod {KV})>")
out.append("#w = affine_map<(r, c) -> (r, c)>")
out.append("#wblk = affine_map<(r, c) -> (r, c floordiv 32)>")
out.append(f"func.func @decode_chain({', '.join(args)}) -> tensor<{H}xf32> {{")
out.append("  %z = arith.constant 0.0 : f32")
# The rms of random quants (i8: 73.9, i4 less 8: 4.64) times sqrt(32).
norm = 3 ** 0.5 / ((26.2 if nibbles else 418.0) if split else 1.0)
out.append(f"  %norm = arith.constant {norm!r} : f32")


def matvec(res, w, rows, cols, x):
    if split:
        out.append(f"  %{w}_dqe = tensor.empty() : tensor<{rows}x{cols}xbf16>")
        out.append(f"  %{w}_dq = linalg.generic {{indexing_maps = [#w, #wblk, #w], "
                   f"iterator_types = [\"parallel\", \"parallel\"]}} "
                   f"ins(%{w}_q, %{w}_s : tensor<{rows}x{cols}x{qt}>, "
                   f"tensor<{rows}x{cols // 32}xf16>) outs(%{w}_dqe : "
                   f"tensor<{rows}x{cols}xbf16>) {{")
        out.append(f"  ^bb0(%qv: {qt}, %sv: f16, %o: bf16):")
        if nibbles:
            out.append("    %zp = arith.constant 8.0 : f32")
            out.append("    %qi = arith.extui %qv : i4 to i32")
            out.append("    %qu = arith.uitofp %qi : i32 to f32")
            out.append("    %qf = arith.subf %qu, %zp : f32")
        else:
            out.append("    %qf = arith.sitofp %qv : i8 to f32")
        out.append("    %sf = arith.extf %sv : f16 to f32")
        out.append("    %m = arith.mulf %qf, %sf : f32")
        out.append("    %t = arith.truncf %m : f32 to bf16")
        out.append("    linalg.yield %t : bf16")
        out.append(f"  }} -> tensor<{rows}x{cols}xbf16>")
        w = f"{w}_dq"
    elif weights != "bf16":
        out.append(f"  %{w}_dq = cachet.dequantize %{w} : {weight_type(rows, cols)} "
                   f"-> tensor<{rows}x{cols}xbf16>")
        w = f"{w}_dq"
    out.append(f"  %{res}_e = tensor.empty() : tensor<{rows}xf32>")
    out.append(f"  %{res}_z = linalg.fill ins(%z : f32) outs(%{res}_e : tensor<{rows}xf32>) -> tensor<{rows}xf32>")
    out.append(f"  %{res} = linalg.matvec ins(%{w}, %{x} : tensor<{rows}x{cols}xbf16>, tensor<{cols}xbf16>) "
               f"outs(%{res}_z : tensor<{rows}xf32>) -> tensor<{rows}xf32>")


def to_bf16(res, src, n):
    """res = bf16(src * sqrt(3)): keeps the activations O(1) with weights
    uniform in +-1/sqrt(fan-in), as cachet-runner's random inputs draw them
    (a mat-vec then scales the std by 1/sqrt(3)); a stand-in for
    normalization, so that a CPU check is meaningful."""
    out.append(f"  %{res}_e = tensor.empty() : tensor<{n}xbf16>")
    out.append(f"  %{res} = linalg.generic {{indexing_maps = [#id1, #id1], iterator_types = [\"parallel\"]}} "
               f"ins(%{src} : tensor<{n}xf32>) outs(%{res}_e : tensor<{n}xbf16>) {{")
    out.append("  ^bb0(%s: f32, %d: bf16):")
    out.append("    %n = arith.mulf %s, %norm : f32")
    out.append("    %t = arith.truncf %n : f32 to bf16")
    out.append("    linalg.yield %t : bf16")
    out.append(f"  }} -> tensor<{n}xbf16>")


for l in range(layers):
    x = f"x{l}"
    matvec(f"q{l}", f"wq{l}", H, H, x)
    matvec(f"k{l}", f"wk{l}", KV, H, x)
    matvec(f"v{l}", f"wv{l}", KV, H, x)
    out.append(f"  %a{l}_e = tensor.empty() : tensor<{H}xbf16>")
    out.append(f"  %a{l} = linalg.generic {{indexing_maps = [#id1, #kv, #kv, #id1], "
               f"iterator_types = [\"parallel\"]}} ins(%q{l}, %k{l}, %v{l} : "
               f"tensor<{H}xf32>, tensor<{KV}xf32>, tensor<{KV}xf32>) outs(%a{l}_e : tensor<{H}xbf16>) {{")
    out.append("  ^bb0(%qv: f32, %kv: f32, %vv: f32, %d: bf16):")
    out.append("    %qk = arith.addf %qv, %kv : f32")
    out.append("    %qkv = arith.addf %qk, %vv : f32")
    out.append("    %qkvn = arith.mulf %qkv, %norm : f32")
    out.append("    %t = arith.truncf %qkvn : f32 to bf16")
    out.append("    linalg.yield %t : bf16")
    out.append(f"  }} -> tensor<{H}xbf16>")
    matvec(f"o{l}", f"wo{l}", H, H, f"a{l}")
    to_bf16(f"ob{l}", f"o{l}", H)
    matvec(f"g{l}", f"wg{l}", F, H, f"ob{l}")
    matvec(f"u{l}", f"wu{l}", F, H, f"ob{l}")
    out.append(f"  %h{l}_e = tensor.empty() : tensor<{F}xbf16>")
    out.append(f"  %h{l} = linalg.generic {{indexing_maps = [#id1, #id1, #id1], iterator_types = [\"parallel\"]}} "
               f"ins(%g{l}, %u{l} : tensor<{F}xf32>, tensor<{F}xf32>) outs(%h{l}_e : tensor<{F}xbf16>) {{")
    out.append("  ^bb0(%gv: f32, %uv: f32, %d: bf16):")
    out.append("    %one = arith.constant 1.0 : f32")
    out.append("    %gn = arith.mulf %gv, %norm : f32")
    out.append("    %un = arith.mulf %uv, %norm : f32")
    out.append("    %ng = arith.negf %gn : f32")
    out.append("    %ex = math.exp %ng : f32")
    out.append("    %den = arith.addf %one, %ex : f32")
    out.append("    %sig = arith.divf %gn, %den : f32")
    out.append("    %p = arith.mulf %sig, %un : f32")
    out.append("    %t = arith.truncf %p : f32 to bf16")
    out.append("    linalg.yield %t : bf16")
    out.append(f"  }} -> tensor<{F}xbf16>")
    matvec(f"d{l}", f"wd{l}", H, F, f"h{l}")
    if l + 1 < layers:
        to_bf16(f"x{l + 1}", f"d{l}", H)
out.append(f"  return %d{layers - 1} : tensor<{H}xf32>")
out.append("}")
print("\n".join(out))
