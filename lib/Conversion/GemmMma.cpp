//===- GemmMma.cpp - the prefill GEMM on 16x16x16 cooperative matrices ----===//
//
// The GEMM for devices whose matrix instructions MLIR reaches through
// gpu.subgroup_mma (SPIR-V's KHR cooperative matrices): each workgroup
// stages a step of its x rows and weight rows in workgroup memory as f16,
// and each subgroup multiplies 32 x 32 of the tile as 2 x 2 fragments of
// 16x16 f32 accumulators, the weight's rows read transposed as the B
// operand. The next step's loads are issued before this step's products.
// The sums leave through workgroup memory, where each thread takes pairs
// of them for the store (and the epilogue).
//
//===----------------------------------------------------------------------===//

#include "MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {

/// Emits one mma GEMM kernel (see buildGemmMma).
struct MmaGemmBuilder : cachet::GemmEmitter {
  /// Lanes per subgroup, f16 values per staging load, and the padded
  /// leading dimensions (in elements) of the step tiles and of the sums.
  int64_t subgroup, vectorWidth, stepLead, sumLead;

  /// The pieces of step `step` of `source`'s rows from `first` (clamped to
  /// its `count` rows), each a vector of `vectorWidth` f16 values.
  SmallVector<Value> load(Value source, int64_t count, Value first,
                          int64_t rows, const Pieces &p, Value step) {
    SmallVector<Value> values;
    auto type = VectorType::get({vectorWidth}, half);
    for (auto [row, part] : llvm::zip(p.rows, p.parts)) {
      Value at = sourceRow(first, row, count, rows);
      Value col = add(mul(step, t.k), mul(part, vectorWidth));
      auto v =
          vector::LoadOp::create(b, loc, type, source, ValueRange{at, col});
      v.setAlignment(2 * vectorWidth);
      values.push_back(v);
    }
    return values;
  }

  /// Stores `values` (from load) into `tile` ([rows][stepLead] f16).
  void store(ArrayRef<Value> values, const Pieces &p, Value tile) {
    for (auto [v, row, part] : llvm::zip(values, p.rows, p.parts)) {
      auto st = vector::StoreOp::create(
          b, loc, v, tile, ValueRange{row, mul(part, vectorWidth)});
      st.setAlignment(2 * vectorWidth);
    }
  }

  void build(Value x, Value w, const cachet::GemmStore &store);
};

void MmaGemmBuilder::build(Value x, Value w,
                           const cachet::GemmStore &storeSums) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto aTileType = MemRefType::get({t.m, stepLead}, half, nullptr, workgroup);
  auto bTileType = MemRefType::get({t.n, stepLead}, half, nullptr, workgroup);
  auto sumType = MemRefType::get({t.m, sumLead}, f32, nullptr, workgroup);
  auto aType = gpu::MMAMatrixType::get({16, 16}, half, "AOp");
  auto bType = gpu::MMAMatrixType::get({16, 16}, half, "BOp");
  auto cType = gpu::MMAMatrixType::get({16, 16}, f32, "COp");
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = beginLaunch(TypeRange{aTileType, bTileType, sumType});
  Value aTile = launch.getWorkgroupAttributions()[0];
  Value bTile = launch.getWorkgroupAttributions()[1];
  Value sums = launch.getWorkgroupAttributions()[2];
  Value tid = launch.getThreadIds().x;
  Value firstM = mul(launch.getBlockIds().x, t.m);
  Value firstN = mul(launch.getBlockIds().y, t.n);
  // Subgroup s takes rows 32 (s / subgroupsN) and weight rows
  // 32 (s % subgroupsN) of the tile.
  int64_t subgroupsN = t.n / 32;
  Value sg = div(tid, subgroup);
  Value sgRow = mul(div(sg, subgroupsN), 32);
  Value sgCol = mul(rem(sg, subgroupsN), 32);
  Pieces xPieces = getPieces(tid, t.m, t.k / vectorWidth),
         wPieces = getPieces(tid, t.n, t.k / vectorWidth);
  auto loadStep = [&](Value step) {
    SmallVector<Value> values = load(x, rowsM, firstM, t.m, xPieces, step);
    llvm::append_range(values, load(w, rowsN, firstN, t.n, wPieces, step));
    return values;
  };
  int64_t steps = columns / t.k;
  Value zero = gpu::SubgroupMmaConstantMatrixOp::create(
      b, loc, cType,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)).getResult());
  SmallVector<Value> init(4, zero);
  int64_t xLoads = static_cast<int64_t>(xPieces.rows.size());
  auto stage = [&](ArrayRef<Value> loaded) {
    store(loaded.take_front(xLoads), xPieces, aTile);
    store(loaded.drop_front(xLoads), wPieces, bTile);
  };
  auto compute = [&](ValueRange carried) {
    SmallVector<Value> acc(carried);
    for (int64_t kk = 0; kk < t.k; kk += 16) {
      Value a[2], bm[2];
      for (int64_t i = 0; i < 2; ++i)
        a[i] = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, aType, aTile, ValueRange{add(sgRow, 16 * i), index(kk)},
            b.getIndexAttr(stepLead), /*transpose=*/nullptr);
      // The weight's rows [n][k] are B = w^T read column-major.
      for (int64_t j = 0; j < 2; ++j)
        bm[j] = gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, bType, bTile, ValueRange{add(sgCol, 16 * j), index(kk)},
            b.getIndexAttr(stepLead), b.getUnitAttr());
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          acc[2 * i + j] = gpu::SubgroupMmaComputeOp::create(
              b, loc, cType, a[i], bm[j], acc[2 * i + j], nullptr,
              b.getUnitAttr());
    }
    return acc;
  };
  scf::ForOp loop = emitStagedSteps(steps, init, loadStep, stage, compute);

  // The fragments into the tile's sums, then pairs of them to the store.
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      gpu::SubgroupMmaStoreMatrixOp::create(
          b, loc, loop.getResult(2 * i + j), sums,
          ValueRange{add(sgRow, 16 * i), add(sgCol, 16 * j)},
          b.getIndexAttr(sumLead), /*transpose=*/nullptr);
  gpu::BarrierOp::create(b, loc);
  // Pair p of the tile's m * n / 2 (row p / (n / 2), columns 2 (p % (n /
  // 2)) and the next): thread tid takes p = tid, tid + threads, ...
  int64_t pairs = t.m * t.n / 2, pairsPerRow = t.n / 2;
  auto pairType = VectorType::get({2}, f32);
  for (int64_t first = 0; first < pairs; first += threads) {
    Value p = add(tid, first);
    Value row = div(p, pairsPerRow);
    Value col = mul(rem(p, pairsPerRow), 2);
    auto emit = [&] {
      Value low = memref::LoadOp::create(b, loc, sums, ValueRange{row, col});
      Value high =
          memref::LoadOp::create(b, loc, sums, ValueRange{row, add(col, 1)});
      Value pair = vector::FromElementsOp::create(b, loc, pairType,
                                                  ValueRange{low, high});
      cachet::emitGemmStore(b, loc, rowsM, rowsN, add(firstM, row),
                            add(firstN, col), pair, storeSums);
    };
    if (first + threads <= pairs) {
      emit();
      continue;
    }
    // The last round: threads past the tile's pairs store nothing.
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, p,
                                         index(pairs));
    auto guardIf = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(guardIf.thenBlock());
    emit();
  }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void cachet::buildGemmMma(OpBuilder &b, Location loc, Value x, Value w,
                          const GemmStore &store, const GemmTiles &t) {
  auto xType = cast<MemRefType>(x.getType());
  auto wType = cast<MemRefType>(w.getType());
  int64_t padValues = t.padBytes / 2;
  MmaGemmBuilder g{{b, loc, t, xType.getElementType(), xType.getDimSize(0),
                    wType.getDimSize(0), xType.getDimSize(1), t.threads},
                   t.subgroup,
                   t.vectorWidth,
                   t.k + padValues,
                   t.n + 4};
  g.build(x, w, store);
}
