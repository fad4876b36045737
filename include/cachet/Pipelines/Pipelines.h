//===- Pipelines.h - the cachet-compile pipeline --------------------------===//

#ifndef CACHET_PIPELINES_PIPELINES_H
#define CACHET_PIPELINES_PIPELINES_H

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Analysis/MatvecConfig.h"
#include "cachet/Analysis/PrefetchPlan.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace cachet {

/// Tensors to buffers as every cachet pipeline does it: a result inserted
/// into a tensor (a KV cache append) is computed in the destination's slice
/// (eliminate-empty-tensors); function boundaries keep plain (identity)
/// memrefs, so the host ABI is the same with every rewrite on or off, and
/// arguments are writable (updated in place).
inline constexpr llvm::StringLiteral kBufferizeFunctions =
    "eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries "
    "allow-return-allocs-from-loops "
    "function-boundary-type-conversion=identity-layout-map}";

/// The GPU code `cachet-compile` generates.
enum class Target { SPIRV, NVVM, ROCDL };

/// Mat-vec kernels of `cachet-compile` (`matvec-kernel`): those of
/// cachet-select-kernel-configs.
using MatvecKernel = MatvecKernelChoice;

/// cachet.attention kernels of `cachet-compile` (`attention-kernel`): those
/// of cachet-select-kernel-configs.
using AttentionKernel = AttentionKernelChoice;

/// Options of `cachet-compile`.
struct CompileOptions : public mlir::PassPipelineOptions<CompileOptions> {
  Option<Target> target{
      *this, "target", llvm::cl::desc("Kernel target"),
      llvm::cl::init(Target::SPIRV),
      llvm::cl::values(
          clEnumValN(Target::SPIRV, "spirv", "SPIR-V for Vulkan"),
          clEnumValN(Target::NVVM, "nvvm", "NVVM: PTX / cubin for CUDA"),
          clEnumValN(Target::ROCDL, "rocdl", "ROCDL: HSACO for HIP"))};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip: sm_90, gfx942, ... (nvvm and rocdl)"),
      llvm::cl::init("")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("Target features (nvvm: the PTX version, e.g. +ptx80)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel object format for gpu-module-to-binary: isa "
                     "(PTX, AMDGPU assembly) or bin (cubin, HSACO); SPIR-V "
                     "is always binary"),
      llvm::cl::init("isa")};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("Device profile (built-in name or .json path); empty "
                     "keeps the module's #cachet.device"),
      llvm::cl::init("")};
  Option<int64_t> workgroupSize{
      *this, "workgroup-size",
      llvm::cl::desc("Threads per workgroup of the generic kernels"),
      llvm::cl::init(64)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("Toolkit folder for gpu-module-to-binary: the CUDA "
                     "toolkit (ptxas) for nvvm, a ROCm-style folder with "
                     "amdgcn/bitcode and llvm/bin/ld.lld for rocdl; empty "
                     "takes upstream's default"),
      llvm::cl::init("")};
  Option<MatvecKernel> matvecKernel{
      *this, "matvec-kernel",
      llvm::cl::desc("Mat-vec kernels (cachet-lower-matvec)"),
      llvm::cl::init(MatvecKernel::Auto),
      llvm::cl::values(
          clEnumValN(MatvecKernel::Auto, "auto",
                     "subgroup on every target (on SPIR-V its 16-byte "
                     "loads are read as vector<4xi32> words)"),
          clEnumValN(MatvecKernel::Subgroup, "subgroup",
                     "a subgroup per row, 16-byte loads, several in flight"),
          clEnumValN(MatvecKernel::Generic, "generic",
                     "parallel loops, one thread per row"),
          clEnumValN(MatvecKernel::Blocks, "blocks",
                     "subgroup for block-quantized weights, generic for "
                     "float ones"))};
  Option<std::string> matvecOptions{
      *this, "matvec-options",
      llvm::cl::desc("Options of cachet-select-kernel-configs for the "
                     "mat-vec kernels, e.g. \"rows-per-block=8 "
                     "loads-per-lane=8\""),
      llvm::cl::init("")};
  Option<uint64_t> maxScratchBytes{
      *this, "max-scratch-bytes",
      llvm::cl::desc("Cap on cachet-dequant-once-kv's f16 K/V scratch in "
                     "bytes: a larger layer is processed in KV chunks, "
                     "merged exactly (0: no cap; dequant-once-options may "
                     "set it too, and wins)"),
      llvm::cl::init(0)};
  Option<std::string> dequantOnceOptions{
      *this, "dequant-once-options",
      llvm::cl::desc("Options of cachet-dequant-once-kv (rewrites on), e.g. "
                     "\"max-scratch-bytes=67108864 min-queries=1 force=true\""),
      llvm::cl::init("")};
  Option<std::string> padOptions{
      *this, "pad-options",
      llvm::cl::desc("Options of cachet-pad-weight-rows (rewrites on), e.g. "
                     "\"pad=0\""),
      llvm::cl::init("")};
  Option<std::string> dequantTransposeOptions{
      *this, "dequant-transpose-options",
      llvm::cl::desc("Options of cachet-select-kernel-configs for the "
                     "dequant-transpose kernels, added to the target's, e.g. "
                     "\"positions-per-group=8\""),
      llvm::cl::init("")};
  Option<std::string> attentionOptions{
      *this, "attention-options",
      llvm::cl::desc("Options of cachet-select-kernel-configs for "
                     "cachet.attention, added after the target's (a later "
                     "one wins), e.g. \"key-tile=32 tile-pad-bytes=0\""),
      llvm::cl::init("")};
  Option<AttentionKernel> attentionKernel{
      *this, "attention-kernel",
      llvm::cl::desc("cachet.attention kernels (cachet-lower-attention)"),
      llvm::cl::init(AttentionKernel::Auto),
      llvm::cl::values(
          clEnumValN(
              AttentionKernel::Auto, "auto",
              "decode where a KV head has at most 16 query rows, else "
              "mma-sync on NVVM where the profile has 16x16x16 f16 "
              "cooperative matrices, mma on SPIR-V for f16 (the tiled kernel "
              "its run-time fallback), tiled otherwise"),
          clEnumValN(AttentionKernel::Scalar, "scalar",
                     "one thread per query row, every target"),
          clEnumValN(AttentionKernel::Mma, "mma",
                     "subgroup matrices: wmma on NVVM, KHR cooperative "
                     "matrix on SPIR-V"),
          clEnumValN(AttentionKernel::MmaSync, "mma-sync",
                     "PTX mma.sync, the softmax in registers (NVVM)"),
          clEnumValN(AttentionKernel::Decode, "decode",
                     "split-KV flash-decoding, every target"),
          clEnumValN(AttentionKernel::Tiled, "tiled",
                     "f32 fused multiply-adds on register tiles, every "
                     "target"),
          clEnumValN(AttentionKernel::Reference, "reference",
                     "the linalg lowering of cachet-lower-to-linalg"))};
  Option<bool> rewrites{
      *this, "rewrites",
      llvm::cl::desc("Run cachet's memory-hierarchy rewrites (off gives the "
                     "baseline of an A/B comparison)"),
      llvm::cl::init(true)};
  Option<PrefetchMode> prefetch{
      *this, "prefetch",
      llvm::cl::desc("Mat-vec chain prefetch and PDL (the prefetch option of "
                     "cachet-select-kernel-configs)"),
      llvm::cl::init(PrefetchMode::Auto),
      llvm::cl::values(
          clEnumValN(PrefetchMode::Auto, "auto", "Chosen from the profile"),
          clEnumValN(PrefetchMode::L2, "l2", "L2 prefetch of the next weight"),
          clEnumValN(PrefetchMode::Bulk, "bulk",
                     "Bulk L2 prefetch of the next weight (sm_90+)"),
          clEnumValN(PrefetchMode::Pdl, "pdl",
                     "Programmatic dependent launch (sm_90+)"),
          clEnumValN(PrefetchMode::PdlL2, "pdl+l2", "pdl and l2"),
          clEnumValN(PrefetchMode::PdlBulk, "pdl+bulk", "pdl and bulk"),
          clEnumValN(PrefetchMode::Off, "off", "No prefetch, no PDL"))};
  Option<std::string> prefetchOptions{
      *this, "prefetch-options",
      llvm::cl::desc("Options of cachet-select-kernel-configs for the "
                     "launch plans, added after the mode, e.g. "
                     "\"prefetch-max-bytes=0 pdl-wait=start\""),
      llvm::cl::init("")};
  Option<bool> hostOnly{
      *this, "stop-before-binary",
      llvm::cl::desc("Stop before serializing kernels and lowering the host "
                     "(for inspecting the device IR)"),
      llvm::cl::init(false)};
};

/// Builds `cachet-compile`: device profile, cachet's rewrites, bufferization,
/// kernels, target lowering and serialization, host code to LLVM calling the
/// runtime's mgpu* ABI.
/// Fails, through `emitError`, on an option the pipeline cannot be built
/// from: a bad `format`, `workgroup-size` or `profile`, or passes' own
/// options given as text (`attention-options`, `matvec-options`,
/// `dequant-once-options`, `pad-options`, `dequant-transpose-options`,
/// `prefetch-options`) that the pass does not take or that are out of
/// range. The message names the option.
llvm::LogicalResult buildCachetCompilePipeline(
    mlir::OpPassManager &pm, const CompileOptions &options,
    llvm::function_ref<llvm::LogicalResult(const llvm::Twine &)> emitError);

/// Builds `cachet-compile-reference`: the same function compiled for the host
/// CPU, without rewrites, through upstream's LLVM lowering. Only `profile` of
/// `options` is used. Its output is the reference the GPU results are checked
/// against.
llvm::LogicalResult buildCachetReferencePipeline(
    mlir::OpPassManager &pm, const CompileOptions &options,
    llvm::function_ref<llvm::LogicalResult(const llvm::Twine &)> emitError);

/// Registers `cachet-compile` and `cachet-compile-reference` with the global
/// pipeline registry, and the passes only they need
/// (`cachet-check-compile-input`).
void registerCachetPipelines();

} // namespace cachet

#endif // CACHET_PIPELINES_PIPELINES_H
