//===- Passes.td - cachet pass declarations ----------------*- tablegen -*-===//

#ifndef CACHET_PASSES_TD
#define CACHET_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttachDevice : Pass<"cachet-attach-device", "mlir::ModuleOp"> {
  let summary = "Attach a device profile to the module";
  let description = [{
    Resolves `profile` (a built-in name, or a path to a JSON profile such as
    `cachet-probe` writes) and stores it as the module attribute
    `cachet.device`, which every other cachet pass reads. A profile that
    cannot be resolved or whose fields are out of range is an error naming
    the profile (and for JSON, the file and the field). An existing profile
    is replaced.

    Before:

    ```mlir
    module {
      func.func @f() { return }
    }
    ```

    After `cachet-attach-device{profile=gfx1151}`:

    ```mlir
    module attributes {cachet.device = #cachet.device<name = "gfx1151",
        vendor = "amd", arch = "gfx1151", cache_line = 128, l2_bytes = 2097152,
        alias_stride = 2048, alias_pad = 128, compute_units = 40,
        dram_gbps = 2.560000e+02, unified_memory = true,
        strided_read_penalty = 3.200000e+00, pdl = false, l2_prefetch = "none",
        coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32,
        shared_memory_bytes = 65536>} {
      func.func @f() { return }
    }
    ```

    Built-in profiles: `h200`, `rtx4070`, `rtx2060s`, `gfx1151`, `gfx942`,
    `lavapipe` (docs/device-profiles.md).
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"",
           "Built-in profile name or path to a JSON profile">,
  ];
  let dependentDialects = ["::cachet::CachetDialect"];
}

def RaiseAttention : Pass<"cachet-raise-attention", "mlir::ModuleOp"> {
  let summary = "Raise linalg attention over a quantized KV cache to "
                "cachet.attention";
  let description = [{
    Recognizes scaled dot-product attention over a block-quantized KV cache in
    the linalg-on-tensors form ML front ends emit, and replaces it by
    `cachet.dequantize` of the token-major cache feeding `cachet.attention
    ... layout <token_major>`. The matcher (cachet/Analysis/AttentionMatch.h)
    anchors on `linalg.softmax` and accepts:

    * K/V dequantize generics `float(q: i8) * scale[s, h, d floordiv 32]`
      (split q8_0; the f16 scale may be extended to an f32 result), or
      `cachet.dequantize` of a packed cache of any block type;
    * GQA broadcasts `kT[h, d, s] = k[s, h floordiv G, d]` and
      `vB[h, s, d] = v[s, h floordiv G, d]` with `Hq = G * Hkv` (G = 1 may be
      written `h`, or as `linalg.transpose`);
    * `linalg.batch_matmul` Q K^T and P V into zero fills (f32 or f16
      accumulation), Q f16, bf16 or f32;
    * an optional scale generic `x * c`, optionally masked causally with
      `select(j <= i + N, x * c, -inf)` (`linalg.index 2` against
      `linalg.index 1` + constant; `<`, `>`, `>=` and swapped forms too);
    * `linalg.softmax` over the key dimension 2, an optional element-wise
      conversion of the probabilities to the V element type, and an
      optional conversion of the output.

    Anything else is left untouched with a remark on the `linalg.softmax`
    naming the condition that failed (softmax over another dimension, a
    broadcast that is not a GQA head map, a block size other than 32, a
    scale that is not per block, ...). Every raise is reported with the
    shapes; existing `cachet.attention` ops get a remark saying there is
    nothing to raise. Function results keep their types.

    Before (abridged; test/Passes/raise-attention.mlir has the whole chain):

    ```mlir
    %k = linalg.generic {indexing_maps = [#id3, #blk, #id3], ...}
        ins(%kq, %ks : tensor<1024x2x128xi8>, tensor<1024x2x4xf16>) ...
    %kT = linalg.generic {indexing_maps = [#kt, #id3], ...} ins(%k ...)
    %sc = linalg.batch_matmul ins(%q, %kT ...) outs(%zero ...)
    %masked = linalg.generic ... { select(j <= i + 960, x * 0.0883, -inf) }
    %p = linalg.softmax dimension(2) ins(%masked ...)
    ...
    %o = linalg.batch_matmul ins(%p16, %vB ...) outs(%zero2 ...)
    %r = linalg.generic ... { arith.truncf }
    ```

    After:

    ```mlir
    %k = cachet.dequantize %kq scales %ks
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
    %v = cachet.dequantize %vq scales %vs
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
    %r = cachet.attention %q, %k, %v layout <token_major>
        scale 0.0883883461 causal 960 : tensor<8x64x128xf16>,
        tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
    ```
  }];
  let dependentDialects = [
    "::cachet::CachetDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def DequantOnceKV : Pass<"cachet-dequant-once-kv", "mlir::ModuleOp"> {
  let summary = "Dequantize a block-quantized KV cache once per layer into a "
                "head-major f16 scratch";
  let description = [{
    For every `cachet.attention` whose K and V are `cachet.dequantize` of a
    token-major block-quantized cache (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl,
    or split q8_0) and that reads them token-major, decides with the cost
    function of cachet/Analysis/DequantOnceCost.h whether dequantizing K and
    V once, into f16 laid out `[kv_head][pos][dim]`, beats dequantizing them
    inside the attention kernel once per query tile; where it pays, emits
    `cachet.dequant_transpose` into a scratch and makes the attention read
    it `layout <head_major>`.

    Cost function, with `P = ceil(G * Sq / T)` passes over K/V (G query heads
    per KV head, Sq queries, T query rows per tile from the profile's f16
    cooperative-matrix M or its subgroup size), `Bq`/`Bf` the quantized and
    f16 K+V bytes, `pen` the profile's strided-read penalty (when Hkv > 1),
    `c` the in-kernel dequant cost (1 with cooperative matrices, 0.25
    without; option `dequant-cost`) and `bw` the profile's DRAM bandwidth:
    `t_in_kernel = P (Bq pen + c Bf) / bw` against
    `t_once = (Bq + Bf + P Bf) / bw`. Attention with fewer than
    `min-queries` queries per KV head (decode) is never rewritten. `force`
    rewrites every eligible attention. Every decision is a remark on the
    attention with the numbers it used; a module without `cachet.device`
    gets a remark and no rewrite.

    Scratch: one `bufferization.alloc_tensor() {cachet.kv_scratch} :
    tensor<N x f16>` at the top of each function, N the largest K+V (or
    K+V chunk) element count of the attentions rewritten there. Every
    attention takes `tensor.extract_slice` `[0, Hkv*S*D)` for K and the
    following `Hkv*S*Dv` elements for V, expanded to `[Hkv, S, D]`: one
    layer's K+V at a time, reused by every layer, and bufferized in place
    into the one allocation. The remark states the scratch bytes and the
    ratio to the layer's quantized cache bytes.

    `max-scratch-bytes` caps the scratch: when one layer's f16 K+V is
    larger, the positions are split into chunks of
    `C = max-scratch-bytes / (2 Hkv (D + Dv))` (an `scf.for` over full
    chunks plus one remainder chunk); each chunk is sliced from the
    quantized cache on the pos dimension, dequant-transposed into the
    scratch and attended with `cachet.attention_partial` (unnormalized
    output, row max and row sum); the partial results are merged exactly
    with the online-softmax merge (`linalg.generic` on arith/math ops) and
    divided by the sum at the end. Chunking an attention with an additive
    mask is not supported (remark, no rewrite).

    Before:

    ```mlir
    %k = cachet.dequantize %kq scales %ks
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
    %v = cachet.dequantize %vq scales %vs
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461
        causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>,
        tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
    ```

    After (profile h200):

    ```mlir
    %scratch = bufferization.alloc_tensor() {cachet.kv_scratch}
        : tensor<524288xf16>
    ...
    %ks0 = tensor.extract_slice %scratch[0] [262144] [1]
        : tensor<524288xf16> to tensor<262144xf16>
    %ks3 = tensor.expand_shape %ks0 [[0, 1, 2]] output_shape [2, 1024, 128]
        : tensor<262144xf16> into tensor<2x1024x128xf16>
    %kh = cachet.dequant_transpose %kq scales %ks into %ks3
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<2x1024x128xf16>
    // ... the same for V at offset 262144 ...
    %o = cachet.attention %q, %kh, %vh layout <head_major> scale 0.0883883461
        causal 960 : tensor<8x64x128xf16>, tensor<2x1024x128xf16>,
        tensor<2x1024x128xf16> -> tensor<8x64x128xf16>
    ```
  }];
  let options = [
    Option<"minQueries", "min-queries", "int64_t", /*default=*/"32",
           "Never rewrite attention with fewer queries per KV head (G x Sq) "
           "than this (decode)">,
    Option<"maxScratchBytes", "max-scratch-bytes", "uint64_t",
           /*default=*/"0",
           "Cap on the f16 scratch in bytes; larger layers are processed in "
           "KV chunks merged exactly (0: no cap)">,
    Option<"force", "force", "bool", /*default=*/"false",
           "Rewrite every eligible attention, whatever the cost function "
           "says">,
    Option<"dequantCost", "dequant-cost", "double", /*default=*/"-1.0",
           "In-kernel dequant cost in f16-byte equivalents per value "
           "(negative: 1 with cooperative matrices, 0.25 without)">,
  ];
  let dependentDialects = [
    "::cachet::CachetDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // CACHET_PASSES_TD
