//===- PrefetchPlan.cpp - prefetch and PDL plans of chain launches --------===//
//
// The decisions of cachet-prefetch-matvec-chains, taken by
// cachet-select-kernel-configs: per launch of a mat-vec chain, a
// #cachet.prefetch_plan from the `prefetch` mode, the device profile and what
// the target supports, with a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/PrefetchPlan.h"
#include "cachet/Analysis/Buffers.h"
#include "cachet/Device/DeviceProfile.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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

/// The mechanisms decided for one launch before the budget.
struct Mechanisms {
  PrefetchKind prefetch = PrefetchKind::None;
  bool pdl = false;
  /// Whether a pdl kernel prefetches the start of its own weights before it
  /// waits (the prologue).
  bool prologue = true;
  /// Why, for the remark.
  std::string why;
};

/// The mechanisms `mode` asks for, `automatic` for auto.
struct Mode {
  bool automatic = false;
  PrefetchKind prefetch = PrefetchKind::None;
  bool pdl = false;
};

/// Returns the mechanisms `option` asks for.
Mode getMode(PrefetchMode option) {
  Mode mode;
  switch (option) {
  case PrefetchMode::Auto:
    mode.automatic = true;
    break;
  case PrefetchMode::Off:
  case PrefetchMode::Pdl:
    break;
  case PrefetchMode::L2:
  case PrefetchMode::PdlL2:
    mode.prefetch = PrefetchKind::L2;
    break;
  case PrefetchMode::Bulk:
  case PrefetchMode::PdlBulk:
    mode.prefetch = PrefetchKind::Bulk;
    break;
  }
  mode.pdl = option == PrefetchMode::Pdl || option == PrefetchMode::PdlL2 ||
             option == PrefetchMode::PdlBulk;
  return mode;
}

/// Resolves `auto` from the profile, each mechanism limited to what
/// `target` supports; returns false (with `why`) when nothing is left.
bool resolveAuto(Mode &wanted, DeviceProfileAttr profile,
                 const TargetInfo &target, llvm::raw_ostream &why) {
  if (!profile) {
    why << "mode=auto without a #cachet.device profile";
    return false;
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
    return false;
  }
  return true;
}

/// Decides the mechanisms for a launch whose kernel lives in a module with
/// target `target`; see cachet-prefetch-matvec-chains.
Mechanisms decide(const Mode &mode, DeviceProfileAttr profile,
                  const TargetInfo &target) {
  Mechanisms plan;
  llvm::raw_string_ostream why(plan.why);
  if (!mode.automatic && mode.prefetch == PrefetchKind::None && !mode.pdl) {
    why << "mode=off";
    return plan;
  }
  if (target.kind == TargetInfo::Kind::SPIRV) {
    why << "SPIR-V target: no prefetch or dependent-launch instruction";
    return plan;
  }
  Mode wanted = mode;
  if (mode.automatic && !resolveAuto(wanted, profile, target, why))
    return plan;
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
      why << target.chip << ": " << getPrefetchKindName(plan.prefetch);
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
              ? getPrefetchKindName(plan.prefetch)
              : "");
  return plan;
}

/// The budget of every plan of a module: the options, or the profile's
/// figures where an option is negative.
struct Budget {
  double fraction = kDefaultFraction;
  int64_t cap = -1, ctas = -1, line = kDefaultCacheLine;
  /// Why no next weight can be prefetched, or "".
  std::string problem;

  Budget(const PrefetchPlanOptions &options, DeviceProfileAttr profile) {
    if (options.fraction >= 0)
      fraction = options.fraction;
    cap = options.maxBytes;
    if (cap < 0 && profile)
      cap = static_cast<int64_t>(profile.getL2Bytes() / kL2CapDivisor);
    ctas = options.ctas;
    if (ctas < 0 && profile)
      ctas = static_cast<int64_t>(profile.getComputeUnits());
    if (profile && profile.getCacheLine() > 0)
      line = static_cast<int64_t>(profile.getCacheLine());
    if (cap < 0)
      problem = "no max-bytes and no #cachet.device profile";
    else if (ctas < 1)
      problem = "no ctas and no #cachet.device profile";
  }
};

/// Returns the plan that asks for nothing.
PrefetchPlanAttr getEmptyPlan(MLIRContext *context) {
  return PrefetchPlanAttr::get(context, PrefetchKind::None, {}, 0,
                               kDefaultCacheLine, false, PrefetchKind::None, {},
                               PdlTrigger::Start, PdlWait::Start);
}

/// Plans one chain launch: `member` is launch `position` of step `index`
/// of `chain`.
class LaunchPlanner {
public:
  LaunchPlanner(const Mode &mode, const PrefetchPlanOptions &options,
                const Budget &budget, DeviceProfileAttr profile,
                const llvm::SmallDenseSet<Value> &chainWeights,
                AliasAnalysis &aliases, SymbolTableCollection &symbolTables)
      : mode(mode), options(options), budget(budget), profile(profile),
        chainWeights(chainWeights), aliases(aliases),
        symbolTables(symbolTables) {}

  /// Returns the plan of `member` and appends the remark to `os`.
  PrefetchPlanAttr plan(const MatvecChain &chain, size_t index, size_t position,
                        const StreamingLaunch &member, llvm::raw_ostream &os);

private:
  Mechanisms decideFor(const StreamingLaunch &member, const TargetInfo &target,
                       size_t steps) const;
  SmallVector<int64_t> planNext(const MatvecChain &chain, size_t index,
                                size_t position, const Mechanisms &m,
                                llvm::raw_ostream &os) const;

  const Mode &mode;
  const PrefetchPlanOptions &options;
  const Budget &budget;
  DeviceProfileAttr profile;
  const llvm::SmallDenseSet<Value> &chainWeights;
  AliasAnalysis &aliases;
  SymbolTableCollection &symbolTables;
};

Mechanisms LaunchPlanner::decideFor(const StreamingLaunch &member,
                                    const TargetInfo &target,
                                    size_t steps) const {
  Mechanisms m = decide(mode, profile, target);
  // cachet's subgroup mat-vec kernels keep DRAM busy themselves: on the H200
  // no prefetch paid for them, and PDL only with the next grid launched
  // first and their weight loads before the wait (docs/BENCHMARKS.md, runs
  // 41-44); auto gives them that PDL and nothing else; an explicit mode
  // still applies.
  if (!mode.automatic || (!m.pdl && m.prefetch == PrefetchKind::None) ||
      !member.weights.front().load ||
      !member.weights.front().load->hasAttr(
          CachetDialect::getStreamingWeightAttrName()))
    return m;
  bool pdl = m.pdl;
  m = Mechanisms();
  // Packed blocks decoded in the kernel (its weights are bytes): on the
  // H200 pdl made a lone q8_0 mat-vec slower (0.88-0.96x of none, run 79)
  // and a 2-layer chain no slower (q8_0 1.02x, q4_0 1.05x, run 80).
  if (llvm::any_of(member.weights,
                   [](const StreamingWeight &w) {
                     return w.type.getElementType().isInteger(8);
                   }) &&
      steps < 2) {
    m.why = "auto: a lone launch of cachet's subgroup mat-vec kernel over "
            "packed blocks; on the H200 pdl made one slower (0.88-0.96x of "
            "none on a lone q8_0 mat-vec, docs/BENCHMARKS.md run 79; a chain "
            "of them takes it), so none (an explicit mode forces one)";
    return m;
  }
  m.pdl = pdl;
  m.prologue = false;
  m.why = "auto: cachet's subgroup mat-vec kernel streams at full occupancy; "
          "on the H200 no prefetch paid for it (bulk 0.95x, l2 0.99x, pdl "
          "with its prologue prefetch 0.94x of pdl without it; "
          "docs/BENCHMARKS.md), ";
  m.why += pdl ? "pdl with the trigger first and the weight loads before the "
                 "wait did (1.06x of none, run 44), so pdl without prefetches"
               : "so none (an explicit mode forces one)";
  return m;
}

/// The bytes of each next weight the launch prefetches (empty: none).
SmallVector<int64_t> LaunchPlanner::planNext(const MatvecChain &chain,
                                             size_t index, size_t position,
                                             const Mechanisms &m,
                                             llvm::raw_ostream &os) const {
  const ChainStep &step = chain.steps[index];
  const std::string &nextReason = chain.nextWeightReasons[index];
  if (m.prefetch == PrefetchKind::None)
    return {}; // The reason is in `m.why`, or nothing was asked for.
  if (position + 1 != step.launches.size()) {
    os << "; no prefetch: the pair's weights were prefetched by the step "
          "before it";
    return {};
  }
  if (!nextReason.empty()) {
    os << "; no prefetch: " << nextReason;
    return {};
  }
  if (!budget.problem.empty()) {
    os << "; no prefetch: " << budget.problem;
    return {};
  }
  SmallVector<Value, 2> next = chain.steps[index + 1].getWeights();
  SmallVector<MemRefType> types = llvm::to_vector(llvm::map_range(
      next, [](Value v) { return cast<MemRefType>(v.getType()); }));
  std::string reason;
  std::optional<SmallVector<int64_t, 2>> bytes =
      getPrefetchBytes(types, budget.fraction, budget.cap, budget.line, reason);
  if (!bytes) {
    os << "; no prefetch: " << reason;
    return {};
  }
  if (llvm::all_of(*bytes, [](int64_t b) { return b <= 0; })) {
    os << "; no prefetch: the budget is under one cache line";
    return {};
  }
  return SmallVector<int64_t>(bytes->begin(), bytes->end());
}

PrefetchPlanAttr LaunchPlanner::plan(const MatvecChain &chain, size_t index,
                                     size_t position,
                                     const StreamingLaunch &member,
                                     llvm::raw_ostream &os) {
  MLIRContext *context = member.launch->getContext();
  const ChainStep &step = chain.steps[index];
  TargetInfo target =
      getTargetInfo(member.kernel->getParentOfType<gpu::GPUModuleOp>());
  Mechanisms m = decideFor(member, target, chain.steps.size());
  os << "step " << index + 1 << " of " << chain.steps.size();
  if (step.isGatePair())
    os << (position == 0 ? " (gate of a gate/up pair)"
                         : " (up of a gate/up pair)");
  os << (member.weights.size() > 1 ? ", weights " : ", weight ");
  llvm::interleave(
      member.weights, os, [&](const StreamingWeight &w) { os << w.type; },
      " and ");
  os << "; " << m.why;

  SmallVector<int64_t> next = planNext(chain, index, position, m, os);
  if (next.empty() && !m.pdl) {
    os << "; not rewritten";
    return getEmptyPlan(context);
  }
  // Next weights are new kernel arguments, which a kernel with attributions
  // (block arguments after its arguments) does not get; PDL adds none.
  gpu::GPUFuncOp kernel = member.kernel;
  if (!next.empty() && kernel.getNumWorkgroupAttributions() +
                               kernel.getNumPrivateAttributions() >
                           0) {
    if (!m.pdl) {
      os << "; not rewritten: the kernel has workgroup or private "
            "attributions";
      return getEmptyPlan(context);
    }
    os << "; no next-weight prefetch: the kernel has workgroup or private "
          "attributions";
    next.clear();
  }
  if (!next.empty()) {
    SmallVector<Value, 2> nextWeights = chain.steps[index + 1].getWeights();
    os << "; the last " << budget.ctas << " CTAs prefetch ("
       << getPrefetchKindName(m.prefetch) << ") ";
    bool first = true;
    for (auto [weight, range] : llvm::zip_equal(nextWeights, next)) {
      if (range <= 0)
        continue;
      os << (first ? "" : " and ") << range << " B of " << weight.getType();
      first = false;
    }
    os << " (fraction " << llvm::format("%g", budget.fraction) << ", max-bytes "
       << budget.cap << ")";
  }
  PrefetchKind own = PrefetchKind::None;
  SmallVector<int64_t> ownBytes;
  PdlWait wait = PdlWait::Start;
  if (m.pdl) {
    // At most the L2 budget of the weight: a prologue that asks for more
    // than the L2 holds evicts what it fetched before the kernel reads it
    // (measured on the H200: a 117 MB weight prefetched whole made the
    // chain 1.5x slower). A kernel of several mat-vecs shares the budget
    // among its weights in proportion to their sizes.
    if (m.prologue) {
      own = target.hasBulkPrefetch() ? PrefetchKind::Bulk : PrefetchKind::L2;
      int64_t total = 0;
      for (const StreamingWeight &w : member.weights)
        total += getStaticBytes(w.type).value_or(0);
      for (const StreamingWeight &w : member.weights) {
        int64_t bytes = getStaticBytes(w.type).value_or(0);
        if (budget.cap >= 0)
          bytes =
              std::min<int64_t>(bytes, static_cast<double>(budget.cap) * bytes /
                                           std::max<int64_t>(total, 1));
        ownBytes.push_back(bytes / budget.line * budget.line);
      }
      if (llvm::all_of(ownBytes, [](int64_t b) { return b == 0; })) {
        own = PrefetchKind::None;
        ownBytes.assign(member.weights.size(), 0);
      }
    }
    std::string waitFirst =
        options.wait == PdlWait::AfterWeightLoads
            ? whyWaitFirst(member.launch, member.getWeights(), chainWeights,
                           aliases, symbolTables)
            : "";
    if (options.wait == PdlWait::AfterWeightLoads && waitFirst.empty())
      wait = PdlWait::AfterWeightLoads;
    os << "; pdl: ";
    if (m.prologue) {
      os << "the first ";
      llvm::interleave(ownBytes, os, " and ");
      os << " B of the own weight" << (ownBytes.size() > 1 ? "s" : "")
         << " prefetched (max-bytes), ";
    }
    if (wait == PdlWait::AfterWeightLoads)
      os << "wait after the first loads of the weights (before the first "
            "access to other memory), ";
    else if (options.wait == PdlWait::AfterWeightLoads)
      os << "wait before the first read (" << waitFirst << "), ";
    else
      os << "wait before the first read, ";
    os << (options.trigger == PdlTrigger::Start
               ? "launch_dependents first"
               : "launch_dependents before returning");
  }
  if (own == PrefetchKind::None)
    ownBytes.clear();
  return PrefetchPlanAttr::get(
      context, next.empty() ? PrefetchKind::None : m.prefetch, next,
      next.empty() ? 0 : budget.ctas, budget.line, m.pdl, own, ownBytes,
      m.pdl ? options.trigger : PdlTrigger::Start, wait);
}

} // namespace

StringRef cachet::getPrefetchKindName(PrefetchKind kind) {
  return stringifyPrefetchKind(kind);
}

std::string TargetInfo::describe() const {
  if (kind == Kind::NVVM)
    return chip + " with PTX " + std::to_string(ptx / 10) + "." +
           std::to_string(ptx % 10);
  return chip;
}

PrefetchKind TargetInfo::getAmdPrefetch() const {
  if (kind != Kind::ROCDL)
    return PrefetchKind::None;
  if (chip == "gfx1250")
    return PrefetchKind::GlobalPrefetch;
  if (StringRef(chip).starts_with("gfx12"))
    return PrefetchKind::SPrefetchData;
  return PrefetchKind::None;
}

std::string TargetInfo::whyNot(PrefetchKind prefetch) const {
  switch (prefetch) {
  case PrefetchKind::None:
    return "";
  case PrefetchKind::L2:
    return hasL2Prefetch() ? "" : describe() + " has no prefetch.global.L2";
  case PrefetchKind::Bulk:
    return hasBulkPrefetch() ? ""
                             : "bulk prefetch needs sm_90 and PTX 8.0, the "
                               "target is " +
                                   describe();
  case PrefetchKind::SPrefetchData:
  case PrefetchKind::GlobalPrefetch:
    return getAmdPrefetch() == prefetch
               ? ""
               : describe() + " has no " + getPrefetchKindName(prefetch).str();
  }
  llvm_unreachable("unknown prefetch kind");
}

TargetInfo cachet::getTargetInfo(gpu::GPUModuleOp module) {
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

std::string cachet::checkPrefetchPlanOptions(const PrefetchPlanOptions &o) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (o.fraction >= 0 && !(o.fraction > 0 && o.fraction <= 1))
    os << "bad prefetch-fraction " << llvm::format("%g", o.fraction)
       << ": in (0, 1], or negative for 0.5";
  else if (o.maxBytes < -1)
    os << "bad prefetch-max-bytes " << o.maxBytes
       << ": 0 or more, or -1 for the profile's L2 bytes / 4";
  else if (o.ctas == 0 || o.ctas < -1)
    os << "bad prefetch-ctas " << o.ctas
       << ": 1 or more, or -1 for the profile's compute units";
  return text;
}

PrefetchPlanAttr cachet::getPrefetchPlan(gpu::LaunchFuncOp launch) {
  return launch->getAttrOfType<PrefetchPlanAttr>(
      CachetDialect::getPrefetchPlanAttrName());
}

std::optional<int64_t> cachet::getStaticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  return (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8;
}

std::string cachet::whyWaitFirst(gpu::LaunchFuncOp launch,
                                 ArrayRef<Value> weights,
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
        for (Value weight : weights) {
          Value a = getRootBuffer(operand), b = getRootBuffer(weight);
          if (a != b && isDistinctBuffer(a) && isDistinctBuffer(b))
            continue;
          if (!aliases.alias(operand, weight).isNo())
            return "the kernel of a launch before it may write a buffer that "
                   "may alias its weights";
        }
      }
      // An async launch (on a stream of its own) orders nothing here.
      PrefetchPlanAttr plan = getPrefetchPlan(prev);
      bool overlaps =
          (plan && plan.getPdl() && plan.getTrigger() == PdlTrigger::Start) ||
          (!plan && prev->hasAttr(CachetDialect::getPdlAttrName()));
      if (!prev.getAsyncToken() && prev.getAsyncDependencies().empty() &&
          !overlaps)
        return "";
      continue;
    }
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(op);
        async && isa<gpu::MemcpyOp, gpu::MemsetOp, gpu::WaitOp>(op) &&
        !async.getAsyncToken() && async.getAsyncDependencies().empty())
      return "";
    // The upload of an argument (cachet-device-buffers): a copy on the
    // in-order queue, a fence as gpu.memcpy is; or, for a buffer the caller
    // keeps resident, nothing, at the function's entry, where the work of
    // its previous call is complete (a compiled function waits for its work
    // before it returns).
    if (auto call = dyn_cast<LLVM::CallOp>(op);
        call && call.getCallee() == kArgumentFunction)
      return "";
    if (op->getNumRegions() > 0 || isa<CallOpInterface>(op))
      return "an op with regions or a call comes before it in its block, "
             "after the last fence";
  }
  return "a kernel launched before this block may still run: no fence "
         "before it here (a launch without pdl or that triggers at its end, a "
         "copy, a fill or a wait)";
}

void cachet::selectPrefetchPlans(
    ModuleOp module, DeviceProfileAttr profile,
    const PrefetchPlanOptions &options,
    function_ref<void(Operation *, const Twine &)> remark) {
  Mode mode = getMode(options.mode);
  Budget budget(options, profile);
  SymbolTableCollection symbolTables;
  AliasAnalysis aliases(module);
  StringRef name = CachetDialect::getPrefetchPlanAttrName();
  for (auto func : module.getOps<FunctionOpInterface>()) {
    MatvecChains found = findMatvecChains(func, symbolTables);
    llvm::SmallDenseSet<Value> chainWeights = found.getChainWeights();
    for (const RejectedLaunch &rejected : found.rejected)
      if (!rejected.launch->hasAttr(name))
        remark(rejected.launch, "not part of a chain: " + rejected.reason);
    LaunchPlanner planner(mode, options, budget, profile, chainWeights, aliases,
                          symbolTables);
    for (const MatvecChain &chain : found.chains) {
      for (auto [index, step] : llvm::enumerate(chain.steps)) {
        for (auto [position, member] : llvm::enumerate(step.launches)) {
          gpu::LaunchFuncOp launch = member.launch;
          if (launch->hasAttr(name)) {
            remark(launch, "the plan in the IR is kept");
            continue;
          }
          auto kernelModule =
              member.kernel->getParentOfType<gpu::GPUModuleOp>();
          if (!kernelModule.getTargetsAttr() ||
              kernelModule.getTargetsAttr().empty()) {
            remark(launch, "no plan yet: the kernel's gpu.module has no "
                           "target attribute");
            continue;
          }
          std::string text;
          llvm::raw_string_ostream os(text);
          PrefetchPlanAttr plan =
              planner.plan(chain, index, position, member, os);
          launch->setAttr(name, plan);
          remark(launch, text);
        }
      }
    }
  }
}
