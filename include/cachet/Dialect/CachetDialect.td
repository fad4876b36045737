//===- CachetDialect.td - cachet dialect definition --------*- tablegen -*-===//
//
// The cachet dialect: block-quantized element types, attention over a KV cache
// and the dequantize / dequant-transpose operations the memory-hierarchy
// rewrites produce, plus the device profile attribute every pass reads.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_DIALECT_CACHETDIALECT_TD
#define CACHET_DIALECT_CACHETDIALECT_TD

include "mlir/IR/OpBase.td"

def Cachet_Dialect : Dialect {
  let name = "cachet";
  let cppNamespace = "::cachet";
  let summary = "Memory-hierarchy aware ops and types for LLM inference";
  let description = [{
    The `cachet` dialect carries what the memory-bound shapes of LLM inference
    need beyond the upstream dialects:

    * one element type per ggml block-quantized format (`!cachet.q8_0`,
      `!cachet.q4_0`, `!cachet.q4_1`, `!cachet.q5_0`, `!cachet.q5_1`,
      `!cachet.iq4_nl`, the k-quants `!cachet.q2_K`, `!cachet.q3_K`, `!cachet.q4_K`,
      `!cachet.q5_K`, `!cachet.q6_K`, and the ternary `!cachet.tq2_0`,
      `!cachet.tq1_0`); one element is one block of
      32 values (256 for the k-quants and ternary formats, weight formats
      only), byte-compatible with ggml;
    * `cachet.dequantize`, `cachet.dequant_transpose` and `cachet.attention`;
    * `#cachet.device<...>`, the device profile that every cachet pass reads
      from the module (see `cachet-attach-device`).
    * `{cachet.argmax_of = N : i64}` on an integer function result: it is
      the argmax, along the innermost dimension, of the last rows of float
      result N (a model's next token over its logits). `cachet-runner
      --check` then accepts another index whose reference value ties the
      best one within result N's tolerance. Verified: N names another
      result, of float elements and rank 1 or more.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute that holds the device profile.
    static constexpr ::llvm::StringLiteral getDeviceAttrName() {
      return ::llvm::StringLiteral("cachet.device");
    }
    /// Name of the function result attribute that marks an integer result
    /// as the argmax, along the innermost dimension, of the last rows of
    /// another (float) result: `{cachet.argmax_of = N : i64}`. Checks
    /// (cachet-runner) accept a token whose logit ties the best one within
    /// the float tolerance.
    static constexpr ::llvm::StringLiteral getArgmaxOfAttrName() {
      return ::llvm::StringLiteral("cachet.argmax_of");
    }
    // The attributes cachet's passes leave for later ones (discardable; each
    // named here once).
    /// Block format of a function argument or result lowered to bytes
    /// (cachet-lower-to-linalg): a StringAttr such as "q8_0".
    static constexpr ::llvm::StringLiteral getBlockFormatAttrName() {
      return ::llvm::StringLiteral("cachet.block_format");
    }
    /// Padded row pitch in elements of a weight argument
    /// (cachet-pad-weight-rows): an i64.
    static constexpr ::llvm::StringLiteral getRowPitchAttrName() {
      return ::llvm::StringLiteral("cachet.row_pitch");
    }
    /// A memref.copy into a pitched weight buffer that the runtime's strided
    /// upload performs (cachet-pitched-weights): a unit attribute.
    static constexpr ::llvm::StringLiteral getPitchedUploadAttrName() {
      return ::llvm::StringLiteral("cachet.pitched_upload");
    }
    /// A gpu.launch_func launched with programmatic dependent launch
    /// (cachet-prefetch-matvec-chains): a unit attribute.
    static constexpr ::llvm::StringLiteral getPdlAttrName() {
      return ::llvm::StringLiteral("cachet.pdl");
    }
    /// A weight load of a streaming mat-vec kernel (cachet-lower-matvec),
    /// which cachet-prefetch-matvec-chains follows: a unit attribute.
    static constexpr ::llvm::StringLiteral getStreamingWeightAttrName() {
      return ::llvm::StringLiteral("cachet.streaming_weight");
    }
    /// An op of a kernel body sized for N workgroups per SM (an i64 N);
    /// cachet-kernel-occupancy turns it into the kernel's nvvm.minctasm.
    static constexpr ::llvm::StringLiteral getMinWorkgroupsPerSMAttrName() {
      return ::llvm::StringLiteral("cachet.min_workgroups_per_sm");
    }
    /// The dequant-once scratch of an attention (cachet-dequant-once-kv).
    static constexpr ::llvm::StringLiteral getKVScratchAttrName() {
      return ::llvm::StringLiteral("cachet.kv_scratch");
    }
    /// A generic that cachet-lower-to-linalg made of a
    /// cachet.dequant_transpose: a TypeAttr of its block type, for
    /// cachet-lower-dequant-transpose.
    static constexpr ::llvm::StringLiteral getDequantTransposeAttrName() {
      return ::llvm::StringLiteral("cachet.dequant_transpose");
    }
    /// The generic of bytes that cachet-lower-to-linalg made of a
    /// cachet.quantize to packed blocks: a TypeAttr of its block type, for
    /// cachet-lower-quantize (with getQuantizeRoundingAttrName beside it).
    static constexpr ::llvm::StringLiteral getQuantizeAttrName() {
      return ::llvm::StringLiteral("cachet.quantize");
    }
    /// The cachet.quantize's #cachet.rounding, beside getQuantizeAttrName.
    static constexpr ::llvm::StringLiteral getQuantizeRoundingAttrName() {
      return ::llvm::StringLiteral("cachet.quantize_rounding");
    }
    /// A generic that cachet-lower-to-linalg made of a cachet.dequantize: a
    /// TypeAttr of its block type (q8_0 for the split form, whose values
    /// and scales are two inputs), for the mat-vec kernels that decode the
    /// blocks in registers (cachet-lower-matvec).
    static constexpr ::llvm::StringLiteral getBlockDequantizeAttrName() {
      return ::llvm::StringLiteral("cachet.block_dequantize");
    }
    /// The kernel configuration of an op (cachet-select-kernel-configs): a
    /// #cachet.kernel_config, read by the lowering passes.
    static constexpr ::llvm::StringLiteral getKernelConfigAttrName() {
      return ::llvm::StringLiteral("cachet.kernel_config");
    }
    /// The kernel an attention (or a mat-mul) runs instead of its
    /// cachet.kernel_config's (the mma kernel, or the mma GEMM, on KHR
    /// cooperative matrices) where the device does not run 16x16x16 f16
    /// cooperative matrices: a #cachet.kernel_config that
    /// cachet-select-kernel-configs chose as it would without them;
    /// cachet-lower-attention (cachet-lower-matvec) builds both and picks
    /// one at run time.
    static constexpr ::llvm::StringLiteral getFallbackKernelConfigAttrName() {
      return ::llvm::StringLiteral("cachet.fallback_kernel_config");
    }
    /// The prefetch plan of a chain launch (cachet-select-kernel-configs):
    /// a #cachet.prefetch_plan, read by cachet-prefetch-matvec-chains.
    static constexpr ::llvm::StringLiteral getPrefetchPlanAttrName() {
      return ::llvm::StringLiteral("cachet.prefetch_plan");
    }
    /// Name of the function argument attribute that marks a weight.
    static constexpr ::llvm::StringLiteral getWeightAttrName() {
      return ::llvm::StringLiteral("cachet.weight");
    }

  private:
    void registerTypes();
    void registerAttributes();

  public:
  }];
}

class Cachet_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cachet_Dialect, mnemonic, traits>;

#endif // CACHET_DIALECT_CACHETDIALECT_TD
