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

void cachet::buildCachetCompilePipeline(OpPassManager &pm,
                                        const CompileOptions &options) {
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
    addPipeline(pm, "cachet-dequant-once-kv,cachet-pad-weight-rows,"
                    "canonicalize");

  // Flash-attention kernels, on tensors (the same with rewrites on and off).
  // The tensor-core kernels run by default on NVVM only (mma-sync, PTX's
  // mma.sync; mma, wmma, when asked for): ROCDL lowers neither nvgpu nor
  // gpu.subgroup_mma, and on SPIR-V mma is opt-in (attention-kernel=mma):
  // it needs a Vulkan device with VK_KHR_cooperative_matrix, which a
  // profile's coop_matrix (tensor cores) does not promise.
  if (options.attentionKernel != "reference")
    addPipeline(pm,
                llvm::formatv("cachet-lower-attention{{variant={0} {1} {2}}",
                              options.attentionKernel.getValue(),
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
  if (options.matvecKernel == "subgroup" ||
      (options.matvecKernel == "auto" && options.target != Target::SPIRV))
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
    addPipeline(pm, options.attentionKernel == "mma" ? kSPIRVCoopMatrixTarget
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
    return;

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
}

void cachet::buildCachetReferencePipeline(OpPassManager &pm,
                                          const CompileOptions &options) {
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
}

void cachet::registerCachetPipelines() {
  registerCachetPipelinesPasses();
  PassPipelineRegistration<CompileOptions>(
      "cachet-compile-reference",
      "Compile a module for the host CPU without rewrites: the reference "
      "that GPU results are checked against",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildCachetReferencePipeline(pm, options);
      });
  PassPipelineRegistration<CompileOptions>(
      "cachet-compile",
      "Compile a module for a GPU: device profile, cachet's rewrites, "
      "kernels, SPIR-V/NVVM/ROCDL binaries and host code calling the runtime",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildCachetCompilePipeline(pm, options);
      });
}
