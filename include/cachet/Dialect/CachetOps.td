//===- CachetOps.td - cachet operations --------------------*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETOPS_TD
#define CACHET_DIALECT_CACHETOPS_TD

include "cachet/Dialect/CachetAttrs.td"
include "cachet/Dialect/CachetDialect.td"
include "cachet/Dialect/CachetTypes.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Cachet_DequantizeOp : Cachet_Op<"dequantize", [Pure]> {
  let summary = "block-quantized values to floating point";
  let description = [{
    Expands block-quantized values to `f16`, `bf16` or `f32`.

    Packed form: the input's element type is a block type and its innermost
    dimension counts blocks; the result's innermost dimension is 32 times
    larger, every other dimension is the same.

    ```mlir
    %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
    ```

    Split q8_0 form, as ML front ends emit it: `i8` values of the result's
    shape and one `f16` scale per 32 values along the innermost dimension;
    value i is `float(qs[i]) * scale[i / 32]`.

    ```mlir
    %k = cachet.dequantize %kq scales %ks
        : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
    ```

    Split q4_0 form (weights only): `i4` values read as q4_0's unsigned
    nibbles, value i is `(uint(qs[i]) - 8) * scale[i / 32]`. Where an `i4`
    tensor lives in memory (a function argument or a constant) it
    takes two values per byte, the even one in the low nibble (the packing
    of MLIR's narrow-type emulation).

    ```mlir
    %w = cachet.dequantize %wq scales %ws
        : tensor<4096x4096xi4>, tensor<4096x128xf16> -> tensor<4096x4096xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Optional<AnyRankedTensor>:$scales);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`scales` $scales^)? attr-dict `:` type($input)
    (`,` type($scales)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Cachet_QuantizeOp : Cachet_Op<"quantize", [Pure]> {
  let summary = "floating point to block-quantized values, as ggml rounds";
  let description = [{
    Encodes `f16`, `bf16` or `f32` values into ggml blocks of 32 values along
    the innermost dimension, byte for byte as ggml's reference quantizers
    (`quantize_row_*_ref`) do: every value is converted to f32 first and the
    block computed in f32, `d` and `m` rounded to f16 (to nearest, ties to
    even). Per format:

    * q8_0: `d = amax / 127`, `qs[i] = round(x[i] * id)` with
      `id = d != 0 ? 1 / d : 0` computed from the unrounded `d`;
    * q4_0, q5_0: `d = max / -8` (`/ -16`), where `max` is the first value
      of largest magnitude (sign kept); quant `min(15, trunc(x * id + 8.5))`
      (`min(31, trunc(x * id + 16.5))`);
    * q4_1, q5_1: `d = (max - min) / 15` (`/ 31`), `m = min`; quant
      `trunc((x - min) * id + 0.5)` (capped at 15 for q4_1);
    * iq4_nl (`quantize_row_iq4_nl_ref`, no importance weights): the nearest
      code-book entry of `x * 127 / -max`, then the least-squares scale
      `d = sum(w q x) / sum(w q q)` with `w = x * x`. A block whose largest
      magnitude is below 1e-15 gets `d = 0` and all quants 8 (ggml's
      reference leaves those quants unset).

    Nibble formats store quant i (i < 16) in the low nibble of `qs[i]` and
    quant i + 16 in its high nibble; q5 formats store bit 4 of quant i in
    bit i of the little-endian word `qh`. Non-finite inputs give unspecified
    bytes (ggml's reference has undefined behavior there too).

    Packed form: the result's element type is a block type and its innermost
    dimension is the input's divided by 32.

    ```mlir
    %q = cachet.quantize %x : tensor<64x2x128xf16> -> tensor<64x2x4x!cachet.q4_0>
    ```

    Split q8_0 form, as ML front ends emit it: `i8` quants of the input's
    shape and one `f16` scale per 32 values (the operands of the split
    `cachet.dequantize`).

    ```mlir
    %qs, %d = cachet.quantize %x : tensor<64x2x128xf16>
        -> tensor<64x2x128xi8>, tensor<64x2x4xf16>
    ```

    `rounding` (q8_0 only): `away` (the default; C `roundf`, halves away
    from zero, as ggml) or `even` (halves to even, as `math.roundeven`), so
    that raising a front end's spelling of either never changes a value.

    ```mlir
    %qs, %d = cachet.quantize %x rounding <even> : tensor<4x32xf32>
        -> tensor<4x32xi8>, tensor<4x1xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DefaultValuedAttr<Cachet_RoundingAttr,
                                         "::cachet::Rounding::Away">:$rounding);
  let results = (outs AnyRankedTensor:$result,
                      Optional<AnyRankedTensor>:$scales);
  let assemblyFormat = [{
    $input (`rounding` $rounding^)? attr-dict `:` type($input) `->`
    type($result) (`,` type($scales)^)?
  }];
  let hasVerifier = 1;
}

def Cachet_DequantTransposeOp
    : Cachet_Op<"dequant_transpose",
                [DestinationStyleOpInterface,
                 AllTypesMatch<["init", "result"]>]> {
  let summary = "dequantize a token-major KV cache into a head-major scratch";
  let description = [{
    Reads a block-quantized KV cache laid out token-major,
    `[pos][kv_head][dim / 32 blocks]`, and writes it dequantized to `f16` (or
    `f32`) head-major, `[kv_head][pos][dim]`, into `init`, so that every KV
    head is one contiguous run of rows. The split q8_0 form (`i8` values plus
    `scales`) is accepted as in `cachet.dequantize`. Destination-passing style:
    after bufferization `init` is the scratch buffer itself. The number of
    positions may be dynamic: the first `%n` positions of a cache (a
    `tensor.extract_slice`) into the first `%n` of each head of a scratch
    (cachet-dequant-once-kv bounded by a run-time causal position); the
    kernel then sizes its grid at run time.

    ```mlir
    %s = cachet.dequant_transpose %kq into %scratch
        : tensor<1024x2x4x!cachet.q8_0> -> tensor<2x1024x128xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Optional<AnyRankedTensor>:$scales,
                       AnyRankedTensor:$init);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`scales` $scales^)? `into` $init attr-dict `:` type($input)
    (`,` type($scales)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
  let hasVerifier = 1;
}

def Cachet_AttentionOp
    : Cachet_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention over a KV cache, with GQA";
  let description = [{
    `result[h, i, :] = softmax_j(scale * Q[h, i, :] . K[g(h), j, :] + mask[.., i, j]) V[g(h), j, :]`
    with `g(h) = h floordiv (Hq / Hkv)` (grouped-query attention; `Hq / Hkv`
    must be an integer, 1 included).

    * `query`: `[Hq, Sq, D]`; result `[Hq, Sq, Dv]`.
    * `key`, `value`: `[S, Hkv, D]` with `layout <token_major>` (a llama.cpp
      cache) or `[Hkv, S, D]` with `layout <head_major>`.
    * `causal N`: query i sees keys `j <= i + N` (N >= 0: the number of cached
      positions before the first new token). `causal %n` takes N as an
      `index` value known only at run time (a decode step's position in a
      cache compiled for its longest length). Without it, every key is
      visible.
    * `mask`: an optional additive mask, `[Sq, S]` or `[Hq, Sq, S]`.
    * `accumulator`: the type of the `Q K^T` and `P V` accumulation and of
      the softmax (`f32` when absent, or `f16`). The probabilities are
      rounded to the element type of `value` before `P V`, as ML front ends
      do before the second matmul.

    ```mlir
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461
        causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>,
        tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value,
                       Optional<AnyRankedTensor>:$mask,
                       Optional<Index>:$causal_position,
                       Cachet_KVLayoutAttr:$kv_layout, F32Attr:$scale,
                       OptionalAttr<I64Attr>:$causal_offset,
                       OptionalAttr<TypeAttr>:$accumulator);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? `layout` $kv_layout
    `scale` $scale custom<Causal>($causal_offset, $causal_position) attr-dict
    `:` type($query) `,`
    type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Number of query heads that share one KV head (Hq / Hkv).
    int64_t getGroupSize();
    /// Index of the KV-head dimension of `key` and `value` in this layout.
    unsigned getKVHeadDim() {
      return getKvLayout() == KVLayout::TokenMajor ? 1 : 0;
    }
    /// Index of the position dimension of `key` and `value` in this layout.
    unsigned getKVPosDim() {
      return getKvLayout() == KVLayout::TokenMajor ? 0 : 1;
    }
  }];
  let hasVerifier = 1;
}

def Cachet_AttentionPartialOp
    : Cachet_Op<"attention_partial",
                [Pure, AllTypesMatch<["acc", "out"]>,
                 AllTypesMatch<["max_in", "max"]>,
                 AllTypesMatch<["sum_in", "sum"]>]> {
  let summary = "attention over one KV chunk, continuing an online softmax";
  let description = [{
    The step of exact chunked attention: continues the online softmax whose
    state after the previous chunks is `acc` (unnormalized output), `max`
    (running row max) and `sum` (running row sum) over the keys of one more
    chunk, and returns the new state. For every query head `h` and query
    `i`, with `t_j = log2(e) scale Q[h, i, :] . K[g(h), j, :]` the base-2
    score of each visible chunk key j (accumulated in `accumulator`, f32
    when absent):

    * `max' = max(max, max_j t_j)`;
    * `a = 2^(max - max')` (1 while `max'` is `-inf`: no key seen yet);
    * `p_j = 2^(t_j - max')` rounded to the element type of `value` (0 while
      `max'` is `-inf`);
    * `sum' = a sum + sum_j p_j`, `acc' = a acc + sum_j p_j V[g(h), j, :]`.

    The first chunk starts from `acc = 0`, `max = -inf`, `sum = 0`; the
    attention is `acc * (1 / sum)` after the last. `key_offset` is the
    absolute position of the chunk's first key: with `causal N` (or
    `causal %n`, N at run time), query i sees chunk key j when
    `key_offset + j <= i + N`. `acc` is `f32 [Hq, Sq, Dv]`,
    `max` and `sum` are `f32 [Hq, Sq]`; the results have their types. Other
    operands and attributes are as in `cachet.attention`.

    The flash-attention kernels keep exactly this state per query row from
    key tile to key tile, so a chunk boundary on a key-tile boundary changes
    no bit: chunked attention equals unchunked. `cachet-dequant-once-kv`
    emits this op when the scratch is capped (`max-scratch-bytes`).

    ```mlir
    %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p
        layout <head_major> scale 0.0883883461 causal 960
        into %acc, %max, %sum
        : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
        -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value, Index:$key_offset,
                       AnyRankedTensor:$acc, AnyRankedTensor:$max_in,
                       AnyRankedTensor:$sum_in,
                       Optional<Index>:$causal_position,
                       Cachet_KVLayoutAttr:$kv_layout, F32Attr:$scale,
                       OptionalAttr<I64Attr>:$causal_offset,
                       OptionalAttr<TypeAttr>:$accumulator);
  let results = (outs AnyRankedTensor:$out, AnyRankedTensor:$max,
                      AnyRankedTensor:$sum);
  let assemblyFormat = [{
    $query `,` $key `,` $value `key_offset` $key_offset `layout` $kv_layout
    `scale` $scale custom<Causal>($causal_offset, $causal_position) `into`
    $acc `,` $max_in `,`
    $sum_in attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($out) `,` type($max) `,` type($sum)
  }];
  let extraClassDeclaration = [{
    /// Index of the KV-head dimension of `key` and `value` in this layout.
    unsigned getKVHeadDim() {
      return getKvLayout() == KVLayout::TokenMajor ? 1 : 0;
    }
    /// Index of the position dimension of `key` and `value` in this layout.
    unsigned getKVPosDim() {
      return getKvLayout() == KVLayout::TokenMajor ? 0 : 1;
    }
    /// The mask operand cachet.attention has and this op has not (chunks
    /// of a masked attention are not supported): null.
    ::mlir::Value getMask() { return {}; }
  }];
  let hasVerifier = 1;
}

#endif // CACHET_DIALECT_CACHETOPS_TD
