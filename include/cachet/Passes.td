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
      written `h`);
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

#endif // CACHET_PASSES_TD
