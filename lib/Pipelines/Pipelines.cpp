//===- Pipelines.cpp - the cachet-compile pipeline ------------------------===//

#include "cachet/Pipelines/Pipelines.h"
#include "cachet/Pipelines/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

/// Appends the textual pipeline `text` (nested under builtin.module) to `pm`.
/// The texts below are fixed and only interpolate validated options, so a
/// parse failure is a bug in this file: it is reported, not hidden.
static void addPipeline(OpPassManager &pm, StringRef text) {
  if (failed(parsePassPipeline(text, pm, llvm::errs())))
    llvm::report_fatal_error(llvm::Twine("cachet-compile: bad sub-pipeline: ") +
                             text);
}

/// Checks that `text`, a pipeline built from the option `option` of
/// `cachet-compile`, parses; a failure names the option and carries the
/// parser's message.
static LogicalResult
checkOptionPipeline(StringRef option, StringRef text,
                    function_ref<LogicalResult(const Twine &)> emitError) {
  OpPassManager scratch("builtin.module");
  std::string message;
  llvm::raw_string_ostream os(message);
  if (succeeded(parsePassPipeline(text, scratch, os)))
    return success();
  StringRef first = StringRef(message).trim().split('\n').first;
  return emitError(llvm::Twine("cachet-compile: bad ") + option + ": " + first);
}

/// SPIR-V capabilities and extensions of the Vulkan 1.2 devices cachet runs
/// on (lavapipe included): 8/16-bit storage and arithmetic, subgroup
/// shuffles (the subgroup mat-vec kernels' reductions).
static constexpr StringLiteral kSPIRVTarget =
    "spirv-attach-target{ver=v1.3 "
    "caps=Shader,Float16,Int8,Int16,Int64,StorageBuffer16BitAccess,"
    "StorageBuffer8BitAccess,GroupNonUniform,GroupNonUniformShuffle "
    "exts=SPV_KHR_storage_buffer_storage_class,SPV_KHR_16bit_storage,"
    "SPV_KHR_8bit_storage}";

/// kSPIRVTarget plus KHR cooperative matrices (SPIR-V 1.6, so Vulkan 1.3),
/// for the mma attention kernel. The runtime enables VK_KHR_cooperative_matrix
/// where the device has it and refuses such a module elsewhere. The modules
/// keep the GLSL450 memory model that convert-gpu-to-spirv gives shaders,
/// though SPV_KHR_cooperative_matrix now asks for the Vulkan memory model
/// (which would also need non-private workgroup accesses).
static constexpr StringLiteral kSPIRVCoopMatrixTarget =
    "spirv-attach-target{ver=v1.6 "
    "caps=Shader,Float16,Int8,Int16,Int64,StorageBuffer16BitAccess,"
    "StorageBuffer8BitAccess,CooperativeMatrixKHR,GroupNonUniform,"
    "GroupNonUniformShuffle "
    "exts=SPV_KHR_storage_buffer_storage_class,SPV_KHR_16bit_storage,"
    "SPV_KHR_8bit_storage,SPV_KHR_cooperative_matrix}";

/// Adds cachet-prefetch-matvec-chains: after outlining and the target
/// attribute (which says what the chip supports), before the kernels are
/// converted to the target.
static void addPrefetch(OpPassManager &pm,
                        const cachet::CompileOptions &options) {
  if (!options.rewrites)
    return;
  StringRef mode;
  switch (options.prefetch) {
  case cachet::PrefetchMode::Auto:
    mode = "auto";
    break;
  case cachet::PrefetchMode::L2:
    mode = "l2";
    break;
  case cachet::PrefetchMode::Bulk:
    mode = "bulk";
    break;
  case cachet::PrefetchMode::Pdl:
    mode = "pdl";
    break;
  case cachet::PrefetchMode::PdlL2:
    mode = "pdl+l2";
    break;
  case cachet::PrefetchMode::PdlBulk:
    mode = "pdl+bulk";
    break;
  case cachet::PrefetchMode::Off:
    mode = "off";
    break;
  }
  addPipeline(pm, llvm::formatv("cachet-prefetch-matvec-chains{{mode={0} {1}}",
                                mode, options.prefetchOptions.getValue())
                      .str());
}

/// Attaches the profile of `options`, if one is given.
static void addAttachDevice(OpPassManager &pm,
                            const cachet::CompileOptions &options) {
  if (!options.profile.empty())
    addPipeline(pm, llvm::formatv("cachet-attach-device{{profile={0}}",
                                  options.profile.getValue())
                        .str());
}

/// Checks every option of `options` that goes into a pass's text.
static LogicalResult
checkCompileOptions(const cachet::CompileOptions &options,
                    function_ref<LogicalResult(const Twine &)> emitError) {
  struct Piece {
    StringRef option;
    std::string text;
  };
  Piece pieces[] = {
      {"attention-options", llvm::formatv("cachet-lower-attention{{{0}}",
                                          options.attentionOptions.getValue())},
      {"matvec-options", llvm::formatv("func.func(cachet-lower-matvec{{{0}})",
                                       options.matvecOptions.getValue())},
      {"dequant-transpose-options",
       llvm::formatv("func.func(cachet-lower-dequant-transpose{{{0}})",
                     options.dequantTransposeOptions.getValue())},
      {"dequant-once-options",
       llvm::formatv("cachet-dequant-once-kv{{{0}}",
                     options.dequantOnceOptions.getValue())},
      {"pad-options", llvm::formatv("cachet-pad-weight-rows{{{0}}",
                                    options.padOptions.getValue())},
      {"prefetch-options", llvm::formatv("cachet-prefetch-matvec-chains{{{0}}",
                                         options.prefetchOptions.getValue())},
      {"profile", llvm::formatv("cachet-attach-device{{profile={0}}",
                                options.profile.getValue())},
      {"format or toolkit",
       llvm::formatv(
           "gpu-module-to-binary{{format={0}{1}}", options.format.getValue(),
           options.toolkit.empty() ? std::string()
                                   : " toolkit=" + options.toolkit.getValue())},
      {"chip or features",
       llvm::formatv("nvvm-attach-target{{chip={0} features={1}}",
                     options.chip.empty() ? "sm_90" : options.chip.getValue(),
                     options.features.getValue())},
  };
  for (const Piece &piece : pieces)
    if (failed(checkOptionPipeline(piece.option, piece.text, emitError)))
      return failure();
  static constexpr StringLiteral kFormats[] = {
      "isa", "assembly", "bin", "binary", "fatbin", "llvm", "offloading"};
  if (!llvm::is_contained(kFormats, options.format.getValue()))
    return emitError(llvm::Twine("cachet-compile: bad format '") +
                     options.format.getValue() +
                     "': one of isa, bin, fatbin, llvm, offloading");
  if (options.workgroupSize <= 0)
    return emitError(llvm::Twine("cachet-compile: bad workgroup-size ") +
                     llvm::Twine(options.workgroupSize.getValue()) +
                     ": must be positive");
  return success();
}

/// The name of `kernel` in cachet-lower-attention's `variant` option.
static StringRef getVariantName(cachet::AttentionKernel kernel) {
  switch (kernel) {
  case cachet::AttentionKernel::Auto:
    return "auto";
  case cachet::AttentionKernel::Scalar:
    return "scalar";
  case cachet::AttentionKernel::Mma:
    return "mma";
  case cachet::AttentionKernel::MmaSync:
    return "mma-sync";
  case cachet::AttentionKernel::Reference:
    return "reference";
  }
  llvm_unreachable("unknown attention kernel");
}

LogicalResult cachet::buildCachetCompilePipeline(
    OpPassManager &pm, const CompileOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  if (failed(checkCompileOptions(options, emitError)))
    return failure();
  // IR that upstream passes below would crash on becomes a diagnostic.
  pm.addPass(createCheckCompileInput());
  pm.addNestedPass<func::FuncOp>(createKeepArgumentUpdates());
  addAttachDevice(pm, options);

  // Front-end attention and quantization to cachet ops, with rewrites on
  // and off: raising picks the kernels, so both variants run the same ones
  // and compare the rewrites alone (a generic attention and a flash kernel
  // sum in different orders).
  addPipeline(pm, "cachet-raise-attention,cachet-raise-quantize");

  // The memory-hierarchy rewrites, each deciding from the profile.
  if (options.rewrites)
    addPipeline(pm, llvm::formatv("cachet-dequant-once-kv{{{0}},"
                                  "cachet-pad-weight-rows{{{1}},canonicalize",
                                  options.dequantOnceOptions.getValue(),
                                  options.padOptions.getValue())
                        .str());

  // Flash-attention kernels, on tensors (the same with rewrites on and off).
  // The tensor-core kernels run by default on NVVM only (mma-sync, PTX's
  // mma.sync; mma, wmma, when asked for): ROCDL lowers neither nvgpu nor
  // gpu.subgroup_mma, and on SPIR-V mma is opt-in (attention-kernel=mma):
  // it needs a Vulkan device with VK_KHR_cooperative_matrix, which a
  // profile's coop_matrix (tensor cores) does not promise.
  if (options.attentionKernel != AttentionKernel::Reference)
    addPipeline(pm,
                llvm::formatv("cachet-lower-attention{{variant={0} {1} {2}}",
                              getVariantName(options.attentionKernel),
                              options.target == Target::NVVM
                                  ? "allow-mma=true allow-mma-sync=true "
                                    "dynamic-shared=true async-copy=true "
                                    "warp-sync=true"
                              : options.target == Target::SPIRV
                                  ? "allow-mma=false vector-bytes=8"
                                  : "allow-mma=false",
                              options.attentionOptions.getValue())
                    .str());

  // Reference implementations of the cachet ops, ggml bytes for block types.
  addPipeline(pm, "cachet-lower-to-linalg");

  // Tensors to buffers; function boundaries keep plain (identity) memrefs so
  // the host ABI is the same with every rewrite on or off.
  // A result inserted into a tensor (a KV cache append) is computed in the
  // destination's slice: its tensor.empty becomes that slice
  // (kBufferizeFunctions starts with eliminate-empty-tensors).
  addPipeline(
      pm, (kBufferizeFunctions + ",canonicalize,cachet-pitched-weights").str());
  if (options.matvecKernel == MatvecKernel::Subgroup ||
      (options.matvecKernel == MatvecKernel::Auto &&
       options.target != Target::SPIRV))
    addPipeline(pm, llvm::formatv("func.func(cachet-lower-matvec{{{0} {1}})",
                                  // SPIR-V vectors have at most 4
                                  // components; bf16 is emulated per scalar.
                                  options.target == Target::SPIRV
                                      ? "load-bytes=8 bf16-vectors=false"
                                      : "",
                                  options.matvecOptions.getValue())
                        .str());
  // Dequant-transpose kernels: SPIR-V vectors have at most 4 components.
  addPipeline(
      pm, llvm::formatv("func.func(cachet-lower-dequant-transpose{{{0} {1}})",
                        options.target == Target::SPIRV
                            ? "load-bytes=4 store-bytes=8 workgroup-alloc=true "
                              "scalar-stores=true"
                            : "",
                        options.dequantTransposeOptions.getValue())
              .str());

  // Generic kernels: every linalg op becomes parallel loops, tiled so the
  // inner loop maps to the threads of a workgroup.
  addPipeline(pm, llvm::formatv(
                      "func.func(cachet-reductions-inner,"
                      "cachet-lower-reductions,"
                      "convert-linalg-to-parallel-loops,"
                      "cachet-host-compute-to-parallel,"
                      "scf-parallel-loop-tiling{{parallel-loop-tile-sizes={0} "
                      "no-min-max-bounds=true},"
                      "gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
                      "canonicalize,gpu-launch-sink-index-computations,"
                      "gpu-kernel-outlining,lower-affine,canonicalize,"
                      "fold-memref-alias-ops,cachet-device-buffers",
                      options.workgroupSize.getValue())
                      .str());

  std::string format = "bin";
  switch (options.target) {
  case Target::SPIRV:
    addPipeline(pm, options.attentionKernel == AttentionKernel::Mma
                        ? kSPIRVCoopMatrixTarget
                        : kSPIRVTarget);
    addPrefetch(pm, options);
    // bf16 has no SPIR-V type on most devices: i16 storage, f32 arithmetic,
    // conversions with integer ops.
    addPipeline(
        pm,
        "cachet-emulate-bf16-storage,"
        "gpu.module(cachet-set-spirv-entry-point-abi,cachet-workgroup-allocs,"
        "cachet-scalarize-vector-memory,"
        "arith-emulate-unsupported-floats{source-types=bf16 "
        "target-type=f32},arith-expand{include-bf16=true},"
        "math-expand-ops{ops=exp2},canonicalize,convert-math-to-spirv),"
        "convert-gpu-to-spirv,cachet-nest-spirv-modules,"
        "gpu.module(spirv.module(cachet-hoist-spirv-variables,"
        "spirv-lower-abi-attrs,"
        "spirv-update-vce,cachet-spirv-interface-version))");
    break;
  case Target::NVVM:
    addPipeline(
        pm,
        llvm::formatv("nvvm-attach-target{{chip={0} features={1} O=3}",
                      options.chip.empty() ? "sm_90" : options.chip.getValue(),
                      options.features.getValue())
            .str());
    addPrefetch(pm, options);
    addPipeline(pm,
                "gpu.module(cachet-align-workgroup-memory,"
                "cachet-kernel-occupancy,"
                "convert-scf-to-cf,convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,"
                "cachet-extern-dynamic-shared-memory),"
                "reconcile-unrealized-casts");
    format = options.format;
    break;
  case Target::ROCDL:
    addPipeline(
        pm,
        llvm::formatv("rocdl-attach-target{{chip={0} O=3}",
                      options.chip.empty() ? "gfx942" : options.chip.getValue())
            .str());
    addPrefetch(pm, options);
    addPipeline(pm, "gpu.module(cachet-align-workgroup-memory,"
                    "convert-scf-to-cf,convert-gpu-to-rocdl),"
                    "reconcile-unrealized-casts");
    format = options.format;
    break;
  }
  if (options.hostOnly)
    return success();

  std::string toolkit = options.toolkit.empty()
                            ? std::string()
                            : " toolkit=" + options.toolkit.getValue();
  addPipeline(
      pm, llvm::formatv("gpu-module-to-binary{{format={0}{1}}", format, toolkit)
              .str());
  // Host code: memrefs to LLVM, launches to mgpu* calls. On SPIR-V, kernels
  // take bare buffer pointers, each followed by its size in bytes (the
  // Vulkan binding convention of the runtime); on NVVM and ROCDL they take
  // the upstream CUDA convention that convert-gpu-to-nvvm/rocdl compiled
  // them for (memref descriptors expanded into scalar parameters), which the
  // runtime passes to cuLaunchKernel / hipModuleLaunchKernel as is.
  // Launches and copies chained on one stream. The launch flags' calls come
  // after gpu-async-region: before it, each call (a host op) would end the
  // async region, and a stream synchronization after every PDL launch would
  // leave the GPU idle while the host queues the next one.
  addPipeline(pm, "func.func(gpu-async-region),cachet-lower-launch-attributes");
  addPipeline(pm, llvm::formatv("expand-strided-metadata,"
                                "finalize-memref-to-llvm,"
                                "func.func(llvm-request-c-wrappers),"
                                "gpu-to-llvm{0},convert-to-llvm,"
                                "reconcile-unrealized-casts,"
                                "cachet-strip-attributes",
                                options.target == Target::SPIRV
                                    ? "{use-bare-pointers-for-kernels=true "
                                      "intersperse-sizes-for-kernels=true}"
                                    : "")
                      .str());
  return success();
}

LogicalResult cachet::buildCachetReferencePipeline(
    OpPassManager &pm, const CompileOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  if (!options.profile.empty() &&
      failed(checkOptionPipeline(
          "profile",
          llvm::formatv("cachet-attach-device{{profile={0}}",
                        options.profile.getValue())
              .str(),
          emitError)))
    return failure();
  pm.addPass(createCheckCompileInput());
  pm.addNestedPass<func::FuncOp>(createKeepArgumentUpdates());
  addAttachDevice(pm, options);
  // Temporaries are freed (ownership-based deallocation): a reference run
  // under LeakSanitizer, or called in a loop, leaks nothing.
  addPipeline(pm, ("cachet-lower-to-linalg," + kBufferizeFunctions +
                   ",buffer-deallocation-pipeline")
                      .str());
  pm.addNestedPass<func::FuncOp>(createReturnArguments());
  addPipeline(pm, "convert-bufferization-to-memref,"
                  "canonicalize,func.func(convert-linalg-to-loops),"
                  "lower-affine,convert-scf-to-cf,expand-strided-metadata,"
                  // bf16 arithmetic in f32 (one rounding per op, as the
                  // GPU targets do it): x86 has no bf16 libcalls to lean on.
                  "arith-emulate-unsupported-floats{source-types=bf16 "
                  "target-type=f32},arith-expand{include-bf16=true},"
                  "finalize-memref-to-llvm,func.func(llvm-request-c-wrappers),"
                  "convert-to-llvm,reconcile-unrealized-casts,"
                  "cachet-strip-attributes");
  return success();
}

/// Registers pipeline `name` built by `build` from CompileOptions: a bad
/// option is a diagnostic of the pipeline parser (exit status 1), not an
/// abort.
static void registerCompilePipeline(
    StringRef name, StringRef description,
    LogicalResult (*build)(OpPassManager &, const cachet::CompileOptions &,
                           function_ref<LogicalResult(const Twine &)>)) {
  registerPassPipeline(
      name, description,
      [build](OpPassManager &pm, StringRef text,
              function_ref<LogicalResult(const Twine &)> emitError) {
        cachet::CompileOptions options;
        std::string message;
        llvm::raw_string_ostream os(message);
        // The option parser reports an unknown name or enum value on
        // stderr (llvm::cl); this names the text it came from.
        if (failed(options.parseFromString(text, os)))
          return emitError(
              llvm::Twine("cachet-compile: bad option in '") + text + "'" +
              (StringRef(message).trim().empty()
                   ? llvm::Twine(" (cachet-opt --help lists the "
                                 "options and their values)")
                   : llvm::Twine(": ") + StringRef(message).trim()));
        return build(pm, options, emitError);
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(cachet::CompileOptions());
      });
}

void cachet::registerCachetPipelines() {
  registerCachetPipelinesPasses();
  registerCompilePipeline(
      "cachet-compile-reference",
      "Compile a module for the host CPU without rewrites: the reference "
      "that GPU results are checked against",
      buildCachetReferencePipeline);
  registerCompilePipeline(
      "cachet-compile",
      "Compile a module for a GPU: device profile, cachet's rewrites, "
      "kernels, SPIR-V/NVVM/ROCDL binaries and host code calling the runtime",
      buildCachetCompilePipeline);
}
