//===- PrefetchPlan.h - prefetch and PDL plans of chain launches -*- C++
//-*-===//
//
// The cost model behind the #cachet.prefetch_plan of a mat-vec chain launch:
// which instruction brings the next step's weights into L2 and how many
// bytes of each, whether the launch overlaps the one before it with
// programmatic dependent launch, what its prologue prefetches and where it
// waits. cachet-select-kernel-configs calls selectPrefetchPlans;
// cachet-prefetch-matvec-chains checks a plan with whyNotPrefetchPlan and
// carries it out.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_PREFETCHPLAN_H
#define CACHET_ANALYSIS_PREFETCHPLAN_H

#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace cachet {

/// The `prefetch` option: which mechanisms a chain launch gets (auto:
/// chosen from the profile and the target).
enum class PrefetchMode { Auto, L2, Bulk, Pdl, PdlL2, PdlBulk, Off };

/// Returns the name of `kind` used in remarks (`l2`, `bulk`, ...).
llvm::StringRef getPrefetchKindName(PrefetchKind kind);

/// What the target attribute of a gpu.module supports.
struct TargetInfo {
  enum class Kind { NVVM, ROCDL, SPIRV, None } kind = Kind::None;
  std::string chip;
  /// sm_XY as XY (NVVM).
  int sm = 0;
  /// PTX ISA version as XY, from `+ptxXY` or the LLVM default for the chip.
  int ptx = 0;

  /// Returns e.g. "sm_90 with PTX 8.0".
  std::string describe() const;
  /// `prefetch.global.L2` exists since sm_20.
  bool hasL2Prefetch() const { return kind == Kind::NVVM && sm >= 20; }
  /// LLVM 22 selects `llvm.nvvm.prefetch.global.L2` only on sm_90, PTX 8.0.
  bool hasL2PrefetchIntrinsic() const { return sm >= 90 && ptx >= 80; }
  /// `cp.async.bulk.prefetch.L2`: sm_90, PTX 8.0.
  bool hasBulkPrefetch() const {
    return kind == Kind::NVVM && sm >= 90 && ptx >= 80;
  }
  /// `griddepcontrol`: sm_90, PTX 7.8.
  bool hasPdl() const { return kind == Kind::NVVM && sm >= 90 && ptx >= 78; }
  /// The AMD data prefetch of the chip: `s_prefetch_data` on gfx12,
  /// `global_prefetch` on gfx1250, else none.
  PrefetchKind getAmdPrefetch() const;
  /// Why the target cannot emit `kind`, or "".
  std::string whyNot(PrefetchKind kind) const;
};

/// Reads the first target attribute of `module`.
TargetInfo getTargetInfo(mlir::gpu::GPUModuleOp module);

/// The knobs of the plan cost model (cachet-select-kernel-configs'
/// `prefetch`, `prefetch-*` and `pdl-*` options).
struct PrefetchPlanOptions {
  PrefetchMode mode = PrefetchMode::Auto;
  /// Share of the next weights to prefetch, in (0, 1]; negative: 0.5.
  double fraction = -1;
  /// Bytes prefetched per step at most; negative: the profile's L2 / 4.
  int64_t maxBytes = -1;
  /// CTAs that prefetch; negative: the profile's compute units.
  int64_t ctas = -1;
  PdlTrigger trigger = PdlTrigger::Start;
  PdlWait wait = PdlWait::AfterWeightLoads;
};

/// Returns why an option of `options` is out of range, or "".
std::string checkPrefetchPlanOptions(const PrefetchPlanOptions &options);

/// Puts a #cachet.prefetch_plan on every launch of a mat-vec chain in
/// `module` that has none and whose kernel's module has a target, calling
/// `remark` once per launch with what was decided and why (and for launches
/// that are not part of a chain). Plans already in the IR are kept.
void selectPrefetchPlans(
    mlir::ModuleOp module, DeviceProfileAttr profile,
    const PrefetchPlanOptions &options,
    llvm::function_ref<void(mlir::Operation *, const llvm::Twine &)> remark);

/// Returns why the kernel of `launch` may not load its weights `weights`
/// (host values) before its wait, or "" if it may: no kernel that can still
/// run when it starts may write them (see cachet-prefetch-matvec-chains'
/// `pdl-wait`). A launch before it is a fence unless its plan has pdl with
/// the trigger at the start. `chainWeights` are written by nothing.
std::string whyWaitFirst(mlir::gpu::LaunchFuncOp launch,
                         llvm::ArrayRef<mlir::Value> weights,
                         const llvm::SmallDenseSet<mlir::Value> &chainWeights,
                         mlir::AliasAnalysis &aliases,
                         mlir::SymbolTableCollection &symbolTables);

/// Returns the plan of `launch`, or null.
PrefetchPlanAttr getPrefetchPlan(mlir::gpu::LaunchFuncOp launch);

/// Returns the bytes of a statically shaped memref type with the identity
/// layout, or std::nullopt.
std::optional<int64_t> getStaticBytes(mlir::MemRefType type);

} // namespace cachet

#endif // CACHET_ANALYSIS_PREFETCHPLAN_H
