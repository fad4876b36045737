//===- MmaSync.cpp - m16n8k16 mma.sync pieces and the GEMM kernel ---------===//
//
// The GEMM is the classic Ampere design (the one CUTLASS's sm80 kernels and
// every "how to write a fast GEMM" walk-through describe): a workgroup tile
// of x rows times weight rows, steps of 32 columns double-buffered in
// workgroup memory by cp.async, ldmatrix operands, warp tiles of 64 x 32 on
// m16n8k16 mma.sync. Both operands are K-contiguous (x [M][K], the weight
// [N][K] as a torch linear layer stores it), which is what ldmatrix without
// transposition gives the A (row) and B (col) fragments.
//
//===----------------------------------------------------------------------===//

#include "MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

Value cachet::emitPackedMmaSync(OpBuilder &b, Location loc, Value a, Value bOp,
                                Value acc) {
  Type half = cast<VectorType>(a.getType()).getElementType();
  Type i32 = b.getI32Type();
  auto pairs = [&](Value fragment) {
    SmallVector<Value> words;
    auto type = cast<VectorType>(fragment.getType());
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      Value pair =
          vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{i});
      // nvvm.mma.sync takes f16 pairs as vector<2xf16>, bf16 ones as i32.
      if (half.isF16()) {
        words.push_back(pair);
        continue;
      }
      Value word =
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair);
      words.push_back(
          vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
    }
    return words;
  };
  SmallVector<Value> accumulator;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t e = 0; e < 2; ++e)
      accumulator.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i, e}));
  Type f32Type = b.getF32Type();
  NVVM::MMATypes type =
      half.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  SmallVector<Value> aWords = pairs(a), bWords = pairs(bOp);
  Value d = NVVM::MmaOp::create(
      b, loc, Type(resultType), ValueRange(aWords), ValueRange(bWords),
      ValueRange(accumulator), ArrayRef<int64_t>{16, 8, 16},
      std::optional<NVVM::MMAB1Op>(), std::optional<NVVM::MMAIntOverflow>(),
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  auto cType = VectorType::get({2, 2}, f32Type);
  Value result = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0)));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t e = 0; e < 2; ++e)
      result = vector::InsertOp::create(
          b, loc, LLVM::ExtractValueOp::create(b, loc, d, 2 * i + e), result,
          ArrayRef<int64_t>{i, e});
  return result;
}

void cachet::emitGemmStore(OpBuilder &b, Location loc, int64_t rows,
                           int64_t columns, Value row, Value col,
                           ArrayRef<Value> pairs, const GemmStore &store) {
  auto bound = [&](Value v, int64_t size) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                 arith::ConstantIndexOp::create(b, loc, size));
  };
  Value inside =
      arith::AndIOp::create(b, loc, bound(row, rows), bound(col, columns));
  auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  store(b, loc, row, col, pairs);
}

Value cachet::GemmEmitter::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value cachet::GemmEmitter::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value cachet::GemmEmitter::add(Value x, int64_t y) {
  return y == 0 ? x : add(x, index(y));
}
Value cachet::GemmEmitter::mul(Value x, int64_t y) {
  return arith::MulIOp::create(b, loc, x, index(y));
}
Value cachet::GemmEmitter::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, loc, x, index(y));
}
Value cachet::GemmEmitter::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, loc, x, index(y));
}

std::pair<Value, Value> cachet::GemmEmitter::piece(Value tid, int64_t first,
                                                   int64_t pieces,
                                                   int64_t perRow) {
  Value piece = add(tid, first);
  if (first + threads > pieces)
    piece = arith::MinUIOp::create(b, loc, piece, index(pieces - 1));
  return {div(piece, perRow), rem(piece, perRow)};
}

Value cachet::GemmEmitter::sourceRow(Value first, Value row, int64_t count,
                                     int64_t rows) {
  Value at = add(first, row);
  if (count % rows != 0)
    at = arith::MinUIOp::create(b, loc, at, index(count - 1));
  return at;
}

cachet::GemmEmitter::Pieces
cachet::GemmEmitter::getPieces(Value tid, int64_t rows, int64_t perRow) {
  Pieces p;
  int64_t pieces = rows * perRow;
  for (int64_t first = 0; first < pieces; first += threads) {
    auto [row, part] = piece(tid, first, pieces, perRow);
    p.rows.push_back(row);
    p.parts.push_back(part);
  }
  return p;
}

gpu::LaunchOp cachet::GemmEmitter::beginLaunch(TypeRange workgroup) {
  Value one = index(1);
  int64_t gridM = (rowsM + t.m - 1) / t.m, gridN = (rowsN + t.n - 1) / t.n;
  auto launch = gpu::LaunchOp::create(
      b, loc, index(gridM), index(gridN), one, index(threads), one, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, workgroup);
  b.setInsertionPointToStart(&launch.getBody().front());
  return launch;
}

scf::ForOp cachet::GemmEmitter::emitStagedSteps(
    int64_t steps, ValueRange accumulators,
    function_ref<SmallVector<Value>(Value)> load,
    function_ref<void(ArrayRef<Value>)> stage,
    function_ref<SmallVector<Value>(ValueRange)> compute) {
  SmallVector<Value> init(accumulators);
  llvm::append_range(init, load(index(0)));
  int64_t count = static_cast<int64_t>(accumulators.size());
  return scf::ForOp::create(
      b, loc, index(0), index(steps), index(1), init,
      [&](OpBuilder &lb, Location, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        gpu::BarrierOp::create(b, loc);
        stage(SmallVector<Value>(carried.drop_front(count)));
        gpu::BarrierOp::create(b, loc);
        Value next =
            arith::MinUIOp::create(b, loc, add(step, 1), index(steps - 1));
        SmallVector<Value> ahead = load(next);
        SmallVector<Value> acc = compute(carried.take_front(count));
        llvm::append_range(acc, ahead);
        scf::YieldOp::create(b, loc, acc);
      });
}

void cachet::GemmEmitter::copyTile(Value source, int64_t count, Value first,
                                   int64_t rows, Value tile, Value stage,
                                   Value step, Value tid,
                                   SmallVector<Value> &tokens, bool swizzle,
                                   int64_t tileRow) {
  int64_t perRow = t.k / 8, pieces = rows * perRow;
  for (int64_t p = 0; p < pieces; p += threads) {
    auto [row, part] = piece(tid, p, pieces, perRow);
    Value col = mul(part, 8);
    Value at = sourceRow(first, row, count, rows);
    Value srcCol = add(mul(step, t.k), col);
    Value dstCol =
        swizzle ? mul(arith::XOrIOp::create(b, loc, part, rem(row, 8)), 8)
                : col;
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tile, ValueRange{stage, add(row, tileRow), dstCol}, source,
        ValueRange{at, srcCol}, b.getIndexAttr(8), /*srcElements=*/Value(),
        b.getUnitAttr()));
  }
}

namespace {

/// Emits one GEMM kernel (see buildGemmMmaSync).
struct GemmBuilder : cachet::GemmEmitter {
  /// Elements per buffered row (the step's columns and the padding).
  int64_t pitch;

  Value ldMatrix(Value tile, Value stage, Value row, Value col) {
    return nvgpu::LdMatrixOp::create(b, loc, VectorType::get({4, 2}, half),
                                     tile, ValueRange{stage, row, col},
                                     /*transpose=*/false, /*numTiles=*/4)
        .getResult();
  }

  void build(Value x, Value w, const cachet::GemmStore &store);
};

void GemmBuilder::build(Value x, Value w, const cachet::GemmStore &store) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto aTileType =
      MemRefType::get({t.stages, t.m, pitch}, half, nullptr, workgroup);
  auto bTileType =
      MemRefType::get({t.stages, t.n, pitch}, half, nullptr, workgroup);
  Value one = index(1);
  int64_t gridM = (rowsM + t.m - 1) / t.m, gridN = (rowsN + t.n - 1) / t.n;
  int64_t aBytes = t.stages * t.m * pitch * 2;
  auto launch = gpu::LaunchOp::create(
      b, loc, index(gridM), index(gridN), one, index(threads), one, one,
      /*dynamicSharedMemorySize=*/
      t.dynamicShared
          ? arith::ConstantIntOp::create(b, loc, b.getI32Type(), t.bytes())
                .getResult()
          : Value(),
      /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{},
      t.dynamicShared ? TypeRange{} : TypeRange{aTileType, bTileType});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value aTile, bTile;
  if (t.dynamicShared) {
    Value base = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                        workgroup));
    aTile =
        memref::ViewOp::create(b, loc, aTileType, base, index(0), ValueRange{});
    bTile = memref::ViewOp::create(b, loc, bTileType, base, index(aBytes),
                                   ValueRange{});
  } else {
    aTile = launch.getWorkgroupAttributions()[0];
    bTile = launch.getWorkgroupAttributions()[1];
  }
  Value tid = launch.getThreadIds().x;
  Value firstM = mul(launch.getBlockIds().x, t.m);
  Value firstN = mul(launch.getBlockIds().y, t.n);
  Value lane = rem(tid, 32), warp = div(tid, 32);
  // Subgroup (wm, wn) computes rows [64 wm, 64 wm + 64) of the x tile and
  // [cols wn, cols wn + cols) of the weight tile: 4 x (cols / 8) m16n8
  // accumulators.
  int64_t cols = t.subgroupColumns(), blocksN = cols / 8;
  int64_t warpsN = t.n / cols;
  Value warpM = mul(div(warp, warpsN), 64);
  Value warpN = mul(rem(warp, warpsN), cols);

  auto copyStep = [&](Value step, Value stage) {
    SmallVector<Value> tokens;
    copyTile(x, rowsM, firstM, t.m, aTile, stage, step, tid, tokens, false);
    copyTile(w, rowsN, firstN, t.n, bTile, stage, step, tid, tokens, false);
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  };
  int64_t steps = columns / t.k;
  // The first stages - 1 steps in flight before the loop (the last step
  // again where there are fewer: its buffer is then never read).
  Value last;
  for (int64_t s = 0; s + 1 < t.stages; ++s)
    last = copyStep(index(std::min(s, steps - 1)), index(s));

  auto cType = VectorType::get({2, 2}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, cType, DenseElementsAttr::get(cType, b.getF32FloatAttr(0)));
  int64_t accumulators = 4 * blocksN;
  SmallVector<Value> init(accumulators, zero);
  init.push_back(last);
  // ldmatrix addresses: A (x rows, the m16k16 fragment): lane l gives row
  // l % 16 at column 8 (l / 16); B (weight rows, two n8k16 fragments):
  // row (l % 8) + 8 (l / 16) at column 8 ((l / 8) % 2).
  Value aRow = add(warpM, rem(lane, 16));
  Value aCol = mul(div(lane, 16), 8);
  Value bRow = add(add(warpN, rem(lane, 8)), mul(div(lane, 16), 8));
  Value bCol = mul(rem(div(lane, 8), 2), 8);
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(steps), one, init,
      [&](OpBuilder &lb, Location, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value stage = rem(step, t.stages);
        // This step's copies done (at most stages - 2 later groups still
        // in flight), and every subgroup past the previous step: its
        // buffer takes the copies of step + stages - 1 (clamped to the
        // last step, into a buffer nothing reads).
        nvgpu::DeviceAsyncWaitOp::create(b, loc, carried.back(),
                                         b.getI32IntegerAttr(t.stages - 2));
        gpu::BarrierOp::create(b, loc);
        Value ahead = add(step, t.stages - 1);
        Value token =
            copyStep(arith::MinUIOp::create(b, loc, ahead, index(steps - 1)),
                     rem(ahead, t.stages));
        SmallVector<Value> acc(carried.begin(), carried.begin() + accumulators);
        for (int64_t kk = 0; kk < t.k; kk += 16) {
          SmallVector<Value> aFrag, bFrag;
          for (int64_t i = 0; i < 4; ++i)
            aFrag.push_back(
                ldMatrix(aTile, stage, add(aRow, 16 * i), add(aCol, kk)));
          for (int64_t j = 0; j < blocksN / 2; ++j) {
            Value four =
                ldMatrix(bTile, stage, add(bRow, 16 * j), add(bCol, kk));
            for (int64_t h = 0; h < 2; ++h)
              bFrag.push_back(vector::ShuffleOp::create(
                  b, loc, four, four, ArrayRef<int64_t>{2 * h, 2 * h + 1}));
          }
          for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < blocksN; ++j)
              acc[blocksN * i + j] = cachet::emitPackedMmaSync(
                  b, loc, aFrag[i], bFrag[j], acc[blocksN * i + j]);
        }
        acc.push_back(token);
        scf::YieldOp::create(b, loc, acc);
      });
  nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResults().back(),
                                   b.getI32IntegerAttr(0));

  // The lane's accumulator (i, j) holds rows g and g + 8 of the m16 block,
  // columns 2q and 2q + 1 of the n8 block (g = lane / 4, q = lane % 4).
  Value g = div(lane, 4), q = mul(rem(lane, 4), 2);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < blocksN; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        Value row = add(add(firstM, warpM), add(g, 16 * i + 8 * h));
        Value col = add(add(firstN, warpN), add(q, 8 * j));
        Value sum = vector::ExtractOp::create(
            b, loc, loop.getResult(blocksN * i + j), ArrayRef<int64_t>{h});
        cachet::emitGemmStore(b, loc, rowsM, rowsN, row, col, sum, store);
      }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void cachet::buildGemmMmaSync(OpBuilder &b, Location loc, Value x, Value w,
                              const GemmStore &store, const GemmTiles &t) {
  auto xType = cast<MemRefType>(x.getType());
  auto wType = cast<MemRefType>(w.getType());
  GemmBuilder g{{b, loc, t, xType.getElementType(), xType.getDimSize(0),
                 wType.getDimSize(0), xType.getDimSize(1), 32 * t.subgroups},
                t.k + t.padBytes / 2};
  g.build(x, w, store);
}
