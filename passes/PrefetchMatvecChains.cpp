//===- PrefetchMatvecChains.cpp - prefetch / PDL for mat-vec chains ------===//
//
// Annotates chains of streaming mat-vec launches: the last CTAs of each step
// prefetch the next step's weights into L2, and/or the launches use
// programmatic dependent launch. The matcher is cachet/Analysis/MatvecChain.h;
// this file decides the mechanism per target and profile, emits the kernel
// code and the launch arguments, and reports every decision.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace cachet {
#define GEN_PASS_DEF_PREFETCHMATVECCHAINS
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

/// The share of the next weight prefetched when `fraction` is not given: the
/// setting of the seed (50%), which did not depend on the card.
constexpr double kDefaultFraction = 0.5;
/// The byte cap as a share of L2 when `max-bytes` is not given: L2 / 4.
constexpr uint64_t kL2CapDivisor = 4;
/// Cache line bytes when there is no profile.
constexpr int64_t kDefaultCacheLine = 128;
/// Bytes per `cp.async.bulk.prefetch.L2` and per `s_prefetch_data` (32
/// chunks of 128 B, its largest length).
constexpr int64_t kChunkBytes = 4096;

/// How the next weight is brought into L2.
enum class PrefetchKind { None, L2, Bulk, SPrefetchData, GlobalPrefetch };

/// Returns the name of `kind` used in remarks and options.
StringRef getKindName(PrefetchKind kind) {
  switch (kind) {
  case PrefetchKind::None:
    return "none";
  case PrefetchKind::L2:
    return "l2";
  case PrefetchKind::Bulk:
    return "bulk";
  case PrefetchKind::SPrefetchData:
    return "s_prefetch_data";
  case PrefetchKind::GlobalPrefetch:
    return "global_prefetch";
  }
  llvm_unreachable("unknown prefetch kind");
}

/// What the target attribute of a gpu.module supports.
struct TargetInfo {
  enum class Kind { NVVM, ROCDL, SPIRV, None } kind = Kind::None;
  std::string chip;
  /// sm_XY as XY (NVVM).
  int sm = 0;
  /// PTX ISA version as XY, from `+ptxXY` or the LLVM default for the chip.
  int ptx = 0;

  /// Returns e.g. "sm_90 +ptx80".
  std::string describe() const {
    if (kind == Kind::NVVM)
      return chip + " with PTX " + std::to_string(ptx / 10) + "." +
             std::to_string(ptx % 10);
    return chip;
  }
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
  /// `global_prefetch` on gfx1250.
  PrefetchKind getAmdPrefetch() const {
    if (kind != Kind::ROCDL)
      return PrefetchKind::None;
    if (chip == "gfx1250")
      return PrefetchKind::GlobalPrefetch;
    if (StringRef(chip).starts_with("gfx12"))
      return PrefetchKind::SPrefetchData;
    return PrefetchKind::None;
  }
};

/// Reads the first target attribute of `module`.
TargetInfo getTargetInfo(gpu::GPUModuleOp module) {
  TargetInfo info;
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets || targets.empty())
    return info;
  if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(targets[0])) {
    info.kind = TargetInfo::Kind::NVVM;
    info.chip = nvvm.getChip().str();
    StringRef chip = nvvm.getChip();
    if (chip.consume_front("sm_"))
      (void)chip.take_while(llvm::isDigit).getAsInteger(10, info.sm);
    // LLVM's default PTX version for the chip when no +ptx feature is set.
    info.ptx = info.sm >= 100  ? 86
               : info.sm >= 90 ? 78
               : info.sm >= 89 ? 78
                               : 60;
    SmallVector<StringRef> features;
    nvvm.getFeatures().split(features, ',');
    for (StringRef feature : features)
      if (feature.consume_front("+ptx"))
        (void)feature.getAsInteger(10, info.ptx);
  } else if (auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(targets[0])) {
    info.kind = TargetInfo::Kind::ROCDL;
    info.chip = rocdl.getChip().str();
  } else if (isa<spirv::TargetEnvAttr>(targets[0])) {
    info.kind = TargetInfo::Kind::SPIRV;
    info.chip = "SPIR-V";
  }
  return info;
}

/// The mechanisms for one launch.
struct Plan {
  PrefetchKind prefetch = PrefetchKind::None;
  bool pdl = false;
  /// Whether a pdl kernel prefetches the start of its own weights before it
  /// waits (the prologue).
  bool prologue = true;
  /// Why, for the remark.
  std::string why;
};

/// The parsed `mode` option.
struct Mode {
  bool automatic = false;
  PrefetchKind prefetch = PrefetchKind::None;
  bool pdl = false;
};

/// The mechanisms `mode` asks for.
Mode getMode(PrefetchMode option) {
  Mode mode;
  switch (option) {
  case PrefetchMode::Auto:
    mode.automatic = true;
    break;
  case PrefetchMode::Off:
    break;
  case PrefetchMode::L2:
  case PrefetchMode::PdlL2:
    mode.prefetch = PrefetchKind::L2;
    break;
  case PrefetchMode::Bulk:
  case PrefetchMode::PdlBulk:
    mode.prefetch = PrefetchKind::Bulk;
    break;
  case PrefetchMode::Pdl:
    break;
  }
  mode.pdl = option == PrefetchMode::Pdl || option == PrefetchMode::PdlL2 ||
             option == PrefetchMode::PdlBulk;
  return mode;
}

/// Decides the mechanisms for a launch whose kernel lives in a module with
/// target `target`; see the pass description.
Plan decide(const Mode &mode, DeviceProfileAttr profile,
            const TargetInfo &target) {
  Plan plan;
  llvm::raw_string_ostream why(plan.why);
  if (!mode.automatic && mode.prefetch == PrefetchKind::None && !mode.pdl) {
    why << "mode=off";
    return plan;
  }
  if (target.kind == TargetInfo::Kind::None) {
    why << "the kernel's gpu.module has no target attribute";
    return plan;
  }
  if (target.kind == TargetInfo::Kind::SPIRV) {
    why << "SPIR-V target: no prefetch or dependent-launch instruction";
    return plan;
  }
  Mode wanted = mode;
  if (mode.automatic) {
    if (!profile) {
      why << "mode=auto without a #cachet.device profile";
      return plan;
    }
    StringRef kind = profile.getL2Prefetch();
    wanted.pdl = profile.getPdl();
    wanted.prefetch = kind == "bulk"   ? PrefetchKind::Bulk
                      : kind == "none" ? PrefetchKind::None
                                       : PrefetchKind::L2;
    why << "auto: profile " << profile.getName()
        << " has pdl = " << (profile.getPdl() ? "true" : "false")
        << ", l2_prefetch = " << kind << "; ";
    if (target.kind == TargetInfo::Kind::ROCDL) {
      // The AMD chip's own data prefetch stands for l2 and bulk.
      if (wanted.prefetch == PrefetchKind::Bulk)
        wanted.prefetch = PrefetchKind::L2;
      if (wanted.pdl)
        why << "no programmatic dependent launch on ROCDL; ";
      wanted.pdl = false;
    }
    if (target.kind == TargetInfo::Kind::NVVM &&
        wanted.prefetch == PrefetchKind::Bulk && !target.hasBulkPrefetch()) {
      why << target.describe() << " has no bulk prefetch, using l2; ";
      wanted.prefetch = PrefetchKind::L2;
    }
    if (wanted.pdl && !target.hasPdl()) {
      why << target.describe() << " has no griddepcontrol; ";
      wanted.pdl = false;
    }
    if (wanted.prefetch == PrefetchKind::None && !wanted.pdl) {
      why << "nothing to emit";
      return plan;
    }
  }
  if (target.kind == TargetInfo::Kind::ROCDL) {
    if (wanted.pdl) {
      why << "no programmatic dependent launch on ROCDL";
      return plan;
    }
    if (wanted.prefetch == PrefetchKind::Bulk) {
      why << "no bulk prefetch on ROCDL";
      return plan;
    }
    plan.prefetch = target.getAmdPrefetch();
    if (plan.prefetch == PrefetchKind::None)
      why << target.chip << " has no data prefetch instruction";
    else
      why << target.chip << ": " << getKindName(plan.prefetch);
    return plan;
  }
  if (wanted.prefetch == PrefetchKind::Bulk && !target.hasBulkPrefetch()) {
    why << "bulk prefetch needs sm_90 and PTX 8.0, the target is "
        << target.describe();
    return plan;
  }
  if (wanted.pdl && !target.hasPdl()) {
    why << "griddepcontrol needs sm_90 and PTX 7.8, the target is "
        << target.describe();
    return plan;
  }
  plan.prefetch = wanted.prefetch;
  plan.pdl = wanted.pdl;
  if (plan.prefetch != PrefetchKind::None && !target.hasL2Prefetch()) {
    why << target.describe() << " has no L2 prefetch";
    plan.prefetch = PrefetchKind::None;
    return plan;
  }
  why << target.describe() << ": "
      << (plan.pdl ? plan.prefetch == PrefetchKind::None ? "pdl" : "pdl + "
                   : "")
      << (plan.prefetch != PrefetchKind::None || !plan.pdl
              ? getKindName(plan.prefetch)
              : "");
  return plan;
}

/// Returns the bytes of a statically shaped memref type, or std::nullopt.
std::optional<int64_t> getStaticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  return (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8;
}

/// Emits the address of the element 0 of `memref` as an i64.
Value getAddress(OpBuilder &b, Location loc, Value memref) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// Emits `address + offset` (an i64 address; `offset` an index).
Value addOffset(OpBuilder &b, Location loc, Value address, Value offset) {
  Value off = arith::IndexCastOp::create(b, loc, b.getI64Type(), offset);
  return arith::AddIOp::create(b, loc, address, off);
}

/// Emits a global pointer for the i64 `address`.
Value getPointer(OpBuilder &b, Location loc, Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), address);
}

/// Emits an index constant.
Value getIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Emits `(a + b - 1) / b` for unsigned indices (arith.ceildivui would need
/// arith-expand before the target lowering).
Value ceilDiv(OpBuilder &b, Location loc, Value a, Value d) {
  Value dMinusOne = arith::SubIOp::create(b, loc, d, getIndex(b, loc, 1));
  Value sum = arith::AddIOp::create(b, loc, a, dMinusOne);
  return arith::DivUIOp::create(b, loc, sum, d);
}

/// The launch geometry a kernel is rewritten for: the block size the matcher
/// proved, and the grid size when the launch states it as a constant.
/// Constants avoid `gpu.block_dim` / `gpu.grid_dim`, which ROCDL lowers to
/// calls into the device library.
struct Geometry {
  int64_t blockSize = 0;
  std::optional<int64_t> gridSize;

  /// Returns the grid size in x as a value of the kernel.
  Value getGrid(OpBuilder &b, Location loc) const {
    if (gridSize)
      return getIndex(b, loc, *gridSize);
    return gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  }
};

/// Emits the prefetch of `bytes` (a multiple of the line, an index) from
/// `address` (i64), spread over the threads `first, first + stride, ...`
/// (`uniformFirst`/`uniformStride` for per-workgroup scalar instructions).
void emitPrefetch(OpBuilder &b, Location loc, PrefetchKind kind,
                  const TargetInfo &target, int64_t line, Value address,
                  Value bytes, Value first, Value stride, Value uniformFirst,
                  Value uniformStride) {
  bool chunked =
      kind == PrefetchKind::Bulk || kind == PrefetchKind::SPrefetchData;
  int64_t unit = chunked ? kChunkBytes : line;
  Value unitBytes = getIndex(b, loc, unit);
  Value count = ceilDiv(b, loc, bytes, unitBytes);
  bool uniform = kind == PrefetchKind::SPrefetchData;
  scf::ForOp::create(
      b, loc, uniform ? uniformFirst : first, count,
      uniform ? uniformStride : stride, ValueRange{},
      [&](OpBuilder &nb, Location l, Value iv, ValueRange) {
        Value offset = arith::MulIOp::create(nb, l, iv, unitBytes);
        Value at = addOffset(nb, l, address, offset);
        switch (kind) {
        case PrefetchKind::L2:
          if (target.hasL2PrefetchIntrinsic()) {
            NVVM::PrefetchOp::create(
                nb, l,
                NVVM::PrefetchCacheLevelAttr::get(nb.getContext(),
                                                  NVVM::PrefetchCacheLevel::L2),
                /*evictPriority=*/nullptr, getPointer(nb, l, at),
                /*predicate=*/Value());
          } else {
            LLVM::InlineAsmOp::create(
                nb, l, TypeRange{}, ValueRange{at},
                nb.getStringAttr("prefetch.global.L2 [$0];"),
                nb.getStringAttr("l"), nb.getUnitAttr(),
                /*is_align_stack=*/nullptr,
                LLVM::TailCallKindAttr::get(
                    nb.getContext(), LLVM::tailcallkind::TailCallKind::None),
                /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
          }
          break;
        case PrefetchKind::Bulk: {
          Value rest = arith::SubIOp::create(nb, l, bytes, offset);
          Value size = arith::MinUIOp::create(nb, l, rest, unitBytes);
          Value size32 =
              arith::IndexCastOp::create(nb, l, nb.getI32Type(), size);
          NVVM::CpAsyncBulkPrefetchOp::create(nb, l, getPointer(nb, l, at),
                                              size32,
                                              /*l2CacheHint=*/Value());
          break;
        }
        case PrefetchKind::SPrefetchData: {
          // Length in 128 B chunks minus one, at most 31.
          Value rest = arith::SubIOp::create(nb, l, bytes, offset);
          Value size = arith::MinUIOp::create(nb, l, rest, unitBytes);
          Value chunks = ceilDiv(nb, l, size, getIndex(nb, l, 128));
          Value length =
              arith::SubIOp::create(nb, l, chunks, getIndex(nb, l, 1));
          Value length32 =
              arith::IndexCastOp::create(nb, l, nb.getI32Type(), length);
          LLVM::CallIntrinsicOp::create(
              nb, l, nb.getStringAttr("llvm.amdgcn.s.prefetch.data"),
              ValueRange{getPointer(nb, l, at), length32});
          break;
        }
        case PrefetchKind::GlobalPrefetch: {
          // Not rocdl.global.prefetch: it only declares a read, so it is
          // erased as dead before it reaches LLVM.
          Value scope = LLVM::ConstantOp::create(nb, l, nb.getI32Type(),
                                                 nb.getI32IntegerAttr(0));
          LLVM::CallIntrinsicOp::create(
              nb, l, nb.getStringAttr("llvm.amdgcn.global.prefetch"),
              ValueRange{getPointer(nb, l, at), scope});
          break;
        }
        case PrefetchKind::None:
          break;
        }
        scf::YieldOp::create(nb, l);
      });
}

/// Emits the next-weight epilogue before every `gpu.return` of `kernel`:
/// the last `ctas` CTAs prefetch the first `bytes[i]` of `weights[i]`.
void emitEpilogue(gpu::GPUFuncOp kernel, const Geometry &geometry,
                  PrefetchKind kind, const TargetInfo &target, int64_t line,
                  int64_t ctas, ArrayRef<Value> weights,
                  ArrayRef<int64_t> bytes) {
  SmallVector<gpu::ReturnOp> returns;
  kernel.walk([&](gpu::ReturnOp op) { returns.push_back(op); });
  for (gpu::ReturnOp ret : returns) {
    OpBuilder b(ret);
    Location loc = ret.getLoc();
    Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value grid = geometry.getGrid(b, loc);
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value threads = getIndex(b, loc, geometry.blockSize);
    Value n = arith::MinUIOp::create(b, loc, grid, getIndex(b, loc, ctas));
    Value firstCta = arith::SubIOp::create(b, loc, grid, n);
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, bid, firstCta);
    scf::IfOp::create(b, loc, isLast, [&](OpBuilder &tb, Location l) {
      Value k = arith::SubIOp::create(tb, l, bid, firstCta);
      Value kThreads = arith::MulIOp::create(tb, l, k, threads);
      Value first = arith::AddIOp::create(tb, l, kThreads, tid);
      Value stride = arith::MulIOp::create(tb, l, n, threads);
      for (auto [weight, range] : llvm::zip_equal(weights, bytes))
        emitPrefetch(tb, l, kind, target, line, getAddress(tb, l, weight),
                     getIndex(tb, l, range), first, stride, k, n);
      scf::YieldOp::create(tb, l);
    });
  }
}

/// Returns true if `op` touches no memory but the buffers `weights` (kernel
/// arguments), and those only by loads.
bool readsOnlyWeights(Operation *op,
                      const llvm::SmallDenseSet<Value> &weights) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return weights.contains(load.getMemRef());
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return weights.contains(load.getBase());
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    if (!effects.hasNoEffect())
      return false;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return false;
  }
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (!readsOnlyWeights(&nested, weights))
        return false;
  return true;
}

/// Places waits (`emitWait`) in `block` from `it` on, so that every op that
/// may touch memory other than `weights` runs after one: before the first
/// such op; in both branches of an `scf.if` that holds one (and again before
/// the next such op after it); in the first iteration of an `scf.for` that
/// holds one, before the first such op of its body (and again after it: a
/// loop may run no iteration). Loads of `weights` before a wait are issued
/// before it.
void placeWaits(Block &block, Block::iterator it,
                const llvm::SmallDenseSet<Value> &weights,
                llvm::function_ref<void(OpBuilder &, Location)> emitWait) {
  for (; it != block.end(); ++it) {
    Operation &op = *it;
    if (readsOnlyWeights(&op, weights))
      continue;
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
        if (!region->empty())
          placeWaits(region->front(), region->front().begin(), weights,
                     emitWait);
      continue;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      Block &body = *forOp.getBody();
      auto first = llvm::find_if(
          body, [&](Operation &o) { return !readsOnlyWeights(&o, weights); });
      OpBuilder b(&body, first);
      Location loc = first->getLoc();
      Value isFirst =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                forOp.getInductionVar(), forOp.getLowerBound());
      scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &tb, Location l) {
        emitWait(tb, l);
        scf::YieldOp::create(tb, l);
      });
      continue;
    }
    OpBuilder b(&op);
    emitWait(b, op.getLoc());
    return;
  }
}

/// Returns why the kernel of `launch` may not load its weights `weights`
/// (host values) before its wait, or an empty string if it may. It may if no
/// kernel that can still run when it starts writes them: going back from it
/// in its block, a fence comes before the block's start and before any op
/// with regions or call; a fence is a launch without `cachet.pdl`, a
/// `cachet.pdl` launch whose kernel lets the next grid launch only at its end
/// (`triggerAtStart` false), a copy, a fill or a wait. The launches from the
/// fence on may run meanwhile: none may write a buffer that may alias the
/// weights. Values in `chainWeights` are written by no host op or kernel (the
/// matcher's read-only check); any other operand counts as written unless
/// the kernel only loads it.
std::string whyWaitFirst(gpu::LaunchFuncOp launch, ArrayRef<Value> weights,
                         bool triggerAtStart,
                         const llvm::SmallDenseSet<Value> &chainWeights,
                         AliasAnalysis &aliases,
                         SymbolTableCollection &symbolTables) {
  for (Operation *op = launch->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto prev = dyn_cast<gpu::LaunchFuncOp>(op)) {
      auto kernel = symbolTables.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          prev, prev.getKernel());
      for (auto [i, operand] : llvm::enumerate(prev.getKernelOperands())) {
        Type type = operand.getType();
        if (auto vector = dyn_cast<VectorType>(type))
          type = vector.getElementType();
        if (chainWeights.contains(operand) ||
            isa<IntegerType, IndexType, FloatType>(type) ||
            (kernel && isReadOnlyKernelArgument(kernel, i)))
          continue;
        if (!isa<BaseMemRefType>(type)) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "a launch before it passes a " << operand.getType()
             << ", which may point into its weights";
          return text;
        }
        for (Value weight : weights)
          if (!aliases.alias(operand, weight).isNo())
            return "the kernel of a launch before it may write a buffer that "
                   "may alias its weights";
      }
      // An async launch (on a stream of its own) orders nothing here.
      if (!prev.getAsyncToken() && prev.getAsyncDependencies().empty() &&
          (!prev->hasAttr(CachetDialect::getPdlAttrName()) || !triggerAtStart))
        return "";
      continue;
    }
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(op);
        async && isa<gpu::MemcpyOp, gpu::MemsetOp, gpu::WaitOp>(op) &&
        !async.getAsyncToken() && async.getAsyncDependencies().empty())
      return "";
    if (op->getNumRegions() > 0 || isa<CallOpInterface>(op))
      return "an op with regions or a call comes before it in its block, "
             "after the last fence";
  }
  return "a kernel launched before this block may still run: no fence "
         "before it here (a launch without pdl or that triggers at its end, a "
         "copy, a fill or a wait)";
}

/// Emits the PDL code of `kernel`: `launch_dependents` first with
/// `triggerAtStart` (the next grid may launch once every CTA of this one has
/// started), else before every return, after a wait; each CTA prefetches
/// its share of each of the kernel's own weights (`ownWeights`: argument
/// index and bytes, a multiple of `line`; 0 for none); then the wait for
/// the grid it depends on: right there, or with `waitAfterWeightLoads`
/// where placeWaits puts it (loads of the own weights may come first) and
/// again before every return.
void emitPdlPrologue(gpu::GPUFuncOp kernel, const Geometry &geometry,
                     ArrayRef<std::pair<unsigned, int64_t>> ownWeights,
                     PrefetchKind kind, const TargetInfo &target, int64_t line,
                     bool triggerAtStart, bool waitAfterWeightLoads) {
  Block &entry = kernel.getBody().front();
  Block::iterator original = entry.begin();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = kernel.getLoc();
  auto trigger = [](OpBuilder &builder, Location at) {
    NVVM::GriddepcontrolOp::create(
        builder, at,
        NVVM::GridDepActionKindAttr::get(
            builder.getContext(), NVVM::GridDepActionKind::launch_dependents));
  };
  if (triggerAtStart)
    trigger(b, loc);
  for (auto [weightArg, weightBytes] : ownWeights) {
    if (weightBytes <= 0 || kind == PrefetchKind::None)
      continue;
    Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value grid = geometry.getGrid(b, loc);
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value threads = getIndex(b, loc, geometry.blockSize);
    // CTA `bid` prefetches bytes [bid * share, (bid + 1) * share) of the
    // weight, `share` rounded up to whole lines.
    Value lines = getIndex(b, loc, weightBytes / line);
    Value lineBytes = getIndex(b, loc, line);
    Value shareLines = ceilDiv(b, loc, lines, grid);
    Value share = arith::MulIOp::create(b, loc, shareLines, lineBytes);
    Value begin = arith::MulIOp::create(b, loc, bid, share);
    Value total = getIndex(b, loc, weightBytes);
    Value clamped = arith::MinUIOp::create(b, loc, begin, total);
    Value end = arith::AddIOp::create(b, loc, clamped, share);
    Value size = arith::SubIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, end, total), clamped);
    Value base = getAddress(b, loc, kernel.getArgument(weightArg));
    Value clamped64 =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), clamped);
    Value address = arith::AddIOp::create(b, loc, base, clamped64);
    emitPrefetch(b, loc, kind, target, line, address, size, tid, threads,
                 getIndex(b, loc, 0), getIndex(b, loc, 1));
  }
  // The wait as inline asm that may read and write memory: no load moves
  // across it (the LLVM intrinsic is memory(none)).
  auto wait = [](OpBuilder &wb, Location at) {
    LLVM::InlineAsmOp::create(
        wb, at, TypeRange{}, ValueRange{},
        wb.getStringAttr("griddepcontrol.wait;"), wb.getStringAttr("~{memory}"),
        wb.getUnitAttr(), /*is_align_stack=*/nullptr,
        LLVM::TailCallKindAttr::get(wb.getContext(),
                                    LLVM::tailcallkind::TailCallKind::None),
        /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
  };
  SmallVector<gpu::ReturnOp> returns;
  kernel.walk([&](gpu::ReturnOp op) { returns.push_back(op); });
  if (waitAfterWeightLoads && kernel.getBody().hasOneBlock()) {
    llvm::SmallDenseSet<Value> weights;
    for (auto [weightArg, weightBytes] : ownWeights)
      weights.insert(kernel.getArgument(weightArg));
    placeWaits(entry, original, weights, wait);
    // Every thread waits before it returns (at no cost once it has waited),
    // so the grid still completes only after the one before it, and a
    // trigger at the end comes after a wait.
    for (gpu::ReturnOp ret : returns) {
      OpBuilder rb(ret);
      wait(rb, ret.getLoc());
    }
  } else {
    wait(b, loc);
  }
  if (!triggerAtStart) {
    for (gpu::ReturnOp ret : returns) {
      OpBuilder rb(ret);
      trigger(rb, ret.getLoc());
    }
  }
}

struct PrefetchMatvecChainsPass final
    : public cachet::impl::PrefetchMatvecChainsBase<PrefetchMatvecChainsPass> {
  using Base::Base;

  void runOnOperation() override;
};

/// Returns the kernel of `launch`, cloned under a new name first when
/// another launch in `module` uses it too.
gpu::GPUFuncOp getOwnKernel(ModuleOp host, gpu::LaunchFuncOp launch,
                            gpu::GPUFuncOp kernel,
                            SymbolTableCollection &symbolTables) {
  unsigned users = 0;
  host.walk([&](gpu::LaunchFuncOp other) {
    if (other.getKernel() == launch.getKernel())
      ++users;
  });
  if (users <= 1)
    return kernel;
  auto module = kernel->getParentOfType<gpu::GPUModuleOp>();
  auto clone = cast<gpu::GPUFuncOp>(kernel->clone());
  SymbolTable &table = symbolTables.getSymbolTable(module);
  table.insert(clone, std::next(Block::iterator(kernel)));
  launch.setKernelAttr(SymbolRefAttr::get(
      module.getNameAttr(), {FlatSymbolRefAttr::get(clone.getNameAttr())}));
  return clone;
}

void PrefetchMatvecChainsPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<Mode> mode = getMode(this->mode);
  auto remarkOn = [](Operation *op) {
    InFlightDiagnostic diag = op->emitRemark("cachet-prefetch-matvec-chains: ");
    return diag;
  };
  DeviceProfileAttr profile = lookupDeviceProfile(module);
  SymbolTableCollection symbolTables;

  // Budget parameters, from the options or the profile.
  double frac = fraction < 0 ? kDefaultFraction : double(fraction);
  int64_t cap = maxBytes;
  if (cap < 0 && profile)
    cap = static_cast<int64_t>(profile.getL2Bytes() / kL2CapDivisor);
  int64_t numCtas = ctas;
  if (numCtas < 0 && profile)
    numCtas = static_cast<int64_t>(profile.getComputeUnits());
  int64_t line = profile && profile.getCacheLine() > 0
                     ? static_cast<int64_t>(profile.getCacheLine())
                     : kDefaultCacheLine;
  std::string budgetProblem;
  if (!(frac > 0 && frac <= 1))
    budgetProblem = "fraction " + std::to_string(frac) + " is not in (0, 1]";
  else if (cap < 0)
    budgetProblem = "no max-bytes and no #cachet.device profile";
  else if (numCtas < 1)
    budgetProblem =
        numCtas < 0 ? "no ctas and no #cachet.device profile" : "ctas is 0";

  bool triggerAtStart = pdlTrigger == PdlTrigger::Start;
  bool sinkWait = pdlWait == PdlWait::AfterWeightLoads;
  AliasAnalysis aliases(module);
  for (auto func : module.getOps<FunctionOpInterface>()) {
    MatvecChains found = findMatvecChains(func, symbolTables);
    // The weights of every chain launch: no host op or kernel writes them.
    llvm::SmallDenseSet<Value> chainWeights;
    for (const MatvecChain &chain : found.chains)
      for (const ChainStep &step : chain.steps)
        for (Value weight : step.getWeights())
          chainWeights.insert(weight);
    for (const RejectedLaunch &rejected : found.rejected)
      remarkOn(rejected.launch) << "not part of a chain: " << rejected.reason;
    for (const MatvecChain &chain : found.chains) {
      for (auto [index, step] : llvm::enumerate(chain.steps)) {
        const std::string &nextReason = chain.nextWeightReasons[index];
        for (auto [position, member] : llvm::enumerate(step.launches)) {
          gpu::LaunchFuncOp launch = member.launch;
          auto kernelModule =
              member.kernel->getParentOfType<gpu::GPUModuleOp>();
          TargetInfo target = getTargetInfo(kernelModule);
          Plan plan = decide(*mode, profile, target);
          // cachet's subgroup mat-vec kernels keep DRAM busy themselves: on
          // the H200 no prefetch paid for them, and PDL only with the next
          // grid launched first and their weight loads before the wait
          // (docs/BENCHMARKS.md, runs 41-44); auto gives them that PDL and
          // nothing else; an explicit mode still applies.
          if (mode->automatic &&
              (plan.pdl || plan.prefetch != PrefetchKind::None) &&
              member.weights.front().load &&
              member.weights.front().load->hasAttr(
                  CachetDialect::getStreamingWeightAttrName())) {
            bool pdl = plan.pdl;
            plan = Plan();
            plan.pdl = pdl;
            plan.prologue = false;
            plan.why = "auto: cachet's subgroup mat-vec kernel streams at "
                       "full occupancy; on the H200 no prefetch paid for it "
                       "(bulk 0.95x, l2 0.99x, pdl with its prologue "
                       "prefetch 0.94x of pdl without it; "
                       "docs/BENCHMARKS.md), ";
            plan.why += pdl ? "pdl with the trigger first and the weight "
                              "loads before the wait did (1.06x of none, "
                              "run 44), so pdl without prefetches"
                            : "so none (an explicit mode forces one)";
          }
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "step " << index + 1 << " of " << chain.steps.size();
          if (step.isGatePair())
            os << (position == 0 ? " (gate of a gate/up pair)"
                                 : " (up of a gate/up pair)");
          os << (member.weights.size() > 1 ? ", weights " : ", weight ");
          llvm::interleave(
              member.weights, os,
              [&](const StreamingWeight &w) { os << w.type; }, " and ");
          os << "; " << plan.why;

          // Next-weight prefetch, by the launch that ends the step.
          bool isLastOfStep = position + 1 == step.launches.size();
          SmallVector<Value> nextWeights;
          SmallVector<int64_t> ranges;
          if (plan.prefetch == PrefetchKind::None) {
            // The reason is in `plan.why`, or nothing was asked for.
          } else if (!isLastOfStep) {
            os << "; no prefetch: the pair's weights were prefetched by the "
                  "step before it";
          } else if (!nextReason.empty()) {
            os << "; no prefetch: " << nextReason;
          } else if (!budgetProblem.empty()) {
            os << "; no prefetch: " << budgetProblem;
          } else {
            SmallVector<Value, 2> next = chain.steps[index + 1].getWeights();
            SmallVector<MemRefType> types = llvm::to_vector(llvm::map_range(
                next, [](Value v) { return cast<MemRefType>(v.getType()); }));
            std::string reason;
            std::optional<SmallVector<int64_t, 2>> bytes =
                getPrefetchBytes(types, frac, cap, line, reason);
            if (!bytes) {
              os << "; no prefetch: " << reason;
            } else {
              for (auto [weight, range] : llvm::zip_equal(next, *bytes)) {
                if (range <= 0)
                  continue;
                nextWeights.push_back(weight);
                ranges.push_back(range);
              }
              if (nextWeights.empty())
                os << "; no prefetch: the budget is under one cache line";
            }
          }
          if (nextWeights.empty() && !plan.pdl) {
            remarkOn(launch) << text << "; not rewritten";
            continue;
          }

          // Next weights are new kernel arguments, which a kernel with
          // attributions (block arguments after its arguments) does not
          // get; PDL adds none.
          gpu::GPUFuncOp original = member.kernel;
          if (!nextWeights.empty() &&
              original.getNumWorkgroupAttributions() +
                      original.getNumPrivateAttributions() >
                  0) {
            if (!plan.pdl) {
              remarkOn(launch) << text
                               << "; not rewritten: the kernel has workgroup "
                                  "or private attributions";
              continue;
            }
            os << "; no next-weight prefetch: the kernel has workgroup or "
                  "private attributions";
            nextWeights.clear();
            ranges.clear();
          }
          gpu::GPUFuncOp kernel =
              getOwnKernel(module, launch, member.kernel, symbolTables);
          Geometry geometry{member.getBlockSize(),
                            getConstantIntValue(launch.getGridSizeX())};
          if (!nextWeights.empty()) {
            unsigned numArgs = kernel.getNumArguments();
            SmallVector<unsigned> positions(nextWeights.size(), numArgs);
            SmallVector<Type> types = llvm::to_vector(llvm::map_range(
                nextWeights, [](Value v) { return v.getType(); }));
            SmallVector<DictionaryAttr> attrs(nextWeights.size());
            SmallVector<Location> locs(nextWeights.size(), launch.getLoc());
            if (failed(kernel.insertArguments(positions, types, attrs, locs))) {
              launch.emitError("cachet-prefetch-matvec-chains: cannot add "
                               "arguments to @")
                  << kernel.getName();
              return signalPassFailure();
            }
            launch.getKernelOperandsMutable().append(nextWeights);
            SmallVector<Value> kernelWeights;
            for (size_t i = 0; i < nextWeights.size(); ++i)
              kernelWeights.push_back(kernel.getArgument(numArgs + i));
            emitEpilogue(kernel, geometry, plan.prefetch, target, line, numCtas,
                         kernelWeights, ranges);
            os << "; the last " << numCtas << " CTAs prefetch ("
               << getKindName(plan.prefetch) << ") ";
            llvm::interleave(
                llvm::zip_equal(nextWeights, ranges), os,
                [&](auto pair) {
                  os << std::get<1>(pair) << " B of "
                     << std::get<0>(pair).getType();
                },
                " and ");
            os << " (fraction " << llvm::format("%g", frac) << ", max-bytes "
               << cap << ")";
          }
          if (plan.pdl) {
            PrefetchKind own = target.hasBulkPrefetch() ? PrefetchKind::Bulk
                                                        : PrefetchKind::L2;
            // At most the L2 budget of the weight: a prologue that asks
            // for more than the L2 holds evicts what it fetched before the
            // kernel reads it (measured on the H200: a 117 MB weight
            // prefetched whole made the chain 1.5x slower).
            // A kernel of several mat-vecs shares the budget among its
            // weights in proportion to their sizes.
            int64_t total = 0;
            for (const StreamingWeight &w : member.weights)
              total += getStaticBytes(w.type).value_or(0);
            SmallVector<std::pair<unsigned, int64_t>> ownWeights;
            for (const StreamingWeight &w : member.weights) {
              int64_t bytes = getStaticBytes(w.type).value_or(0);
              if (cap >= 0)
                bytes =
                    std::min<int64_t>(bytes, static_cast<double>(cap) * bytes /
                                                 std::max<int64_t>(total, 1));
              ownWeights.push_back(
                  {w.argIndex, plan.prologue ? bytes / line * line : 0});
            }
            std::string waitFirst =
                sinkWait
                    ? whyWaitFirst(launch, member.getWeights(), triggerAtStart,
                                   chainWeights, aliases, symbolTables)
                    : "";
            bool early = sinkWait && waitFirst.empty();
            emitPdlPrologue(kernel, geometry, ownWeights, own, target, line,
                            triggerAtStart, early);
            launch->setAttr(CachetDialect::getPdlAttrName(),
                            UnitAttr::get(&getContext()));
            os << "; pdl: ";
            if (plan.prologue) {
              os << "the first ";
              llvm::interleave(
                  ownWeights, os, [&](auto pair) { os << pair.second; },
                  " and ");
              os << " B of the own weight" << (ownWeights.size() > 1 ? "s" : "")
                 << " prefetched (max-bytes), ";
            }
            if (early)
              os << "wait after the first loads of the weights (before the "
                    "first access to other memory), ";
            else if (sinkWait)
              os << "wait before the first read (" << waitFirst << "), ";
            else
              os << "wait before the first read, ";
            os << (triggerAtStart ? "launch_dependents first"
                                  : "launch_dependents before returning");
          }
          remarkOn(launch) << text;
        }
      }
    }
  }
}

} // namespace
