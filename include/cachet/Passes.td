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

#endif // CACHET_PASSES_TD
