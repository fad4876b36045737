//===- LowerReductions.cpp - a workgroup per reduced row
//-------------------===//

#include "cachet/Analysis/Buffers.h"
#include "cachet/Conversion/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <optional>

namespace cachet {
#define GEN_PASS_DEF_LOWERREDUCTIONS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using cachet::mayAlias;

namespace {

/// Whether `threads` threads take a row of `extent` in whole rounds of at
/// most `maxRounds` (max-unrolled-rounds), each thread's loads emitted
/// together instead of a loop of one load per iteration (a row of 4096 at
/// 1024 threads: 4 rounds; a prefill's 512 rows of 4096 at 256 threads: 16,
/// whose loop waited for 16 + 16 round trips in series, 10.7 us per RMSNorm
/// on an H100, run 141).
bool takesWholeRounds(int64_t extent, int64_t threads, int64_t maxRounds) {
  return extent % threads == 0 && extent / threads <= maxRounds;
}

/// A reduction the kernel takes: the combining op and its other operand;
/// or an argmax, whose state is a value and an index.
struct Reduction {
  Operation *combine = nullptr;
  Value term;
  /// The argmax's `cmpf ogt` of the term and the running value, and the
  /// two selects it drives (value, index); `index` is the reduced position
  /// the index select takes, `valueInit` / `indexInit` the outputs.
  Operation *compare = nullptr, *selectValue = nullptr, *selectIndex = nullptr;
  Value index;
  OpOperand *valueInit = nullptr, *indexInit = nullptr;
  bool isArgmax() const { return compare != nullptr; }
};

/// Returns the identity of `combine` (an arith op on `type`), if it is one
/// of the combiners the kernel takes.
std::optional<TypedAttr> getIdentity(Operation *combine, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  auto floatAttr = [&](const APFloat &value) -> TypedAttr {
    return FloatAttr::get(type, value);
  };
  if (isa<arith::AddFOp>(combine))
    return floatAttr(APFloat::getZero(semantics));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return floatAttr(APFloat::getInf(semantics, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    return floatAttr(APFloat::getInf(semantics, /*Negative=*/false));
  return std::nullopt;
}

/// Returns why `op`, a generic with two outputs, is not a first-index
/// argmax, or "" and fills `r`: outputs a float value and an integer index,
/// a payload `c = cmpf ogt t, v` (or `olt v, t`), `yield select(c, t, v),
/// select(c, j, i)` where v and i are the outputs' values (used there
/// only) and j is the reduced dimension's linalg.index (through an
/// index_cast).
std::string matchArgmax(linalg::GenericOp op, Reduction &r) {
  const char *shape = "two outputs that are not a first-index argmax "
                      "(yield select(cmpf ogt t, v), select(.., index, i))";
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  OpOperand *valueInit = nullptr, *indexInit = nullptr;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Type element = getElementTypeOrSelf(init.get());
    if (isa<FloatType>(element))
      valueInit = &init;
    else if (element.isIntOrIndex())
      indexInit = &init;
  }
  if (!valueInit || !indexInit)
    return shape;
  BlockArgument v = op.getMatchingBlockArgument(valueInit);
  BlockArgument i = op.getMatchingBlockArgument(indexInit);
  unsigned vPos = valueInit->getOperandNumber() - op.getNumDpsInputs();
  unsigned iPos = indexInit->getOperandNumber() - op.getNumDpsInputs();
  auto selV = yield.getOperand(vPos).getDefiningOp<arith::SelectOp>();
  auto selI = yield.getOperand(iPos).getDefiningOp<arith::SelectOp>();
  if (!selV || !selI || selV->getBlock() != body || selI->getBlock() != body ||
      selV.getCondition() != selI.getCondition() || selV.getFalseValue() != v ||
      selI.getFalseValue() != i)
    return shape;
  auto cmp = selV.getCondition().getDefiningOp<arith::CmpFOp>();
  Value t = selV.getTrueValue();
  if (!cmp || cmp->getBlock() != body ||
      !((cmp.getPredicate() == arith::CmpFPredicate::OGT && cmp.getLhs() == t &&
         cmp.getRhs() == v) ||
        (cmp.getPredicate() == arith::CmpFPredicate::OLT && cmp.getLhs() == v &&
         cmp.getRhs() == t)))
    return shape;
  // The running value and index feed the compare and the selects only.
  for (Operation *user : v.getUsers())
    if (user != cmp && user != selV)
      return shape;
  for (Operation *user : i.getUsers())
    if (user != selI)
      return shape;
  Value j = selI.getTrueValue();
  Value position = j;
  if (auto cast = j.getDefiningOp<arith::IndexCastOp>())
    position = cast.getIn();
  auto index = position.getDefiningOp<linalg::IndexOp>();
  if (!index || index.getDim() != op.getNumLoops() - 1 ||
      j.getType() != i.getType())
    return "an argmax whose index is not the reduced dimension's position";
  r.compare = cmp;
  r.selectValue = selV;
  r.selectIndex = selI;
  r.term = t;
  r.index = j;
  r.valueInit = valueInit;
  r.indexInit = indexInit;
  return "";
}

/// Returns why the kernel cannot take `op`, or "" and the reduction.
std::string match(linalg::GenericOp op, int64_t minSize, Reduction &r) {
  if (!op.hasPureBufferSemantics())
    return "not on buffers";
  if (op.getNumDpsInits() > 2)
    return "more than two outputs";
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t reductions = llvm::count(iterators, utils::IteratorType::reduction);
  if (reductions != 1 || iterators.back() != utils::IteratorType::reduction)
    return "not one reduction dimension, innermost";
  if (linalg::isaContractionOpInterface(op))
    return "a contraction (mat-mul and mat-vec have their own kernels)";
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return "dynamic sizes";
  if (ranges.back() < minSize)
    return llvm::formatv("rows of {0} values, fewer than min-reduction-size "
                         "{1}",
                         ranges.back(), minSize)
        .str();
  for (OpOperand &out : op.getDpsInitsMutable()) {
    AffineMap outMap = op.getMatchingIndexingMap(&out);
    if (!outMap.isProjectedPermutation() ||
        outMap.isFunctionOfDim(outMap.getNumDims() - 1))
      return "the output is not indexed by the parallel dimensions alone";
  }
  if (op.getNumDpsInits() == 2)
    return matchArgmax(op, r);
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<FloatType>(getElementTypeOrSelf(init->get()));
  if (!outType)
    return "not a float output";
  Block *body = op.getBody();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body || !acc.hasOneUse() ||
      combine->getNumOperands() != 2 || !getIdentity(combine, outType))
    return "the payload is not combine(output, term) with addf, maximumf, "
           "minimumf, maxnumf or minnumf";
  Value term = combine->getOperand(0) == acc   ? combine->getOperand(1)
               : combine->getOperand(1) == acc ? combine->getOperand(0)
                                               : Value();
  if (!term || term == acc)
    return "the payload is not combine(output, term)";
  r.combine = combine;
  r.term = term;
  return "";
}

/// What the reduction's kernel takes from around it: per output, the
/// `linalg.fill` that writes it right before (its value becomes the initial
/// one, and the fill goes); after it, an element-wise op over the outputs
/// (`perOutput`, e.g. an RMSNorm's rsqrt(sum / n + eps)) and an op over the
/// rows that reads the result broadcast along its innermost dimension
/// (`row`, e.g. the RMSNorm's x * r * w).
struct Neighbours {
  /// None yet, for a reduction of `outputs` outputs.
  explicit Neighbours(size_t outputs) : fills(outputs) {}
  /// Each output's fill, or null.
  SmallVector<linalg::FillOp> fills;
  linalg::GenericOp perOutput, row;
  /// Whether the reduction's output and perOutput's are read after the
  /// kernel (else they are not stored).
  bool storeOutput = true, storePerOutput = true;
};

/// Returns true if `op` reads and writes no memory (it may allocate).
bool touchesNoMemory(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  return llvm::all_of(effects, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}

/// Returns true if the reduction `op` writes every element of `init`'s
/// buffer: a static shape whose dimensions are the parallel extents its
/// map picks, one each.
bool writesWholeBuffer(linalg::GenericOp op, OpOperand *init) {
  auto type = dyn_cast<MemRefType>(init->get().getType());
  AffineMap map = op.getMatchingIndexingMap(init);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!type || !type.hasStaticShape() ||
      map.getNumResults() != ranges.size() - 1)
    return false;
  for (auto [k, expr] : llvm::enumerate(map.getResults()))
    if (type.getDimSize(k) != ranges[cast<AffineDimExpr>(expr).getPosition()])
      return false;
  return true;
}

/// Returns true if `op`'s body is pure scalar ops (linalg.index included).
bool hasScalarBody(linalg::GenericOp op) {
  return llvm::all_of(op.getBody()->without_terminator(), [](Operation &o) {
    return o.getNumRegions() == 0 && isMemoryEffectFree(&o);
  });
}

/// Returns true if `op` is a parallel generic on buffers with one output
/// and a scalar body whose first `parallel` loops have `extents`, with
/// `extra` loops after them.
bool isParallelOver(linalg::GenericOp op, ArrayRef<int64_t> extents,
                    unsigned extra) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != extents.size() + extra ||
      op.getNumParallelLoops() != op.getNumLoops() || !hasScalarBody(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return llvm::none_of(ranges, ShapedType::isDynamic) &&
         ArrayRef<int64_t>(ranges).take_front(extents.size()) == extents;
}

/// Finds what the kernel of `op` (a reduction matched with `r`, outputs
/// `inits`) may take from around it: the fills of its outputs right before
/// it (only ops that touch no memory between), and for a single-output
/// reduction whose output is indexed by its parallel dimensions in order,
/// the element-wise op right after it that reads the output and the row op
/// after that (or right after the reduction) that reads either broadcast
/// along its innermost dimension, if no buffer the kernel writes may be one
/// another part of it reads (other than the broadcast values, which stay in
/// registers, and the row op's output read in place).
Neighbours findNeighbours(linalg::GenericOp op, const Reduction &r,
                          ArrayRef<OpOperand *> inits, AliasAnalysis &aliases) {
  Neighbours n(inits.size());
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (touchesNoMemory(prev))
      continue;
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (!fill || !fill.hasPureBufferSemantics())
      break;
    auto it = llvm::find_if(inits, [&](OpOperand *init) {
      return init->get() == fill.getDpsInits()[0];
    });
    if (it == inits.end())
      break;
    size_t k = it - inits.begin();
    if (n.fills[k] ||
        fill.getInputs()[0].getType() !=
            getElementTypeOrSelf((*it)->get().getType()) ||
        !writesWholeBuffer(op, *it))
      break;
    n.fills[k] = fill;
  }
  if (r.isArgmax())
    return n;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  ArrayRef<int64_t> outer = ArrayRef<int64_t>(ranges).drop_back();
  unsigned k = outer.size();
  Value out = inits.front()->get();
  if (op.getMatchingIndexingMap(inits.front()) !=
      AffineMap::getMultiDimIdentityMap(k + 1, op.getContext())
          .getMajorSubMap(k))
    return n;
  auto nextTouching = [](Operation *from) -> Operation * {
    for (Operation *next = from->getNextNode(); next;
         next = next->getNextNode())
      if (!touchesNoMemory(next))
        return next;
    return nullptr;
  };
  // The element-wise op over the outputs: identity maps, reads `out`.
  Operation *next = nextTouching(op);
  if (auto e = dyn_cast_or_null<linalg::GenericOp>(next);
      e && isParallelOver(e, outer, 0) &&
      llvm::all_of(e.getIndexingMapsArray(),
                   [](AffineMap m) { return m.isIdentity(); }) &&
      llvm::is_contained(e.getDpsInputs(), out) &&
      e.getMatchingBlockArgument(e.getDpsInitOperand(0)).use_empty()) {
    n.perOutput = e;
    next = nextTouching(e);
  }
  Value perOut = n.perOutput ? n.perOutput.getDpsInits()[0] : Value();
  // The row op: the outer loops, then one more; reads `out` or `perOut`
  // at the outer indices.
  AffineMap broadcast =
      AffineMap::getMultiDimIdentityMap(k + 1, op.getContext())
          .getMajorSubMap(k);
  if (auto e = dyn_cast_or_null<linalg::GenericOp>(next);
      e && isParallelOver(e, outer, 1) &&
      e.getMatchingIndexingMap(e.getDpsInitOperand(0)).isPermutation() &&
      llvm::all_of(e.getIndexingMapsArray(),
                   [](AffineMap m) { return m.isProjectedPermutation(); })) {
    bool reads = false, bad = false;
    for (OpOperand *input : e.getDpsInputOperands()) {
      if (input->get() == out || (perOut && input->get() == perOut)) {
        reads = true;
        bad |= e.getMatchingIndexingMap(input) != broadcast;
      }
    }
    if (reads && !bad)
      n.row = e;
  }

  // What each part reads from memory (the broadcast values excepted) and
  // writes.
  auto readsOf = [&](linalg::GenericOp g) {
    SmallVector<Value> reads;
    for (Value input : g.getDpsInputs())
      if (input != out && input != perOut)
        reads.push_back(input);
    return reads;
  };
  auto conflicts = [&](Value written, ArrayRef<Value> read) {
    return llvm::any_of(read,
                        [&](Value v) { return mayAlias(aliases, written, v); });
  };
  SmallVector<Value> reductionReads = op.getDpsInputs();
  if (n.perOutput) {
    SmallVector<Value> read = readsOf(n.perOutput);
    bool bad = mayAlias(aliases, out, perOut) ||
               conflicts(perOut, reductionReads) || conflicts(out, read) ||
               conflicts(perOut, read);
    if (bad) {
      n.perOutput = nullptr;
      n.row = nullptr;
      perOut = Value();
    }
  }
  if (n.row) {
    Value w = n.row.getDpsInits()[0];
    AffineMap wMap = n.row.getMatchingIndexingMap(n.row.getDpsInitOperand(0));
    SmallVector<Value> earlier = reductionReads;
    earlier.push_back(out);
    if (n.perOutput) {
      llvm::append_range(earlier, readsOf(n.perOutput));
      earlier.push_back(perOut);
    }
    bool bad = conflicts(w, earlier);
    for (OpOperand *input : n.row.getDpsInputOperands()) {
      Value v = input->get();
      if (v == out || v == perOut)
        continue;
      // Read in place: each element by the thread that writes it.
      if (v == w && n.row.getMatchingIndexingMap(input) == wMap)
        continue;
      bad |= mayAlias(aliases, w, v) || mayAlias(aliases, out, v) ||
             (perOut && mayAlias(aliases, perOut, v));
    }
    if (bad)
      n.row = nullptr;
  }
  if (!n.perOutput && !n.row)
    return n;
  // The outputs are stored only if something else uses them.
  auto usedElsewhere = [&](Value buffer) {
    return llvm::any_of(buffer.getUsers(), [&](Operation *user) {
      return user != op && user != n.perOutput && user != n.row &&
             !isa<linalg::FillOp, memref::DeallocOp>(user);
    });
  };
  n.storeOutput = usedElsewhere(out);
  n.storePerOutput = perOut && usedElsewhere(perOut);
  return n;
}

struct LowerReductionsPass final
    : public cachet::impl::LowerReductionsBase<LowerReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (workgroupSize < 1 || !llvm::isPowerOf2_64(workgroupSize)) {
      getOperation().emitError("cachet-lower-reductions: workgroup-size ")
          << workgroupSize.getValue() << " is not a power of two";
      return signalPassFailure();
    }
    if (maxUnrolledRounds < 0) {
      getOperation().emitError("cachet-lower-reductions: max-unrolled-rounds ")
          << maxUnrolledRounds.getValue() << " is negative";
      return signalPassFailure();
    }
    if (maxWorkgroupSize < 1 || !llvm::isPowerOf2_64(maxWorkgroupSize)) {
      getOperation().emitError("cachet-lower-reductions: max-workgroup-size ")
          << maxWorkgroupSize.getValue() << " is not a power of two";
      return signalPassFailure();
    }
    if (subgroupSize < 0 || subgroupSize == 1 ||
        (subgroupSize && !llvm::isPowerOf2_64(subgroupSize))) {
      getOperation().emitError("cachet-lower-reductions: subgroup-size ")
          << subgroupSize.getValue() << " is not 0 or a power of two above 1";
      return signalPassFailure();
    }
    AliasAnalysis aliases(getOperation());
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      // Only host code: a generic inside a kernel is already placed.
      if (!op->getParentOfType<gpu::LaunchOp>())
        generics.push_back(op);
    });
    llvm::DenseSet<Operation *> erased;
    for (linalg::GenericOp op : generics) {
      // Taken into the kernel of a reduction before it.
      if (erased.contains(op))
        continue;
      Reduction r;
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      // Only reductions are worth a remark when they are left alone.
      if (llvm::count(iterators, utils::IteratorType::reduction) == 0)
        continue;
      std::string why = match(op, minReductionSize, r);
      if (!why.empty()) {
        emitRemark(op.getLoc(),
                   "cachet-lower-reductions: one thread per output kept: ")
            << why;
        continue;
      }
      lower(op, r, aliases, erased);
    }
  }

  void lower(linalg::GenericOp op, const Reduction &r, AliasAnalysis &aliases,
             llvm::DenseSet<Operation *> &erased);
  /// Whether the tree's steps within the first subgroup go by shuffles: a
  /// fixed subgroup size no larger than the workgroup, and a sum's (not an
  /// argmax's) 32-bit partials.
  bool takesShuffles(const Reduction &r, ArrayRef<OpOperand *> inits,
                     int64_t threads) const {
    return subgroupSize > 1 && threads >= subgroupSize && !r.isArgmax() &&
           getElementTypeOrSelf(inits.front()->get()).getIntOrFloatBitWidth() ==
               32;
  }
};

void LowerReductionsPass::lower(linalg::GenericOp op, const Reduction &r,
                                AliasAnalysis &aliases,
                                llvm::DenseSet<Operation *> &erased) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back();
  int64_t outputs = 1;
  for (int64_t extent : ArrayRef<int64_t>(ranges).drop_back())
    outputs *= extent;
  // Few outputs (a decode step's one row) fill few workgroups: more
  // threads each, so that each thread's serial loop over the row is short.
  int64_t threads = workgroupSize;
  while (threads * 2 <= maxWorkgroupSize && length > 4 * threads &&
         outputs * threads * 2 <= 65536)
    threads *= 2;
  auto index = [&](OpBuilder &ib, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, value);
  };
  // The state each thread carries, one output each: the running value (a
  // sum, max, ...), or an argmax's value and index.
  SmallVector<OpOperand *> inits;
  if (r.isArgmax())
    inits = {r.valueInit, r.indexInit};
  else
    inits = {op.getDpsInitOperand(0)};
  Neighbours n = fuseNeighbours ? findNeighbours(op, r, inits, aliases)
                                : Neighbours(inits.size());
  // The kernel runs where the last op it takes was (only ops that touch no
  // memory lie between them): the buffers they write are defined there.
  OpBuilder b(n.row ? n.row : n.perOutput ? n.perOutput : op);
  // Identities: the combine's; an argmax's is (-inf, the index type's
  // largest value), which no position beats on a tie and which no term
  // replaces unless it is above -inf, as in the sequential loop.
  SmallVector<TypedAttr> identities;
  for (OpOperand *init : inits) {
    Type element = getElementTypeOrSelf(init->get());
    if (!r.isArgmax())
      identities.push_back(*getIdentity(r.combine, cast<FloatType>(element)));
    else if (auto f = dyn_cast<FloatType>(element))
      identities.push_back(FloatAttr::get(
          f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true)));
    else if (element.isIndex())
      identities.push_back(b.getIndexAttr(std::numeric_limits<int64_t>::max()));
    else
      identities.push_back(IntegerAttr::get(
          element, APInt::getSignedMaxValue(element.getIntOrFloatBitWidth())));
  }

  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> partialsTypes;
  for (OpOperand *init : inits)
    partialsTypes.push_back(MemRefType::get(
        {threads}, getElementTypeOrSelf(init->get()), nullptr, workgroup));
  Value one = index(b, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(b, outputs), one, one, index(b, threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, partialsTypes);
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  ArrayRef<BlockArgument> partials = launch.getWorkgroupAttributions();

  // The parallel indices of this workgroup's output: the block id,
  // delinearized over the parallel extents (row-major).
  SmallVector<Value> parallel(ranges.size() - 1);
  Value rest = launch.getBlockIds().x;
  for (int64_t d = static_cast<int64_t>(ranges.size()) - 2; d >= 0; --d) {
    parallel[d] = arith::RemUIOp::create(kb, loc, rest, index(kb, ranges[d]));
    rest = arith::DivUIOp::create(kb, loc, rest, index(kb, ranges[d]));
  }
  auto indicesOf = [&](OpBuilder &ib, AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(affine::makeComposedAffineApply(
                            ib, loc, AffineMap::get(map.getNumDims(), 0, expr),
                            llvm::to_vector_of<OpFoldResult>(loops))
                            .getResult());
    return indices;
  };
  // The payload's step from state `from` with `map` holding the term's
  // values: the combine, or the argmax's compare and selects, cloned with
  // the outputs' arguments mapped to `from`.
  auto step = [&](OpBuilder &ib, IRMapping &map, ValueRange from) {
    SmallVector<Operation *> ops;
    if (r.isArgmax())
      ops = {r.compare, r.selectValue, r.selectIndex};
    else
      ops = {r.combine};
    for (auto [init, value] : llvm::zip(inits, from))
      map.map(op.getMatchingBlockArgument(init), value);
    for (Operation *payload : ops)
      ib.clone(*payload, map);
    if (r.isArgmax())
      return SmallVector<Value>{map.lookup(r.selectValue->getResult(0)),
                                map.lookup(r.selectIndex->getResult(0))};
    return SmallVector<Value>{map.lookup(r.combine->getResult(0))};
  };

  // Each thread folds every threads-th term of the row into its partial,
  // with the payload cloned (the step applied to the partial instead of
  // the output).
  SmallVector<Value> identity;
  for (TypedAttr attr : identities)
    identity.push_back(arith::ConstantOp::create(kb, loc, attr));
  // The loads of term `term` (the row's index) into `map`.
  auto loadTerm = [&](OpBuilder &lb, Value term, IRMapping &map) {
    SmallVector<Value> loops(parallel);
    loops.push_back(term);
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      if (!isa<MemRefType>(input->get().getType())) {
        map.map(arg, input->get());
        continue;
      }
      map.map(arg, memref::LoadOp::create(
                       lb, loc, input->get(),
                       indicesOf(lb, op.getMatchingIndexingMap(input), loops)));
    }
  };
  // The payload of term `term` (its loads in `map`) stepped from `from`.
  auto foldTerm = [&](OpBuilder &lb, Value term, IRMapping &map,
                      ValueRange from) {
    for (Operation &payload : op.getBody()->without_terminator()) {
      if (&payload == r.combine || &payload == r.compare ||
          &payload == r.selectValue || &payload == r.selectIndex)
        continue;
      if (auto idx = dyn_cast<linalg::IndexOp>(payload)) {
        map.map(idx.getResult(),
                idx.getDim() < parallel.size() ? parallel[idx.getDim()] : term);
        continue;
      }
      lb.clone(payload, map);
    }
    return step(lb, map, from);
  };
  if (takesWholeRounds(length, threads, maxUnrolledRounds)) {
    int64_t rounds = length / threads;
    // Whole rounds: each of the thread's terms loaded first, then folded in
    // order (the loads in flight together instead of one per iteration).
    SmallVector<IRMapping> maps(rounds);
    SmallVector<Value> terms;
    for (int64_t k = 0; k < rounds; ++k) {
      terms.push_back(
          arith::AddIOp::create(kb, loc, tid, index(kb, k * threads)));
      loadTerm(kb, terms[k], maps[k]);
    }
    SmallVector<Value> folded = identity;
    for (int64_t k = 0; k < rounds; ++k)
      folded = foldTerm(kb, terms[k], maps[k], folded);
    for (auto [k, partial] : llvm::enumerate(partials))
      memref::StoreOp::create(kb, loc, folded[k], partial, tid);
  } else {
    auto loop = scf::ForOp::create(kb, loc, tid, index(kb, length),
                                   index(kb, threads), identity);
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    IRMapping map;
    loadTerm(lb, loop.getInductionVar(), map);
    scf::YieldOp::create(
        lb, loc,
        foldTerm(lb, loop.getInductionVar(), map, loop.getRegionIterArgs()));
    // A thread past the row's end runs no iteration: its partial is the
    // identity, selected rather than taken from the loop, whose results
    // convert-scf-to-spirv (LLVM 22) returns through Function variables
    // stored only inside the loop body (uninitialized after no iteration).
    Value ran = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, tid,
                                      index(kb, length));
    for (auto [k, partial] : llvm::enumerate(partials)) {
      Value value =
          arith::SelectOp::create(kb, loc, ran, loop.getResult(k), identity[k]);
      memref::StoreOp::create(kb, loc, value, partial, tid);
    }
  }

  // The partials, combined by a tree in workgroup memory: by the combine;
  // an argmax's by the larger value, on a tie the lower index (the first
  // of the row, as the sequential loop keeps).
  gpu::BarrierOp::create(kb, loc);
  // With a fixed subgroup size: the steps within the first subgroup by
  // shuffles (a sum's 32-bit partials; the pairs and their order as the
  // tree's), after the steps across subgroups in workgroup memory.
  int64_t lanes = subgroupSize;
  bool shuffles = takesShuffles(r, inits, threads);
  for (int64_t stride = threads / 2; stride >= (shuffles ? lanes : 1);
       stride /= 2) {
    Value active = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                         tid, index(kb, stride));
    auto ifOp = scf::IfOp::create(kb, loc, active, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(ifOp.thenBlock());
    Value otherTid = arith::AddIOp::create(ib, loc, tid, index(ib, stride));
    SmallVector<Value> mine, other;
    for (Value partial : partials) {
      mine.push_back(memref::LoadOp::create(ib, loc, partial, tid));
      other.push_back(memref::LoadOp::create(ib, loc, partial, otherTid));
    }
    SmallVector<Value> combined;
    if (r.isArgmax()) {
      Value greater = arith::CmpFOp::create(ib, loc, arith::CmpFPredicate::OGT,
                                            other[0], mine[0]);
      Value equal = arith::CmpFOp::create(ib, loc, arith::CmpFPredicate::OEQ,
                                          other[0], mine[0]);
      Value lower = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::slt,
                                          other[1], mine[1]);
      Value take = arith::OrIOp::create(
          ib, loc, greater, arith::AndIOp::create(ib, loc, equal, lower));
      for (int k = 0; k < 2; ++k)
        combined.push_back(
            arith::SelectOp::create(ib, loc, take, other[k], mine[k]));
    } else {
      Operation *c = ib.clone(*r.combine);
      c->setOperands(ValueRange{mine[0], other[0]});
      combined.push_back(c->getResult(0));
    }
    for (auto [value, partial] : llvm::zip(combined, partials))
      memref::StoreOp::create(ib, loc, value, partial, tid);
    gpu::BarrierOp::create(kb, loc);
  }
  if (shuffles) {
    // The first subgroup: lane t takes the partial of t + stride down to
    // stride 1; lane 0's total goes to partials[0] for the threads to read.
    Value firstLanes = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                             tid, index(kb, lanes));
    auto ifOp = scf::IfOp::create(kb, loc, firstLanes, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(ifOp.thenBlock());
    Value partial = partials.front();
    Value v = memref::LoadOp::create(ib, loc, partial, tid);
    Value width = arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), lanes);
    for (int64_t stride = lanes / 2; stride > 0; stride /= 2) {
      Value offset =
          arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), stride);
      Value other = gpu::ShuffleOp::create(ib, loc, v, offset, width,
                                           gpu::ShuffleMode::DOWN)
                        .getShuffleResult();
      Operation *c = ib.clone(*r.combine);
      c->setOperands(ValueRange{v, other});
      v = c->getResult(0);
    }
    Value lane0 = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, tid,
                                        index(ib, 0));
    auto store = scf::IfOp::create(ib, loc, lane0, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(store.thenBlock());
    memref::StoreOp::create(sb, loc, v, partial, index(sb, 0));
    gpu::BarrierOp::create(kb, loc);
  }

  // The outputs' initial values: the values of the fills before the
  // reduction, else what the outputs hold. The outputs' maps do not use the
  // reduction dimension: 0 for it.
  SmallVector<Value> outLoops(parallel);
  outLoops.push_back(index(kb, 0));
  SmallVector<SmallVector<Value>> outIndices;
  for (OpOperand *init : inits)
    outIndices.push_back(
        indicesOf(kb, op.getMatchingIndexingMap(init), outLoops));
  auto initialValues = [&](OpBuilder &ib) {
    SmallVector<Value> initial;
    for (auto [k, init] : llvm::enumerate(inits))
      initial.push_back(n.fills[k] ? n.fills[k].getInputs()[0]
                                   : memref::LoadOp::create(
                                         ib, loc, init->get(), outIndices[k])
                                         .getResult());
    return initial;
  };
  // The total (and an argmax's index), as the payload's term.
  auto totals = [&](OpBuilder &ib) {
    IRMapping map;
    map.map(
        r.term,
        memref::LoadOp::create(ib, loc, partials[0], index(ib, 0)).getResult());
    if (r.isArgmax())
      map.map(r.index,
              memref::LoadOp::create(ib, loc, partials[1], index(ib, 0))
                  .getResult());
    return map;
  };
  Value first = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, tid,
                                      index(kb, 0));
  if (!n.perOutput && !n.row) {
    // Thread 0: the outputs' initial values stepped with the total (as the
    // payload's term): after the row, in the payload's operand order.
    auto last = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(last.thenBlock());
    SmallVector<Value> initial = initialValues(ib);
    IRMapping map = totals(ib);
    for (auto [k, value] : llvm::enumerate(step(ib, map, initial)))
      memref::StoreOp::create(ib, loc, value, inits[k]->get(), outIndices[k]);
  } else {
    // Every thread: the output's value, then the element-wise op over it
    // (at this workgroup's output) and this workgroup's row of the row op,
    // each thread taking every threads-th element; thread 0 stores the
    // output and the element-wise op's value where they are read later.
    Value out = inits.front()->get();
    SmallVector<Value> initial = initialValues(kb);
    IRMapping totalMap = totals(kb);
    Value value = step(kb, totalMap, initial).front();
    Value perValue;
    auto mapIndexOps = [&](IRMapping &map, linalg::GenericOp g,
                           ArrayRef<Value> loops) {
      g.getBody()->walk([&](linalg::IndexOp idx) {
        map.map(idx.getResult(), loops[idx.getDim()]);
      });
    };
    auto cloneBody = [&](OpBuilder &ib, linalg::GenericOp g, IRMapping &map) {
      for (Operation &payload : g.getBody()->without_terminator())
        if (!isa<linalg::IndexOp>(payload))
          ib.clone(payload, map);
      return map.lookupOrDefault(g.getBody()->getTerminator()->getOperand(0));
    };
    if (n.perOutput) {
      IRMapping map;
      for (OpOperand *input : n.perOutput.getDpsInputOperands()) {
        BlockArgument arg = n.perOutput.getMatchingBlockArgument(input);
        if (input->get() == out)
          map.map(arg, value);
        else if (!isa<MemRefType>(input->get().getType()))
          map.map(arg, input->get());
        else
          map.map(arg, memref::LoadOp::create(kb, loc, input->get(), parallel)
                           .getResult());
      }
      mapIndexOps(map, n.perOutput, parallel);
      perValue = cloneBody(kb, n.perOutput, map);
    }
    if (n.row) {
      Value perOut = n.perOutput ? n.perOutput.getDpsInits()[0] : Value();
      int64_t extent = n.row.getStaticLoopRanges().back();
      OpOperand *rowInit = n.row.getDpsInitOperand(0);
      BlockArgument outArg = n.row.getMatchingBlockArgument(rowInit);
      // The loads of element `col` of the row into `map`; returns where it
      // is stored.
      auto loadElement = [&](OpBuilder &lb, Value col, IRMapping &map) {
        SmallVector<Value> loops(parallel);
        loops.push_back(col);
        for (OpOperand *input : n.row.getDpsInputOperands()) {
          BlockArgument arg = n.row.getMatchingBlockArgument(input);
          if (input->get() == out)
            map.map(arg, value);
          else if (perOut && input->get() == perOut)
            map.map(arg, perValue);
          else if (!isa<MemRefType>(input->get().getType()))
            map.map(arg, input->get());
          else
            map.map(arg, memref::LoadOp::create(
                             lb, loc, input->get(),
                             indicesOf(lb, n.row.getMatchingIndexingMap(input),
                                       loops)));
        }
        SmallVector<Value> at =
            indicesOf(lb, n.row.getMatchingIndexingMap(rowInit), loops);
        if (!outArg.use_empty())
          map.map(
              outArg,
              memref::LoadOp::create(lb, loc, rowInit->get(), at).getResult());
        mapIndexOps(map, n.row, loops);
        return at;
      };
      auto storeElement = [&](OpBuilder &lb, IRMapping &map,
                              ArrayRef<Value> at) {
        Value result = cloneBody(lb, n.row, map);
        memref::StoreOp::create(lb, loc, result, rowInit->get(), at);
      };
      if (takesWholeRounds(extent, threads, maxUnrolledRounds)) {
        int64_t rowRounds = extent / threads;
        // Whole rounds: every load of the thread's elements first (the row
        // op's inputs do not alias its output but element by element in
        // place: checked above), then their values and stores.
        SmallVector<IRMapping> maps(rowRounds);
        SmallVector<SmallVector<Value>> ats;
        for (int64_t k = 0; k < rowRounds; ++k)
          ats.push_back(loadElement(
              kb, arith::AddIOp::create(kb, loc, tid, index(kb, k * threads)),
              maps[k]));
        for (int64_t k = 0; k < rowRounds; ++k)
          storeElement(kb, maps[k], ats[k]);
      } else {
        auto rowLoop = scf::ForOp::create(kb, loc, tid, index(kb, extent),
                                          index(kb, threads));
        OpBuilder lb = OpBuilder::atBlockBegin(rowLoop.getBody());
        IRMapping map;
        SmallVector<Value> at = loadElement(lb, rowLoop.getInductionVar(), map);
        storeElement(lb, map, at);
      }
    }
    if (n.storeOutput || n.storePerOutput) {
      // Every thread has read the output's initial value before thread 0
      // overwrites it.
      if (!n.fills.front() && n.storeOutput)
        gpu::BarrierOp::create(kb, loc);
      auto last = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
      OpBuilder ib = OpBuilder::atBlockBegin(last.thenBlock());
      if (n.storeOutput)
        memref::StoreOp::create(ib, loc, value, out, outIndices.front());
      if (n.storePerOutput)
        memref::StoreOp::create(ib, loc, perValue, n.perOutput.getDpsInits()[0],
                                parallel);
    }
  }
  kb.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(kb, loc);

  InFlightDiagnostic diag =
      emitRemark(op.getLoc(), "cachet-lower-reductions: ");
  diag << outputs << (outputs == 1 ? " workgroup" : " workgroups") << " of "
       << threads << " threads, one per output, each folding a row of "
       << length << " values (";
  if (r.isArgmax())
    diag << "the first index of the maximum";
  else
    diag << r.combine->getName();
  diag << ")";
  if (takesWholeRounds(length, threads, maxUnrolledRounds))
    diag << ", its " << length / threads
         << " terms per thread loaded together (whole rounds)";
  diag << ", partials combined by a tree in workgroup memory";
  if (takesShuffles(r, inits, threads))
    diag << " down to one subgroup, then by shuffles";
  if (r.isArgmax())
    diag << " (a tie to the lower index)";
  int fills = llvm::count_if(n.fills, [](linalg::FillOp f) { return f; });
  if (fills)
    diag << "; the " << (fills == 1 ? "fill" : "fills") << " of its output"
         << (inits.size() == 1 ? "" : "s") << " before it in the kernel";
  if (n.perOutput)
    diag << "; the element-wise op over its output after it in the kernel";
  if (n.row) {
    int64_t extent = n.row.getStaticLoopRanges().back();
    diag << "; the op over rows that reads it broadcast in the kernel, "
         << (extent + threads - 1) / threads << " elements per thread";
    if (takesWholeRounds(extent, threads, maxUnrolledRounds))
      diag << ", loaded together";
  }
  diag.report();
  SmallVector<Value> buffers;
  for (OpOperand *init : inits)
    buffers.push_back(init->get());
  if (n.perOutput)
    buffers.push_back(n.perOutput.getDpsInits()[0]);
  for (linalg::FillOp fill : n.fills)
    if (fill)
      fill.erase();
  for (linalg::GenericOp g : {n.perOutput, n.row})
    if (g) {
      erased.insert(g);
      g.erase();
    }
  op.erase();
  // A buffer nothing reads any more goes with its deallocations.
  for (Value buffer : buffers) {
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || llvm::any_of(buffer.getUsers(), [](Operation *user) {
          return !isa<memref::DeallocOp>(user);
        }))
      continue;
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
      user->erase();
    alloc.erase();
  }
}

} // namespace
