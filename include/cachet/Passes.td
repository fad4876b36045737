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

def PadWeightRows : Pass<"cachet-pad-weight-rows", "mlir::ModuleOp"> {
  let summary = "Pad the rows of dense weights whose size aliases cache sets";
  let description = [{
    A cache maps an address to a set by `(address / line) mod sets`, so rows
    whose size is a multiple of the alias stride (`line x sets`) put the same
    column of every row into one set, and a mat-vec or mat-mul that walks
    rows in parallel thrashes it. This pass grows the row stride (the
    *pitch*) of such weights by a pad (one cache line by default), with
    zeroed gaps. Values never change: every consumer reads the same elements
    through a strided view.

    Weights are function arguments marked `{cachet.weight}` and constants
    (`arith.constant`, `memref.global constant`, an immutable
    `ml_program.global`) read as the matrix of `linalg.matvec`, the
    right-hand side of `linalg.matmul` / `linalg.batch_matmul` (default or
    transposed-B indexing maps) or the input of `cachet.dequantize`. A row is
    the innermost dimension. Only f16, bf16 and f32 weights of rank >= 2
    with a static row length are padded; quantized, integer and sub-byte
    weights never are (their kernels derive element offsets from the
    stride).

    Decision, from the module's `#cachet.device` profile (see
    `cachet-attach-device`) or the options that override it: pad by `pad`
    bytes if and only if `alias_stride != 0` and
    `row_bytes % alias_stride == 0`. `pad` defaults to the profile's
    `alias_pad`, or one `cache_line` where that is 0. An alias stride that is
    not a power of two, a pad that is negative, a multiple of the alias
    stride, or not a multiple of the element size and of 16 bytes (the
    kernels' vector alignment) pads nothing. Without a profile (and without
    both options) the pass warns and changes nothing.

    Representation of the padded pitch `pitch = row + pad` (in elements):

    * Function argument: the type stays; the argument gets
      `cachet.row_pitch = <pitch in elements> : i64`. The runtime allocates
      `rows x pitch` elements and uploads with a zero-filled strided 2D copy.
    * `arith.constant`: a `[..., pitch]` constant with zeroed gaps (`dense`
      stays `dense`, `dense_resource` gets a new blob `<name>_padded`), read
      back by a `tensor.extract_slice` of the original shape. After
      bufferization the slice is a `memref<..., strided<[..., pitch, 1]>>`
      view of a padded global.
    * `ml_program.global`: the global holds the padded tensor; each load is
      followed by the same `tensor.extract_slice`.
    * `memref.global constant` (private): the global holds the padded
      memref; each `memref.get_global` is followed by a `memref.subview` of
      type `memref<..., strided<[..., pitch, 1]>>`. A global whose loads feed
      ops that need the identity layout is left alone.

    Every weight gets a remark (padded or not, why, bytes added) and the
    module a remark with the total. Running the pass again pads nothing more.

    Before, an argument:

    ```mlir
    func.func @f(%x: tensor<1024xbf16>, %y: tensor<256xf32>,
                 %w: tensor<256x1024xbf16> {cachet.weight}) -> tensor<256xf32> {
      %r = linalg.matvec ins(%w, %x : tensor<256x1024xbf16>, tensor<1024xbf16>)
                         outs(%y : tensor<256xf32>) -> tensor<256xf32>
      return %r : tensor<256xf32>
    }
    ```

    After `cachet-attach-device{profile=gfx1151}` (alias stride 2048 B, pad
    128 B) and `cachet-pad-weight-rows`, the body is unchanged and

    ```mlir
    func.func @f(%x: tensor<1024xbf16>, %y: tensor<256xf32>,
                 %w: tensor<256x1024xbf16> {cachet.row_pitch = 1088 : i64,
                                            cachet.weight}) -> tensor<256xf32>
    ```

    with the remark `argument #2 of @f (tensor<256x1024xbf16>): padded: 2048 B
    rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088
    elements), +32768 B`.

    Before, a constant with 32-byte rows:

    ```mlir
    %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<2x8xf32>
    %r = linalg.matvec ins(%c, %v : tensor<2x8xf32>, tensor<8xf32>)
                       outs(%y : tensor<2xf32>) -> tensor<2xf32>
    ```

    After `cachet-pad-weight-rows{alias-stride=32 pad=16}`:

    ```mlir
    %p = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
                                0.0, 0.0, 0.0, 0.0],
        [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0,
         0.0, 0.0, 0.0, 0.0]]> : tensor<2x12xf32>
    %c = tensor.extract_slice %p[0, 0] [2, 8] [1, 1]
        : tensor<2x12xf32> to tensor<2x8xf32>
    %r = linalg.matvec ins(%c, %v : tensor<2x8xf32>, tensor<8xf32>)
                       outs(%y : tensor<2xf32>) -> tensor<2xf32>
    ```

    and after `one-shot-bufferize` the mat-vec reads
    `memref<2x8xf32, strided<[12, 1]>>`, a subview of the padded global.
  }];
  let options = [
    Option<"aliasStride", "alias-stride", "int64_t", /*default=*/"-1",
           "Cache set-index alias stride in bytes (line x sets); -1 takes "
           "the profile's alias_stride, 0 pads nothing">,
    Option<"pad", "pad", "int64_t", /*default=*/"-1",
           "Bytes added to each aliasing row; -1 takes the profile's "
           "alias_pad (one cache_line where that is 0)">,
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def RaiseContractions : Pass<"cachet-raise-contractions", "mlir::ModuleOp"> {
  let summary = "Raise the linear layers and batched products front ends "
                "write as contraction generics or through a transposed "
                "weight to the named linalg ops cachet's kernels take";
  let description = [{
    ML front ends write `x W^T` (a linear layer, W `[out][in]` row-major)
    in more than one way, and cachet's kernels and matchers take the named
    ops: the mat-vec kernels read `linalg.matvec` and a `linalg.matmul` with
    the transpose-b maps `(m, k), (n, k), (m, n)`; the attention matcher
    reads `linalg.batch_matmul`. This pass rewrites the other spellings of
    the same arithmetic to those ops:

    * a `linalg.generic` contraction (the "generic" form of IREE's and
      torch-mlir's generalized IR, and `cachet-gen --matmul=generic`): two
      inputs, one init, one reduction loop, the output map a permutation
      of the parallel loops, and the body `acc + cast(a) * cast(b)` (either
      order of each operation, `cast` nothing or `arith.extf` to the
      accumulator type, all of it floating point). By its maps it becomes
      `linalg.matvec` (`(n, k), (k) -> (n)`), `linalg.matmul` with the
      default maps (`x W` with W `[in][out]`) or the transpose-b maps, or a
      `linalg.batch_matmul` with the default maps. The named ops compute
      `acc + cast(a) * cast(b)` with the same casts, and IEEE addition and
      multiplication commute exactly, so the value is the same.
    * with `fold-transposes` (the default), a 2-D `linalg.transpose` (or an
      all-parallel generic that only moves its input, `(i, j) -> (j, i)`)
      read as the B operand of a default-map `linalg.matmul`: torch-mlir's
      `aten.linear` (`aten.t` of the weight, then `aten.mm`). The matmul
      reads the weight itself with the transpose-b maps; the transpose
      stays only for its other uses. Nothing is computed differently: the
      same products are summed in the same order.

    Contractions it does not recognize (integer, another body, another map
    set such as a transposed x or a batched transpose-b product) are left
    alone with a remark naming why; every raise and every folded transpose
    is reported. `cachet-compile` runs it first, with rewrites on and off.

    Before (torch-mlir's `aten.linear` on 4 tokens):

    ```mlir
    %wt = linalg.transpose ins(%w : tensor<4096x4096xf16>)
        outs(%e : tensor<4096x4096xf16>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %wt : tensor<4x4096xf16>, tensor<4096x4096xf16>)
        outs(%z : tensor<4x4096xf32>) -> tensor<4x4096xf32>
    ```

    After:

    ```mlir
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<4x4096xf16>, tensor<4096x4096xf16>)
        outs(%z : tensor<4x4096xf32>) -> tensor<4x4096xf32>
    ```

    A contraction generic `y[n] += extf(W[n, k]) * extf(x[k])` becomes
    `linalg.matvec ins(%w, %x ...)` the same way.
  }];
  let options = [
    Option<"foldTransposes", "fold-transposes", "bool", /*default=*/"true",
           "Fold a transposed weight (linalg.transpose or a transpose "
           "generic) into the linalg.matmul that reads it">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
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

def RaiseQuantize : Pass<"cachet-raise-quantize", "mlir::ModuleOp"> {
  let summary = "Raise linalg q8_0 quantization (a KV cache append) to "
                "cachet.quantize";
  let description = [{
    Recognizes the split q8_0 quantization ML front ends write in linalg on
    tensors when they append new K/V rows to a quantized cache, and replaces
    it by `cachet.quantize`, whose lowering is one kernel (writing into the
    cache in place when the result is inserted into it). The matcher
    (cachet/Analysis/QuantizeMatch.h) anchors on a `linalg.generic` that
    writes i8 with `arith.fptosi` and accepts exactly ggml's q8_0 rule, so
    that raising never changes a byte:

    * the values `[..., D]` (f16, bf16 or f32) reshaped by
      `tensor.expand_shape` into `[..., D/32, 32]`;
    * the block maxima: a reduction generic over the last dimension into a
      `linalg.fill` of `0.0 : f32`, combining `|float(x)|` with
      `arith.maximumf`, `arith.maxnumf` or `select(acc > a, acc, a)`;
    * the quants: `fptosi(round(float(x) * id))` to i8 with
      `id = d != 0 ? 1 / d : 0` (`une`/`one`, or `oeq`/`ueq` with the select
      swapped) and `d = amax / 127`, all in f32; `math.round` raises with
      `rounding <away>` (ggml's `roundf`), `math.roundeven` with
      `rounding <even>`;
    * optionally the scales: an element-wise generic
      `truncf(amax / 127) : f16` over the same maxima.

    Anything else (a scale computed as `amax * (1 / 127)`, which rounds
    differently, a truncating conversion without a round, a block other
    than 32, maxima that start from another value, ...) is left untouched
    with a remark on the i8 generic naming the condition that failed. Every
    raise is reported.

    Before:

    ```mlir
    %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
        : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
    %amax = linalg.generic {iterator_types = [p, p, p, reduction]}
        ins(%xb) outs(%zero : tensor<4x2x4xf32>) { maximumf(acc, absf(extf x)) }
    %q = linalg.generic ins(%xb, %amax) outs(%e : tensor<4x2x4x32xi8>) {
      d = amax / 127; id = d != 0 ? 1 / d : 0
      fptosi(math.round(extf(x) * id)) : i8 }
    %s = linalg.generic ins(%amax) outs(%f : tensor<4x2x4xf16>) {
      truncf(amax / 127) }
    %qc = tensor.collapse_shape %q [[0], [1], [2, 3]]
        : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
    ```

    After (and canonicalization):

    ```mlir
    %qc, %s = cachet.quantize %x : tensor<4x2x128xf16>
        -> tensor<4x2x128xi8>, tensor<4x2x4xf16>
    ```
  }];
  let dependentDialects = [
    "::cachet::CachetDialect", "::mlir::tensor::TensorDialect"
  ];
}

def RaiseDequantize : Pass<"cachet-raise-dequantize", "mlir::ModuleOp"> {
  let summary = "Raise the split q8_0 / q4_0 dequantization front ends "
                "write (i8 values times f16 scales, i4 values less 8 times "
                "f16 scales) to cachet.dequantize";
  let description = [{
    Recognizes the dequantization of split q8_0 weights or caches that ML
    front ends write in linalg on tensors: i8 values and one f16 scale per 32
    values along the innermost dimension, multiplied element-wise, and
    replaces it by `cachet.dequantize %q scales %s`. Split q4_0 weights (i4
    values, the int4 form of IREE and torch-mlir) are raised the same way
    when the body is q4_0's `(float(q) - 8) * scale` with q read unsigned:
    `uitofp(q) - 8` or `uitofp(q) + -8` (q zero-extended first or not), or
    `sitofp(zext(q) - 8)`; all exact, so the value is the same. Signed i4
    (`sitofp(q) * scale`), another zero point, or groups other than 32 are
    left alone with a remark naming the condition. The op names the
    format, so that later passes can read the blocks where they are used
    (cachet's mat-vec kernel decodes them in registers, and the f16 copy is
    never written) instead of materializing the floats. The matcher
    (cachet/Analysis/QuantizeMatch.h, shared with the attention matcher)
    accepts exactly what the op computes, so that raising never changes a
    value:

    * a `linalg.generic`, every loop parallel, over two inputs: the i8
      values read with the identity map, and the f16 scales read either
      flat, `(..., d) -> (..., d floordiv 32)`, or over blocks of 32 (the
      values reshaped to `[..., D/32, 32]`), `(..., b, i) -> (..., b)` or
      `(..., b, 0)` of `[..., D/32, 1]` scales;
    * the body `sitofp(q) * scale`, in either order, computed in the result
      type (f16, bf16 or f32; the scale extended with `arith.extf` when it
      is f32) or in f32 and then truncated once to the result type: the
      exact product rounded once, as `cachet.dequantize` rounds it.

    A generic over blocks whose values come from a `tensor.expand_shape` of
    `[..., D]` and whose result is only collapsed back to `[..., D]` is
    raised flat (the reshapes go away); otherwise it is raised over blocks,
    with its scales reshaped to `[..., D/32, 1]`.

    Anything else that converts i8 with `arith.sitofp` (a zero point, a
    block other than 32, an f32 scale rounded twice, a product in f16
    widened to f32, ...) is left untouched with a remark naming the
    condition that failed. Every raise is reported.

    Before:

    ```mlir
    %w = linalg.generic {indexing_maps = [
          affine_map<(r, c) -> (r, c)>,
          affine_map<(r, c) -> (r, c floordiv 32)>,
          affine_map<(r, c) -> (r, c)>],
          iterator_types = ["parallel", "parallel"]}
        ins(%q, %s : tensor<4096x4096xi8>, tensor<4096x128xf16>)
        outs(%e : tensor<4096x4096xf16>) {
      ^bb0(%qv: i8, %sv: f16, %o: f16):
        %f = arith.sitofp %qv : i8 to f16
        %m = arith.mulf %f, %sv : f16
        linalg.yield %m : f16
    } -> tensor<4096x4096xf16>
    %y = linalg.matvec ins(%w, %x : tensor<4096x4096xf16>, tensor<4096xf16>)
        outs(%z : tensor<4096xf32>) -> tensor<4096xf32>
    ```

    After:

    ```mlir
    %w = cachet.dequantize %q scales %s
        : tensor<4096x4096xi8>, tensor<4096x128xf16> -> tensor<4096x4096xf16>
    %y = linalg.matvec ins(%w, %x : tensor<4096x4096xf16>, tensor<4096xf16>)
        outs(%z : tensor<4096xf32>) -> tensor<4096xf32>
    ```
  }];
  let dependentDialects = [
    "::cachet::CachetDialect", "::mlir::tensor::TensorDialect"
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

    A causal bound that leaves most of the cache unread (a prefill at
    position N of a cache compiled for its longest length, `causal %n` or a
    static `causal N`) bounds the conversion: only the first
    `min(S, N + Sq + 1024)` positions (rounded up to 64; 1024 is the largest
    key tile an attention kernel may take, and a kernel reads keys to the
    end of the tile that holds the bound) are sliced from the cache and
    dequant-transposed into the first positions of each head of the
    scratch (`tensor.extract_slice` of a run-time size, then
    `tensor.insert_slice`); the attention reads the whole scratch view and
    none of the positions left out. The remark names the bound. (The 8B
    model's pp512 @ d4096 took 2 x 34 us per layer converting all 33280
    positions; docs/BENCHMARKS.md run 140.)

    ```mlir
    %n = arith.minui %aligned, %c4096 : index
    %kin = tensor.extract_slice %kq[0, 0, 0] [%n, 8, 4] [1, 1, 1]
        : tensor<4096x8x4x!cachet.q8_0> to tensor<?x8x4x!cachet.q8_0>
    %kto = tensor.extract_slice %ks3[0, 0, 0] [8, %n, 128] [1, 1, 1]
        : tensor<8x4096x128xf16> to tensor<8x?x128xf16>
    %kd = cachet.dequant_transpose %kin into %kto
        : tensor<?x8x4x!cachet.q8_0> -> tensor<8x?x128xf16>
    %kh = tensor.insert_slice %kd into %ks3[0, 0, 0] [8, %n, 128] [1, 1, 1]
        : tensor<8x?x128xf16> into tensor<8x4096x128xf16>
    ```

    `max-scratch-bytes` caps the scratch: when one layer's f16 K+V is
    larger, the positions are split into chunks of
    `C = max-scratch-bytes / (2 Hkv (D + Dv))` rounded down to a multiple of
    64 (whole key tiles of the attention kernels; of lcm(64, key tile) where
    the kernel the attention gets, from a `#cachet.kernel_config` already on
    it or from cachet-select-kernel-configs with `select-options`, has
    another, so that the chunks' kernels walk the same tiles as one pass;
    an attention that gets no kernel, whose reference lowering takes the
    softmax over all positions at once, is not chunked): an `scf.for` over the
    full chunks, carrying the chunk's K and V views of the scratch (so that
    each chunk writes them in place) and the online-softmax state, plus one
    remainder chunk. Each chunk is sliced from the quantized cache at its
    position, dequant-transposed into the scratch and attended with
    `cachet.attention_partial`, which continues the state (accumulator,
    row max, row sum; 0, -inf, 0 before the first chunk); the output is
    `acc * (1 / sum)`. The attention kernels carry exactly that state from
    key tile to key tile, so the chunked output is byte-identical to the
    unchunked one and to rewrites off. A kernel config already on the
    attention (`cachet.kernel_config`, `cachet.fallback_kernel_config`) is
    carried to the attention or chunks that replace it. `unroll-chunks` emits the chunks one
    after the other at static offsets instead of the loop (cachet-compile
    sets it on SPIR-V, whose kernels take no run-time offsets). Chunking an
    attention with an additive mask is not supported (remark, no rewrite).

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
    Option<"selectOptions", "select-options", "std::string",
           /*default=*/"",
           "The options cachet-select-kernel-configs runs with (cachet-compile "
           "passes its own): a capped scratch is cut into chunks of whole "
           "key tiles of the kernel the attention gets, and not cut where "
           "the attention gets no kernel (the reference lowering)">,
    Option<"unrollChunks", "unroll-chunks", "bool", /*default=*/"false",
           "Emit the chunks of a capped scratch one after the other instead "
           "of as an scf.for (static offsets, for targets whose kernels take "
           "no run-time offsets: SPIR-V)">,
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

def PrefetchMatvecChains : Pass<"cachet-prefetch-matvec-chains",
                                "mlir::ModuleOp"> {
  let summary = "Prefetch the next weight of streaming mat-vec launch chains "
                "into L2, or launch them with programmatic dependent launch";
  let description = [{
    Carries out the `#cachet.prefetch_plan` of each launch (see the dialect
    docs), which `cachet-select-kernel-configs` sets from its `prefetch`,
    `prefetch-*` and `pdl-*` options, the profile and the target; this pass
    decides nothing and has no options. A plan it cannot carry out (the
    target lacks the instruction, the launch is not the last of its step, the
    next weights are unknown, `wait = after_weight_loads` where a kernel that
    may still run could write the weights) is an error naming the cause.
    Launches without a plan are left alone.

    Runs on host code after kernel outlining and after the target attribute
    is attached to each `gpu.module` (`nvvm-attach-target`, ...), before the
    kernels are converted to NVVM / ROCDL / SPIR-V. The matcher
    (cachet/Analysis/MatvecChain.h) finds, per block, the `gpu.launch_func`
    ops whose kernel streams a read-only rank-2 weight (one `memref.load`,
    in one `scf.for` from 0 to the column count over the column index, row
    `thread_id x + block_id x * S`, blocks of (S, 1, 1)), and groups them into
    steps: one launch, or a gate/up pair (same weight type, a shared read-only
    input, both results read by one later launch before the next step). Other
    launches (fills, element-wise kernels) may come between steps. The next
    weight of a step is the weight(s) of the following step, known when it is
    defined before the step's last launch and no host op writes it.

    Mechanisms (the select pass's `prefetch` mode; the plan's `next`, `pdl`,
    `own`, `trigger` and `wait`):

    * `l2`: the kernel of a step's last launch gets each next weight as an
      extra memref argument (the launch passes the host value; with
      cachet's kernel ABI that is the weight's pointer followed by its size
      in bytes). After the kernel's work, its last `ctas` CTAs (`prefetch-ctas`) (block ids
      `>= grid - ctas`) prefetch the first `range` bytes of it into L2, one
      cache line per thread and iteration; `range` is a constant of the
      kernel (static shapes only: the kernel ABI carries memrefs, not
      integers). The prefetch is `nvvm.prefetch level = L2` where LLVM
      selects it (sm_90+ with PTX 8.0+), inline PTX `prefetch.global.L2`
      below (the instruction exists since sm_20; LLVM 22 only selects the
      intrinsic on sm_90 with +ptx80).
    * `bulk` (sm_90+, PTX 8.0+): the same range with
      `nvvm.cp.async.bulk.prefetch` (`cp.async.bulk.prefetch.L2`), 4 KiB per
      instruction.
    * `pdl` (sm_90+, PTX 7.8+): every launch of a chain gets the unit
      attribute `cachet.pdl`, and its kernel starts with
      `nvvm.griddepcontrol launch_dependents` (`pdl-trigger=start`, the
      default: the next grid may launch as soon as every CTA of this one
      has started; `pdl-trigger=end` puts it before every return instead);
      then each CTA prefetches its share (1/grid) of the first `prefetch-max-bytes`
      of its own weight into L2 (a whole weight larger than the L2 would
      evict itself); then the wait, `griddepcontrol.wait` as
      `llvm.inline_asm has_side_effects` (LLVM declares the
      `llvm.nvvm.griddepcontrol.wait` intrinsic `memory(none)`, which would
      let it move loads across; the inline asm call may read and write
      memory, so neither MLIR nor LLVM moves a load across it).
      Where the wait goes (`pdl-wait`):
      - `after-weight-loads` (the default): loads of the kernel's own
        weights may come before it, everything else after. The wait goes
        before the first op that touches other memory; into both branches
        of an `scf.if` that holds one; into the first iteration of an
        `scf.for` that holds one (`scf.if %iv == %lb`), before the first such
        op of the body; again before the next such op after the `scf.if` or
        `scf.for`; and before every return, so the grid completes only after
        the one before it. cachet's subgroup mat-vec loops load a batch of
        weights and then x, so a CTA of the next grid issues its first
        batch of weight loads while the grid before it drains. The weights
        of a chain are written by no host op or kernel of the function (the
        matcher's read-only check), but a kernel launched before the
        function could still run: with the trigger first, a CTA of a launch
        may start while any launch back to the last fence runs. So loads go
        before the wait only where a fence comes before the launch in its
        block (a launch without `cachet.pdl`, a `cachet.pdl` launch with
        `pdl-trigger=end`, a copy, a fill or a `gpu.wait`, none of them
        async, with no op with regions or call in between) and no launch from the fence on writes a buffer that may
        alias the weights (mlir's AliasAnalysis; an operand that is
        neither a memref nor an integer, index or float, such as a pointer,
        counts as aliasing them); otherwise the wait comes first, with a
        remark that says why.
      - `start`: the wait before any read.
      On the H200 (docs/BENCHMARKS.md, run 44) the chain of cachet's
      mat-vecs with `prefetch-max-bytes=0` is 1.06x as fast as without PDL with the
      defaults, 1.04x with `pdl-trigger=end`, 1.04x with `pdl-wait=start`, and
      1.00x with the prologue's 15 MiB prefetch. Before run 41 every PDL
      figure (1.3-1.5x slower in runs 3-4, 0.76-0.79x in run 34) measured a
      stream synchronization after each marked launch (cachet-compile ran
      cachet-lower-launch-attributes before `gpu-async-region`), not PDL.
      `pdl+l2` and `pdl+bulk` combine both.
    * ROCDL: `l2` (and `auto`, for any `l2_prefetch` other than `none`)
      uses the chip's data prefetch: `llvm.amdgcn.s.prefetch.data` on gfx12
      (4 KiB per instruction, at addresses uniform per workgroup; LLVM 22
      selects it from gfx1200), `llvm.amdgcn.global.prefetch` on gfx1250
      (one line per thread, as `l2`; as `llvm.call_intrinsic`, because
      `rocdl.global.prefetch` only declares a read and is erased as dead).
      Other chips (gfx9, gfx11) are skipped with a remark, and so are
      `bulk` and `pdl`. SPIR-V targets are skipped with a remark.
    * `auto`: from the profile: `pdl = true` adds PDL, `l2_prefetch` picks
      `l2` / `bulk` / the AMD prefetch (h200: pdl + bulk; rtx4070, rtx2060s:
      l2; none: nothing), each limited to what the target supports, with a
      remark saying why. Launches of cachet's subgroup mat-vec kernels
      (weights read by loads marked `cachet.streaming_weight`) get only the
      PDL part from `auto`, without the prologue's prefetch, where the
      profile has `pdl = true` and the target griddepcontrol (and nothing
      otherwise): they stream at full occupancy, and on the H200 no
      prefetch paid for them (bulk 0.95x, l2 0.99x; pdl with the prologue's
      prefetch 0.94x of pdl without it, run 44), while PDL with the trigger
      first and the weight loads before the wait did (1.06x, run 44).
      An explicit mode still applies as asked.
    * `off`: nothing.

    Contract of `cachet.pdl` for the runtime: launch the kernel on the same
    stream as the previous launch with
    `cudaLaunchAttributeProgrammaticStreamSerialization = 1`
    (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`). Without it
    the `griddepcontrol` instructions are no-ops and the launch is
    ordinary; either way values do not change. Only launches marked
    `cachet.pdl` may be launched so: their kernels wait before reading
    anything but their own weights (which nothing that may still run
    writes, see `pdl-wait`), and as every thread waits before it returns, a
    marked kernel completes only after its predecessor did, so waiting on it
    also orders everything before.
    Any other kernel (no wait) launched so could start while the kernel
    before it still writes its inputs.

    Budget per step (the select pass's cost function,
    lib/Analysis/PrefetchPlan.cpp): with `B` the bytes of the next step's
    weights (both of a gate/up pair), each next weight `w` gets
    `min(fraction * B_w, max-bytes * B_w / B)` bytes (`prefetch-fraction`,
    `prefetch-max-bytes`), rounded down to whole cache lines, never past the
    weight's end. Defaults: fraction 0.5 (the seed's setting), max-bytes
    L2 / 4 of the profile (9 MiB on rtx4070, 1 MiB on rtx2060s, 15 MiB on
    h200), `prefetch-ctas` the profile's compute units (one prefetching CTA
    per SM), cache line from the profile. Values are never changed:
    prefetches and grid dependency control move no data the program reads.

    The select pass remarks on every launch: part of a chain (step, what it
    prefetches, bytes) or not, and why. A kernel with workgroup or private
    attributions gets no next weights (they would be arguments after its
    attributions' block arguments): with PDL it gets the PDL part only,
    without it an empty plan. Only intrinsics the target chip and PTX
    version of the `#nvvm.target` support are planned.

    Before (host, after outlining):

    ```mlir
    gpu.launch_func @k0::@k0 blocks in (%c16, %c1, %c1)
        threads in (%c64, %c1, %c1)
        args(%wq : memref<1024x1024xbf16>, %x : memref<1024xbf16>,
             %q : memref<1024xf32>)
    gpu.launch_func @k1::@k1 blocks in (%c4, %c1, %c1)
        threads in (%c64, %c1, %c1)
        args(%wk : memref<256x1024xbf16>, %x : memref<1024xbf16>,
             %k : memref<256xf32>)
    ```

    The kernels use the launch's block size (which the matcher proved) and
    its grid size when constant, rather than `gpu.block_dim` /
    `gpu.grid_dim`, which ROCDL lowers to device-library calls.

    After `cachet-select-kernel-configs{prefetch=l2}` (profile rtx4070,
    target sm_89), which sets `#cachet.prefetch_plan<next = l2,
    next_bytes = [262144], ctas = 46>` on the first launch, and this pass:

    ```mlir
    gpu.launch_func @k0::@k0 blocks in (%c16, %c1, %c1)
        threads in (%c64, %c1, %c1)
        args(%wq : memref<1024x1024xbf16>, %x : memref<1024xbf16>,
             %q : memref<1024xf32>, %wk : memref<256x1024xbf16>)
    ```

    and the kernel `@k0` gets the argument `%next: memref<256x1024xbf16>`
    and ends with (262144 B = half of `%wk`)

    ```mlir
    %n = arith.minui %c16, %c46 : index      // grid 16, ctas 46
    %first = arith.subi %c16, %n : index
    %last = arith.cmpi uge, %bid, %first : index
    scf.if %last {
      // line = k * blockDim + tid, step n * blockDim, up to 262144 / 128
      %base = memref.extract_aligned_pointer_as_index %next ...
      scf.for %line = %start to %c2048 step %stride {
        ...
        llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %a
            : (i64) -> ()
      }
    }
    gpu.return
    ```

    With `prefetch=pdl prefetch-max-bytes=0` (sm_90) the launch
    carries `{cachet.pdl}`, and a subgroup mat-vec kernel after a fence
    becomes

    ```mlir
    nvvm.griddepcontrol launch_dependents
    ...
    scf.for %k = %lb to %c4096 step %c1024 iter_args(...) {
      %w0 = vector.load %w[%row, %k] {cachet.streaming_weight} ...
      ...
      %first = arith.cmpi eq, %k, %lb : index
      scf.if %first {
        llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
            : () -> ()
      }
      %x0 = vector.load %x[%k] ...
      ...
    }
    ...
    llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
        : () -> ()
    gpu.return
    ```

    (with the prologue's prefetch, `scf.for ... {
    nvvm.cp.async.bulk.prefetch %p, %size : !llvm.ptr<1> }` comes after
    `launch_dependents`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def SelectKernelConfigs : Pass<"cachet-select-kernel-configs", "mlir::ModuleOp"> {
  let summary = "Choose each op's kernel: a #cachet.kernel_config the "
                "lowerings carry out";
  let description = [{
    Every kernel decision of cachet is taken here, from the `#cachet.device`
    profile and the op's shapes, and kept in the IR as the discardable
    attribute `cachet.kernel_config` (`#cachet.kernel_config<...>`, see the
    dialect docs); the lowering passes (`cachet-lower-attention`) build what
    it says and decide nothing. Each decision is a remark on the op saying
    what was chosen and why. An op that already has a config keeps it (a
    remark says so): writing the attribute in the input overrides the cost
    model, as the options below do for every op at once. An op left without
    a config keeps its reference lowering.

    `cachet.attention` (lib/Analysis/AttentionConfig.cpp): which of the
    scalar, mma (gpu.subgroup_mma) and mma-sync (PTX mma.sync) flash
    kernels, with which query and key tiles, vectors, tile padding, dynamic
    workgroup memory and double buffering.

    * `attention-kernel=auto`: mma-sync where `allow-mma-sync` is set
      (cachet-compile sets it on NVVM) and mma.sync can serve the attention
      (f16 or bf16 Q/K/V, head dimensions that are multiples of 16, 32-lane
      subgroups, a profile with 16x16x16 f16 cooperative matrices), else
      mma where the profile has that cooperative matrix and `allow-mma` is
      set (f16 only), else tiled (f32 fused multiply-adds on register
      tiles: query and key tiles of 64, 16 threads per group of 4 rows, the
      widest step of up to 32 columns whose buffer fits the workgroup
      memory budget), else scalar. `scalar`, `tiled`, `mma`, `mma-sync` ask
      for one;
      `reference` configures none. With `mma-fallback` (cachet-compile sets
      it on SPIR-V), where auto takes the mma kernel it also records the
      kernel it would take without it as `cachet.fallback_kernel_config`:

      ```mlir
      %o = cachet.attention %q, %k, %v ... {cachet.kernel_config =
             #cachet.kernel_config<attention_mma, tile = [64, 64], ...>,
           cachet.fallback_kernel_config =
             #cachet.kernel_config<attention_tiled, tile = [64, 64, 32], ...>}
      ```

      cachet-lower-attention builds both, and the compiled code launches
      the mma kernel where the device runs 16x16x16 f16 cooperative
      matrices (`cachetMgpuHasCooperativeMatrixF16`, asked at run time),
      else the fallback.
    * The key tile is the largest power of two up to 64 whose tiles fit the
      workgroup memory budget: the profile's, at most the 48 KiB of static
      memory a CUDA kernel gets, or with `dynamic-shared` the profile's over
      `resident-workgroups`. The scalar kernel's query tile is two
      subgroups of rows (at least 32), halved down to 32 until a key tile
      fits; the mma kernels' is four subgroups of `16 * row-blocks` rows.
    * Decode: where one KV head has at most `decode-rows` query rows
      (group x queries: decode, speculative verification, small batches),
      auto takes `attention_decode` on every target (`attention-kernel=
      decode` asks for it): split-KV flash-decoding, one workgroup per KV
      head and split computing all its query rows, so each K/V byte is
      read once (per group of at most `decode-workgroup-rows` rows). The
      split is `decode-split`, or four workgroups per compute unit of the
      profile over the KV heads (a power of two, at least `decode-threads`
      positions each); the remark says "split-KV" and the count. Each
      thread reads its position's K row with wide loads and its slice of
      V rows; with `decode-stages=2` (NVVM: `async-copy` and
      `dynamic-shared`) each step's K/V rows are copied into
      double-buffered workgroup memory by asynchronous copies instead.
      With `decode-row-values=n` > 1 (auto: 8 at 16384 positions or more,
      for f16/bf16 K and V at up to 4 rows per workgroup on NVVM, for every
      K/V at up to 8 rows on SPIR-V and ROCDL) each row is read by head-dim / n lanes
      together (coalesced; blocks as aligned 32-bit words), Q and the
      accumulators in registers, the dot products summed by shuffles, and
      `decode-unroll` positions per group of lanes per step. With
      `allow-mma-sync` (NVVM) auto takes `attention_decode_mma_sync`
      wherever it serves (`decode-mma-sync`; f16/bf16 Q, K and V, or
      q8_0 / q4_0 blocks; not for blocks at up to 4 rows below 16384
      positions): S = Q K^T and O^T = V^T P^T as m16n8k16 mma.sync, up to
      16 rows per workgroup in one m16 block, Q in registers, K rows read
      in runs of 8 values or whole blocks decoded to f16 in registers; the
      remark of the other decode kernels says why not.
      SPIR-V
      targets (cachet-compile) take it only when asked for, until a whole
      Vulkan suite has passed on NVIDIA's driver (docs/BENCHMARKS.md, runs
      56-57).
    * On a `mesa` profile (llvmpipe, which silently ends a loop nest after
      65535 iterations) an attention whose scalar tile loop (or decode
      kernel's loops) would run longer keeps the reference lowering.

    `linalg.matvec` on buffers, and a `linalg.matmul` reading its weight
    transposed (`indexing_maps` `(m, k)`, `(n, k)`, `(m, n)`, as front ends
    write `x W^T`) with at most `small-batch` static rows of x (a batch of
    tokens: speculative decoding, batched decode), which the same kernel
    computes with an accumulator per row of x, each decoded weight slice
    multiplied with all of them (lib/Analysis/MatvecConfig.cpp; an op on
    tensors is left for a run after bufferization, when the weight's layout
    is known): cachet's subgroup kernel (a subgroup per row, `load-bytes`
    loads, several in flight per lane, `rows-per-block` subgroups a block,
    `rows-per-subgroup` rows sharing each load of x, a resident grid of
    `blocks-per-cu` blocks per compute unit, x staged in workgroup memory
    with `stage-x` where it fits 48 KiB) where it can serve the op (static
    f16/bf16/f32 weights with an f32 result, rows unit-stride and aligned to
    the loads, contiguous x and y), else `matvec_generic`, which leaves it
    to the generic lowering. `matvec-kernel=generic` asks for that
    everywhere. A weight that is a `cachet.dequantize` of packed blocks
    (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, the k-quants q2_K, q3_K, q4_K,
    q5_K, q6_K, and the ternary tq2_0, tq1_0; its buffer read by the mat-vec alone, rows of whole aligned 32-bit
    words) is read as blocks: each lane decodes slices of `block-slice`
    values (`super-block-slice` for the k-quants) from aligned words in
    registers,
    rounded to the dequantized element type as the dequantize would, and
    the f16 copy is never written (`vector_width` is the slice);
    `matvec-kernel=blocks` takes the subgroup kernel for such weights only. Kernels whose subgroups compute rows of several mat-vecs
    (gate/up, K/V, fused by cachet-lower-matvec) take the `paired-`
    settings: the config keeps both (`loads`, `resident`).

    `gpu.launch_func` of a chain of streaming mat-vec launches, once kernels
    are outlined and their `gpu.module` has a target
    (lib/Analysis/PrefetchPlan.cpp): a `#cachet.prefetch_plan` (attribute
    `cachet.prefetch_plan`) carried out by `cachet-prefetch-matvec-chains`:
    the next step's weights prefetched into L2 by the last CTAs (`l2`,
    `bulk`, the AMD data prefetch) and how many bytes of each, programmatic
    dependent launch with its prologue, trigger and wait. `prefetch=auto`
    takes the mechanisms from the profile (`pdl`, `l2_prefetch`), limited to
    what the target has; `prefetch-fraction`, `prefetch-max-bytes`,
    `prefetch-ctas`, `pdl-trigger` and `pdl-wait` set the budget and the PDL
    placement. See cachet-prefetch-matvec-chains for the mechanisms and
    their measured effect.

    The packed dequant-transpose on buffers (the `linalg.generic` marked
    `cachet.dequant_transpose`; lib/Analysis/DequantTransposeConfig.cpp):
    `dequant_transpose_staged` with the most positions per workgroup up to
    `positions-per-group` that divide the positions and fit
    `max-workgroup-bytes`, and the widest load up to
    `dequant-transpose-load-bytes` that divides the chunk, or
    `dequant_transpose_direct` (`dequant-transpose-kernel=direct`); no
    config (the generic kernel) where neither applies, with the reason.

    A cachet.quantize to packed blocks on buffers (the `linalg.generic` of
    bytes marked `cachet.quantize`; lib/Analysis/QuantizeConfig.cpp):
    `quantize_subgroup` by default (`quantize-kernel=subgroup`: the lanes of
    a subgroup per block, `quantize-threads` per workgroup, the shuffles'
    width `subgroup-size` or the profile's subgroup size or 32; the generic
    kernel where `quantize-threads` is not a multiple of it), or no config
    with `quantize-kernel=generic` (the generic kernel, a thread per byte,
    each scanning its block), with a remark either way. On the H200 the
    subgroup kernel's first (serial-shuffle) form was no slower than the
    generic kernel in any format and faster in q8_0, q5_1 and iq4_nl
    (docs/BENCHMARKS.md, run 148); its tree form, on an H100 (run 149),
    took 9 us (11 for iq4_nl, against the generic's 47) for a 512 x 8 x 128
    append in workgroups of 64 threads and 6 us in q8_0 and q4_0 in
    workgroups of 256, the default since.

    Options are range-checked: a value out of range is an error naming the
    option and its allowed values.

    Before (`profile=h200`, `allow-mma-sync=true`):

    ```mlir
    %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
        : tensor<8x128x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
        -> tensor<8x128x64xf16>
    ```

    After:

    ```mlir
    %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
        {cachet.kernel_config = #cachet.kernel_config<
           variant = attention_mma_sync, tile = [64, 64], workgroup = 128,
           subgroup = 32, vector_width = 8, pad_bytes = 16>}
        : tensor<8x128x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
        -> tensor<8x128x64xf16>
    ```
  }];
  let options = [
    Option<"attentionKernel", "attention-kernel",
           "::cachet::AttentionKernelChoice",
           /*default=*/"::cachet::AttentionKernelChoice::Auto",
           "cachet.attention kernel", [{::llvm::cl::values(
      clEnumValN(::cachet::AttentionKernelChoice::Auto, "auto",
                 "from the profile and the shapes"),
      clEnumValN(::cachet::AttentionKernelChoice::Scalar, "scalar",
                 "one thread per query row, every target"),
      clEnumValN(::cachet::AttentionKernelChoice::Mma, "mma",
                 "gpu.subgroup_mma (wmma, KHR cooperative matrix)"),
      clEnumValN(::cachet::AttentionKernelChoice::MmaSync, "mma-sync",
                 "PTX mma.sync, the softmax in registers (NVVM)"),
      clEnumValN(::cachet::AttentionKernelChoice::Decode, "decode",
                 "split-KV flash-decoding, every target"),
      clEnumValN(::cachet::AttentionKernelChoice::Tiled, "tiled",
                 "f32 fused multiply-adds on register tiles, every target"),
      clEnumValN(::cachet::AttentionKernelChoice::Reference, "reference",
                 "no config: the reference lowering"))}]>,
    Option<"allowMmaSync", "allow-mma-sync", "bool", /*default=*/"false",
           "Whether auto may choose the mma-sync kernel (the target lowers "
           "nvgpu.mma.sync and nvgpu.ldmatrix: NVVM)">,
    Option<"allowMma", "allow-mma", "bool", /*default=*/"true",
           "Whether auto may choose the mma kernel (the target lowers "
           "gpu.subgroup_mma and the runtime runs it)">,
    Option<"mmaFallback", "mma-fallback", "bool", /*default=*/"false",
           "Where auto chooses the mma kernel, also choose the kernel it "
           "would without it (cachet.fallback_kernel_config): "
           "cachet-lower-attention builds both and the compiled code "
           "launches the fallback where the device does not run 16x16x16 "
           "f16 cooperative matrices (SPIR-V: the profile promises tensor "
           "cores, the Vulkan device may lack VK_KHR_cooperative_matrix)">,
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"0",
           "Query rows per workgroup (0: from the profile's subgroup size; "
           "mma-sync: 8 subgroups where no compute unit then holds more "
           "rows than with 4, else 4)">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"0",
           "KV positions per workgroup-memory tile (0: from the profile's "
           "workgroup memory)">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"16",
           "Bytes per vector load and store of the mma kernels' Q, K and V "
           "tiles, a power of two (SPIR-V takes at most 4 components: 8)">,
    Option<"tilePadBytes", "tile-pad-bytes", "int64_t", /*default=*/"16",
           "Bytes each row of the mma kernels' workgroup-memory tiles is "
           "padded by, so the 16 rows of an operand start in different "
           "banks (a multiple of 16; 0: none)">,
    Option<"dynamicShared", "dynamic-shared", "bool", /*default=*/"false",
           "Whether the mma kernels' tiles are views of dynamic workgroup "
           "memory (gpu.dynamic_shared_memory), which may exceed 48 KiB "
           "(NVVM: the runtime opts in above it)">,
    Option<"residentWorkgroups", "resident-workgroups", "int64_t",
           /*default=*/"3",
           "With dynamic-shared: the mma kernels' tiles take at most the "
           "profile's workgroup memory over this many workgroups of up to four "
           "subgroups (larger ones: over as many subgroups, rounded up; 1 "
           "or more)">,
    Option<"occupancyHint", "occupancy-hint", "bool", /*default=*/"false",
           "With dynamic-shared: ask (min_workgroups_per_sm) for registers "
           "that let resident-workgroups workgroups share an SM">,
    Option<"asyncCopy", "async-copy", "bool", /*default=*/"false",
           "With dynamic-shared: double-buffer f16 K/V tiles filled by "
           "nvgpu.device_async_copy (cp.async, NVVM only); packed K and V: "
           "their blocks' bytes, decoded in workgroup memory">,
    Option<"rowBlocks", "row-blocks", "int64_t", /*default=*/"1",
           "16-row blocks per subgroup in the mma kernels (a power of two up "
           "to subgroup / 16)">,
    Option<"lazyRescale", "lazy-rescale", "bool", /*default=*/"false",
           "With warp-sync: skip rescaling the accumulators for a key tile "
           "that moves none of a subgroup's row maxima">,
    Option<"warpSync", "warp-sync", "bool", /*default=*/"false",
           "Order a subgroup's private staging with nvvm.bar.warp.sync "
           "instead of gpu.barrier (NVVM only)">,
    Option<"decodeRows", "decode-rows", "int64_t", /*default=*/"16",
           "auto takes the decode kernel where one KV head has at most this "
           "many query rows (group x queries; 0: never, at most 32)">,
    Option<"decodeSplit", "decode-split", "int64_t", /*default=*/"0",
           "Workgroups sharing one KV head's positions in the decode kernel "
           "(0: four workgroups per compute unit over the KV heads)">,
    Option<"decodeThreads", "decode-threads", "int64_t", /*default=*/"0",
           "Threads per workgroup of the decode kernel (whole subgroups; one "
           "KV position each per step; 0: 256 where K is decoded from "
           "blocks, else 128)">,
    Option<"decodeWorkgroupRows", "decode-workgroup-rows", "int64_t",
           /*default=*/"0",
           "The most of a KV head's query rows one decode workgroup computes "
           "(the rest in more workgroups, which read the same K/V; 1 to 32; "
           "0: 8, or 16 on mma.sync)">,
    Option<"decodeLoadBytes", "decode-load-bytes", "int64_t",
           /*default=*/"16",
           "Bytes per load of a K row in the decode kernel (a power of two "
           "up to 16; less where the row's bytes need it); on mma.sync, "
           "q8_0 / q4_0 blocks are read 8 bytes at a time (scales with "
           "quants) from 8 up, as aligned 4-byte words below">,
    Option<"decodeStages", "decode-stages", "int64_t", /*default=*/"1",
           "1: each decode thread reads its K row and V slices from global "
           "memory; 2: with async-copy and dynamic-shared, each step's K/V "
           "rows are staged in double-buffered workgroup memory by "
           "asynchronous copies (NVVM; slower on the H200 but for f16 tg1, "
           "docs/BENCHMARKS.md run 65)">,
    Option<"decodeRowValues", "decode-row-values", "int64_t",
           /*default=*/"0",
           "Values of a K/V row each lane of the decode kernel reads: 1, a "
           "position per thread (each reads whole rows); n > 1 (a power of "
           "two), each row read together by head-dim / n lanes, Q and the "
           "accumulators in registers; 0: auto (8, or 16 or 32 where a "
           "subgroup is narrower, at 16384 positions or more: on NVVM for "
           "f16/bf16 K and V at most 4 rows per workgroup, on SPIR-V and "
           "ROCDL for every K/V at most 8 rows; else 1)">,
    Option<"decodeUnroll", "decode-unroll", "int64_t", /*default=*/"4",
           "With decode-row-values > 1: positions each group of lanes takes "
           "per step (their loads in flight together; 1 to 16)">,
    Option<"decodeMmaSync", "decode-mma-sync", "int64_t", /*default=*/"0",
           "The decode kernel with Q K^T and P V on m16n8k16 mma.sync "
           "(NVVM, with allow-mma-sync; f16/bf16 K and V, or q8_0/q4_0 "
           "blocks decoded to f16 or bf16 in registers; up to 16 rows per "
           "workgroup): 1 wherever it serves the attention, -1 never, 0 "
           "auto (the same but for blocks at up to 4 rows below 16384 "
           "positions)">,
    Option<"decodeMmaUnroll", "decode-mma-unroll", "int64_t",
           /*default=*/"1",
           "Matrix products of 16 positions each subgroup of the mma-sync "
           "decode kernel takes per step (their loads in flight together; 1 "
           "to 8)">,
    Option<"decodeMmaStages", "decode-mma-stages", "int64_t",
           /*default=*/"2",
           "Steps of the mma-sync decode kernel whose loads are in flight: "
           "2, each step's K/V loads are issued before the previous step's "
           "products and held in registers across the iteration (with "
           "registers for 256 threads per SM unless decode-workgroups-per-cu "
           "says); 1, after them">,
    Option<"decodeWorkgroupsPerUnit", "decode-workgroups-per-cu", "int64_t",
           /*default=*/"0",
           "Decode workgroups per compute unit that the split fills the "
           "device with (cut to the workgroups that get positions, as each "
           "gets a multiple of its threads; 0: 256 threads' worth, two "
           "workgroups of 128, for the mma-sync kernel with "
           "decode-mma-stages=2, else four with the split rounded down to a "
           "power of two); on mma.sync it also asks the kernel's registers "
           "to allow that many per SM (min_workgroups_per_sm)">,
    Option<"decodeBlockWorkgroupsPerUnit", "decode-block-workgroups-per-cu",
           "int64_t", /*default=*/"0",
           "decode-workgroups-per-cu of the decode kernel (not mma.sync) over "
           "K/V of block-quantized caches (read as the cache holds them or "
           "dequantized once from them) where decode-workgroups-per-cu is 0 "
           "(0: its default). The SPIR-V pipeline sets 2: on NVIDIA's "
           "Vulkan driver q8_0 and q4_0 tg1 / tg4 from d4096 to d65536 took "
           "0.88-1.01x the time of the default (H200 run 157, H100 run 159), "
           "f16 1.14x">,
    Option<"matvecKernel", "matvec-kernel", "::cachet::MatvecKernelChoice",
           /*default=*/"::cachet::MatvecKernelChoice::Auto",
           "linalg.matvec kernel", [{::llvm::cl::values(
      clEnumValN(::cachet::MatvecKernelChoice::Auto, "auto",
                 "the subgroup kernel where it serves the op"),
      clEnumValN(::cachet::MatvecKernelChoice::Subgroup, "subgroup",
                 "the same (the kernel's conditions still apply)"),
      clEnumValN(::cachet::MatvecKernelChoice::Generic, "generic",
                 "the generic lowering, one thread per row"),
      clEnumValN(::cachet::MatvecKernelChoice::Blocks, "blocks",
                 "the subgroup kernel for block-quantized weights only, the "
                 "generic lowering for float weights"))}]>,
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"0",
           "Mat-vec lanes per row; 0: the device profile's subgroup size (32 "
           "without one)">,
    Option<"rowsPerBlock", "rows-per-block", "int64_t", /*default=*/"4",
           "Mat-vec rows (subgroups) per block">,
    Option<"loadsPerLane", "loads-per-lane", "int64_t", /*default=*/"4",
           "Mat-vec weight loads (of load-bytes) each lane issues before "
           "using them">,
    Option<"pairedLoadsPerLane", "paired-loads-per-lane", "int64_t",
           /*default=*/"8",
           "loads-per-lane of a mat-vec kernel whose subgroups compute rows "
           "of several mat-vecs (gate/up, K/V); 0: loads-per-lane">,
    Option<"blocksPerCU", "blocks-per-cu", "int64_t", /*default=*/"0",
           "Mat-vec blocks per compute unit of a resident grid that loops "
           "over the kernel's blocks (needs the profile's compute units); 0: "
           "one block per rows-per-block subgroups">,
    Option<"pairedBlocksPerCU", "paired-blocks-per-cu", "int64_t",
           /*default=*/"0",
           "blocks-per-cu of a mat-vec kernel whose subgroups compute rows "
           "of several mat-vecs; 0: blocks-per-cu">,
    Option<"stageX", "stage-x", "bool", /*default=*/"false",
           "Copy a mat-vec's x into workgroup memory once per block and read "
           "it from there; over q8_0 / q4_0 blocks, quantize x there once "
           "per block to q8_0 blocks and take 4-way int8 dot products "
           "(dp4a on NVVM; about 1% of the result's rms off the f16 path, "
           "and slower on the H200, run 83)">,
    Option<"rowsPerSubgroup", "rows-per-subgroup", "int64_t", /*default=*/"1",
           "Mat-vec rows each subgroup computes, sharing its loads of x (1 "
           "where it does not divide the rows)">,
    Option<"loadBytes", "load-bytes", "int64_t", /*default=*/"16",
           "Bytes of a weight row each lane loads at a time (a power of two; "
           "SPIR-V vectors have at most 4 components)">,
    Option<"blockSlice", "block-slice", "int64_t", /*default=*/"8",
           "Values of a block each lane decodes per load round of a mat-vec "
           "over block-quantized weights (a divisor of 32; at most 16 for "
           "the 4-bit formats)">,
    Option<"splitBlockSlice", "split-block-slice", "int64_t",
           /*default=*/"0",
           "block-slice of a mat-vec over split q8_0 / q4_0 weights (i8 or "
           "i4 values and f16 scales, the slice's values in one aligned "
           "load); 0: "
           "block-slice. On the H200 16 made lone mat-vecs 1.02-1.32x "
           "faster and the 2-layer chain 0.89x (docs/BENCHMARKS.md run 83), "
           "so the default follows block-slice">,
    Option<"superBlockSlice", "super-block-slice", "int64_t",
           /*default=*/"16",
           "block-slice of a mat-vec over the super-blocks (q2_K, q3_K, "
           "q4_K, q5_K, q6_K, tq2_0, tq1_0; a slice of q2_K, q3_K, q6_K or "
           "tq1_0 at most 16); 0: "
           "block-slice. On the H200 16 made q4_K / q6_K mat-vecs 1.20-1.30x / 1.09-1.18x faster than "
           "8 and the q4_K 2-layer chain 1.08x (docs/BENCHMARKS.md run 85)">,
    Option<"blockRowsPerSubgroup", "block-rows-per-subgroup", "int64_t",
           /*default=*/"2",
           "rows-per-subgroup of a mat-vec over block-quantized weights (each "
           "load of x serves that many rows' decoded values; 2 measured "
           "faster than 1 on the H200, docs/BENCHMARKS.md run 79)">,
    Option<"blockPairedLoadsPerLane", "block-paired-loads-per-lane",
           "int64_t", /*default=*/"2",
           "paired-loads-per-lane of a mat-vec kernel over block-quantized "
           "weights whose subgroups compute rows of several mat-vecs (0: "
           "paired-loads-per-lane; 2 measured fastest in the 2-layer q8_0 "
           "and q4_0 chains on the H200, docs/BENCHMARKS.md run 81)">,
    Option<"bf16Vectors", "bf16-vectors", "bool", /*default=*/"true",
           "Whether the target takes bf16 vectors; without, bf16 mat-vecs "
           "keep the generic kernel">,
    Option<"fuseSiblings", "fuse-siblings", "bool", /*default=*/"true",
           "One mat-vec kernel for consecutive mat-vecs over the same x">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Do an element-wise op over the results of a kernel's mat-vecs in "
           "the kernel">,
    Option<"smallBatch", "small-batch", "int64_t", /*default=*/"8",
           "The most rows of x (tokens) a linalg.matmul reading its weight "
           "transposed (the transpose-b maps) may have to run on the "
           "mat-vec kernel, each decoded weight slice multiplied with all of "
           "them (0: none; larger ones keep the generic lowering)">,
    Option<"smallBatchLoads", "small-batch-loads", "int64_t",
           /*default=*/"16",
           "A small-batch mat-mul of M rows of x keeps at most this many / M "
           "loads per lane in flight (each load is multiplied with every "
           "row of x, so it takes M x loads' registers; 0: no cap; the "
           "H200's best, run 100)">,
    Option<"smallBatchMma", "small-batch-mma", "bool", /*default=*/"true",
           "With allow-mma-sync (NVVM): a small-batch mat-mul of f16 x and "
           "an f16 weight (or blocks dequantized to f16) takes the "
           "m16n8k16 mma.sync kernel where it serves it (rows a multiple of "
           "16, columns of 128)">,
    Option<"smallBatchMmaSteps", "small-batch-mma-steps", "int64_t",
           /*default=*/"1",
           "128-column steps each subgroup of the mma-sync kernel loads "
           "(and decodes) before its mma.syncs: more keeps more weight "
           "loads in flight; the steps are summed in the same order, so the "
           "result is the same bytes. Where the steps do not divide among "
           "the subgroups that many at a time, 1">,
    Option<"gemm", "gemm", "bool", /*default=*/"true",
           "A linalg.matmul reading its weight transposed with more rows "
           "of x than small-batch (a prefill's linear layer) takes a GEMM "
           "kernel where one serves it (f16 or bf16 x and weight, f32 "
           "result, contiguous 16-byte aligned rows): with allow-mma-sync "
           "(NVVM) the mma-sync GEMM (gemm_mma_sync; columns a multiple of "
           "32), without (SPIR-V, ROCDL) the tiled GEMM on f32 fused "
           "multiply-adds (gemm_tiled; columns a multiple of 8); else the "
           "generic kernel">,
    Option<"gemmTileM", "gemm-tile-m", "int64_t", /*default=*/"0",
           "Rows of x per workgroup tile of the GEMM (a multiple of 64; "
           "0: 128, or 64 for a mat-mul of at most 64 rows; wgmma also 64 "
           "where gemm-fill-eighths says; the tiled GEMM: 0 with "
           "gemm-tile-n 0 takes 128 x 128 tiles where their grid gives "
           "workgroups to gemm-fill-eighths of the profile's compute "
           "units, else 64 x 64)">,
    Option<"gemmTileN", "gemm-tile-n", "int64_t", /*default=*/"0",
           "Weight rows per workgroup tile of the GEMM (mma-sync: a "
           "multiple of 32, 0: 128; wgmma: a multiple of 8 up to 256, 0: "
           "from 128 to 256 the widest whose waves of one workgroup per "
           "compute unit take the least time, a tile's time taken as its "
           "weight rows + 64, each of the mat-muls over the same x that "
           "fuse-siblings joins taking an equal part (14336 rows at 512 "
           "tokens: 224, 0.094 against 0.102 ms with 256 on an H100, run "
           "144); or with 64-row tiles of x (gemm-fill-eighths) 128 or "
           "64)">,
    Option<"gemmFillEighths", "gemm-fill-eighths", "int64_t",
           /*default=*/"7",
           "wgmma GEMM without gemm-tile-m: where a grid of 128 x 128 tiles "
           "gives workgroups to fewer than this many eighths of the "
           "profile's compute units, tiles of 64 rows of x by 128 weight "
           "rows where that grid reaches them, else by 64 (0: never; "
           "1024x4096 at 512 tokens 0.028 -> 0.016 ms on an H100, run 138); "
           "the tiled GEMM: 64 x 64 tiles there (1024x4096 0.48 -> 0.21 ms "
           "through Vulkan on an H100, run 159)">,
    Option<"gemmStep", "gemm-step", "int64_t", /*default=*/"0",
           "Columns per step of the mma-sync GEMM (a multiple of 16 that "
           "divides the columns; 0: 64 where it divides them, else 32); of "
           "the tiled GEMM (a multiple of 8; 0: 32 for 64 x 64 tiles and "
           "16 for larger ones where it divides them, else 8)">,
    Option<"gemmSubgroups", "gemm-subgroups", "int64_t", /*default=*/"0",
           "Subgroups per workgroup of the mma-sync GEMM, each computing 64 "
           "rows of x by a multiple of 16 weight rows of the tile (0: one "
           "per 64 x 64 of a 128-row tile, per 64 x 32 of a 64-row one); "
           "the tiled GEMM's threads / 32 (0: 256 threads)">,
    Option<"gemmStages", "gemm-stages", "int64_t", /*default=*/"0",
           "Steps of the GEMM buffered in workgroup memory (2 to 8; the "
           "copies of the next stages - 1 steps in flight while one "
           "computes; above 48 KiB in dynamic workgroup memory, at most the "
           "profile's shared_memory_bytes; 0: 3 for mma-sync, or 2 where "
           "the profile's workgroup memory holds no more, 4 for wgmma)">,
    Option<"gemmMma", "gemm-mma", "bool", /*default=*/"true",
           "With allow-mma, where the tiled GEMM would run an f16 mat-mul and "
           "the profile has 16x16x16:f16->f32 cooperative matrices: the "
           "GEMM on gpu.subgroup_mma (gemm_mma), with the tiled GEMM beside "
           "it as the fallback launched where the device lacks them "
           "(mma-fallback). 2.5-3.5x the tiled GEMM at 512 tokens on an "
           "H100 through NVIDIA's Vulkan driver (docs/BENCHMARKS.md, run "
           "162)">,
    Option<"allowWgmma", "allow-wgmma", "bool", /*default=*/"false",
           "Whether the target has sm_90a's warpgroup MMA (NVVM with "
           "chip=sm_90a; cachet-compile sets it)">,
    Option<"attentionWgmma", "attention-wgmma", "bool", /*default=*/"true",
           "With allow-wgmma: an attention that would take the mma-sync "
           "kernel takes attention_wgmma (Q K^T and P V on warpgroup MMA, "
           "two warpgroups of 64 query rows, 64-position key tiles) where "
           "it serves it: f16 or bf16, head dimensions multiples of 64 up "
           "to 256">,
    Option<"attentionWgmmaStages", "attention-wgmma-stages", "int64_t",
           /*default=*/"2",
           "K/V buffers of the wgmma attention kernel where K/V are f16 or "
           "bf16: 2, or 3 (the next key tile's Q K^T issued before this "
           "tile's softmax, so that the two overlap)">,
    Option<"gemmWgmma", "gemm-wgmma", "bool", /*default=*/"true",
           "With allow-wgmma: the GEMM runs on warpgroup MMA (gemm_wgmma: "
           "wgmma.mma_async reading cp.async-filled, 128-byte-swizzled "
           "workgroup memory; K a multiple of 64, gemm-tile-n a multiple "
           "of 8 up to 256) where it serves the mat-mul, else mma-sync">,
    Option<"gemmDecodeBlocks", "gemm-decode-blocks", "bool",
           /*default=*/"false",
           "With gemm-wgmma: a GEMM over a packed block weight whose blocks "
           "hold 32 values (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) decodes "
           "the blocks itself (load_bytes 16 or 4: each step's block bytes "
           "copied by cp.async and decoded in workgroup memory into the "
           "weight's tile while the step before multiplies) instead of "
           "reading a dequantized copy that a kernel of its own writes "
           "first. Off by default: without producer warps the decode is on "
           "the multiplying warps' path, 1.2-1.3x slower than the copy and "
           "the GEMM at 512 tokens on an H100 (run 127); it saves the "
           "copy's memory">,
    Option<"gemmDecodeProducers", "gemm-decode-producers", "int64_t",
           /*default=*/"0",
           "With gemm-decode-blocks: producer warpgroups (1 or 2, of 128 "
           "more threads each) copy x and the blocks and decode them, "
           "named barriers handing each step's tiles to the multiplying "
           "warpgroups and back, so that the decode runs beside the "
           "products instead of between them (weight tiles of 128 rows "
           "unless gemm-tile-n says otherwise); 0: the multiplying "
           "warpgroups decode between their products (on an H100 at 512 "
           "tokens 0 was fastest at 14336x4096, 2 at 4096x14336 and "
           "4096x4096, all slower than the copy, runs 127-130)">,
    Option<"smallBatchMmaRows", "small-batch-mma-rows", "int64_t",
           /*default=*/"5",
           "The fewest rows of x from which a small-batch mat-mul of any "
           "weight format takes the mma-sync kernel; with fewer only q4_0 "
           "and q4_K blocks do (where it paid on the H200, run 101)">,
    Option<"bf16BlockMma", "bf16-block-mma", "bool", /*default=*/"false",
           "With allow-mma-sync (NVVM): a mat-vec or small-batch mat-mul "
           "over blocks of any format dequantized to bf16 (a bf16 model's "
           "quantized weight; without the option a mat-vec over q4_0 "
           "blocks only: 1.08-1.18x on an H100, q8_0 0.89-0.92x, run 122) "
           "takes the mma-sync kernel at any number of rows of x: "
           "the decoded bf16 pairs multiplied on m16n8k16 mma.sync (a "
           "mat-vec's x in column 0 of B) instead of each value and its x "
           "widened to f32 for a fused multiply-add">,
    Option<"prefetch", "prefetch", "::cachet::PrefetchMode",
           /*default=*/"::cachet::PrefetchMode::Auto",
           "Mechanisms of a mat-vec chain launch (#cachet.prefetch_plan)",
           [{::llvm::cl::values(
      clEnumValN(::cachet::PrefetchMode::Auto, "auto",
                 "chosen from the profile and the target"),
      clEnumValN(::cachet::PrefetchMode::L2, "l2",
                 "L2 prefetch of the next weight"),
      clEnumValN(::cachet::PrefetchMode::Bulk, "bulk",
                 "bulk L2 prefetch of the next weight (sm_90+)"),
      clEnumValN(::cachet::PrefetchMode::Pdl, "pdl",
                 "programmatic dependent launch (sm_90+)"),
      clEnumValN(::cachet::PrefetchMode::PdlL2, "pdl+l2", "pdl and l2"),
      clEnumValN(::cachet::PrefetchMode::PdlBulk, "pdl+bulk", "pdl and bulk"),
      clEnumValN(::cachet::PrefetchMode::Off, "off", "no prefetch, no pdl"))}]>,
    Option<"prefetchFraction", "prefetch-fraction", "double",
           /*default=*/"-1.0",
           "Share of the next weight to prefetch, in (0, 1]; negative: "
           "0.5">,
    Option<"prefetchMaxBytes", "prefetch-max-bytes", "int64_t",
           /*default=*/"-1",
           "Cap on the bytes prefetched per step; negative: the profile's "
           "L2 bytes / 4">,
    Option<"prefetchCtas", "prefetch-ctas", "int64_t", /*default=*/"-1",
           "Prefetching CTAs per launch (the last ones); negative: the "
           "profile's compute units">,
    Option<"pdlTrigger", "pdl-trigger", "::cachet::PdlTrigger",
           /*default=*/"::cachet::PdlTrigger::Start",
           "Where a pdl kernel lets the next grid launch",
           [{::llvm::cl::values(
      clEnumValN(::cachet::PdlTrigger::Start, "start",
                 "before its prologue"),
      clEnumValN(::cachet::PdlTrigger::End, "end", "before every return"))}]>,
    Option<"pdlWait", "pdl-wait", "::cachet::PdlWait",
           /*default=*/"::cachet::PdlWait::AfterWeightLoads",
           "Where a pdl kernel waits for the grid before it",
           [{::llvm::cl::values(
      clEnumValN(::cachet::PdlWait::Start, "start", "before anything else"),
      clEnumValN(::cachet::PdlWait::AfterWeightLoads, "after-weight-loads",
                 "after the first loads of its own weights, where no kernel "
                 "that can still run may write them"))}]>,
    Option<"dequantTransposeKernel", "dequant-transpose-kernel",
           "::cachet::DequantTransposeKernel",
           /*default=*/"::cachet::DequantTransposeKernel::Staged",
           "The kernel of a packed dequant-transpose", [{::llvm::cl::values(
      clEnumValN(::cachet::DequantTransposeKernel::Staged, "staged",
                 "a workgroup stages its positions' bytes in workgroup "
                 "memory, then decodes"),
      clEnumValN(::cachet::DequantTransposeKernel::Direct, "direct",
                 "a thread per store decodes bytes read from global "
                 "memory"))}]>,
    Option<"quantizeKernel", "quantize-kernel", "::cachet::QuantizeKernel",
           /*default=*/"::cachet::QuantizeKernel::Subgroup",
           "The kernel of a cachet.quantize to packed blocks (subgroup: "
           "no slower than generic in any format on the H200, "
           "docs/BENCHMARKS.md run 148)",
           [{::llvm::cl::values(
      clEnumValN(::cachet::QuantizeKernel::Subgroup, "subgroup",
                 "one kernel, the lanes of a subgroup per block: its "
                 "values scanned through shuffles, each byte stored by one "
                 "lane"),
      clEnumValN(::cachet::QuantizeKernel::Generic, "generic",
                 "the reference lowering's generic kernel: a thread per "
                 "byte, each scanning its block"))}]>,
    Option<"quantizeThreads", "quantize-threads", "int64_t",
           /*default=*/"256", "Threads per workgroup of the quantize kernel "
           "(a multiple of the subgroup size; 256 measured faster than 64 "
           "in q8_0 and q4_0: docs/BENCHMARKS.md, run 149)">,
    Option<"positionsPerGroup", "positions-per-group", "int64_t",
           /*default=*/"16",
           "Positions one dequant-transpose workgroup stages and writes (16 measured best of "
           "4, 8, 16, 32 on the H200: docs/BENCHMARKS.md)">,
    Option<"maxWorkgroupBytes", "max-workgroup-bytes", "int64_t",
           /*default=*/"32768",
           "Most bytes of workgroup memory one workgroup stages">,
    Option<"dequantTransposeThreads", "dequant-transpose-threads", "int64_t",
           /*default=*/"256", "Threads per dequant-transpose workgroup">,
    Option<"dequantTransposeLoadBytes", "dequant-transpose-load-bytes",
           "int64_t", /*default=*/"16",
           "Bytes per dequant-transpose load while staging (at least 4; halved until the "
           "chunk is a multiple)">,
    Option<"dequantTransposeStoreBytes", "dequant-transpose-store-bytes",
           "int64_t", /*default=*/"16",
           "Bytes each dequant-transpose store writes (values of one block)">,
  ];
  let dependentDialects = ["::cachet::CachetDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // CACHET_PASSES_TD
