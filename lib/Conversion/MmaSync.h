//===- MmaSync.h - m16n8k16 mma.sync pieces and the GEMM kernel -*- C++ -*-===//
//
// Private to lib/Conversion: the m16n8k16 multiply-accumulate that the
// attention kernels and the GEMM share, and the mma-sync GEMM of
// cachet-lower-matvec (MmaSync.cpp), NVVM only; the tiled GEMM of the
// other targets (GemmTiled.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_LIB_CONVERSION_MMASYNC_H
#define CACHET_LIB_CONVERSION_MMASYNC_H

#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace cachet {

/// The m16n8k16 multiply-accumulate `acc + a b` of f16 or bf16 fragments
/// (A vector<4x2xT>, B vector<2x2xT>, C and the result vector<2x2xf32>) as
/// nvvm.mma.sync on their pairs (bf16 pairs packed into i32): nvgpu.mma.sync
/// of LLVM 22 deduces no PTX type for bf16.
mlir::Value emitPackedMmaSync(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value a, mlir::Value bOp, mlir::Value acc);

/// The wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format") of an
/// operand in wgmma's 128-byte swizzle at workgroup-memory byte address
/// `address` (i64): the address / 16, the leading and stride byte offsets
/// / 16, swizzle mode 1. K-major operands: `leadingBytes` unused (16), the
/// stride 1024 (8 rows of 128 bytes); MN-major (transposed B): the offset
/// between 64-value panels along N, and between groups of 8 rows along K.
mlir::Value emitWgmmaDescriptor(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value address, int64_t leadingBytes,
                                int64_t strideBytes);

/// The tiles of the mma-sync GEMM (the config's `tile`, `workgroup`,
/// `stages`, `pad_bytes` and `dynamic_shared`).
struct GemmTiles {
  /// Rows of x (tokens) and weight rows per workgroup: a multiple of 64 and
  /// of 32.
  int64_t m = 128, n = 128;
  /// Columns per step (a multiple of 16): `stages` steps are buffered in
  /// workgroup memory, the next steps' asynchronous copies in flight while
  /// one computes. Each buffered row is padded by `padBytes` (16 keeps
  /// nvgpu.ldmatrix free of bank conflicts at 32 and 64 columns).
  int64_t k = 32, stages = 2, padBytes = 16;
  /// Subgroups per workgroup: each computes 64 rows of x by
  /// `subgroupColumns()` weight rows of the tile.
  int64_t subgroups = 8;
  /// The buffers in dynamic workgroup memory (needed above 48 KiB).
  bool dynamicShared = false;
  int64_t subgroupColumns() const { return m * n / (64 * subgroups); }
  /// Bytes of workgroup memory the buffers take.
  int64_t bytes() const { return stages * (m + n) * (2 * k + padBytes); }
  /// Bytes of dynamic workgroup memory the wgmma GEMM asks for: its
  /// buffers of 64 columns, unpadded, and up to 1024 bytes to align them.
  int64_t wgmmaBytes() const {
    return getWgmmaGemmBytes(m, n, stages, stagedRowBytes);
  }
  /// The wgmma GEMM decoding a block weight itself: the bytes of a row of
  /// its buffered block bytes; 0 otherwise.
  int64_t stagedRowBytes = 0;
  /// The wgmma GEMM decoding a block weight itself: producer warpgroups
  /// (128 more threads each) copy and decode while the others multiply.
  int64_t producers = 0;
  /// The tiled GEMM: threads per workgroup, and the weight rows each
  /// computes (a multiple of 4; its rows of x: m * n / (threads *
  /// threadColumns)).
  int64_t threads = 0, threadColumns = 0;
  /// The mma GEMM: lanes per subgroup (one subgroup per 32 x 32 of the
  /// tile) and f16 values per staging load.
  int64_t subgroup = 32, vectorWidth = 8;
  /// Bytes of the tiled GEMM's workgroup memory: one step of x's and the
  /// weight's rows as f32.
  int64_t tiledBytes() const { return 4 * k * (m + n); }
};

/// A block weight the wgmma GEMM decodes in workgroup memory (a
/// gemm_wgmma config with `load_bytes` 4 or 16) instead of reading a
/// dequantized copy: each step's bytes of the blocks (64 values of a row,
/// whole blocks of 32 values) are copied by cp.async of `pieceBytes`
/// pieces into `stages` buffers beside the step's x, and decoded there
/// into the weight's swizzled tile.
struct GemmStagedBlocks {
  /// The blocks, [rows][rowBytes] i8 (rowBytes a multiple of pieceBytes).
  mlir::Value bytes;
  int64_t rowBytes = 0, blockValues = 0, blockBytes = 0, pieceBytes = 4;
  /// Values `first` .. `first + n - 1` of the block at byte `blockOffset`
  /// of a row whose 32-bit words `readWord` reads, as a vector<n x T> of
  /// the GEMM's 16-bit type T (as the dequantized copy would hold them).
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                            const BlockDecoder::WordReader &readWord,
                            mlir::Value blockOffset, mlir::Value first,
                            int64_t n)>
      decode;
  /// Bytes of one step (64 values) of a row.
  int64_t stepBytes() const { return 64 / blockValues * blockBytes; }
  /// Bytes of a row's buffered pieces (getStagedBlockPitch).
  int64_t pitch() const { return getStagedBlockPitch(stepBytes(), pieceBytes); }
};

/// What the GEMM kernels share: their sizes, index arithmetic and the
/// asynchronous copies of a step's tiles.
struct GemmEmitter {
  mlir::OpBuilder &b;
  mlir::Location loc;
  const GemmTiles &t;
  mlir::Type half;
  int64_t rowsM, rowsN, columns, threads;

  mlir::Value index(int64_t v);
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value add(mlir::Value x, int64_t y);
  mlir::Value mul(mlir::Value x, int64_t y);
  mlir::Value div(mlir::Value x, int64_t y);
  mlir::Value rem(mlir::Value x, int64_t y);

  /// Piece `tid + first` of `pieces` 16-byte pieces of `perRow` per row,
  /// as its row and its part of the row: where a round of the threads
  /// passes the last piece, those past it take the last again (the same
  /// bytes to the same place) instead of reaching past the tile.
  std::pair<mlir::Value, mlir::Value> piece(mlir::Value tid, int64_t first,
                                            int64_t pieces, int64_t perRow);
  /// Row `first + row` of a source of `count` rows read in tiles of `rows`,
  /// clamped to its last where the tiles do not divide it.
  mlir::Value sourceRow(mlir::Value first, mlir::Value row, int64_t count,
                        int64_t rows);

  /// One thread's pieces of a step of `rows` rows, `perRow` pieces a row
  /// (piece p of the workgroup's threads' p, p + threads, ...: piece), as
  /// their rows and parts of the row, per round.
  struct Pieces {
    llvm::SmallVector<mlir::Value> rows, parts;
  };
  Pieces getPieces(mlir::Value tid, int64_t rows, int64_t perRow);

  /// The gpu.launch of the register-staged GEMMs (tiled, mma): a grid of
  /// workgroups of `threads` over the `t.m x t.n` tiles, with `workgroup`
  /// buffers; the builder's insertion point at the start of its body.
  mlir::gpu::LaunchOp beginLaunch(mlir::TypeRange workgroup);

  /// Their loop over `steps` steps: each iteration waits for every thread
  /// past the previous step's reads, `stage`s the values loaded during the
  /// previous step (carried after the accumulators) into workgroup memory,
  /// waits again, issues the next step's loads (`load`; the last step's
  /// again after it: the same bytes, never stored) and `compute`s the new
  /// accumulators from the carried ones, so that the loads are in flight
  /// while it computes.
  mlir::scf::ForOp emitStagedSteps(
      int64_t steps, mlir::ValueRange accumulators,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value step)> load,
      llvm::function_ref<void(llvm::ArrayRef<mlir::Value>)> stage,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::ValueRange)>
          compute);

  /// Starts the copies of step `step`'s `t.k` columns of the `rows` rows of
  /// `source` from `first` (clamped to its `count` rows) into buffer
  /// `stage` of `tile` ([stages][rows][pitch]): 16-byte pieces, piece p of
  /// the workgroup's threads' p, p + threads, ... (where the threads do not
  /// divide the pieces, those past the last copy it again); with `swizzle` (64
  /// columns) piece c of row r at piece c ^ (r % 8) of the row (wgmma's
  /// 128-byte swizzle). The rows go to the tile's rows from `tileRow` (a
  /// multiple of 8) on.
  void copyTile(mlir::Value source, int64_t count, mlir::Value first,
                int64_t rows, mlir::Value tile, mlir::Value stage,
                mlir::Value step, mlir::Value tid,
                llvm::SmallVector<mlir::Value> &tokens, bool swizzle,
                int64_t tileRow = 0);
};

/// What a GEMM kernel does with its results: called, inside the result's
/// bounds, with row `row`, columns `col` and `col + 1` (col even) and the
/// f32 sums there (vector<2xf32>), one per weight of the kernel.
using GemmStore =
    std::function<void(mlir::OpBuilder &, mlir::Location, mlir::Value row,
                       mlir::Value col, mlir::ArrayRef<mlir::Value> pairs)>;

/// Calls `store` with `pairs` (columns `col` and `col + 1` of row `row`)
/// where the row lies inside `rows` and the column inside `columns`.
void emitGemmStore(mlir::OpBuilder &b, mlir::Location loc, int64_t rows,
                   int64_t columns, mlir::Value row, mlir::Value col,
                   mlir::ArrayRef<mlir::Value> pairs, const GemmStore &store);

/// Emits, at `b`'s insertion point, the gpu.launch of the sums
/// `sum_c x[i][c] w[j][c]`, handed to `store` in pairs: x [M][K] and w
/// [N][K] of one 16-bit float type (strided memrefs, unit inner stride,
/// rows 16-byte aligned); K a multiple of `t.k`, N even. Workgroup (bx, by)
/// computes the `t.m x t.n` tile at rows `bx t.m` of x and `by t.n` of w (the x
/// tiles of one weight tile run side by side, so each weight byte is read from
/// memory about once); its steps of `t.k` columns are copied by
/// nvgpu.device_async_copy into `t.stages` buffers of workgroup memory
/// (`t.stages - 1` steps ahead), read by nvgpu.ldmatrix and multiplied on
/// m16n8k16 mma.sync with f32 accumulators in registers, over the columns in
/// order (so every tiling gives the same bytes). Rows past M or N are read
/// clamped and never stored.
void buildGemmMmaSync(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value w, const GemmStore &store,
                      const GemmTiles &t);

/// The same product on any target with f32 fused multiply-adds
/// (GemmTiled.cpp), for those without matrix instructions: workgroup
/// (bx, by) computes the `t.m x t.n` tile at rows `bx t.m` of x and `by
/// t.n` of w with `t.threads` threads, each summing `t.threadColumns`
/// weight rows (in runs of 4, `t.n * 4 / t.threadColumns` apart) by
/// `t.m * t.n / (t.threads * t.threadColumns)` rows of x (likewise) in f32
/// registers. Each step of `t.k` columns (a multiple of 8) is read in
/// 16-byte loads (8 values), converted to f32 and stored transposed
/// ([k][rows]) in workgroup memory, while the next step's loads are in
/// flight in registers; the sums run over the columns in order (so every
/// tiling gives the same bytes). x and w of one 16-bit float type, rows
/// 16-byte aligned, K a multiple of `t.k`, N even; rows past M or N are
/// read clamped and never stored.
void buildGemmTiled(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    mlir::Value w, const GemmStore &store, const GemmTiles &t);

/// The same product on 16x16x16 f16 cooperative matrices through
/// gpu.subgroup_mma (GemmMma.cpp; SPIR-V's KHR cooperative matrices):
/// workgroup (bx, by) computes the `t.m x t.n` tile at rows `bx t.m` of x
/// and `by t.n` of w with one subgroup of `t.subgroup` lanes per 32 x 32 of
/// it (`t.threads` threads), each holding 2 x 2 fragments of f32
/// accumulators. Each step of `t.k` columns (a multiple of 16) is read in
/// loads of `t.vectorWidth` f16 values and stored in workgroup memory
/// (rows padded by `t.padBytes`) while the next step's loads are in flight
/// in registers; the weight's rows are read transposed as the B operand.
/// The sums go through workgroup memory (f32) to `store`, in pairs. x and
/// w f16, rows aligned to the loads, K a multiple of `t.k`, N even; rows
/// past M or N are read clamped and never stored.
void buildGemmMma(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                  mlir::Value w, const GemmStore &store, const GemmTiles &t);

/// The same product on sm_90a warpgroup MMA (GemmWgmma.cpp): workgroup
/// tiles of `t.m` rows of x (one warpgroup of 128 threads per 64) by `t.n`
/// weight rows (a multiple of 8, at most 256), steps of 64 columns copied
/// by cp.async into `t.stages` buffers of dynamic workgroup memory in
/// wgmma's 128-byte swizzle, each warpgroup's m64 x n accumulator in
/// registers, multiplied by wgmma.mma_async (m64nNk16, f32 accumulators)
/// over the columns in order; K a multiple of 64, N even.
/// With several `weights` (of one shape; siblings over the same x), the
/// tile's `t.n` rows are `t.n / weights.size()` rows of each (a multiple
/// of 8), at the same rows of each weight: `store` gets one pair per
/// weight, the sums of the same row and columns (the same thread holds
/// them).
/// With `blocks` (one weight), the weight is not read: the weight's values are
/// decoded from `blocks` in the kernel (t.stagedRowBytes its pitch(),
/// t.producers the producer warpgroups).
void buildGemmWgmma(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    mlir::ArrayRef<mlir::Value> weights, const GemmStore &store,
                    const GemmTiles &t,
                    const GemmStagedBlocks *blocks = nullptr);

} // namespace cachet

#endif // CACHET_LIB_CONVERSION_MMASYNC_H
