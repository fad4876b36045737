//===- Pipelines.cpp - the cachet-compile pipeline ------------------------===//

#include "cachet/Pipelines/Pipelines.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Passes.h"
#include "cachet/Pipelines/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;

namespace {
/// Adds passes to a pass manager from typed options. Fixed pipeline texts
/// (upstream passes with constant options) are parsed; a pass whose options
/// come from `cachet-compile` is created in C++, its options set from the
/// typed ones and then from the option text the user gave for it. The first
/// failure is reported through `emitError`, naming the option; later calls
/// do nothing.
class PipelineBuilder {
public:
  PipelineBuilder(OpPassManager &pm,
                  function_ref<LogicalResult(const Twine &)> emitError)
      : pm(pm), emitError(emitError) {}

  /// Appends the fixed pipeline `text`.
  void add(StringRef text) {
    if (failed(status))
      return;
    std::string message;
    llvm::raw_string_ostream os(message);
    if (failed(parsePassPipeline(text, pm, os)))
      status =
          emitError(llvm::Twine("cachet-compile: internal error: the "
                                "pipeline text '") +
                    text + "' does not parse: " + StringRef(message).trim());
  }

  /// Appends `pass` (on `builtin.module`, or on each `func.func` with
  /// `onFunctions`) after applying `text`, the value of the cachet-compile
  /// option `option`, to its options.
  void add(std::unique_ptr<Pass> pass, StringRef option = "",
           StringRef text = "", bool onFunctions = false) {
    add(std::move(pass), {{option, text}}, onFunctions);
  }

  /// Appends `pass` after applying each (option, text) of `texts` to its
  /// options, in order (a later one wins).
  void add(std::unique_ptr<Pass> pass,
           ArrayRef<std::pair<StringRef, StringRef>> texts,
           bool onFunctions = false) {
    if (failed(status))
      return;
    for (auto [option, text] : texts) {
      if (text.trim().empty())
        continue;
      if (failed(pass->initializeOptions(text, [&](const Twine &message) {
            return emitError(llvm::Twine("cachet-compile: bad ") + option +
                             ": " + message);
          }))) {
        status = failure();
        return;
      }
    }
    if (onFunctions)
      pm.addNestedPass<func::FuncOp>(std::move(pass));
    else
      pm.addPass(std::move(pass));
  }

  /// Checks `text`, the value of the cachet-compile option `option`, against
  /// the options of `pass`, which the pipeline does not run (an option
  /// given for a pass that is off is still checked).
  void check(std::unique_ptr<Pass> pass, StringRef option, StringRef text) {
    if (failed(status) || text.trim().empty())
      return;
    status = pass->initializeOptions(text, [&](const Twine &message) {
      return emitError(llvm::Twine("cachet-compile: bad ") + option + ": " +
                       message);
    });
  }

  /// Appends `pass` to run on each `func.func`.
  void addOnFunctions(std::unique_ptr<Pass> pass, StringRef option = "",
                      StringRef text = "") {
    add(std::move(pass), option, text, /*onFunctions=*/true);
  }

  LogicalResult getStatus() const { return status; }

private:
  OpPassManager &pm;
  function_ref<LogicalResult(const Twine &)> emitError;
  LogicalResult status = success();
};
} // namespace

/// SPIR-V capabilities and extensions of the Vulkan 1.2 devices cachet runs
/// on (lavapipe included): 8/16-bit storage and arithmetic, subgroup
/// shuffles (the subgroup mat-vec kernels' reductions).
static constexpr StringLiteral kSPIRVTarget =
    "spirv-attach-target{ver=v1.3 "
    "caps=Shader,Float16,Int8,Int16,Int64,StorageBuffer16BitAccess,"
    "StorageBuffer8BitAccess,GroupNonUniform,GroupNonUniformShuffle "
    "exts=SPV_KHR_storage_buffer_storage_class,SPV_KHR_16bit_storage,"
    "SPV_KHR_8bit_storage}";

/// Adds the launch plans (cachet-select-kernel-configs with `prefetch` and
/// `prefetch-options`) and cachet-prefetch-matvec-chains, which carries them
/// out: after outlining and the target attribute (which says what the chip
/// supports), before the kernels are converted to the target.
static void addPrefetch(PipelineBuilder &builder,
                        const cachet::CompileOptions &options) {
  if (!options.rewrites)
    return builder.check(cachet::createSelectKernelConfigs(),
                         "prefetch-options", options.prefetchOptions);
  cachet::SelectKernelConfigsOptions select;
  select.prefetch = options.prefetch;
  builder.add(cachet::createSelectKernelConfigs(select), "prefetch-options",
              options.prefetchOptions);
  builder.add(cachet::createPrefetchMatvecChains());
}

/// Checks the options of `options` that no pass checks when it is built.
static LogicalResult
checkCompileOptions(const cachet::CompileOptions &options,
                    function_ref<LogicalResult(const Twine &)> emitError) {
  if (!options.profile.empty()) {
    llvm::Expected<cachet::DeviceProfile> profile =
        cachet::resolveProfile(options.profile);
    if (!profile)
      return emitError(llvm::Twine("cachet-compile: bad profile '") +
                       options.profile.getValue() +
                       "': " + llvm::toString(profile.takeError()));
  }
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

/// The NVVM chip `options` compile for: `chip`, else sm_90a for a profile
/// whose arch is sm_90 (its code runs on sm_90 devices only, as the
/// profile's kernels do; it has warpgroup MMA), else sm_90.
static std::string getNvvmChip(const cachet::CompileOptions &options) {
  if (!options.chip.empty())
    return options.chip.getValue();
  if (!options.profile.empty()) {
    llvm::Expected<cachet::DeviceProfile> profile =
        cachet::resolveProfile(options.profile);
    if (!profile) {
      llvm::consumeError(profile.takeError());
      return "sm_90";
    }
    if (profile->arch == "sm_90")
      return "sm_90a";
  }
  return "sm_90";
}

/// Adds cachet-select-kernel-configs with the target's settings and then
/// the user's `attention-options` and `matvec-options`. It runs twice with
/// the same options: on tensors before the attention kernels, and on
/// buffers before the mat-vec kernels (whose weights' pitches decide);
/// each run configures what has no config yet.
static cachet::SelectKernelConfigsOptions
getSelectOptions(const cachet::CompileOptions &options) {
  cachet::SelectKernelConfigsOptions select;
  // The tensor-core attention kernels: on NVVM mma-sync (PTX's mma.sync;
  // mma, wmma, when asked for); ROCDL lowers neither nvgpu nor
  // gpu.subgroup_mma; on SPIR-V the mma kernel (KHR cooperative matrices)
  // where the profile has 16x16x16 f16 ones, with a fallback kernel beside
  // it: a profile's coop_matrix (tensor cores) does not promise a Vulkan
  // device with VK_KHR_cooperative_matrix, so the compiled code asks the
  // runtime and launches the fallback where the device lacks them.
  select.attentionKernel = options.attentionKernel;
  bool spirv = options.target == cachet::Target::SPIRV;
  switch (options.target) {
  case cachet::Target::NVVM:
    select.allowMma = true;
    select.allowMmaSync = true;
    // Warpgroup MMA is in the architecture-specific sm_90a only.
    select.allowWgmma = getNvvmChip(options) == "sm_90a";
    select.dynamicShared = true;
    select.asyncCopy = true;
    select.warpSync = true;
    break;
  case cachet::Target::SPIRV:
    select.allowMma = true;
    select.mmaFallback = true;
    select.vectorBytes = 8;
    // No vectors of i8 (nor one-element vectors to bitcast to): K rows
    // read a value at a time.
    select.decodeLoadBytes = 4;
    // Over q8_0 / q4_0 blocks 2 decode workgroups per compute unit, not 4
    // (NVIDIA's Vulkan driver, docs/BENCHMARKS.md runs 157 and 159).
    select.decodeBlockWorkgroupsPerUnit = 2;
    // The decode kernel by default, as on the other targets: the decode
    // suites at d4096, d32768 and d65536 pass on NVIDIA's Vulkan driver
    // (H200, runs 57, 71 and 77: byte-identical off / on), and at tg1 @
    // d32768 f16 it takes 0.13 ms where the prefill kernel auto chose
    // before took 140 ms (run 77).
    break;
  case cachet::Target::ROCDL:
    select.allowMma = false;
    break;
  }
  // Mat-vecs: the subgroup kernel on every target. On SPIR-V its 16-byte
  // loads of float weights and x are read as vector<4xi32> words
  // (cachet-spirv-word-loads) and computed in pieces of 4 values
  // (cachet-lower-matvec's max-vector-elements: SPIR-V's widest vectors);
  // bf16 is emulated with integer ops.
  select.matvecKernel = options.matvecKernel;
  if (options.matvecKernel == cachet::MatvecKernel::Auto)
    select.matvecKernel = cachet::MatvecKernelChoice::Subgroup;
  if (spirv) {
    // Block slices (and their x loads) in vectors of at most 4 values.
    select.blockSlice = 4;
    select.superBlockSlice = 4;
    // Dequant-transpose: 16-byte staging loads (read as vector<4xi32>
    // words), 8-byte stores (4 f16 values, vector<2xi32> words).
    select.dequantTransposeStoreBytes = 8;
  }
  return select;
}

static void addSelectKernelConfigs(PipelineBuilder &builder,
                                   const cachet::CompileOptions &options) {
  builder.add(cachet::createSelectKernelConfigs(getSelectOptions(options)),
              {{"attention-options", options.attentionOptions},
               {"matvec-options", options.matvecOptions},
               {"dequant-transpose-options", options.dequantTransposeOptions}});
}

/// The option text of the cachet-select-kernel-configs that
/// addSelectKernelConfigs adds (its typed options, then the user's
/// attention-options), for a pass before it that asks which kernel an
/// attention will get; "" where the user's text does not parse (the
/// select pass itself reports it).
static std::string getSelectOptionsText(const cachet::CompileOptions &options) {
  std::unique_ptr<Pass> select =
      cachet::createSelectKernelConfigs(getSelectOptions(options));
  if (!options.attentionOptions.empty() &&
      failed(select->initializeOptions(
          options.attentionOptions, [](const Twine &) { return failure(); })))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  select->printAsTextualPipeline(os);
  // cachet-select-kernel-configs{...}: the options between the braces.
  StringRef inner = StringRef(text).split('{').second;
  return inner.rsplit('}').first.str();
}

/// The CUDA toolkit gpu-module-to-binary takes for NVVM where `toolkit` is
/// not given: upstream's default (CUDA_ROOT, CUDA_HOME or CUDA_PATH in the
/// environment, else the path LLVM was built with) where one of those is
/// set, else /usr/local/cuda where it holds libdevice. Without libdevice,
/// the generic kernels' math calls (`__nv_expf`, `__nv_rsqrtf`, ...) stay
/// undefined and ptxas rejects the module.
static std::string getDefaultCudaToolkit() {
  for (const char *name : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(name); value && *value)
      return "";
  constexpr const char *kUsual = "/usr/local/cuda";
  if (llvm::sys::fs::exists(llvm::Twine(kUsual) +
                            "/nvvm/libdevice/libdevice.10.bc"))
    return kUsual;
  return "";
}

/// The ROCm folder gpu-module-to-binary takes for ROCDL where `toolkit` is
/// not given: upstream's default (ROCM_PATH, ROCM_ROOT or ROCM_HOME in the
/// environment, else the ROCm that LLVM was built with) where one of those
/// is set or /opt/rocm holds the device bitcode, else the build's
/// ROCm-style folder of Debian's rocm-device-libs and LLVM's ld.lld
/// (CMakeLists.txt) where it holds it. Without the bitcode the generic
/// kernels' math calls (`__ocml_exp2_f32`, ...) cannot be linked and the
/// module does not serialize.
static std::string getDefaultRocmToolkit() {
  for (const char *name : {"ROCM_PATH", "ROCM_ROOT", "ROCM_HOME"})
    if (const char *value = std::getenv(name); value && *value)
      return "";
  if (llvm::sys::fs::is_directory("/opt/rocm/amdgcn/bitcode"))
    return "";
#ifdef CACHET_DEFAULT_ROCM_TOOLKIT
  if (llvm::sys::fs::is_directory(llvm::Twine(CACHET_DEFAULT_ROCM_TOOLKIT) +
                                  "/amdgcn/bitcode"))
    return CACHET_DEFAULT_ROCM_TOOLKIT;
#endif
  return "";
}

/// The passes both pipelines start with: IR that upstream passes would
/// crash on becomes a diagnostic, whole-cache updates of arguments stay
/// writes, and the profile of `options` is attached.
static void addInputPasses(PipelineBuilder &builder,
                           const cachet::CompileOptions &options) {
  builder.add(cachet::createCheckCompileInput());
  builder.addOnFunctions(cachet::createKeepArgumentUpdates());
  if (!options.profile.empty())
    builder.add(cachet::createAttachDevice(
        cachet::AttachDeviceOptions{options.profile.getValue()}));
}

LogicalResult cachet::buildCachetCompilePipeline(
    OpPassManager &pm, const CompileOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  if (failed(checkCompileOptions(options, emitError)))
    return failure();
  PipelineBuilder builder(pm, emitError);
  addInputPasses(builder, options);

  // Front-end attention and quantization to cachet ops, with rewrites on
  // and off: raising picks the kernels, so both variants run the same ones
  // and compare the rewrites alone (a generic attention and a flash kernel
  // sum in different orders).
  // Linear layers and batched products front ends write as contraction
  // generics or through a transposed weight first, as the named ops the
  // kernels and the attention matcher read.
  builder.add(createRaiseContractions());
  builder.add(createRaiseAttention());
  builder.add(createRaiseQuantize());
  builder.add(createRaiseDequantize());

  // The memory-hierarchy rewrites, each deciding from the profile.
  if (options.rewrites) {
    // On NVVM the in-kernel decoding (the blocks staged by cp.async and
    // decoded in workgroup memory) measured as costing about two f16 bytes
    // per value: with that, the cost function rewrites where the H200 grid
    // (docs/BENCHMARKS.md, run 60) found dequant-once faster, from 32 query
    // rows per KV head. The user's options come after and win.
    // On SPIR-V the chunks of a capped scratch are unrolled: a Vulkan
    // kernel takes whole buffers and no scalars, so a chunk loop's run-time
    // offsets cannot reach it.
    std::string cap =
        options.maxScratchBytes
            ? "max-scratch-bytes=" + std::to_string(options.maxScratchBytes)
            : "";
    // The kernel selection's options: the chunks of a capped scratch are
    // whole key tiles of the kernel the attention gets, and an attention
    // that gets none is not chunked (rewrites off and on then agree).
    std::string selectOptions =
        "select-options={" + getSelectOptionsText(options) + "}";
    builder.add(
        createDequantOnceKV(),
        {{"dequant-once-options",
          options.target == cachet::Target::NVVM ? "dequant-cost=2" : ""},
         {"attention-options", selectOptions},
         {"dequant-once-options",
          options.target == cachet::Target::SPIRV ? "unroll-chunks=true" : ""},
         {"max-scratch-bytes", cap},
         {"dequant-once-options", options.dequantOnceOptions}});
    builder.add(createPadWeightRows(), "pad-options", options.padOptions);
    builder.add("canonicalize");
  } else {
    builder.check(createDequantOnceKV(), "dequant-once-options",
                  options.dequantOnceOptions);
    builder.check(createPadWeightRows(), "pad-options", options.padOptions);
  }

  // Flash-attention kernels, on tensors (the same with rewrites on and
  // off).
  addSelectKernelConfigs(builder, options);
  if (options.attentionKernel != AttentionKernel::Reference)
    builder.add(createLowerAttention());

  // Reference implementations of the cachet ops, ggml bytes for block types.
  builder.add(createLowerToLinalg());
  // Decode's heads-first transposes (T = 1) as views, not copies.
  builder.add("func.func(cachet-unit-transposes-to-reshapes)");

  // Tensors to buffers; function boundaries keep plain (identity) memrefs so
  // the host ABI is the same with every rewrite on or off.
  // A result inserted into a tensor (a KV cache append) is computed in the
  // destination's slice: its tensor.empty becomes that slice
  // (kBufferizeFunctions starts with eliminate-empty-tensors).
  builder.add(kBufferizeFunctions);
  // cse merges the views that bufferizing an insert_slice into its own
  // source gives (a chunked scratch), so that canonicalize drops the copy.
  builder.add("canonicalize,cse,canonicalize");
  builder.add(createPitchedWeights());
  bool spirv = options.target == Target::SPIRV;
  // Mat-vec kernels, chosen on buffers (the weights' pitches decide).
  addSelectKernelConfigs(builder, options);
  // SPIR-V vectors hold at most 4 values: wider loads computed in pieces.
  LowerMatvecOptions lowerMatvec;
  lowerMatvec.maxVectorElements = spirv ? 4 : 0;
  builder.addOnFunctions(createLowerMatvec(lowerMatvec));
  // Dequant-transpose kernels (configured with the mat-vecs): on SPIR-V,
  // workgroup memory allocated in the kernel; their vector stores of the
  // scratch are word stores there (cachet-spirv-word-loads).
  LowerDequantTransposeOptions dequantTranspose;
  dequantTranspose.workgroupAlloc = spirv;
  builder.addOnFunctions(createLowerDequantTranspose(dequantTranspose));
  // cachet.quantize to packed blocks: one kernel, a thread per block.
  builder.addOnFunctions(createLowerQuantize());

  // Generic kernels: every linalg op becomes parallel loops, their
  // innermost dimension first, tiled so that it maps to the threads of a
  // workgroup.
  // A reduction with few outputs takes up to 1024 threads each on CUDA and
  // HIP; Vulkan devices promise fewer (256 is the generic kernels' size).
  // NVVM's subgroups are 32 lanes: the tree's last steps by shuffles.
  builder.add(
      std::string("func.func(cachet-reductions-inner,"
                  "cachet-lower-reductions{max-workgroup-size=") +
      (spirv ? "256" : "1024") +
      (options.target == cachet::Target::NVVM ? " subgroup-size=32" : "") +
      "},convert-linalg-to-parallel-loops,"
      "cachet-host-compute-to-parallel,cachet-innermost-dim-first)");
  builder.addOnFunctions(createParallelLoopTilingPass(
      {options.workgroupSize.getValue()}, /*noMinMaxBounds=*/true));
  // A large element-wise kernel's threads take several elements each.
  builder.add("func.func(cachet-coarsen-elementwise)");
  // A dimension longer than grid y / z allow goes to x.
  // (Vulkan promises 65535 workgroups along x too.)
  builder.add(std::string("func.func(cachet-order-grid-dims") +
              (spirv ? "{max-grid-x=65535}" : "") + ")");
  // Each launch its own constants (upstream's
  // gpu-launch-sink-index-computations, in linear time).
  builder.add("func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
              "canonicalize,func.func(cachet-sink-into-launches)");
  // SPIR-V kernels cannot take views at run-time offsets (a decode step's
  // RoPE and cache rows): they build them from the root buffers.
  if (spirv)
    builder.add("func.func(cachet-sink-views-into-kernels)");
  // fold-memref-alias-ops folds views into the kernels' loads and stores
  // with affine.apply (the views built inside SPIR-V kernels).
  builder.add("gpu-kernel-outlining,lower-affine,canonicalize,"
              "fold-memref-alias-ops,lower-affine");
  builder.add(createDeviceBuffers());

  std::string format = "bin";
  switch (options.target) {
  case Target::SPIRV:
    // Vulkan binds buffers only: scalar kernel arguments travel in them.
    builder.add("cachet-scalar-kernel-arguments");
    // The modules whose kernels use cooperative matrices (the mma
    // attention kernel) alone get KHR cooperative matrices (SPIR-V 1.6, so
    // Vulkan 1.3): the runtime refuses their kernels where the device lacks
    // VK_KHR_cooperative_matrix, and the compiled code launches the
    // fallback there. They keep the GLSL450 memory model that
    // convert-gpu-to-spirv gives shaders, though SPV_KHR_cooperative_matrix
    // now asks for the Vulkan memory model (which would also need
    // non-private workgroup accesses).
    builder.add(kSPIRVTarget);
    builder.add("cachet-spirv-coop-matrix-targets");
    addPrefetch(builder, options);
    // bf16 has no SPIR-V type on most devices: i16 storage, f32 arithmetic,
    // conversions with integer ops.
    // Buffers that only aligned vector loads and stores use are accessed
    // in 32-bit words (before the bf16 emulation, which leaves the rest to
    // scalar accesses).
    builder.add(
        "cachet-spirv-word-loads,cachet-emulate-bf16-storage,"
        "gpu.module(cachet-set-spirv-entry-point-abi,cachet-workgroup-allocs,"
        "cachet-scalarize-vector-memory,"
        "arith-emulate-unsupported-floats{source-types=bf16 "
        "target-type=f32},arith-expand{include-bf16=true},"
        "math-expand-ops{ops=exp2},canonicalize,"
        "cachet-guard-zero-trip-loops,convert-math-to-spirv),"
        "convert-gpu-to-spirv,cachet-nest-spirv-modules,"
        "gpu.module(spirv.module(cachet-hoist-spirv-variables,"
        "spirv-lower-abi-attrs,cachet-spirv-subgroup-size,"
        "spirv-update-vce,cachet-spirv-interface-version))");
    break;
  case Target::NVVM: {
    GpuNVVMAttachTargetOptions nvvm;
    nvvm.chip = getNvvmChip(options);
    nvvm.features = options.features;
    nvvm.optLevel = 3;
    builder.add(createGpuNVVMAttachTarget(nvvm));
    addPrefetch(builder, options);
    // Identical kernels merged before they are converted (a model's
    // layers repeat them): each distinct one is lowered once.
    builder.add("cachet-merge-identical-kernels");
    // On sm_90a the wgmma ops (inline PTX: they have no intrinsics) are
    // lowered by convert-nvvm-to-llvm.
    builder.add(std::string("gpu.module(cachet-align-workgroup-memory,"
                            "cachet-kernel-occupancy,cachet-int8-dot-products,"
                            "convert-scf-to-cf,convert-nvgpu-to-nvvm,"
                            "convert-gpu-to-nvvm,") +
                (nvvm.chip == "sm_90a" ? "convert-nvvm-to-llvm," : "") +
                "cachet-extern-dynamic-shared-memory),"
                "reconcile-unrealized-casts");
    format = options.format;
    break;
  }
  case Target::ROCDL: {
    GpuROCDLAttachTargetOptions rocdl;
    rocdl.chip = options.chip.empty() ? "gfx942" : options.chip.getValue();
    rocdl.optLevel = 3;
    builder.add(createGpuROCDLAttachTarget(rocdl));
    addPrefetch(builder, options);
    // Identical kernels merged before they are converted (a model's
    // layers repeat them): each distinct one is lowered once.
    builder.add("cachet-merge-identical-kernels");
    builder.add("gpu.module(cachet-align-workgroup-memory,"
                "convert-scf-to-cf,convert-gpu-to-rocdl),"
                "reconcile-unrealized-casts");
    format = options.format;
    break;
  }
  }
  if (options.hostOnly)
    return builder.getStatus();

  // Each distinct kernel compiled once (a model's layers repeat them).
  builder.add("cachet-merge-identical-kernels");
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format;
  binary.toolkitPath = options.toolkit;
  if (options.target == Target::NVVM && binary.toolkitPath.empty())
    binary.toolkitPath = getDefaultCudaToolkit();
  if (options.target == Target::ROCDL && binary.toolkitPath.empty())
    binary.toolkitPath = getDefaultRocmToolkit();
  builder.add(createGpuModuleToBinaryPass(binary));
  if (spirv)
    builder.add("cachet-spirv-word-launch-operands");
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
  builder.add("func.func(gpu-async-region)");
  // A host loop (a chunked attention's) stays on the stream of the work
  // before it instead of a stream created and synchronized per iteration.
  // SPIR-V unrolls its chunks (cachet-dequant-once-kv's unroll-chunks).
  if (!spirv)
    builder.add("func.func(cachet-stream-loops)");
  builder.add(createLowerLaunchAttributes());
  // Host loops (a chunked attention's) and the index arithmetic of views at
  // run-time offsets lower with the memrefs.
  builder.add("expand-strided-metadata,lower-affine,convert-scf-to-cf,"
              "finalize-memref-to-llvm,func.func(llvm-request-c-wrappers)");
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = spirv;
  toLLVM.kernelIntersperseSizeCallConv = spirv;
  builder.add(createGpuToLLVMConversionPass(toLLVM));
  builder.add("convert-to-llvm,reconcile-unrealized-casts");
  builder.add(createStripCachetAttributes());
  return builder.getStatus();
}

LogicalResult cachet::buildCachetReferencePipeline(
    OpPassManager &pm, const CompileOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  if (failed(checkCompileOptions(options, emitError)))
    return failure();
  PipelineBuilder builder(pm, emitError);
  addInputPasses(builder, options);
  // Temporaries are freed (ownership-based deallocation): a reference run
  // under LeakSanitizer, or called in a loop, leaks nothing.
  builder.add(createLowerToLinalg());
  builder.add(kBufferizeFunctions);
  builder.add("buffer-deallocation-pipeline");
  builder.addOnFunctions(createReturnArguments());
  builder.add("convert-bufferization-to-memref,"
              "canonicalize,func.func(convert-linalg-to-loops),"
              // Views at run-time offsets expand to affine.apply.
              "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
              // bf16 arithmetic in f32 (one rounding per op, as the
              // GPU targets do it): x86 has no bf16 libcalls to lean on.
              "arith-emulate-unsupported-floats{source-types=bf16 "
              "target-type=f32},arith-expand{include-bf16=true},"
              "finalize-memref-to-llvm,func.func(llvm-request-c-wrappers),"
              "convert-to-llvm,reconcile-unrealized-casts");
  builder.add(createStripCachetAttributes());
  return builder.getStatus();
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
