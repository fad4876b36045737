//===- RaiseContractions.cpp - front-end products to named linalg ops -----===//
//
// Rewrites the spellings of `x W^T` (and of batched products) that front
// ends emit besides the named ops: contraction generics become
// linalg.matvec / linalg.matmul / linalg.batch_matmul, and a transposed
// weight read by a linalg.matmul is folded into the matmul's maps, so that
// the mat-vec kernels and the attention matcher see the forms they take.
//
//===----------------------------------------------------------------------===//

#include "cachet/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_RAISECONTRACTIONS
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The named op a contraction generic is, with its operands in the named
/// op's order.
struct Contraction {
  enum class Kind { Matvec, Matmul, MatmulTransposeB, BatchMatmul };
  Kind kind;
  Value lhs, rhs;
};

/// Whether `op` is worth a remark: two inputs, one init, a reduction loop
/// and a multiplication in its body.
bool isCandidate(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return false;
  return llvm::any_of(op.getBody()->getOperations(), [](Operation &inner) {
    return isa<arith::MulFOp>(inner);
  });
}

/// The input argument `value` is (directly, or through an arith.extf to the
/// accumulator type, as a named op's cast_signed of a float is), or -1.
int getCastInput(linalg::GenericOp op, Value value, Type accType) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>()) {
    if (ext.getType() != accType)
      return -1;
    value = ext.getIn();
  } else if (value.getType() != accType) {
    return -1;
  }
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != op.getBody() || arg.getArgNumber() >= 2)
    return -1;
  return arg.getArgNumber();
}

/// Why the body of `op` is not `acc + cast(a) * cast(b)` (in any order of
/// each operation), or "".
std::string whyNotMultiplyAccumulate(linalg::GenericOp op) {
  Block *body = op.getBody();
  Type accType = body->getArgument(2).getType();
  if (!isa<FloatType>(accType))
    return "the accumulator is not a float (integer products keep their "
           "generic)";
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return "the body does not yield an arith.addf";
  Value product = add.getRhs();
  if (add.getLhs() != body->getArgument(2)) {
    if (add.getRhs() != body->getArgument(2))
      return "the arith.addf does not add to the accumulator";
    product = add.getLhs();
  }
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return "the accumulator is not added a product";
  int lhs = getCastInput(op, mul.getLhs(), accType);
  int rhs = getCastInput(op, mul.getRhs(), accType);
  if (lhs < 0 || rhs < 0 || lhs == rhs)
    return "the product is not of the two inputs, each as it is or "
           "extended to the accumulator type with arith.extf";
  // acc + a * b and the extensions: nothing else may be computed.
  size_t ops = 3; // arith.addf, arith.mulf, linalg.yield
  for (Value factor : {mul.getLhs(), mul.getRhs()})
    ops += factor.getDefiningOp<arith::ExtFOp>() ? 1 : 0;
  if (body->getOperations().size() != ops)
    return "the body computes more than acc + a * b";
  return "";
}

/// The loop dimensions `map` reads, or an empty list if a result is not a
/// plain loop dimension.
SmallVector<unsigned> getDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return {};
    dims.push_back(dim.getPosition());
  }
  return dims;
}

/// Matches `op` as a mat-vec, a mat-mul (default or transpose-b maps) or a
/// default-map batched mat-mul; sets `why` otherwise.
std::optional<Contraction> matchContraction(linalg::GenericOp op,
                                            std::string &why) {
  if (op.getNumReductionLoops() != 1) {
    why = "more than one reduction loop";
    return std::nullopt;
  }
  why = whyNotMultiplyAccumulate(op);
  if (!why.empty())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned k =
      llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  SmallVector<unsigned> out = getDims(maps[2]);
  SmallVector<unsigned> in[2] = {getDims(maps[0]), getDims(maps[1])};
  Value inputs[2] = {op.getDpsInputs()[0], op.getDpsInputs()[1]};
  unsigned rank = iterators.size();
  if (out.size() + 1 != rank || llvm::is_contained(out, k)) {
    why = "the output is not indexed by every parallel loop";
    return std::nullopt;
  }
  using D = SmallVector<unsigned>;
  // The input read as `first` and the other as `second`, in either order.
  auto pick = [&](const D &first,
                  const D &second) -> std::optional<std::pair<Value, Value>> {
    if (in[0] == first && in[1] == second)
      return std::make_pair(inputs[0], inputs[1]);
    if (in[1] == first && in[0] == second)
      return std::make_pair(inputs[1], inputs[0]);
    return std::nullopt;
  };
  using Kind = Contraction::Kind;
  if (rank == 2) {
    if (auto p = pick(D{out[0], k}, D{k}))
      return Contraction{Kind::Matvec, p->first, p->second};
    why = "a rank-2 contraction whose maps are not a mat-vec's "
          "(n, k), (k) -> (n)";
    return std::nullopt;
  }
  if (rank == 3) {
    unsigned m = out[0], n = out[1];
    if (auto p = pick(D{m, k}, D{n, k}))
      return Contraction{Kind::MatmulTransposeB, p->first, p->second};
    if (auto p = pick(D{m, k}, D{k, n}))
      return Contraction{Kind::Matmul, p->first, p->second};
    why = "a rank-3 contraction whose maps are neither x W ((m, k), (k, n)) "
          "nor x W^T ((m, k), (n, k)) into (m, n)";
    return std::nullopt;
  }
  if (rank == 4) {
    unsigned b = out[0], m = out[1], n = out[2];
    if (auto p = pick(D{b, m, k}, D{b, k, n}))
      return Contraction{Kind::BatchMatmul, p->first, p->second};
    why = "a rank-4 contraction whose maps are not a batch_matmul's default "
          "(b, m, k), (b, k, n) -> (b, m, n)";
    return std::nullopt;
  }
  why = "a contraction of rank " + std::to_string(rank) +
        " (mat-vec, mat-mul and batched mat-mul are ranks 2, 3 and 4)";
  return std::nullopt;
}

/// The transpose-b maps (m, k), (n, k), (m, n).
ArrayAttr getTransposeBMaps(Builder &b) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  return b.getAffineMapArrayAttr({AffineMap::get(3, 0, {m, k}, ctx),
                                  AffineMap::get(3, 0, {n, k}, ctx),
                                  AffineMap::get(3, 0, {m, n}, ctx)});
}

/// Builds the named op of `c` in place of `op` and returns it.
Operation *raise(RewriterBase &rewriter, linalg::GenericOp op,
                 const Contraction &c) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  TypeRange results = op->getResultTypes();
  ValueRange inits = op.getDpsInits();
  ValueRange ins = {c.lhs, c.rhs};
  Operation *named;
  switch (c.kind) {
  case Contraction::Kind::Matvec:
    named = linalg::MatvecOp::create(rewriter, loc, results, ins, inits);
    break;
  case Contraction::Kind::Matmul:
    named = linalg::MatmulOp::create(rewriter, loc, results, ins, inits);
    break;
  case Contraction::Kind::MatmulTransposeB: {
    auto matmul = linalg::MatmulOp::create(rewriter, loc, results, ins, inits);
    matmul.setIndexingMapsAttr(getTransposeBMaps(rewriter));
    named = matmul;
    break;
  }
  case Contraction::Kind::BatchMatmul:
    named = linalg::BatchMatmulOp::create(rewriter, loc, results, ins, inits);
    break;
  }
  rewriter.replaceOp(op, named->getResults());
  return named;
}

StringRef describe(Contraction::Kind kind) {
  switch (kind) {
  case Contraction::Kind::Matvec:
    return "linalg.matvec";
  case Contraction::Kind::Matmul:
    return "linalg.matmul (x W, the weight read as [K][N])";
  case Contraction::Kind::MatmulTransposeB:
    return "linalg.matmul with the transpose-b maps (x W^T, the weight read "
           "as its [N][K] rows)";
  case Contraction::Kind::BatchMatmul:
    return "linalg.batch_matmul";
  }
  llvm_unreachable("unknown contraction kind");
}

/// The source of a 2-D transpose (linalg.transpose, or a generic that only
/// moves its input) defining `value`, or null.
Value getTransposeSource(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 2)
    return {};
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>())
    return transpose.getPermutation() == ArrayRef<int64_t>{1, 0}
               ? transpose.getInput()
               : Value();
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1)
    return {};
  std::optional<SmallVector<int64_t>> permutation =
      linalg::isaTransposeOpInterface(generic);
  if (!permutation || *permutation != ArrayRef<int64_t>{1, 0})
    return {};
  return generic.getDpsInputs()[0];
}

bool hasDefaultMaps(linalg::MatmulOp matmul) {
  return matmul.getIndexingMapsArray() ==
         linalg::MatmulOp::getDefaultIndexingMaps(matmul.getContext());
}

struct RaiseContractionsPass final
    : public cachet::impl::RaiseContractionsBase<RaiseContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isCandidate(op))
        candidates.push_back(op);
    });
    for (linalg::GenericOp op : candidates) {
      std::string why;
      std::optional<Contraction> c = matchContraction(op, why);
      if (!c) {
        emitRemark(op.getLoc(), "cachet-raise-contractions: not raised: ")
            << why;
        continue;
      }
      Contraction::Kind kind = c->kind;
      Operation *named = raise(rewriter, op, *c);
      emitRemark(named->getLoc(),
                 "cachet-raise-contractions: raised a contraction "
                 "generic to ")
          << describe(kind);
    }

    SmallVector<linalg::MatmulOp> matmuls;
    getOperation()->walk([&](linalg::MatmulOp op) {
      if (op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          hasDefaultMaps(op) && getTransposeSource(op.getDpsInputs()[1]))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls) {
      Value transposed = op.getDpsInputs()[1];
      Value weight = getTransposeSource(transposed);
      if (!foldTransposes) {
        emitRemark(op.getLoc(),
                   "cachet-raise-contractions: the transposed weight is "
                   "kept (fold-transposes=false)");
        continue;
      }
      rewriter.modifyOpInPlace(op, [&] {
        op->setOperand(1, weight);
        op.setIndexingMapsAttr(getTransposeBMaps(rewriter));
      });
      Operation *transpose = transposed.getDefiningOp();
      InFlightDiagnostic diag = emitRemark(
          op.getLoc(),
          "cachet-raise-contractions: folded the transpose of the weight ");
      diag << weight.getType()
           << " into the matmul's maps (x W^T, W read as its [N][K] rows)";
      if (isOpTriviallyDead(transpose)) {
        Operation *init = cast<DestinationStyleOpInterface>(transpose)
                              .getDpsInits()[0]
                              .getDefiningOp();
        rewriter.eraseOp(transpose);
        if (init && isOpTriviallyDead(init))
          rewriter.eraseOp(init);
      } else {
        diag << "; the transpose stays for its other uses";
      }
    }
  }
};

} // namespace
