//===- GemmWgmma.cpp - the prefill GEMM on sm_90a warpgroup MMA -----------===//
//
// The Hopper form of the GEMM in MmaSync.cpp: each warpgroup (4 subgroups,
// 128 threads) of a workgroup computes 64 rows of x by the tile's weight
// rows with wgmma.mma_async, whose operands the tensor cores read from
// workgroup memory themselves (matrix descriptors; no ldmatrix, no operand
// registers). Steps of 64 columns (one 128-byte row per x or weight row)
// are copied by cp.async into `stages` buffers laid out as wgmma's 128-byte
// swizzle expects: the 16-byte piece c of row r at piece c ^ (r % 8) of the
// row, rows 128 bytes apart, 8-row atoms 1024 bytes apart and 1024-byte
// aligned. The copies are made visible to the tensor cores (the async
// proxy) by fence.proxy.async after they land. Without TMA and without
// producer warps: every thread copies, then every warpgroup multiplies.
//
// A packed block weight (blocks of 32 values) is decoded in the kernel
// (GemmStagedBlocks): each step's bytes of the blocks are copied by 4-byte
// cp.async beside x's, each thread copying the words of its own units (32
// or 64 values of a row) so that it decodes only bytes it waited for
// itself; the values go into a double-buffered weight tile in the same
// swizzle, the next step's decoded while this step's wgmma runs. The
// values are those the dequantized copy would hold (LowerMatvec's
// decodeBlocksAs), so the products are the same bytes.
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

namespace {

/// Columns per step: one 128-byte swizzle row of 16-bit values.
constexpr int64_t kStep = 64;
/// Bytes of one buffered row, and of one 8-row swizzle atom.
constexpr int64_t kRowBytes = 128, kAtomBytes = 1024;

struct WgmmaBuilder : cachet::GemmEmitter {
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }

  /// The wgmma matrix descriptor of K-major rows at workgroup-memory byte
  /// address `address` (i64): 8-row atoms 1024 bytes apart.
  Value descriptor(Value address) {
    return cachet::emitWgmmaDescriptor(b, loc, address, 16, kAtomBytes);
  }

  /// The block weight decoded in the kernel, or null.
  const cachet::GemmStagedBlocks *blocks = nullptr;
  /// With blocks: the blocks' bytes buffers ([stages][t.n][step bytes] i8)
  /// and the weight's decoded tiles ([2][t.n][64]).
  Value raw, bTile;
  /// With blocks: values of a row each thread decodes at once (a unit:
  /// 64, or 32 where a step's rows have more threads than units of 64),
  /// and the units of a row.
  int64_t unitValues = 0, unitsPerRow = 0;

  int64_t units() const { return t.n * unitsPerRow / threads; }
  int64_t unitBytes() const {
    return unitValues / blocks->blockValues * blocks->blockBytes;
  }
  /// The most 32-bit words a unit's bytes touch (they start at any byte of
  /// the step that is a multiple of the unit's bytes).
  int64_t unitWords() const {
    int64_t most = 0;
    for (int64_t p = 0; p < unitsPerRow; ++p)
      most = std::max<int64_t>(most, (p + 1) * unitBytes() / 4 +
                                         ((p + 1) * unitBytes() % 4 != 0) -
                                         p * unitBytes() / 4);
    return most;
  }
  /// Unit `u` of this thread: its row of the tile and its place in it.
  std::pair<Value, Value> unitAt(Value tid, int64_t u) {
    Value id = add(tid, u * threads);
    return {div(id, unitsPerRow), rem(id, unitsPerRow)};
  }
  /// Starts the copies of the bytes of step `step` of the blocks of this
  /// thread's units into buffer `stage` of `raw`: the aligned words its
  /// units' bytes touch (a word two units share is copied by both, the
  /// same bytes), so each thread decodes only bytes it copied itself.
  void copyBlocks(Value firstN, Value step, Value stage, Value tid,
                  SmallVector<Value> &tokens);
  /// Decodes this thread's units of the step in buffer `stage` of `raw`
  /// into buffer `slot` of `bTile` (the 128-byte swizzle).
  void decodeBlocks(Value stage, Value slot, Value tid);

  void build(Value x, Value w, Value y, bool zeroInit);
};

void WgmmaBuilder::copyBlocks(Value firstN, Value step, Value stage, Value tid,
                              SmallVector<Value> &tokens) {
  int64_t stepBytes = blocks->stepBytes(), stepWords = stepBytes / 4;
  for (int64_t u = 0; u < units(); ++u) {
    auto [row, part] = unitAt(tid, u);
    Value at = add(firstN, row);
    if (rowsN % t.n != 0)
      at = arith::MinUIOp::create(b, loc, at, index(rowsN - 1));
    Value firstWord = div(mul(part, unitBytes()), 4);
    Value stepByte = mul(step, stepBytes);
    for (int64_t q = 0; q < unitWords(); ++q) {
      Value word = add(firstWord, q);
      if (unitsPerRow > 1)
        word = arith::MinUIOp::create(b, loc, word, index(stepWords - 1));
      Value byte = mul(word, 4);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, raw, ValueRange{stage, row, byte}, blocks->bytes,
          ValueRange{at, add(stepByte, byte)}, b.getIndexAttr(4),
          /*srcElements=*/Value(), /*bypassL1=*/UnitAttr()));
    }
  }
}

void WgmmaBuilder::decodeBlocks(Value stage, Value slot, Value tid) {
  int64_t stepWords = blocks->stepBytes() / 4;
  for (int64_t u = 0; u < units(); ++u) {
    auto [row, part] = unitAt(tid, u);
    // The unit's words as a row of the step's bytes (a word past the
    // step's last read as the last, as the decoder expects of a row).
    Value rawStage = stage, rawRow = row;
    cachet::BlockDecoder::WordReader readWord =
        [this, rawStage, rawRow, stepWords](OpBuilder &rb, Location rl,
                                            Value word) -> Value {
      Value clamped = arith::MinUIOp::create(
          rb, rl, word, arith::ConstantIndexOp::create(rb, rl, stepWords - 1));
      return cachet::BlockDecoder::loadWord(
          rb, rl, raw,
          ValueRange{
              rawStage, rawRow,
              arith::MulIOp::create(
                  rb, rl, clamped, arith::ConstantIndexOp::create(rb, rl, 4))});
    };
    Value unitFirst = mul(part, unitValues);
    for (int64_t p = 0; p < unitValues / 8; ++p) {
      Value col = add(unitFirst, 8 * p);
      Value blockOffset =
          mul(div(col, blocks->blockValues), blocks->blockBytes);
      Value first = rem(col, blocks->blockValues);
      Value values = blocks->decode(b, loc, readWord, blockOffset, first, 8);
      Value piece = arith::XOrIOp::create(b, loc, div(col, 8), rem(row, 8));
      auto store = vector::StoreOp::create(
          b, loc, values, bTile, ValueRange{slot, row, mul(piece, 8)});
      store.setAlignment(16);
    }
  }
}

void WgmmaBuilder::build(Value x, Value w, Value y, bool zeroInit) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // With blocks the decoded weight tile is double-buffered: a step is
  // decoded while the one before it multiplies.
  int64_t bStages = blocks ? 2 : t.stages;
  auto aTileType =
      MemRefType::get({t.stages, t.m, kStep}, half, nullptr, workgroup);
  auto bTileType =
      MemRefType::get({bStages, t.n, kStep}, half, nullptr, workgroup);
  int64_t aBytes = t.stages * t.m * kRowBytes;
  Value one = index(1);
  int64_t gridM = (rowsM + t.m - 1) / t.m, gridN = (rowsN + t.n - 1) / t.n;
  auto launch = gpu::LaunchOp::create(
      b, loc, index(gridM), index(gridN), one, index(threads), one, one,
      /*dynamicSharedMemorySize=*/
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), t.wgmmaBytes()),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, TypeRange{});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  // The buffers start at the first 1024-byte boundary of the dynamic
  // workgroup memory (the swizzle's atoms are aligned to it).
  Value base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      workgroup));
  Value address = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base));
  Value pad = arith::AndIOp::create(
      b, loc, arith::SubIOp::create(b, loc, i64(0), address),
      i64(kAtomBytes - 1));
  Value padIndex = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), pad);
  Value aTile =
      memref::ViewOp::create(b, loc, aTileType, base, padIndex, ValueRange{});
  bTile = memref::ViewOp::create(b, loc, bTileType, base, add(padIndex, aBytes),
                                 ValueRange{});
  if (blocks)
    raw = memref::ViewOp::create(
        b, loc,
        MemRefType::get({t.stages, t.n, blocks->stepBytes()}, b.getI8Type(),
                        nullptr, workgroup),
        base, add(padIndex, aBytes + bStages * t.n * kRowBytes), ValueRange{});
  Value aAddress = arith::AddIOp::create(b, loc, address, pad);
  Value bAddress = arith::AddIOp::create(b, loc, aAddress, i64(aBytes));

  Value tid = launch.getThreadIds().x;
  Value firstM = mul(launch.getBlockIds().x, t.m);
  Value firstN = mul(launch.getBlockIds().y, t.n);
  Value group = div(tid, 128);

  auto copyStep = [&](Value step, Value stage) {
    SmallVector<Value> tokens;
    copyTile(x, rowsM, firstM, t.m, aTile, stage, step, tid, tokens, true);
    if (blocks)
      copyBlocks(firstN, step, stage, tid, tokens);
    else
      copyTile(w, rowsN, firstN, t.n, bTile, stage, step, tid, tokens, true);
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  };
  int64_t steps = columns / kStep;
  Value last;
  for (int64_t s = 0; s + 1 < t.stages; ++s)
    last = copyStep(index(std::min(s, steps - 1)), index(s));
  if (blocks) {
    // Step 0's bytes landed (this thread's copies): decoded into the
    // weight tile's buffer 0 before the loop.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, last,
                                     b.getI32IntegerAttr(t.stages - 2));
    decodeBlocks(index(0), index(0), tid);
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  }

  // The warpgroup's m64 x n f32 accumulator: n / 2 values per thread.
  Type f32 = b.getF32Type();
  int64_t values = t.n / 2;
  auto accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(values, f32));
  Value zeroAcc = LLVM::ZeroOp::create(b, loc, accType);
  NVVM::WGMMATypes type =
      half.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
  // This warpgroup's 64 rows of the x tile, as a byte offset.
  Value groupOffset = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), group),
      i64(64 * kRowBytes));
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(steps), one, ValueRange{zeroAcc, last},
      [&](OpBuilder &lb, Location, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value stage = rem(step, t.stages);
        // This step's pieces landed (at most stages - 2 later groups in
        // flight) and are visible to the tensor cores; every thread's.
        // (With blocks, the previous step's end waited for them and
        // fenced the decoded weight tile.)
        if (!blocks) {
          nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[1],
                                           b.getI32IntegerAttr(t.stages - 2));
          NVVM::FenceProxyOp::create(
              b, loc, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
        }
        gpu::BarrierOp::create(b, loc);
        Value stage64 =
            arith::IndexCastUIOp::create(b, loc, b.getI64Type(), stage);
        Value aStage = arith::AddIOp::create(
            b, loc, aAddress,
            arith::MulIOp::create(b, loc, stage64, i64(t.m * kRowBytes)));
        aStage = arith::AddIOp::create(b, loc, aStage, groupOffset);
        Value bSlot64 = blocks ? arith::IndexCastUIOp::create(
                                     b, loc, b.getI64Type(), rem(step, 2))
                               : stage64;
        Value bStage = arith::AddIOp::create(
            b, loc, bAddress,
            arith::MulIOp::create(b, loc, bSlot64, i64(t.n * kRowBytes)));
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value acc = carried[0];
        // Four k16 products, 32 bytes further along the rows each.
        for (int64_t kk = 0; kk < kStep / 16; ++kk) {
          Value descA =
              descriptor(arith::AddIOp::create(b, loc, aStage, i64(32 * kk)));
          Value descB =
              descriptor(arith::AddIOp::create(b, loc, bStage, i64(32 * kk)));
          acc = NVVM::WgmmaMmaAsyncOp::create(
              b, loc, accType, acc, descA, descB,
              NVVM::MMAShapeAttr::get(ctx, 64, t.n, 16), type, type,
              NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
              NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
              NVVM::MMALayout::row, NVVM::MMALayout::col,
              /*satfinite=*/nullptr);
        }
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        // The previous step's products done, in every warpgroup: its
        // buffer takes the copies of step + stages - 1 (clamped to the
        // last step, into a buffer nothing reads) while this step's
        // products run.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
        gpu::BarrierOp::create(b, loc);
        Value ahead = add(step, t.stages - 1);
        Value token =
            copyStep(arith::MinUIOp::create(b, loc, ahead, index(steps - 1)),
                     rem(ahead, t.stages));
        if (blocks) {
          // The next step's bytes landed (this thread's copies): decoded
          // into the other buffer of the weight tile (its products, two
          // steps back, done in every warpgroup) while this step's
          // products run. Past the last step a buffer nothing reads.
          nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                           b.getI32IntegerAttr(t.stages - 2));
          Value next = add(step, 1);
          decodeBlocks(rem(next, t.stages), rem(next, 2), tid);
          NVVM::FenceProxyOp::create(
              b, loc, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
        }
        scf::YieldOp::create(b, loc, ValueRange{acc, token});
      });
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(1),
                                   b.getI32IntegerAttr(0));

  // Thread l of subgroup s of the warpgroup holds, for each n8 block j,
  // rows 16 s + l / 4 (values 4 j, 4 j + 1) and + 8 (4 j + 2, 4 j + 3),
  // columns 8 j + 2 (l % 4) and the next.
  Value inGroup = rem(tid, 128);
  Value row0 = add(add(firstM, mul(group, 64)),
                   add(mul(div(inGroup, 32), 16), div(rem(inGroup, 32), 4)));
  Value col0 = add(firstN, mul(rem(inGroup, 4), 2));
  auto f32x2 = VectorType::get({2}, f32);
  Value acc = loop.getResult(0);
  for (int64_t j = 0; j < t.n / 8; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(row0, 8 * h);
      Value col = add(col0, 8 * j);
      Value pair = vector::BroadcastOp::create(
          b, loc, f32x2,
          LLVM::ExtractValueOp::create(b, loc, acc, 4 * j + 2 * h));
      pair = vector::InsertOp::create(
          b, loc, LLVM::ExtractValueOp::create(b, loc, acc, 4 * j + 2 * h + 1),
          pair, ArrayRef<int64_t>{1});
      cachet::storeGemmPair(b, loc, y, row, col, pair, zeroInit);
    }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

Value cachet::emitWgmmaDescriptor(OpBuilder &b, Location loc, Value address,
                                  int64_t leadingBytes, int64_t strideBytes) {
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, address, i64(4)), i64(0x3FFF));
  int64_t fixed = ((leadingBytes / 16) << 16) | ((strideBytes / 16) << 32) |
                  (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, i64(fixed));
}

void cachet::buildGemmWgmma(OpBuilder &b, Location loc, Value x, Value w,
                            Value y, bool zeroInit, const GemmTiles &t,
                            const GemmStagedBlocks *blocks) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t rowsN =
      cast<MemRefType>((blocks ? blocks->bytes : w).getType()).getDimSize(0);
  // The steps are 64 columns (one 128-byte swizzle row).
  cachet::GemmTiles tiles = t;
  tiles.k = kStep;
  tiles.stagedRowBytes = blocks ? blocks->stepBytes() : 0;
  WgmmaBuilder g{{b, loc, tiles, xType.getElementType(), xType.getDimSize(0),
                  rowsN, xType.getDimSize(1), 128 * (t.m / 64)}};
  if (blocks) {
    g.blocks = blocks;
    int64_t perThread = t.n * kStep / g.threads;
    g.unitValues = std::min<int64_t>(kStep, perThread);
    g.unitsPerRow = kStep / g.unitValues;
  }
  g.build(x, w, y, zeroInit);
}
