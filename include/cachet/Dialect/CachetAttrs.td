//===- CachetAttrs.td - cachet attributes ------------------*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETATTRS_TD
#define CACHET_DIALECT_CACHETATTRS_TD

include "cachet/Dialect/CachetDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// KV cache layout
//===----------------------------------------------------------------------===//

def Cachet_TokenMajor : I32EnumAttrCase<"TokenMajor", 0, "token_major">;
def Cachet_HeadMajor : I32EnumAttrCase<"HeadMajor", 1, "head_major">;
def Cachet_KVLayout : I32EnumAttr<"KVLayout",
    "layout of a KV cache operand",
    [Cachet_TokenMajor, Cachet_HeadMajor]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}
def Cachet_KVLayoutAttr : EnumAttr<Cachet_Dialect, Cachet_KVLayout, "kv_layout"> {
  let summary = "KV cache layout: token_major [pos][kv_head][dim] or "
                "head_major [kv_head][pos][dim]";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Rounding of cachet.quantize
//===----------------------------------------------------------------------===//

def Cachet_RoundAway : I32EnumAttrCase<"Away", 0, "away">;
def Cachet_RoundEven : I32EnumAttrCase<"Even", 1, "even">;
def Cachet_Rounding : I32EnumAttr<"Rounding",
    "how cachet.quantize rounds q8_0 quants",
    [Cachet_RoundAway, Cachet_RoundEven]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}
def Cachet_RoundingAttr : EnumAttr<Cachet_Dialect, Cachet_Rounding, "rounding"> {
  let summary = "q8_0 quant rounding: away (C roundf, ggml's reference: "
                "halves away from zero) or even (halves to even, "
                "math.roundeven)";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Device profile
//===----------------------------------------------------------------------===//

/// A double, stored as an APFloat (hashable), written as a plain number.
class Cachet_F64Parameter<string desc>
    : AttrParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer << $_self.convertToDouble() }];
}

class Cachet_BoolParameter<string desc> : AttrParameter<"bool", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(),
                              "expected 'true' or 'false'");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

def Cachet_DeviceProfileAttr : AttrDef<Cachet_Dialect, "DeviceProfile"> {
  let mnemonic = "device";
  let summary = "cache geometry, bandwidth and capabilities of one device";
  let description = [{
    The device profile every cachet pass reads from the module attribute
    `cachet.device`. `cachet-attach-device{profile=NAME|file.json}` attaches
    one; docs/device-profiles.md documents every field and where the
    built-in values come from.

    ```mlir
    module attributes {cachet.device = #cachet.device<name = "gfx1151",
        vendor = "amd", arch = "gfx1151", cache_line = 128, l2_bytes = 2097152,
        alias_stride = 2048, alias_pad = 128, compute_units = 40,
        dram_gbps = 256.0, unified_memory = true, strided_read_penalty = 3.2,
        pdl = false, l2_prefetch = "none",
        coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32,
        shared_memory_bytes = 65536>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"profile name">:$name,
    StringRefParameter<"vendor: nvidia, amd, mesa or generic">:$vendor,
    StringRefParameter<"architecture, for example sm_90 or gfx1151">:$arch,
    "uint64_t":$cache_line,
    "uint64_t":$l2_bytes,
    "uint64_t":$alias_stride,
    "uint64_t":$alias_pad,
    "uint64_t":$compute_units,
    Cachet_F64Parameter<"DRAM bandwidth in GB/s">:$dram_gbps,
    Cachet_BoolParameter<"host and device share memory">:$unified_memory,
    Cachet_F64Parameter<"strided / sequential read time">:$strided_read_penalty,
    Cachet_BoolParameter<"programmatic dependent launch">:$pdl,
    StringRefParameter<"L2 prefetch instruction kind">:$l2_prefetch,
    "::mlir::ArrayAttr":$coop_matrix,
    "uint64_t":$subgroup_size,
    "uint64_t":$shared_memory_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Kernel configurations
//===----------------------------------------------------------------------===//

def Cachet_AttentionScalar
    : I32EnumAttrCase<"AttentionScalar", 0, "attention_scalar">;
def Cachet_AttentionMma : I32EnumAttrCase<"AttentionMma", 1, "attention_mma">;
def Cachet_AttentionMmaSync
    : I32EnumAttrCase<"AttentionMmaSync", 2, "attention_mma_sync">;
def Cachet_MatvecSubgroup
    : I32EnumAttrCase<"MatvecSubgroup", 3, "matvec_subgroup">;
def Cachet_MatvecGeneric
    : I32EnumAttrCase<"MatvecGeneric", 4, "matvec_generic">;
def Cachet_DequantTransposeStaged
    : I32EnumAttrCase<"DequantTransposeStaged", 5, "dequant_transpose_staged">;
def Cachet_DequantTransposeDirect
    : I32EnumAttrCase<"DequantTransposeDirect", 6, "dequant_transpose_direct">;
def Cachet_AttentionDecode
    : I32EnumAttrCase<"AttentionDecode", 7, "attention_decode">;
def Cachet_AttentionDecodeMmaSync
    : I32EnumAttrCase<"AttentionDecodeMmaSync", 8,
                      "attention_decode_mma_sync">;
def Cachet_MatvecMmaSync
    : I32EnumAttrCase<"MatvecMmaSync", 9, "matvec_mma_sync">;
def Cachet_GemmMmaSync : I32EnumAttrCase<"GemmMmaSync", 10, "gemm_mma_sync">;
def Cachet_GemmWgmma : I32EnumAttrCase<"GemmWgmma", 11, "gemm_wgmma">;
def Cachet_AttentionWgmma
    : I32EnumAttrCase<"AttentionWgmma", 12, "attention_wgmma">;
def Cachet_QuantizeSubgroup
    : I32EnumAttrCase<"QuantizeSubgroup", 14, "quantize_subgroup">;
def Cachet_GemmTiled : I32EnumAttrCase<"GemmTiled", 15, "gemm_tiled">;
def Cachet_AttentionTiled
    : I32EnumAttrCase<"AttentionTiled", 16, "attention_tiled">;
def Cachet_GemmMma : I32EnumAttrCase<"GemmMma", 17, "gemm_mma">;
def Cachet_KernelVariant : I32EnumAttr<"KernelVariant",
    "the kernel a lowering pass builds for one op",
    [Cachet_AttentionScalar, Cachet_AttentionMma, Cachet_AttentionMmaSync,
     Cachet_MatvecSubgroup, Cachet_MatvecGeneric,
     Cachet_DequantTransposeStaged, Cachet_DequantTransposeDirect,
     Cachet_AttentionDecode, Cachet_AttentionDecodeMmaSync,
     Cachet_MatvecMmaSync, Cachet_GemmMmaSync, Cachet_GemmWgmma,
     Cachet_AttentionWgmma,
     Cachet_QuantizeSubgroup, Cachet_GemmTiled, Cachet_AttentionTiled,
     Cachet_GemmMma]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}

/// An int64_t parameter that may be left out (then `value`).
class Cachet_IntParameter<string value, string desc>
    : DefaultValuedParameter<"int64_t", value, desc>;

/// A list of int64_t written `[a, b, ...]`, which may be left out (then
/// empty).
class Cachet_IntListParameter<string desc>
    : OptionalArrayRefParameter<"int64_t", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> values;
    if ($_parser.parseCommaSeparatedList(
            ::mlir::AsmParser::Delimiter::Square,
            [&]() { return $_parser.parseInteger(values.emplace_back()); }))
      return ::mlir::failure();
    return values;
  }() }];
  let printer = [{ [&]() {
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }() }];
}

/// A bool parameter that may be left out (then false).
class Cachet_FlagParameter<string desc> : Cachet_BoolParameter<desc> {
  let defaultValue = "false";
}

def Cachet_KernelConfigAttr : AttrDef<Cachet_Dialect, "KernelConfig"> {
  let mnemonic = "kernel_config";
  let summary = "the kernel a lowering builds for one op, and its parameters";
  let description = [{
    The decision `cachet-select-kernel-configs` takes for one op, kept on it
    as the discardable attribute `cachet.kernel_config` and read by the
    lowering passes, which only carry it out (the way IREE's
    `lowering_config` works). A config already in the IR is kept: writing
    one overrides the cost model. Parameters left out take the default
    shown.

    * `variant`: the kernel. `attention_scalar`, `attention_mma`,
      `attention_mma_sync`, `attention_decode` (split-KV flash-decoding
      for few query rows per KV head) and `attention_decode_mma_sync` (the
      same with `Q K^T` and `P V` on m16n8k16 mma.sync, NVVM) and
      `attention_wgmma` (NVVM on sm_90a: the mma-sync kernel's online
      softmax with `Q K^T` and `P V` on warpgroup MMA, one warpgroup of 128
      threads per 64 query rows, its Q/K/V tiles in wgmma's 128-byte
      swizzle; `vector_width = 8`, `dynamic_shared`, no padding) and
      `attention_tiled` (every target, for those without matrix
      instructions the attention can use: the online softmax on f32 fused
      multiply-adds; `tile = [query rows, key positions, columns per
      step]`, `workgroup` threads, each computing 4 query rows by
      `tile[1] / (workgroup / (tile[0] / 4))` positions of `Q K^T` and as
      many value columns of `P V` per 4 rows in registers; each step of
      head-dim columns of Q and K, then each step of positions of V,
      staged in workgroup memory as f32) on `cachet.attention`
      (cachet-lower-attention);
      `matvec_subgroup` and `matvec_generic` on `linalg.matvec` and on a
      small-batch `linalg.matmul` reading its weight transposed, and
      `matvec_mma_sync` (NVVM: the small-batch mat-mul on m16n8k16
      mma.sync, `tile = [subgroups per workgroup, 16]`) and
      `gemm_mma_sync` (NVVM: a mat-mul of more rows of x, a prefill's
      linear layer, as a tiled GEMM on m16n8k16 mma.sync; `tile = [rows
      of x, weight rows]` or `[rows of x, weight rows, columns per step]`
      per workgroup, multiples of 64, 32 and 16 (32 columns if left out);
      `workgroup / 32` subgroups, each computing 64 rows of x by a
      multiple of 16 weight rows; `stages` (2 to 8) steps buffered in
      workgroup memory, each row padded by `pad_bytes`, in dynamic
      workgroup memory with `dynamic_shared`, which above 48 KiB it needs)
      and `gemm_wgmma` (NVVM on sm_90a: the same product on warpgroup MMA;
      `tile = [rows of x, weight rows]`, a multiple of 64 (one warpgroup
      of 128 threads per 64 rows: `workgroup = 2 * tile[0]`) and a
      multiple of 8 up to 256; `stages` (2 to 8) steps of 64 columns in
      dynamic workgroup memory, `dynamic_shared` set)
      and `gemm_tiled` (every target, for those without matrix
      instructions: the same product on f32 fused multiply-adds; `tile =
      [rows of x, weight rows, columns per step]`, multiples of 4, 4 and 8;
      `workgroup` threads, each computing `vector_width` weight rows (a
      multiple of 4) by `tile[0] * tile[1] / (workgroup * vector_width)`
      rows of x (a multiple of 4) in registers; each step's columns staged
      in workgroup memory as f32 while the next step's loads are in
      flight in registers)
      and `gemm_mma` (SPIR-V and NVVM, f16: the same product on
      `gpu.subgroup_mma` 16x16x16 cooperative matrices with f32
      accumulators; `tile = [rows of x, weight rows, columns per step]`,
      multiples of 32, 32 and 16; one subgroup of `subgroup` lanes per 32 x
      32 of the tile (`workgroup = tile[0] * tile[1] / 1024 * subgroup`),
      each holding 2 x 2 accumulator fragments; each step's f16 rows staged
      in workgroup memory in loads of `vector_width` values (4 or 8), rows
      padded by `pad_bytes`, while the next step's loads are in flight in
      registers; the sums leave through workgroup memory as f32)
      (cachet-lower-matvec; `generic` leaves the op to the generic
      lowering); `dequant_transpose_staged` and `dequant_transpose_direct`
      on the `linalg.generic` of a packed dequant-transpose (marked
      `cachet.dequant_transpose`; cachet-lower-dequant-transpose): a
      workgroup stages its positions' bytes in workgroup memory, or a
      thread per store decodes bytes read from global memory;
      `quantize_subgroup` on the byte `linalg.generic` of a cachet.quantize
      to packed blocks (marked `cachet.quantize`; cachet-lower-quantize):
      min(`subgroup`, 32) lanes of a subgroup of `subgroup` lanes hold a
      block, each lane 32 / that many of its values, scan it through
      shuffles and store its bytes, `workgroup` threads per workgroup
      (`workgroup` a multiple of `subgroup`).
    * `tile`: attention `[query rows per workgroup, KV positions per
      workgroup-memory tile]` (decode: `[query rows of one KV head, KV
      positions per step]`: one position per thread, or with `vector_width`
      > 1 the positions of all groups of lanes); mat-vec `[subgroups per workgroup, rows per
      subgroup]` (rows per subgroup where it divides the rows, else 1);
      staged dequant-transpose `[positions per workgroup]`.
    * `workgroup` (0): threads per workgroup (attention: the query tile for
      the scalar kernel, one subgroup per `16 * row_blocks` query rows for
      the mma kernels; 0 derives it).
    * `subgroup` (0): lanes per subgroup (0: the device profile's).
    * `vector_width` (1): elements per vector load (attention: of the f16
      Q/K/V tiles; mat-vec: of the weight rows); dequant-transpose: values
      per store; decode: values of a K/V row each lane reads (1: each
      thread reads whole rows; n > 1: head-dim / n lanes read a row
      together, with `stages = 1`); decode mma-sync: the K values of a row
      a lane reads in one run (8 or more; whole blocks for blocks);
      `gemm_tiled`: the weight rows each thread computes.
    * `load_bytes` (0): bytes per staging load of the staged
      dequant-transpose (a power of two from 4); bytes per load of a K row
      in the decode kernel (a power of two from 1 to 16); `gemm_wgmma`: 4
      decodes the mat-mul's packed block weight (blocks of 32 values) in
      the kernel, its bytes copied in 4-byte pieces beside x's and decoded
      in workgroup memory into a double-buffered weight tile (0: the
      weight as it is, a dequantized copy for blocks).
    * `row_blocks` (1): 16-row blocks per subgroup (mma kernels).
    * `stages` (1): 2 double-buffers the f16 K/V tiles, filled by
      asynchronous copies (NVVM, with `dynamic_shared`); where K and V are
      both decoded from blocks, their blocks' bytes instead, decoded in
      workgroup memory into the f16 tiles. The decode kernel: 2 copies
      each step's K/V rows (blocks or floats, as the cache holds them)
      into double-buffered dynamic workgroup memory, the next step's
      copies in flight while this one computes.
    * `split` (1): workgroups sharing one attention's KV range (1: none;
      the decode kernel merges their partial softmax states exactly).
    * `pad_bytes` (0): bytes each row of a workgroup-memory tile is padded
      by (mma kernels; a multiple of 16).
    * `loads` (`[]`): mat-vec loads in flight per lane, `[alone, paired]`
      (paired: a kernel whose subgroups compute rows of several mat-vecs).
    * `min_workgroups_per_sm` (0): workgroups per SM the kernel's registers
      should allow (mma kernels).
    * `resident` (`[]`): mat-vec blocks per compute unit of a resident grid
      that loops over the kernel's blocks, `[alone, paired]` (0: one block
      per `tile[0]` subgroups).
    * `dynamic_shared`, `warp_sync`, `lazy_rescale` (false): the mma
      kernels' tiles in dynamic workgroup memory; subgroup staging ordered
      by `nvvm.bar.warp.sync`; rescaling skipped where no row max moved.
    * `stage_x` (false): the mat-vec's x copied to workgroup memory once per
      block.
    * `fuse_siblings`, `fuse_epilogues` (false): the mat-vec may share one
      kernel with the mat-vecs over the same x after it (of equal configs),
      and an element-wise op over their results may run in its epilogue.
      On the GEMMs: the wgmma GEMM may compute the mat-muls of the same
      weight rows over the same x after it in one kernel (each tile an
      equal part of each weight's rows), and either GEMM may do an
      element-wise op over its results (`silu(gate) * up`, a residual) as
      it stores them, writing no f32 result that only that op reads.

    ```mlir
    %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
        {cachet.kernel_config = #cachet.kernel_config<
           variant = attention_scalar, tile = [32, 16], workgroup = 32>}
        : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
        -> tensor<8x16x64xf16>
    ```

    Verified: the tile has two positive entries, every count is in range,
    `stages = 2` needs `dynamic_shared`, `lazy_rescale` needs `warp_sync`,
    the mma kernels' key tile is a multiple of 16 and their query tile a
    multiple of `16 * row_blocks`. Whether the kernel can serve the op it is
    on (element types, head dimensions, workgroup memory) is checked by the
    lowering, which reports a config it cannot build as an error.
  }];
  let parameters = (ins
    EnumParameter<Cachet_KernelVariant>:$variant,
    Cachet_IntListParameter<"tile sizes">:$tile,
    Cachet_IntParameter<"0", "threads per workgroup">:$workgroup,
    Cachet_IntParameter<"0", "lanes per subgroup">:$subgroup,
    Cachet_IntParameter<"1", "elements per vector">:$vector_width,
    Cachet_IntParameter<"1", "16-row blocks per subgroup">:$row_blocks,
    Cachet_IntParameter<"1", "K/V tile buffers">:$stages,
    Cachet_IntParameter<"1", "workgroups per KV range">:$split,
    Cachet_IntParameter<"0", "tile row padding in bytes">:$pad_bytes,
    Cachet_IntListParameter<"loads per lane">:$loads,
    Cachet_IntParameter<"0", "workgroups per SM">:$min_workgroups_per_sm,
    Cachet_IntListParameter<"resident blocks per compute unit">:$resident,
    Cachet_FlagParameter<"dynamic workgroup memory">:$dynamic_shared,
    Cachet_FlagParameter<"warp-level staging barriers">:$warp_sync,
    Cachet_FlagParameter<"lazy accumulator rescaling">:$lazy_rescale,
    Cachet_FlagParameter<"x in workgroup memory">:$stage_x,
    Cachet_FlagParameter<"siblings in one kernel">:$fuse_siblings,
    Cachet_FlagParameter<"epilogues in the kernel">:$fuse_epilogues,
    Cachet_IntParameter<"0", "bytes per staging load">:$load_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the variant is one of cachet.attention's kernels.
    bool isAttention() const {
      return getVariant() == KernelVariant::AttentionScalar ||
             getVariant() == KernelVariant::AttentionMma ||
             getVariant() == KernelVariant::AttentionMmaSync ||
             getVariant() == KernelVariant::AttentionWgmma ||
             getVariant() == KernelVariant::AttentionTiled || isDecode();
    }
    /// Whether the variant is one of the split-KV decode kernels.
    bool isDecode() const {
      return getVariant() == KernelVariant::AttentionDecode ||
             getVariant() == KernelVariant::AttentionDecodeMmaSync;
    }
    /// Whether the variant is the quantize kernel.
    bool isQuantize() const {
      return getVariant() == KernelVariant::QuantizeSubgroup;
    }
    /// Whether the variant is one of the dequant-transpose kernels.
    bool isDequantTranspose() const {
      return getVariant() == KernelVariant::DequantTransposeStaged ||
             getVariant() == KernelVariant::DequantTransposeDirect;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Prefetch plan of a launch
//===----------------------------------------------------------------------===//

def Cachet_PrefetchNone : I32EnumAttrCase<"None", 0, "none">;
def Cachet_PrefetchL2 : I32EnumAttrCase<"L2", 1, "l2">;
def Cachet_PrefetchBulk : I32EnumAttrCase<"Bulk", 2, "bulk">;
def Cachet_PrefetchSData
    : I32EnumAttrCase<"SPrefetchData", 3, "s_prefetch_data">;
def Cachet_PrefetchGlobal
    : I32EnumAttrCase<"GlobalPrefetch", 4, "global_prefetch">;
def Cachet_PrefetchKind : I32EnumAttr<"PrefetchKind",
    "the instruction that brings weights into L2",
    [Cachet_PrefetchNone, Cachet_PrefetchL2, Cachet_PrefetchBulk,
     Cachet_PrefetchSData, Cachet_PrefetchGlobal]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}

def Cachet_PdlTriggerStart : I32EnumAttrCase<"Start", 0, "start">;
def Cachet_PdlTriggerEnd : I32EnumAttrCase<"End", 1, "end">;
def Cachet_PdlTrigger : I32EnumAttr<"PdlTrigger",
    "where a pdl kernel lets the next grid launch",
    [Cachet_PdlTriggerStart, Cachet_PdlTriggerEnd]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}

def Cachet_PdlWaitStart : I32EnumAttrCase<"Start", 0, "start">;
def Cachet_PdlWaitAfterWeightLoads
    : I32EnumAttrCase<"AfterWeightLoads", 1, "after_weight_loads">;
def Cachet_PdlWait : I32EnumAttr<"PdlWait",
    "where a pdl kernel waits for the grid before it",
    [Cachet_PdlWaitStart, Cachet_PdlWaitAfterWeightLoads]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}

/// An enum parameter that may be left out (then `value`).
class Cachet_DefaultEnumParameter<EnumAttrInfo info, string value>
    : EnumParameter<info> {
  let defaultValue = value;
}

def Cachet_PrefetchPlanAttr : AttrDef<Cachet_Dialect, "PrefetchPlan"> {
  let mnemonic = "prefetch_plan";
  let summary = "how one mat-vec chain launch prefetches weights and "
                "overlaps the launch before it";
  let description = [{
    The decision `cachet-select-kernel-configs` takes for one
    `gpu.launch_func` of a chain of streaming mat-vec launches, kept on it as
    the discardable attribute `cachet.prefetch_plan` and carried out by
    `cachet-prefetch-matvec-chains`. A plan already in the IR is kept:
    writing one overrides the cost model. Parameters left out take the
    default shown.

    * `next` (`none`): the instruction with which the launch's last `ctas`
      CTAs bring the next step's weights into L2 after their work: `l2`
      (`prefetch.global.L2`), `bulk` (`cp.async.bulk.prefetch.L2`, sm_90),
      `s_prefetch_data` (gfx12), `global_prefetch` (gfx1250).
    * `next_bytes` (`[]`): bytes of each next weight to prefetch, in the
      order of the next step's weights (0 skips one); whole `line`s.
    * `ctas` (0): CTAs that prefetch the next weights.
    * `line` (128): bytes per prefetch of one thread.
    * `pdl` (false): programmatic dependent launch (`griddepcontrol`,
      sm_90): the launch gets `cachet.pdl`, its kernel a trigger and a wait.
    * `own` (`none`), `own_bytes` (`[]`): the prologue of a pdl kernel: each
      CTA prefetches its share of the first `own_bytes` of each of its own
      weights before it waits.
    * `trigger` (`start`): where a pdl kernel lets the next grid launch:
      first, or before every return.
    * `wait` (`start`): where a pdl kernel waits: before any read, or
      `after_weight_loads` (loads of its own weights may come first; only
      where nothing that may still run writes them).

    ```mlir
    gpu.launch_func @k::@matvec blocks in (%c64, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%w : memref<4096x4096xbf16>, ...)
        {cachet.prefetch_plan = #cachet.prefetch_plan<pdl = true,
           wait = after_weight_loads>}
    ```

    Verified: counts are in range, bytes are whole lines, `next` comes with
    `next_bytes` and `ctas`, `own` with `own_bytes` and `pdl`, and
    `trigger` and `wait` other than `start` with `pdl`. Whether the target
    has the instructions and the launch can carry the plan (the next
    weights known, the early wait safe) is checked by
    `cachet-prefetch-matvec-chains`, which reports a plan it cannot carry
    out as an error.
  }];
  let parameters = (ins
    Cachet_DefaultEnumParameter<Cachet_PrefetchKind,
                                "::cachet::PrefetchKind::None">:$next,
    Cachet_IntListParameter<"bytes of each next weight">:$next_bytes,
    Cachet_IntParameter<"0", "prefetching CTAs">:$ctas,
    Cachet_IntParameter<"128", "bytes per thread prefetch">:$line,
    Cachet_FlagParameter<"programmatic dependent launch">:$pdl,
    Cachet_DefaultEnumParameter<Cachet_PrefetchKind,
                                "::cachet::PrefetchKind::None">:$own,
    Cachet_IntListParameter<"bytes of each own weight">:$own_bytes,
    Cachet_DefaultEnumParameter<Cachet_PdlTrigger,
                                "::cachet::PdlTrigger::Start">:$trigger,
    Cachet_DefaultEnumParameter<Cachet_PdlWait,
                                "::cachet::PdlWait::Start">:$wait
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the plan asks for anything.
    bool isEmpty() const {
      return getNext() == PrefetchKind::None && !getPdl();
    }
  }];
}

#endif // CACHET_DIALECT_CACHETATTRS_TD
