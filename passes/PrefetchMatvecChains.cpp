//===- PrefetchMatvecChains.cpp - prefetch / PDL for mat-vec chains ------===//
//
// Annotates chains of streaming mat-vec launches: the last CTAs of each step
// prefetch the next step's weights into L2, and/or the launches use
// programmatic dependent launch. The matcher is cachet/Analysis/MatvecChain.h;
// this file decides the mechanism per target and profile, emits the kernel
// code and the launch arguments, and reports every decision.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/PrefetchPlan.h"
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

/// Bytes per `cp.async.bulk.prefetch.L2` and per `s_prefetch_data` (32
/// chunks of 128 B, its largest length).
constexpr int64_t kChunkBytes = 4096;

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

/// The number of launches of each kernel of a module.
using KernelUsers = llvm::DenseMap<SymbolRefAttr, unsigned>;

KernelUsers countKernelUsers(ModuleOp host) {
  KernelUsers users;
  host.walk([&](gpu::LaunchFuncOp launch) { ++users[launch.getKernel()]; });
  return users;
}

/// Returns the kernel of `launch`, cloned under a new name first when
/// another launch uses it too (`users` counts them, and is kept up to
/// date).
gpu::GPUFuncOp getOwnKernel(gpu::LaunchFuncOp launch, gpu::GPUFuncOp kernel,
                            KernelUsers &users,
                            SymbolTableCollection &symbolTables) {
  unsigned &count = users[launch.getKernel()];
  if (count <= 1)
    return kernel;
  --count;
  auto module = kernel->getParentOfType<gpu::GPUModuleOp>();
  auto clone = cast<gpu::GPUFuncOp>(kernel->clone());
  SymbolTable &table = symbolTables.getSymbolTable(module);
  table.insert(clone, std::next(Block::iterator(kernel)));
  launch.setKernelAttr(SymbolRefAttr::get(
      module.getNameAttr(), {FlatSymbolRefAttr::get(clone.getNameAttr())}));
  users[launch.getKernel()] = 1;
  return clone;
}

/// Returns why `plan` cannot be carried out on launch `position` of step
/// `index` of `chain`, or "".
std::string whyNotPlan(PrefetchPlanAttr plan, const MatvecChain &chain,
                       size_t index, size_t position,
                       const StreamingLaunch &member,
                       const TargetInfo &target) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const ChainStep &step = chain.steps[index];
  if (plan.getNext() != PrefetchKind::None) {
    if (std::string why = target.whyNot(plan.getNext()); !why.empty())
      return why;
    if (position + 1 != step.launches.size())
      return "only the last launch of a step prefetches the next weights";
    if (!chain.nextWeightReasons[index].empty())
      return "no next weights: " + chain.nextWeightReasons[index];
    SmallVector<Value, 2> next = chain.steps[index + 1].getWeights();
    if (plan.getNextBytes().size() != next.size()) {
      os << "'next_bytes' has " << plan.getNextBytes().size()
         << " entries, the next step has " << next.size() << " weights";
      return text;
    }
    for (auto [weight, bytes] : llvm::zip_equal(next, plan.getNextBytes())) {
      std::optional<int64_t> size =
          getStaticBytes(cast<MemRefType>(weight.getType()));
      if (!size || bytes > *size) {
        os << "'next_bytes' asks for " << bytes << " B of " << weight.getType();
        return text;
      }
    }
    gpu::GPUFuncOp kernel = member.kernel;
    if (kernel.getNumWorkgroupAttributions() +
            kernel.getNumPrivateAttributions() >
        0)
      return "the kernel has workgroup or private attributions, so it takes "
             "no next weights";
  }
  if (!plan.getPdl())
    return "";
  if (!target.hasPdl())
    return "griddepcontrol needs sm_90 and PTX 7.8, the target is " +
           target.describe();
  if (plan.getOwn() != PrefetchKind::None) {
    if (plan.getOwn() != PrefetchKind::L2 &&
        plan.getOwn() != PrefetchKind::Bulk)
      return "the prologue prefetches with l2 or bulk";
    if (std::string why = target.whyNot(plan.getOwn()); !why.empty())
      return why;
    if (plan.getOwnBytes().size() != member.weights.size()) {
      os << "'own_bytes' has " << plan.getOwnBytes().size()
         << " entries, the kernel streams " << member.weights.size()
         << " weights";
      return text;
    }
  }
  return "";
}

/// Carries out `plan` (checked by whyNotPlan) on `member`, a launch of step
/// `index` of `chain`.
void applyPlan(PrefetchPlanAttr plan, const MatvecChain &chain, size_t index,
               const StreamingLaunch &member, const TargetInfo &target,
               KernelUsers &users, SymbolTableCollection &symbolTables) {
  gpu::LaunchFuncOp launch = member.launch;
  gpu::GPUFuncOp kernel =
      getOwnKernel(launch, member.kernel, users, symbolTables);
  Geometry geometry{member.getBlockSize(),
                    getConstantIntValue(launch.getGridSizeX())};
  SmallVector<Value> nextWeights;
  SmallVector<int64_t> ranges;
  if (plan.getNext() != PrefetchKind::None)
    for (auto [weight, range] : llvm::zip_equal(
             chain.steps[index + 1].getWeights(), plan.getNextBytes()))
      if (range > 0) {
        nextWeights.push_back(weight);
        ranges.push_back(range);
      }
  if (!nextWeights.empty()) {
    unsigned numArgs = kernel.getNumArguments();
    SmallVector<unsigned> positions(nextWeights.size(), numArgs);
    SmallVector<Type> types = llvm::to_vector(
        llvm::map_range(nextWeights, [](Value v) { return v.getType(); }));
    SmallVector<DictionaryAttr> attrs(nextWeights.size());
    SmallVector<Location> locs(nextWeights.size(), launch.getLoc());
    (void)kernel.insertArguments(positions, types, attrs, locs);
    launch.getKernelOperandsMutable().append(nextWeights);
    SmallVector<Value> kernelWeights;
    for (size_t i = 0; i < nextWeights.size(); ++i)
      kernelWeights.push_back(kernel.getArgument(numArgs + i));
    emitEpilogue(kernel, geometry, plan.getNext(), target, plan.getLine(),
                 plan.getCtas(), kernelWeights, ranges);
  }
  if (!plan.getPdl())
    return;
  SmallVector<std::pair<unsigned, int64_t>> ownWeights;
  for (auto [i, w] : llvm::enumerate(member.weights))
    ownWeights.push_back({w.argIndex, plan.getOwn() == PrefetchKind::None
                                          ? 0
                                          : plan.getOwnBytes()[i]});
  emitPdlPrologue(kernel, geometry, ownWeights, plan.getOwn(), target,
                  plan.getLine(), plan.getTrigger() == PdlTrigger::Start,
                  plan.getWait() == PdlWait::AfterWeightLoads);
  launch->setAttr(CachetDialect::getPdlAttrName(),
                  UnitAttr::get(launch->getContext()));
}

void PrefetchMatvecChainsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTableCollection symbolTables;
  AliasAnalysis aliases(module);
  KernelUsers users = countKernelUsers(module);
  StringRef name = CachetDialect::getPrefetchPlanAttrName();
  auto fail = [&](gpu::LaunchFuncOp launch, const Twine &why) {
    launch.emitError("cachet-prefetch-matvec-chains: cannot carry out ")
        << launch->getAttr(name) << ": " << why;
    signalPassFailure();
  };
  for (auto func : module.getOps<FunctionOpInterface>()) {
    MatvecChains found = findMatvecChains(func, symbolTables);
    llvm::SmallDenseSet<Value> chainWeights = found.getChainWeights();
    for (const RejectedLaunch &rejected : found.rejected)
      if (PrefetchPlanAttr plan = getPrefetchPlan(rejected.launch);
          plan && !plan.isEmpty())
        fail(rejected.launch, "not part of a chain: " + rejected.reason);
    for (const MatvecChain &chain : found.chains) {
      for (auto [index, step] : llvm::enumerate(chain.steps)) {
        for (auto [position, member] : llvm::enumerate(step.launches)) {
          PrefetchPlanAttr plan = getPrefetchPlan(member.launch);
          if (!plan || plan.isEmpty())
            continue;
          TargetInfo target =
              getTargetInfo(member.kernel->getParentOfType<gpu::GPUModuleOp>());
          std::string why =
              whyNotPlan(plan, chain, index, position, member, target);
          if (why.empty() && plan.getPdl() &&
              plan.getWait() == PdlWait::AfterWeightLoads) {
            why = whyWaitFirst(member.launch, member.getWeights(), chainWeights,
                               aliases, symbolTables);
            if (!why.empty())
              why = "'wait = after_weight_loads' is unsafe: " + why;
          }
          if (!why.empty()) {
            fail(member.launch, why);
            continue;
          }
          applyPlan(plan, chain, index, member, target, users, symbolTables);
        }
      }
    }
  }
}

} // namespace
