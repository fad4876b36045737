//===- LowerReductions.cpp - a workgroup per reduced row
//-------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <optional>

namespace cachet {
#define GEN_PASS_DEF_LOWERREDUCTIONS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

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

struct LowerReductionsPass final
    : public cachet::impl::LowerReductionsBase<LowerReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (workgroupSize < 1 || !llvm::isPowerOf2_64(workgroupSize)) {
      getOperation().emitError("cachet-lower-reductions: workgroup-size ")
          << workgroupSize.getValue() << " is not a power of two";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      // Only host code: a generic inside a kernel is already placed.
      if (!op->getParentOfType<gpu::LaunchOp>())
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics) {
      Reduction r;
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      // Only reductions are worth a remark when they are left alone.
      if (llvm::count(iterators, utils::IteratorType::reduction) == 0)
        continue;
      std::string why = match(op, minReductionSize, r);
      if (!why.empty()) {
        op.emitRemark("cachet-lower-reductions: one thread per output kept: ")
            << why;
        continue;
      }
      lower(op, r);
    }
  }

  void lower(linalg::GenericOp op, const Reduction &r);
};

void LowerReductionsPass::lower(linalg::GenericOp op, const Reduction &r) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back();
  int64_t outputs = 1;
  for (int64_t extent : ArrayRef<int64_t>(ranges).drop_back())
    outputs *= extent;
  int64_t threads = workgroupSize;
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
  auto loop = scf::ForOp::create(kb, loc, tid, index(kb, length),
                                 index(kb, threads), identity);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> loops(parallel);
    loops.push_back(loop.getInductionVar());
    IRMapping map;
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
    for (Operation &payload : op.getBody()->without_terminator()) {
      if (&payload == r.combine || &payload == r.compare ||
          &payload == r.selectValue || &payload == r.selectIndex)
        continue;
      if (auto idx = dyn_cast<linalg::IndexOp>(payload)) {
        map.map(idx.getResult(), loops[idx.getDim()]);
        continue;
      }
      lb.clone(payload, map);
    }
    scf::YieldOp::create(lb, loc, step(lb, map, loop.getRegionIterArgs()));
  }

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

  // The partials, combined by a tree in workgroup memory: by the combine;
  // an argmax's by the larger value, on a tie the lower index (the first
  // of the row, as the sequential loop keeps).
  gpu::BarrierOp::create(kb, loc);
  for (int64_t stride = threads / 2; stride > 0; stride /= 2) {
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

  // Thread 0: the outputs' initial values stepped with the total (as the
  // payload's term): after the row, in the payload's operand order.
  Value first = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, tid,
                                      index(kb, 0));
  auto last = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
  {
    OpBuilder ib = OpBuilder::atBlockBegin(last.thenBlock());
    // The outputs' maps do not use the reduction dimension: 0 for it.
    SmallVector<Value> loops(parallel);
    loops.push_back(index(ib, 0));
    SmallVector<SmallVector<Value>> outIndices;
    SmallVector<Value> initial;
    for (OpOperand *init : inits) {
      outIndices.push_back(
          indicesOf(ib, op.getMatchingIndexingMap(init), loops));
      initial.push_back(
          memref::LoadOp::create(ib, loc, init->get(), outIndices.back()));
    }
    IRMapping map;
    map.map(
        r.term,
        memref::LoadOp::create(ib, loc, partials[0], index(ib, 0)).getResult());
    if (r.isArgmax())
      map.map(r.index,
              memref::LoadOp::create(ib, loc, partials[1], index(ib, 0))
                  .getResult());
    for (auto [k, value] : llvm::enumerate(step(ib, map, initial)))
      memref::StoreOp::create(ib, loc, value, inits[k]->get(), outIndices[k]);
  }
  kb.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(kb, loc);

  InFlightDiagnostic diag = op.emitRemark("cachet-lower-reductions: ");
  diag << outputs << (outputs == 1 ? " workgroup" : " workgroups") << " of "
       << threads << " threads, one per output, each folding a row of "
       << length << " values (";
  if (r.isArgmax())
    diag << "the first index of the maximum";
  else
    diag << r.combine->getName();
  diag << "), partials combined by a tree in workgroup memory";
  if (r.isArgmax())
    diag << " (a tie to the lower index)";
  diag.report();
  op.erase();
}

} // namespace
