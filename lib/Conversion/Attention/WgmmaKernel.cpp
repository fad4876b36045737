//===- WgmmaKernel.cpp - the attention's products on warpgroup MMA --------===//
//
// The sm_90a form of the mma-sync kernel (MmaSyncKernel.cpp builds both):
// each warpgroup (4 subgroups, 128 threads) owns 64 query rows and takes
// `Q K^T` (m64 x key tile x head dim) and `P V` (m64 x value dim x key
// tile) on wgmma.mma_async. Q, K and V are read by the tensor cores from
// their workgroup tiles, laid out in wgmma's 128-byte swizzle (each row's
// 64-value panels 128-byte rows, 8-row atoms 1024 bytes apart and aligned;
// KernelBuilder::tileIndices); P is the A operand in registers.
//
// A warpgroup's m64nN accumulator has, subgroup by subgroup, the layout of
// mma.sync's m16n8 C fragments (PTX ISA, "wgmma.mma_async m64nNk16"
// fragments), and its A fragment in registers that of mma.sync's m16k16 A:
// the scores come out as the fragments mmaSyncScores gives, the online
// softmax, the chunk state and the output are the mma-sync kernel's, and P
// goes in as mmaSyncAccumulate's A operands.
//
// Each product is waited for before its results are read: the wait is one
// inline asm taking and returning the accumulator registers, so nothing
// reads them early. No TMA, no producer subgroups: every thread stages
// the tiles (KernelBuilder's kvStage), fenced for the async proxy.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "../MmaSync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

namespace {

/// Bytes of one swizzled tile row (64 16-bit values) and of an 8-row atom.
constexpr int64_t kRowBytes = 128, kAtomBytes = 1024;

/// The LLVM struct of `count` f32 values that wgmma's accumulators are.
LLVM::LLVMStructType accumulatorType(MLIRContext *ctx, int64_t count) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(count, Float32Type::get(ctx)));
}

/// "$first, $first+1, ..., $first+count-1".
std::string operandList(int64_t first, int64_t count) {
  std::string list;
  for (int64_t i = 0; i < count; ++i)
    list += llvm::formatv("{0}${1}", i ? ", " : "", first + i).str();
  return list;
}

/// The constraints of an inline asm whose first operands are `count` f32
/// registers read and written in place, followed by `rest`.
std::string tiedConstraints(int64_t count, StringRef rest) {
  std::string constraints;
  for (int64_t i = 0; i < count; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < count; ++i)
    constraints += llvm::formatv("{0},", i).str();
  constraints += rest;
  if (!constraints.empty() && constraints.back() == ',')
    constraints.pop_back();
  return constraints;
}

} // namespace

Value KernelBuilder::tileAddress(Value tile) {
  return arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile));
}

SmallVector<Value> KernelBuilder::wgmmaWait(ArrayRef<Value> regs) {
  int64_t count = regs.size();
  auto wait = LLVM::InlineAsmOp::create(
      b, loc, accumulatorType(b.getContext(), count), regs,
      "wgmma.commit_group.sync.aligned;\n"
      "wgmma.wait_group.sync.aligned 0;",
      tiedConstraints(count, ""), /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
  SmallVector<Value> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, wait.getResult(0), i));
  return out;
}

SmallVector<Value> KernelBuilder::issueWgmmaScores(const MmaSyncWarp &w,
                                                   Value kTile) {
  // S = Q K^T: the warpgroup's 64 rows of the Q tile (A) by the key tile's
  // rows (B), both K-major, 16 head-dim values (32 bytes of a swizzle row)
  // per product.
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  auto plus = [&](Value x, int64_t y) -> Value {
    return arith::AddIOp::create(b, loc, x, constant(y));
  };
  Value warpgroup = arith::IndexCastUIOp::create(
      b, loc, i64, arith::DivUIOp::create(b, loc, w.f.thread, index(128)));
  Value qBase = arith::AddIOp::create(
      b, loc, tileAddress(w.qTile),
      arith::MulIOp::create(b, loc, warpgroup, constant(64 * kRowBytes)));
  Value kBase = tileAddress(kTile);
  int64_t n = c.keyTile;
  LLVM::LLVMStructType accType = accumulatorType(ctx, n / 2);
  Value acc = LLVM::ZeroOp::create(b, loc, accType);
  NVVM::WGMMATypes type =
      half.isF16() ? NVVM::WGMMATypes::f16 : NVVM::WGMMATypes::bf16;
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < s.headDim / 16; ++kk) {
    int64_t panel = kk / 4, inRow = (kk % 4) * 32;
    Value descA = emitWgmmaDescriptor(
        b, loc, plus(qBase, panel * c.queryTile * kRowBytes + inRow), 16,
        kAtomBytes);
    Value descB = emitWgmmaDescriptor(
        b, loc, plus(kBase, panel * c.keyTile * kRowBytes + inRow), 16,
        kAtomBytes);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc, descA, descB,
        NVVM::MMAShapeAttr::get(ctx, 64, n, 16), type, type,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, /*satfinite=*/nullptr);
  }
  SmallVector<Value> regs;
  for (int64_t i = 0; i < n / 2; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  return regs;
}

SmallVector<Value> KernelBuilder::scoreFragments(const MmaSyncWarp &w,
                                                 ArrayRef<Value> regs) {
  // n8 block j: values 4 j, 4 j + 1 (row g) and 4 j + 2, 4 j + 3 (row
  // g + 8), mma.sync's C fragment.
  SmallVector<Value> scores;
  for (int64_t jb = 0; jb < w.keyBlocks; ++jb)
    scores.push_back(fragmentOf(w.cType, regs.slice(4 * jb, 4)));
  return scores;
}

SmallVector<Value> KernelBuilder::wgmmaScores(const MmaSyncWarp &w,
                                              Value kTile) {
  return scoreFragments(w, wgmmaWait(issueWgmmaScores(w, kTile)));
}

void KernelBuilder::wgmmaAccumulate(const MmaSyncWarp &w, ArrayRef<Value> probs,
                                    Value vTile, SmallVector<Value> &acc,
                                    SmallVector<Value> *inFlight) {
  // O += P V: P (the warpgroup's 64 rows by the key tile, in registers) by
  // V's rows, N-major (the value dimension runs along the swizzle rows):
  // 16 keys, two 8-row atoms, per product; the 64-value panels of the
  // value dimension keyTile rows apart.
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  int64_t n = s.valueDim, count = n / 2;
  SmallVector<Value> regs;
  for (int64_t db = 0; db < w.outBlocks; ++db)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t e = 0; e < 2; ++e)
        regs.push_back(fragmentElement(acc[db], i, e));
  auto pack = [&](int64_t at) -> Value {
    Value pair =
        vector::FromElementsOp::create(b, loc, VectorType::get({2}, half),
                                       ValueRange{probs[at], probs[at + 1]});
    return vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
        ArrayRef<int64_t>{0});
  };
  StringRef type = half.isF16() ? "f16" : "bf16";
  std::string ptx = llvm::formatv(
      "{{\n.reg .pred p;\nsetp.ne.b32 p, ${0}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{1}k16.f32.{2}.{2} {{{3}}, "
      "{{{4}}, ${5}, p, 1, 1, 1;\n}",
      2 * count + 5, n, type, operandList(0, count), operandList(2 * count, 4),
      2 * count + 4);
  std::string constraints = tiedConstraints(count, "r,r,r,r,l,r");
  Value vBase = tileAddress(vTile);
  Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
  auto accType = accumulatorType(b.getContext(), count);
  // probs[jb * 4 + 2 i + e]: keys 8 jb + 2 t + e of row g + 8 i; the A
  // fragment of keys 16 kk.. is blocks 2 kk and 2 kk + 1. All packed
  // before the fence, so that no product waits for a register written
  // after it.
  SmallVector<Value> aRegs;
  for (int64_t block = 0; block < c.keyTile / 8; ++block)
    for (int64_t i = 0; i < 2; ++i)
      aRegs.push_back(pack(block * 4 + 2 * i));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < c.keyTile / 16; ++kk) {
    SmallVector<Value> operands(regs);
    operands.append(aRegs.begin() + 4 * kk, aRegs.begin() + 4 * kk + 4);
    operands.push_back(emitWgmmaDescriptor(
        b, loc,
        arith::AddIOp::create(
            b, loc, vBase,
            arith::ConstantIntOp::create(b, loc, i64, 16 * kk * kRowBytes)),
        c.keyTile * kRowBytes, kAtomBytes));
    operands.push_back(one);
    auto mma = LLVM::InlineAsmOp::create(
        b, loc, accType, operands, ptx, constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, /*asm_dialect=*/nullptr,
        /*operand_attrs=*/nullptr);
    for (int64_t r = 0; r < count; ++r)
      regs[r] = LLVM::ExtractValueOp::create(b, loc, mma.getResult(0), r);
  }
  int64_t others = inFlight ? inFlight->size() : 0;
  if (inFlight)
    regs.append(*inFlight);
  regs = wgmmaWait(regs);
  if (inFlight)
    inFlight->assign(regs.end() - others, regs.end());
  for (int64_t db = 0; db < w.outBlocks; ++db)
    acc[db] = fragmentOf(w.cType, ArrayRef<Value>(regs).slice(4 * db, 4));
}

SmallVector<Value> KernelBuilder::wgmmaPipelinedLoop(Value key, Value value,
                                                     const MmaSyncWarp &w,
                                                     Value keyTiles,
                                                     ValueRange state) {
  // Buffer t % 3 holds tile t. Before the loop: tiles 0 and 1 copied,
  // tile 0's scores. Step t: tile t + 1 waited for (after every thread is
  // past step t - 1, whose buffer takes tile t + 2's copies), tile t + 1's
  // Q K^T issued, tile t's softmax and P V, then one wait for both. Past
  // the last tile the copies are zero-filled and the scores unused.
  const MmaFrame &f = w.f;
  Value kBuffers[3] = {f.tiles[MmaTiles::K], f.tiles[MmaTiles::K2],
                       f.tiles[MmaTiles::K3]};
  Value vBuffers[3] = {f.tiles[MmaTiles::V], f.tiles[MmaTiles::V2],
                       f.tiles[MmaTiles::V3]};
  auto pick = [&](Value(&buffers)[3], Value tile) -> Value {
    Value i = arith::RemUIOp::create(b, loc, tile, index(3));
    auto is = [&](int64_t k) -> Value {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                   index(k));
    };
    return arith::SelectOp::create(
        b, loc, is(0), buffers[0],
        arith::SelectOp::create(b, loc, is(1), buffers[1], buffers[2]));
  };
  auto startOf = [&](Value tile) -> Value {
    return arith::MulIOp::create(b, loc, tile, index(c.keyTile));
  };
  copyTiles(key, value, index(0), kBuffers[0], vBuffers[0], f);
  Value token =
      copyTiles(key, value, index(c.keyTile), kBuffers[1], vBuffers[1], f);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, token, b.getI32IntegerAttr(1));
  tilesWritten();
  SmallVector<Value> init(state);
  init.append(wgmmaScores(w, kBuffers[0]));
  init.push_back(token);
  auto loop = scf::ForOp::create(b, loc, index(0), keyTiles, index(1), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value tile = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    int64_t n = state.size();
    nvgpu::DeviceAsyncWaitOp::create(b, loc, carried.back(),
                                     b.getI32IntegerAttr(0));
    tilesWritten();
    Value ahead = addIndex(tile, 2);
    Value next = copyTiles(key, value, startOf(ahead), pick(kBuffers, ahead),
                           pick(vBuffers, ahead), f);
    SmallVector<Value> nextScores =
        issueWgmmaScores(w, pick(kBuffers, addIndex(tile, 1)));
    SmallVector<Value> yielded =
        mmaSyncSoftmaxStep(w, carried.take_front(n),
                           SmallVector<Value>(carried.slice(n, w.keyBlocks)),
                           startOf(tile), pick(vBuffers, tile), &nextScores);
    yielded.append(scoreFragments(w, nextScores));
    yielded.push_back(next);
    scf::YieldOp::create(b, loc, yielded);
  }
  nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResults().back(),
                                   b.getI32IntegerAttr(0));
  return SmallVector<Value>(loop.getResults().take_front(state.size()));
}
