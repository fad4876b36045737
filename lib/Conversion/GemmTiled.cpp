//===- GemmTiled.cpp - the prefill GEMM on f32 fused multiply-adds --------===//
//
// The register-blocked GEMM that every "how to write a fast SGEMM"
// walk-through arrives at, for targets without matrix instructions
// (SPIR-V, ROCDL): each workgroup stages a step of its x rows and weight
// rows in workgroup memory, transposed to [column][row] and converted to
// f32, and each thread sums a block of the tile in registers from runs of 4
// rows read there. The next step's 16-byte global loads are issued before
// this step's products, so they are in flight while it computes.
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

/// Emits one tiled GEMM kernel (see buildGemmTiled).
struct TiledGemmBuilder : cachet::GemmEmitter {
  /// Rows of x and weight rows each thread sums (multiples of 4), and the
  /// threads along the tile's weight rows.
  int64_t threadRows, threadColumns, threadsN;

  /// The pieces of step `step` of `source`'s rows from `first` (clamped to
  /// its `count` rows), each as 8 f32 scalars (single-element extracts of
  /// the 16-byte load: SPIR-V reads it as one vector<4xi32> word).
  SmallVector<Value> load(Value source, int64_t count, Value first,
                          int64_t rows, const Pieces &p, Value step) {
    SmallVector<Value> values;
    auto type = VectorType::get({8}, half);
    for (auto [row, part] : llvm::zip(p.rows, p.parts)) {
      Value at = sourceRow(first, row, count, rows);
      Value col = add(mul(step, t.k), mul(part, 8));
      auto v =
          vector::LoadOp::create(b, loc, type, source, ValueRange{at, col});
      v.setAlignment(16);
      for (int64_t e = 0; e < 8; ++e)
        values.push_back(arith::ExtFOp::create(
            b, loc, b.getF32Type(),
            vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e})
                .getResult()));
    }
    return values;
  }

  /// Stores `values` (from load) transposed into `tile` ([k][rows] f32).
  void store(ArrayRef<Value> values, const Pieces &p, Value tile) {
    for (auto [i, row, part] : llvm::enumerate(p.rows, p.parts))
      for (int64_t e = 0; e < 8; ++e)
        memref::StoreOp::create(b, loc, values[8 * i + e], tile,
                                ValueRange{add(mul(part, 8), e), row});
  }

  void build(Value x, Value w, const cachet::GemmStore &store);
};

void TiledGemmBuilder::build(Value x, Value w,
                             const cachet::GemmStore &storeSums) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto f32x4 = VectorType::get({4}, f32);
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto aTileType = MemRefType::get({t.k, t.m}, f32, nullptr, workgroup);
  auto bTileType = MemRefType::get({t.k, t.n}, f32, nullptr, workgroup);
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = beginLaunch(TypeRange{aTileType, bTileType});
  Value aTile = launch.getWorkgroupAttributions()[0];
  Value bTile = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  Value firstM = mul(launch.getBlockIds().x, t.m);
  Value firstN = mul(launch.getBlockIds().y, t.n);
  // Thread (tm, tn) sums rows c * strideM + 4 tm + e of the x tile and
  // columns c * strideN + 4 tn + e of the weight tile: runs of 4 that the
  // threads of a subgroup read side by side.
  Value tn = rem(tid, threadsN), tm = div(tid, threadsN);
  int64_t runsM = threadRows / 4, runsN = threadColumns / 4;
  int64_t strideM = t.m / runsM, strideN = t.n / runsN;
  // 16-byte pieces: 8 values each.
  Pieces xPieces = getPieces(tid, t.m, t.k / 8),
         wPieces = getPieces(tid, t.n, t.k / 8);
  auto loadStep = [&](Value step) {
    SmallVector<Value> values = load(x, rowsM, firstM, t.m, xPieces, step);
    llvm::append_range(values, load(w, rowsN, firstN, t.n, wPieces, step));
    return values;
  };
  int64_t steps = columns / t.k;
  Value zero = arith::ConstantOp::create(
      b, loc, f32x4, DenseElementsAttr::get(f32x4, b.getF32FloatAttr(0)));
  int64_t sums = threadRows * runsN;
  SmallVector<Value> init(sums, zero);
  int64_t xValues = 8 * static_cast<int64_t>(xPieces.rows.size());
  auto stage = [&](ArrayRef<Value> loaded) {
    store(loaded.take_front(xValues), xPieces, aTile);
    store(loaded.drop_front(xValues), wPieces, bTile);
  };
  auto compute = [&](ValueRange carried) {
    SmallVector<Value> acc(carried);
    for (int64_t kk = 0; kk < t.k; ++kk) {
      SmallVector<Value> a, bv;
      for (int64_t c = 0; c < runsM; ++c) {
        auto v = vector::LoadOp::create(
            b, loc, f32x4, aTile,
            ValueRange{index(kk), add(mul(tm, 4), c * strideM)});
        v.setAlignment(16);
        for (int64_t e = 0; e < 4; ++e)
          a.push_back(vector::BroadcastOp::create(
              b, loc, f32x4,
              vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e})
                  .getResult()));
      }
      for (int64_t c = 0; c < runsN; ++c) {
        auto v = vector::LoadOp::create(
            b, loc, f32x4, bTile,
            ValueRange{index(kk), add(mul(tn, 4), c * strideN)});
        v.setAlignment(16);
        bv.push_back(v);
      }
      for (int64_t i = 0; i < threadRows; ++i)
        for (int64_t c = 0; c < runsN; ++c)
          acc[i * runsN + c] =
              vector::FMAOp::create(b, loc, a[i], bv[c], acc[i * runsN + c]);
    }
    return acc;
  };
  scf::ForOp loop = emitStagedSteps(steps, init, loadStep, stage, compute);

  // Sum (i, c) is row (i / 4) strideM + 4 tm + i % 4 of the tile, columns
  // c strideN + 4 tn .. + 3: stored in pairs.
  for (int64_t i = 0; i < threadRows; ++i)
    for (int64_t c = 0; c < runsN; ++c)
      for (int64_t h = 0; h < 2; ++h) {
        Value row = add(add(firstM, mul(tm, 4)), (i / 4) * strideM + i % 4);
        Value col = add(add(firstN, mul(tn, 4)), c * strideN + 2 * h);
        Value sums4 = loop.getResult(i * runsN + c);
        Value pair = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, b.getF32Type()),
            ValueRange{vector::ExtractOp::create(b, loc, sums4,
                                                 ArrayRef<int64_t>{2 * h}),
                       vector::ExtractOp::create(
                           b, loc, sums4, ArrayRef<int64_t>{2 * h + 1})});
        cachet::emitGemmStore(b, loc, rowsM, rowsN, row, col, pair, storeSums);
      }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void cachet::buildGemmTiled(OpBuilder &b, Location loc, Value x, Value w,
                            const GemmStore &store, const GemmTiles &t) {
  auto xType = cast<MemRefType>(x.getType());
  auto wType = cast<MemRefType>(w.getType());
  int64_t threadRows = t.m * t.n / (t.threads * t.threadColumns);
  TiledGemmBuilder g{{b, loc, t, xType.getElementType(), xType.getDimSize(0),
                      wType.getDimSize(0), xType.getDimSize(1), t.threads},
                     threadRows,
                     t.threadColumns,
                     t.n / t.threadColumns};
  g.build(x, w, store);
}
