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
// proxy) by fence.proxy.async after they land. Without TMA; for f16/bf16
// weights without producer warps: every thread copies, then every
// warpgroup multiplies.
//
// A packed block weight (blocks of 32 values) can be decoded in the kernel
// (GemmStagedBlocks): each step's bytes of the blocks are copied by
// coalesced cp.async of 16 (or 4) bytes beside x's and, after a barrier,
// decoded 8 values per thread into a double-buffered weight tile in the
// same swizzle, the next step's while this step's wgmma runs: by the
// multiplying warpgroups between their products, or by 1-2 producer
// warpgroups that named barriers hand the tiles to and from. The values
// are those the dequantized copy would hold (LowerMatvec's
// decodeBlocksAs), so the products are the same bytes. Slower than the
// copy on an H100 (docs/BENCHMARKS.md runs 126-130): off by default.
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
  /// With blocks: the blocks' bytes buffers ([stages][t.n][pitch] i8)
  /// and the weight's decoded tiles ([2][t.n][64]).
  Value raw, bTile;

  /// The byte of a row where step `step`'s copied pieces start: its first
  /// byte rounded down to a piece.
  Value pieceStart(Value step) {
    int64_t stepBytes = blocks->stepBytes(), piece = blocks->pieceBytes;
    Value first = mul(step, stepBytes);
    return sub(first, rem(first, piece));
  }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }

  /// Starts the copies of step `step`'s block bytes of the tile's rows
  /// into buffer `stage` of `raw`: each row's pieces from pieceStart on,
  /// piece p of the workgroup's threads' p, p + threads, ... (consecutive
  /// threads read consecutive pieces of a row: whole sectors). A piece
  /// past the row's end is read as its last; past the tile's pieces the
  /// last piece is copied again (the same bytes).
  void copyBlocks(Value firstN, Value step, Value stage, Value tid,
                  SmallVector<Value> &tokens);
  /// Decodes step `step`'s values from buffer `stage` of `raw` (landed
  /// and published by a barrier) into buffer `slot` of `bTile`: piece p
  /// (8 values of a row) of the threads' p, p + threads, ..., stored
  /// where copyTile's swizzle puts it.
  void decodeBlocks(Value step, Value stage, Value slot, Value tid);

  /// With blocks: producer warpgroups (the workgroup's last 128 threads
  /// each) that copy and decode every step while the others multiply; 0:
  /// the multiplying warpgroups decode between their products.
  int64_t producers = 0;
  Type accType;
  NVVM::WGMMATypes type;

  /// Emits the four k16 products of a step of the warpgroup's x rows at
  /// workgroup-memory byte address `aStage` and the weight tile at
  /// `bStage` into `acc`, committed as one group.
  Value multiply(Value acc, Value aStage, Value bStage);
  /// Weights of the kernel (siblings over one x: `t.n / weights` rows of
  /// each per tile).
  int64_t weights = 1;
  /// Rows of each weight per tile.
  int64_t rowsPerWeight() const { return t.n / weights; }
  /// Hands the warpgroup `group`'s accumulator `acc` to `store`, a pair
  /// per weight.
  void store(Value acc, Value tid, Value group, Value firstM, Value firstN,
             const cachet::GemmStore &store);
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value asI32(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
  }
  /// bar.sync / bar.arrive on named barrier `id` (an i32) of `count`
  /// threads.
  void barrierSync(Value id, int64_t count) {
    NVVM::BarrierOp::create(b, loc, Type(), id, i32(count),
                            NVVM::BarrierReductionAttr(), Value());
  }
  void barrierArrive(Value id, int64_t count) {
    NVVM::BarrierArriveOp::create(b, loc, id, i32(count));
  }
  void fenceAsync() {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }

  void build(Value x, ArrayRef<Value> w, const cachet::GemmStore &store);
};

Value WgmmaBuilder::multiply(Value acc, Value aStage, Value bStage) {
  MLIRContext *ctx = b.getContext();
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
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
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void WgmmaBuilder::store(Value acc, Value tid, Value group, Value firstM,
                         Value firstN, const cachet::GemmStore &store) {
  // Thread l of subgroup s of the warpgroup holds, for each n8 block j,
  // rows 16 s + l / 4 (values 4 j, 4 j + 1) and + 8 (4 j + 2, 4 j + 3),
  // columns 8 j + 2 (l % 4) and the next. Weight i's rows are the tile's
  // blocks from i rowsPerWeight() / 8 on.
  Type f32 = b.getF32Type();
  Value inGroup = rem(tid, 128);
  Value row0 = add(add(firstM, mul(group, 64)),
                   add(mul(div(inGroup, 32), 16), div(rem(inGroup, 32), 4)));
  Value col0 = add(firstN, mul(rem(inGroup, 4), 2));
  auto f32x2 = VectorType::get({2}, f32);
  int64_t blocksPerWeight = rowsPerWeight() / 8;
  for (int64_t j = 0; j < blocksPerWeight; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(row0, 8 * h);
      Value col = add(col0, 8 * j);
      SmallVector<Value> pairs;
      for (int64_t i = 0; i < weights; ++i) {
        int64_t at = 4 * (j + i * blocksPerWeight) + 2 * h;
        Value pair = vector::BroadcastOp::create(
            b, loc, f32x2, LLVM::ExtractValueOp::create(b, loc, acc, at));
        pairs.push_back(vector::InsertOp::create(
            b, loc, LLVM::ExtractValueOp::create(b, loc, acc, at + 1), pair,
            ArrayRef<int64_t>{1}));
      }
      cachet::emitGemmStore(b, loc, rowsM, rowsN, row, col, pairs, store);
    }
}

void WgmmaBuilder::copyBlocks(Value firstN, Value step, Value stage, Value tid,
                              SmallVector<Value> &tokens) {
  int64_t piece = blocks->pieceBytes;
  int64_t perRow = blocks->pitch() / piece, total = t.n * perRow;
  Value start = pieceStart(step);
  for (int64_t p = 0; p < total; p += threads) {
    Value id = add(tid, p);
    if (p + threads > total)
      id = arith::MinUIOp::create(b, loc, id, index(total - 1));
    Value row = div(id, perRow);
    Value at = add(firstN, row);
    if (rowsN % t.n != 0)
      at = arith::MinUIOp::create(b, loc, at, index(rowsN - 1));
    Value offset = mul(rem(id, perRow), piece);
    Value source = arith::MinUIOp::create(b, loc, add(start, offset),
                                          index(blocks->rowBytes - piece));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, raw, ValueRange{stage, row, offset}, blocks->bytes,
        ValueRange{at, source}, b.getIndexAttr(piece),
        /*srcElements=*/Value(), piece == 16 ? b.getUnitAttr() : UnitAttr()));
  }
}

void WgmmaBuilder::decodeBlocks(Value step, Value stage, Value slot,
                                Value tid) {
  int64_t stepWords = blocks->stepBytes() / 4;
  // The step's first byte within its copied pieces, in words.
  Value skip = div(rem(mul(step, blocks->stepBytes()), blocks->pieceBytes), 4);
  for (int64_t p = 0; p < t.n * 8; p += threads) {
    Value id = add(tid, p);
    Value row = div(id, 8), part = rem(id, 8);
    // Word w of the step's bytes of the row (a word past the step's last
    // read as the last, as the decoder expects of a row).
    cachet::BlockDecoder::WordReader readWord =
        [this, stage, row, skip, stepWords](OpBuilder &rb, Location rl,
                                            Value word) -> Value {
      Value clamped = arith::MinUIOp::create(
          rb, rl, word, arith::ConstantIndexOp::create(rb, rl, stepWords - 1));
      Value at = arith::AddIOp::create(rb, rl, clamped, skip);
      return cachet::BlockDecoder::loadWord(
          rb, rl, raw,
          ValueRange{
              stage, row,
              arith::MulIOp::create(
                  rb, rl, at, arith::ConstantIndexOp::create(rb, rl, 4))});
    };
    Value col = mul(part, 8);
    Value blockOffset = mul(div(col, blocks->blockValues), blocks->blockBytes);
    Value first = rem(col, blocks->blockValues);
    Value values = blocks->decode(b, loc, readWord, blockOffset, first, 8);
    Value swizzled = arith::XOrIOp::create(b, loc, part, rem(row, 8));
    auto store = vector::StoreOp::create(
        b, loc, values, bTile, ValueRange{slot, row, mul(swizzled, 8)});
    store.setAlignment(16);
  }
}

void WgmmaBuilder::build(Value x, ArrayRef<Value> w,
                         const cachet::GemmStore &store) {
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
  int64_t gridM = (rowsM + t.m - 1) / t.m,
          gridN = (rowsN + rowsPerWeight() - 1) / rowsPerWeight();
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
        MemRefType::get({t.stages, t.n, blocks->pitch()}, b.getI8Type(),
                        nullptr, workgroup),
        base, add(padIndex, aBytes + bStages * t.n * kRowBytes), ValueRange{});
  Value aAddress = arith::AddIOp::create(b, loc, address, pad);
  Value bAddress = arith::AddIOp::create(b, loc, aAddress, i64(aBytes));

  Value tid = launch.getThreadIds().x;
  Value firstM = mul(launch.getBlockIds().x, t.m);
  Value firstN = mul(launch.getBlockIds().y, rowsPerWeight());
  Value group = div(tid, 128);

  auto copyStep = [&](Value step, Value stage, Value by) {
    SmallVector<Value> tokens;
    copyTile(x, rowsM, firstM, t.m, aTile, stage, step, by, tokens, true);
    if (blocks)
      copyBlocks(firstN, step, stage, by, tokens);
    else
      for (auto [i, weight] : llvm::enumerate(w))
        copyTile(weight, rowsN, firstN, rowsPerWeight(), bTile, stage, step, by,
                 tokens, true, i * rowsPerWeight());
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  };
  int64_t steps = columns / kStep;
  // The warpgroup's m64 x n f32 accumulator: n / 2 values per thread.
  accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(t.n / 2, b.getF32Type()));
  type = half.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
  // This warpgroup's 64 rows of the x tile, as a byte offset.
  Value groupOffset = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), group),
      i64(64 * kRowBytes));
  auto aAt = [&](Value stage) {
    return arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, aAddress,
            arith::MulIOp::create(
                b, loc,
                arith::IndexCastUIOp::create(b, loc, b.getI64Type(), stage),
                i64(t.m * kRowBytes))),
        groupOffset);
  };
  auto bAt = [&](Value slot) {
    return arith::AddIOp::create(
        b, loc, bAddress,
        arith::MulIOp::create(
            b, loc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), slot),
            i64(t.n * kRowBytes)));
  };

  if (producers > 0) {
    // Named barriers: 1 the producers' own; 2 + s: step s %
    // 2's x and weight tiles are full (the producer arrives, the
    // multiplying warpgroups wait); 4 + s: the multiplying warpgroups are
    // done with step s % 2 (they arrive, the producer waits). Each is
    // used by every other step, so the waits pair with the arrivals in
    // order.
    int64_t consumers = 2 * t.m, own128 = 128 * producers,
            all = consumers + own128;
    Value full = i32(2), empty = i32(4), own = i32(1);
    auto isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            tid, index(consumers));
    auto split = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&split.getThenRegion().front());
      int64_t saved = threads;
      threads = own128;
      Value ptid = arith::SubIOp::create(b, loc, tid, index(consumers));
      // Steps 0 .. stages - 2 in flight; step 0 decoded into weight
      // buffer 0 once every producer thread's copies landed.
      Value last;
      for (int64_t s = 0; s + 1 < t.stages; ++s)
        last = copyStep(index(std::min(s, steps - 1)), index(s), ptid);
      nvgpu::DeviceAsyncWaitOp::create(b, loc, last,
                                       b.getI32IntegerAttr(t.stages - 2));
      barrierSync(own, own128);
      decodeBlocks(index(0), index(0), index(0), ptid);
      fenceAsync();
      barrierArrive(full, all);
      auto loop = scf::ForOp::create(
          b, loc, index(1), index(steps), index(1), ValueRange{last},
          [&](OpBuilder &lb, Location, Value step, ValueRange carried) {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
            Value parity = asI32(rem(step, 2));
            // Step - 2 multiplied: its x buffer takes step + stages - 2's
            // copies (clamped to the last step), its weight buffer this
            // step's values.
            auto wait = scf::IfOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step,
                                      index(2)),
                /*withElse=*/false);
            {
              OpBuilder::InsertionGuard g3(b);
              b.setInsertionPointToStart(&wait.getThenRegion().front());
              barrierSync(arith::AddIOp::create(b, loc, empty, parity), all);
            }
            Value ahead = add(step, t.stages - 2);
            Value token = copyStep(
                arith::MinUIOp::create(b, loc, ahead, index(steps - 1)),
                rem(ahead, t.stages), ptid);
            nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                             b.getI32IntegerAttr(t.stages - 2));
            barrierSync(own, own128);
            decodeBlocks(step, rem(step, t.stages), rem(step, 2), ptid);
            fenceAsync();
            barrierArrive(arith::AddIOp::create(b, loc, full, parity), all);
            scf::YieldOp::create(b, loc, ValueRange{token});
          });
      // The clamped copies past the last step land before the exit.
      nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(0),
                                       b.getI32IntegerAttr(0));
      threads = saved;
    }
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&split.getElseRegion().front());
      auto loop = scf::ForOp::create(
          b, loc, index(0), index(steps), index(1),
          ValueRange{LLVM::ZeroOp::create(b, loc, accType)},
          [&](OpBuilder &lb, Location, Value step, ValueRange carried) {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
            barrierSync(
                arith::AddIOp::create(b, loc, full, asI32(rem(step, 2))), all);
            Value acc = multiply(carried[0], aAt(rem(step, t.stages)),
                                 bAt(rem(step, 2)));
            // The previous step's products done in this warpgroup; the
            // producer waits for steps up to steps - 3.
            NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
            Value previous = arith::SubIOp::create(b, loc, step, index(1));
            auto done = scf::IfOp::create(
                b, loc,
                arith::AndIOp::create(
                    b, loc,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          step, index(1)),
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          previous, index(steps - 2))),
                /*withElse=*/false);
            {
              OpBuilder::InsertionGuard g3(b);
              b.setInsertionPointToStart(&done.getThenRegion().front());
              barrierArrive(
                  arith::AddIOp::create(b, loc, empty, asI32(rem(previous, 2))),
                  all);
            }
            scf::YieldOp::create(b, loc, ValueRange{acc});
          });
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      this->store(loop.getResult(0), tid, group, firstM, firstN, store);
    }
    gpu::TerminatorOp::create(b, loc);
    return;
  }

  Value last;
  for (int64_t s = 0; s + 1 < t.stages; ++s)
    last = copyStep(index(std::min(s, steps - 1)), index(s), tid);
  if (blocks) {
    // Step 0's bytes landed (every thread's copies): decoded into the
    // weight tile's buffer 0 before the loop.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, last,
                                     b.getI32IntegerAttr(t.stages - 2));
    gpu::BarrierOp::create(b, loc);
    decodeBlocks(index(0), index(0), index(0), tid);
    fenceAsync();
  }

  Value zeroAcc = LLVM::ZeroOp::create(b, loc, accType);
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
          fenceAsync();
        }
        gpu::BarrierOp::create(b, loc);
        Value acc = multiply(carried[0], aAt(stage),
                             bAt(blocks ? rem(step, 2) : stage));
        // With blocks: the next step's bytes landed (this thread's
        // copies; the barrier below makes them every thread's). Groups
        // up to step + stages - 2 are in flight.
        if (blocks)
          nvgpu::DeviceAsyncWaitOp::create(b, loc, carried[1],
                                           b.getI32IntegerAttr(t.stages - 3));
        // The previous step's products done, in every warpgroup: its
        // buffer takes the copies of step + stages - 1 (clamped to the
        // last step, into a buffer nothing reads) while this step's
        // products run.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
        gpu::BarrierOp::create(b, loc);
        Value ahead = add(step, t.stages - 1);
        Value token =
            copyStep(arith::MinUIOp::create(b, loc, ahead, index(steps - 1)),
                     rem(ahead, t.stages), tid);
        if (blocks) {
          // The next step's bytes are decoded into the other buffer of
          // the weight tile (its products, a step back, done in every
          // warpgroup) while this step's products run. Past the last step
          // (a clamped copy) into a buffer nothing reads.
          Value next = add(step, 1);
          decodeBlocks(arith::MinUIOp::create(b, loc, next, index(steps - 1)),
                       rem(next, t.stages), rem(next, 2), tid);
          fenceAsync();
        }
        scf::YieldOp::create(b, loc, ValueRange{acc, token});
      });
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(1),
                                   b.getI32IntegerAttr(0));

  this->store(loop.getResult(0), tid, group, firstM, firstN, store);
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

void cachet::buildGemmWgmma(OpBuilder &b, Location loc, Value x,
                            ArrayRef<Value> weights, const GemmStore &store,
                            const GemmTiles &t,
                            const GemmStagedBlocks *blocks) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t rowsN =
      cast<MemRefType>((blocks ? blocks->bytes : weights.front()).getType())
          .getDimSize(0);
  // The steps are 64 columns (one 128-byte swizzle row).
  cachet::GemmTiles tiles = t;
  tiles.k = kStep;
  int64_t producers = blocks ? t.producers : 0;
  WgmmaBuilder g{{b, loc, tiles, xType.getElementType(), xType.getDimSize(0),
                  rowsN, xType.getDimSize(1),
                  128 * (t.m / 64) + 128 * producers}};
  g.blocks = blocks;
  g.producers = producers;
  g.weights = static_cast<int64_t>(weights.size());
  g.build(x, weights, store);
}
