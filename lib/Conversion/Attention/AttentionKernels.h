//===- AttentionKernels.h - flash-attention kernel builders -----*- C++ -*-===//
//
// The flash-attention kernels of cachet-lower-attention, private to
// lib/Conversion: the shape of one attention, the kernel chosen for it and
// KernelBuilder, which emits that kernel as a gpu.launch. The choice is the
// op's #cachet.kernel_config (cachet-select-kernel-configs, from
// lib/Analysis/AttentionConfig.cpp, which also holds AttentionShape and
// MmaTiles); the pass (LowerAttention.cpp) turns it into a KernelConfig and
// the builders only build:
//
//   KernelBuilder.cpp  pieces every kernel uses: the K/V tile staging, the
//                      masked scores, the online-softmax step, the lane
//                      reductions, the mma kernels' launch, vectors and
//                      key-tile loop;
//   ScalarKernel.cpp   buildScalar (every target);
//   TiledKernel.cpp    buildTiled (every target, f32 register tiles);
//   MmaKernel.cpp      buildMma (gpu.subgroup_mma);
//   MmaSyncKernel.cpp  buildMmaSync (nvgpu/nvvm mma.sync, NVVM only);
//   WgmmaKernel.cpp    buildWgmma (sm_90a warpgroup MMA, NVVM only);
//   DecodeKernel.cpp   buildDecode (split-KV flash-decoding, every target).
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_LIB_CONVERSION_ATTENTION_ATTENTIONKERNELS_H
#define CACHET_LIB_CONVERSION_ATTENTION_ATTENTIONKERNELS_H

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/MathExtras.h"

#include <array>
#include <optional>
#include <tuple>
#include <utility>

namespace cachet::attention {

/// log2(e): the mma kernels' softmax is in base 2.
constexpr double kLog2E = 1.4426950408889634;

/// The kernels cachet-lower-attention builds.
enum class Variant {
  Scalar,
  Tiled,
  Mma,
  MmaSync,
  Wgmma,
  Decode,
  DecodeMmaSync
};

/// The kernel chosen for one attention: its #cachet.kernel_config, with
/// what it leaves out resolved.
struct KernelConfig {
  Variant variant;
  /// Query rows per workgroup (one thread per row in the scalar kernel, 16
  /// per subgroup in the mma kernel).
  int64_t queryTile;
  /// KV positions staged in workgroup memory at a time.
  int64_t keyTile;
  /// Head-dim columns of Q and K, and positions of V, staged at a time
  /// (tiled kernel).
  int64_t step = 0;
  /// Threads per workgroup.
  int64_t threads;
  /// Lanes per subgroup (mma kernel).
  int64_t subgroup;
  /// f16 elements per vector load and store of the Q, K and V tiles (mma
  /// kernel).
  int64_t vectorWidth = 1;
  /// Bytes each row of a workgroup-memory tile is padded by (mma kernel).
  int64_t padBytes = 0;
  /// Whether the mma kernel's tiles are views of dynamic workgroup memory
  /// (else static workgroup attributions).
  bool dynamicShared = false;
  /// Whether a subgroup synchronizes its private staging with
  /// nvvm.bar.warp.sync (else gpu.barrier).
  bool warpSync = false;
  /// How the mma kernels fill their K/V tiles: through registers, by
  /// nvgpu.device_async_copy into double buffers (f16), or by
  /// nvgpu.device_async_copy of the blocks' bytes into double buffers,
  /// decoded into the tiles (packed K and V).
  KVStaging staging = KVStaging::Registers;
  /// The wgmma kernel's f16 K/V buffers (its config's stages): 3 issues the
  /// next key tile's `Q K^T` before this tile's softmax.
  int64_t kvBuffers = 2;
  /// Whether a subgroup skips rescaling its accumulators while its rows'
  /// maxima stay (needs warpSync: the branch is per subgroup).
  bool lazyRescale = false;
  /// 16-row blocks per subgroup (mma kernel): with more than one, a K or V
  /// operand loaded from workgroup memory serves all of them, and Q is read
  /// from workgroup memory per key tile instead of held in registers.
  int64_t rowBlocks = 1;
  /// Workgroups per SM the kernel's registers should allow (0: no hint),
  /// marked on its mma ops for cachet-kernel-occupancy.
  int64_t minWorkgroupsPerSM = 0;
  /// Workgroups sharing one KV head's positions (decode kernel).
  int64_t split = 1;
  /// Whether the decode kernel copies each step's K/V rows into
  /// double-buffered dynamic workgroup memory (its config's stages = 2).
  bool stagedRows = false;
  /// Whether the mma-sync decode kernel issues each step's K/V loads before
  /// the previous step's products (its config's stages = 2), holding them
  /// in registers.
  bool pipelined = false;
  /// Bytes per load of a K row (decode kernel; divides the row's bytes) and
  /// the most bytes per load of a lane's slice of a V row.
  int64_t loadBytes = 16, maxLoadBytes = 16;
  /// Lanes reading each K/V row together in the decode kernel (its config's
  /// vector_width > 1: head-dim / vector_width; 1: a position per thread),
  /// and the positions each group of them takes per step.
  int64_t rowLanes = 1, unroll = 1;
};

/// The causal bound of an attention: query row i sees the keys at absolute
/// positions j <= i + N, where N (the positions cached before the first
/// query) is a constant or an index value the host computes at run time
/// (the kernel takes it as an argument). Neither: every key is visible.
struct Causal {
  std::optional<int64_t> offset;
  mlir::Value position;
  Causal() = default;
  Causal(std::optional<int64_t> offset, mlir::Value position = {})
      : offset(offset), position(position) {}
  explicit operator bool() const { return offset.has_value() || position; }
};

/// The online-softmax state that the kernel of one chunk of keys
/// (cachet.attention_partial) continues: it reads it before its first key
/// tile and writes it back after its last, in place, instead of the
/// normalized output.
struct ChunkState {
  /// The absolute position of the chunk's first key (index; causal masking
  /// compares absolute positions).
  mlir::Value keyOffset;
  /// f32 memrefs: the unnormalized output `[Hq, Sq, Dv]`, the rows' base-2
  /// running max and running sum `[Hq, Sq]`.
  mlir::Value acc, max, sum;
};

/// Builds the flash-attention kernel of one attention.
class KernelBuilder {
public:
  KernelBuilder(mlir::OpBuilder &b, mlir::Location loc, const AttentionShape &s,
                const KernelConfig &c)
      : b(b), loc(loc), s(s), c(c),
        half(s.queryElement.isBF16() ? mlir::Type(b.getBF16Type())
                                     : mlir::Type(b.getF16Type())) {}

  /// Emits the kernel `c.variant` reading `query`, `key`, `value` and `mask`
  /// (memrefs; mask may be null) and writing `out`; with `chunk`, K and V
  /// are one chunk of the keys and the kernel continues and writes back
  /// the chunk's state instead (`out` is unused; scalar and mma-sync).
  void build(mlir::Value query, mlir::Value key, mlir::Value value,
             mlir::Value mask, mlir::Value out, double scale, Causal causal,
             const ChunkState *chunk = nullptr);

  /// Split q8_0 K or V (AttentionShape::keySplit / valueSplit; the decode
  /// kernels): `values`, the `i8` memref build takes as K or V, is read
  /// with `scales` (`f16`, `[pos][kv_head][dim / 32]`), value i decoded as
  /// the dequantize does, `float(values[i]) * scales[i / 32]` rounded once
  /// to K/V's element type.
  KernelBuilder &withSplitScales(mlir::Value values, mlir::Value scales) {
    splitScales[values] = scales;
    return *this;
  }

private:
  //===--- The kernels, one file each ------------------------------------===//

  /// Emits the scalar kernel (ScalarKernel.cpp): one thread per query row,
  /// one pass of online softmax over the KV tiles.
  void buildScalar(mlir::Value query, mlir::Value key, mlir::Value value,
                   mlir::Value mask, mlir::Value out, double scale,
                   Causal causal);

  /// Emits the tiled kernel (TiledKernel.cpp): the scalar kernel's online
  /// softmax with each thread computing 4 query rows by a slice of the key
  /// tile's positions and of the value columns in registers, on f32 fused
  /// multiply-adds from steps of Q, K and V staged in workgroup memory.
  void buildTiled(mlir::Value query, mlir::Value key, mlir::Value value,
                  mlir::Value mask, mlir::Value out, double scale,
                  Causal causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on 16x16x16 f16
  /// subgroup matrix multiply-accumulates (gpu.subgroup_mma_*), the output
  /// accumulated in registers and rescaled per key tile (MmaKernel.cpp).
  void buildMma(mlir::Value query, mlir::Value key, mlir::Value value,
                mlir::Value mask, mlir::Value out, double scale, Causal causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on m16n8k16
  /// nvgpu.mma.sync and nvgpu.ldmatrix (NVVM): fragments of a known layout,
  /// so the scores, the softmax and P stay in registers (MmaSyncKernel.cpp).
  void buildMmaSync(mlir::Value query, mlir::Value key, mlir::Value value,
                    mlir::Value mask, mlir::Value out, double scale,
                    Causal causal);

  /// Emits the one-pass kernel with `Q K^T` and `P V` on sm_90a warpgroup
  /// MMA (WgmmaKernel.cpp): wgmma.mma_async reads Q and K, and V, from
  /// 128-byte-swizzled workgroup tiles; P is its A operand in registers.
  /// The accumulators have mma.sync's fragment layout per subgroup, so the
  /// softmax, the chunk state and the output are the mma-sync kernel's.
  void buildWgmma(mlir::Value query, mlir::Value key, mlir::Value value,
                  mlir::Value mask, mlir::Value out, double scale,
                  Causal causal);

  /// Emits the split-KV flash-decoding kernel (DecodeKernel.cpp): a
  /// workgroup per (split, KV head) computes the partial softmax state of
  /// all query rows of the KV head over its positions, one position per
  /// thread per step; a second kernel merges the splits' states.
  void buildDecode(mlir::Value query, mlir::Value key, mlir::Value value,
                   mlir::Value mask, mlir::Value out, double scale,
                   Causal causal);
  /// The indices in `source` of element (or byte) `x` of one K or V row.
  using RowIndices =
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value x)>;
  /// The decode kernel's K row at `at` in `key` (global or staged), all
  /// its values as f32 (rounded to K's element type where decoded from
  /// blocks), read `c.loadBytes` at a time.
  llvm::SmallVector<mlir::Value> decodeKeyRow(mlir::Value key, RowIndices at);
  /// The decode kernel's slice of the V row at `at` in `value` that `lane`
  /// owns: values `lane * n .. lane * n + n - 1` as f32.
  llvm::SmallVector<mlir::Value> decodeValueSlice(mlir::Value value,
                                                  RowIndices at,
                                                  mlir::Value lane, int64_t n);
  /// The decode kernel's second launch: each output row from the partial
  /// states in `parts` of the first `usedSplits` splits (an index; the
  /// others hold no positions).
  void buildDecodeMerge(mlir::Value parts, mlir::Value out,
                        mlir::Value usedSplits);
  /// The workgroup memory, ids and positions of the decode kernel's first
  /// launch.
  struct DecodeFrame;
  /// Starts the staged decode kernel's asynchronous copies of the K and V
  /// rows of the positions from `start` (one step) into the buffers' rows
  /// from `firstRow`, zero-filled past the split's end; returns their
  /// group.
  mlir::Value copyDecodeRows(mlir::Value key, mlir::Value value,
                             const DecodeFrame &f, mlir::Value start,
                             mlir::Value firstRow);
  /// The query head and query of the KV head's row `rowBase + r` of the
  /// decode kernel's workgroup.
  std::pair<mlir::Value, mlir::Value> decodeRow(const DecodeFrame &f,
                                                mlir::Value r);
  /// The weight 2^(m - max) of a partial softmax state whose running max is
  /// `m` in a merge whose max is `max`; 0 for a state that saw no position.
  mlir::Value stateWeight(mlir::Value m, mlir::Value max);
  /// `if (condition) body()`, no results.
  void whenTrue(mlir::Value condition, llvm::function_ref<void()> body);
  /// The base-2 scores of the thread's position `pos` against every row
  /// (scaled, masked; -inf past the split).
  llvm::SmallVector<mlir::Value> decodeScores(mlir::Value key,
                                              const DecodeFrame &f,
                                              mlir::Value pos,
                                              mlir::Value firstRow);
  /// One step of the decode kernel over the positions from `base`: the
  /// scores, the online softmax and O += P V; `carried` holds the rows'
  /// running maxima, the lane's parts of their sums and its accumulator
  /// slices. Returns them after the step. Staged, the step's rows are the
  /// buffers' rows from `firstRow` (else null: read from global memory).
  llvm::SmallVector<mlir::Value>
  decodeStep(mlir::Value key, mlir::Value value, const DecodeFrame &f,
             mlir::ValueRange carried, mlir::Value base, mlir::Value firstRow);
  /// One value of a row's accumulator that a lane holds after the decode
  /// steps: row `row` of the workgroup (an index, constant or not), value
  /// `dim`.
  struct DecodeAcc {
    mlir::Value row, dim, value;
  };
  /// The accumulator entries of a state whose values from `2 rows` are the
  /// lane's `slice` values of each row from value `firstDim`.
  llvm::SmallVector<DecodeAcc>
  sliceEntries(mlir::ValueRange state, int64_t slice, mlir::Value firstDim);
  /// Merges the subgroups' final states in workgroup memory and writes the
  /// workgroup's partial state (accumulator, max, sum of each row) to
  /// `parts`: the rows' `maxima` (uniform over a subgroup), their `sums`
  /// (the lane's parts with `laneSums`, else the subgroup's) and the lane's
  /// accumulator values `acc`; with `owner`, only the lanes where it holds
  /// add theirs (the others hold copies).
  void mergeDecodeSubgroups(const DecodeFrame &f, mlir::ValueRange maxima,
                            mlir::ValueRange sums, bool laneSums,
                            llvm::ArrayRef<DecodeAcc> acc, mlir::Value owner,
                            mlir::Value parts);

  //===--- The decode kernel with rows read by lanes together -----------===//
  //===--- (DecodeRowLanes.cpp) ------------------------------------------===//

  /// Values `first` .. `first + n - 1` of the f16/bf16/f32 row at `at` in
  /// `source` (of `element`) as f32, `perLoad` per load (vectors aligned
  /// to their bytes where more than 1).
  llvm::SmallVector<mlir::Value> readFloats(mlir::Value source, RowIndices at,
                                            mlir::Value first, int64_t n,
                                            int64_t perLoad,
                                            mlir::Type element);
  /// readFloats of a split q8_0 row (withSplitScales): `perLoad` (dividing
  /// 32) i8 values a load and the f16 scale of their block, each value
  /// rounded to `element` as the dequantize rounds it.
  llvm::SmallVector<mlir::Value>
  readSplitFloats(mlir::Value values, mlir::Value scales, RowIndices at,
                  mlir::Value first, int64_t n, int64_t perLoad,
                  mlir::Type element);
  /// Values `first` .. `first + n - 1` of the K or V row at `at` in
  /// `source` (`block`s or floats of `element`, `dim` values a row) as f32,
  /// rounded to `element` where decoded from blocks: wide loads of floats,
  /// aligned 32-bit words of blocks.
  llvm::SmallVector<mlir::Value>
  decodeRowSlice(mlir::Value source, RowIndices at, mlir::Value first,
                 int64_t n, int64_t dim, BlockQuantizedType block,
                 mlir::Type element);
  /// The decode loop's state after `steps` steps that began with `init`
  /// and ended with `results`: `init` where no step ran.
  llvm::SmallVector<mlir::Value> stateAfterSteps(mlir::Value steps,
                                                 mlir::ValueRange init,
                                                 mlir::ValueRange results);
  /// The loop over the steps of `stepPositions` that cover the `count`
  /// positions of the split, carrying `init`: `body(base, carried)` builds
  /// the step from position `base` and returns the next state. Returns the
  /// state after the steps (stateAfterSteps).
  llvm::SmallVector<mlir::Value> decodeSteps(
      const DecodeFrame &f, mlir::Value count, int64_t stepPositions,
      mlir::ValueRange init,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                        mlir::ValueRange)>
          body);
  /// The steps of the decode kernel with a position per thread, from Q
  /// staged in workgroup memory, over the `count` positions of the split
  /// (DecodeKernel.cpp). Returns the state mergeDecodeSubgroups takes
  /// (sums per lane; the lane's accumulators from value lane * slice).
  llvm::SmallVector<mlir::Value>
  decodeThreadRows(mlir::Value query, mlir::Value key, mlir::Value value,
                   const DecodeFrame &f, mlir::Value count);
  /// The steps of the decode kernel whose K/V rows are each read by
  /// `c.rowLanes` lanes together, from Q in registers, over the `count`
  /// positions of the split; then the subgroup's groups of lanes merged.
  /// Returns the state mergeDecodeSubgroups takes (sums per subgroup; the
  /// lanes' accumulators from value (lane % rowLanes) * slice) and sets
  /// `firstDim` and `owner` for it.
  llvm::SmallVector<mlir::Value>
  decodeRowLanes(mlir::Value query, mlir::Value key, mlir::Value value,
                 const DecodeFrame &f, mlir::Value count, mlir::Value &firstDim,
                 mlir::Value &owner);

  //===--- The decode kernel on mma.sync (DecodeMmaSync.cpp) ------------===//

  /// Values `first` .. `first + n - 1` of the K or V row at `at` in
  /// `source` as pairs (vector<2x`half`>): 16-byte loads of f16/bf16, or
  /// q8_0 / q4_0 blocks (`dim` values a row) decoded exactly to f16 from
  /// aligned 32-bit words. `n` is a multiple of 8 (floats) or 16 lying in
  /// one block or filling whole ones (blocks). The pairs are in the
  /// slice's order but for a q4_0 half block, whose 16 values are its
  /// bytes' low nibbles, then their high ones (decodePairDim); `natural`
  /// keeps q4_0's in the row's order too, for slices of up to 16 values
  /// that lie in one half of a block.
  llvm::SmallVector<mlir::Value>
  decodePairs(mlir::Value source, RowIndices at, mlir::Value first, int64_t n,
              int64_t dim, BlockQuantizedType block, bool natural = false);
  /// decodePairs in two halves, so that loads can be issued a step before
  /// their values are used: the loads it issues (16-byte vectors, or each
  /// piece's scale and 32-bit words; for a split q8_0 `source`, per piece
  /// of up to 16 values in one block its f16 scale and the words of its i8
  /// values), and the pairs from them (`split`: of such loads, decoded as
  /// q8_0 blocks are). `wide`
  /// (blocks in rows of a multiple of 8 bytes, 8-byte aligned): each piece
  /// read in aligned 8-byte loads that cover its scale and quants (a whole
  /// block) or its quants (part of one, the scale read apart), the words
  /// picked from them by the piece's offset.
  llvm::SmallVector<mlir::Value>
  loadPairs(mlir::Value source, RowIndices at, mlir::Value first, int64_t n,
            int64_t dim, BlockQuantizedType block, bool natural = false,
            bool wide = false);
  llvm::SmallVector<mlir::Value>
  pairsFromLoads(mlir::ValueRange loads, mlir::Value first, int64_t n,
                 BlockQuantizedType block, bool natural = false,
                 bool wide = false, bool split = false);
  /// Whether `source` is a split q8_0 K or V (withSplitScales).
  bool isSplit(mlir::Value source) const {
    return splitScales.contains(source);
  }
  /// The row value that slot `slot` of decodePairs' values from `first`
  /// (`n` of them, of `block`) holds.
  mlir::Value decodePairDim(mlir::Value first, int64_t n, int64_t slot,
                            BlockQuantizedType block);
  /// The steps of the decode kernel with S = Q K^T and O^T = V^T P^T on
  /// m16n8k16 mma.sync, from Q's A operands in registers, over the `count`
  /// positions of the split. Returns the rows' maxima and sums (uniform
  /// over the subgroup) for mergeDecodeSubgroups and sets `acc`.
  llvm::SmallVector<mlir::Value>
  decodeMmaSync(mlir::Value query, mlir::Value key, mlir::Value value,
                const DecodeFrame &f, mlir::Value count,
                llvm::SmallVector<DecodeAcc> &acc);

  //===--- Shared by the kernels (KernelBuilder.cpp) ---------------------===//

  mlir::Value index(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, loc, v);
  }
  /// N + `plus` of a causal bound (a constant where N is one).
  mlir::Value causalBound(const Causal &causal, int64_t plus) {
    if (causal.position)
      return addIndex(causal.position, plus);
    return index(*causal.offset + plus);
  }
  mlir::Value f32(double v) {
    return mlir::arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// Indices of position `pos`, dimension `dim` of K or V.
  llvm::SmallVector<mlir::Value> kvIndices(mlir::Value kvHead, mlir::Value pos,
                                           mlir::Value dim) {
    if (s.tokenMajor)
      return {pos, kvHead, dim};
    return {kvHead, pos, dim};
  }
  /// `for (iv = lb; iv < ub; iv += step)` with `body(iv)`.
  void forLoop(mlir::Value lb, mlir::Value ub, mlir::Value step,
               llvm::function_ref<void(mlir::Value)> body);
  /// Returns the end of the KV positions the query tile starting at
  /// `tileStart` sees.
  mlir::Value keyEnd(mlir::Value tileStart, Causal causal);
  /// Returns the number of key tiles the query tile starting at `tileStart`
  /// walks.
  mlir::Value keyTileCount(mlir::Value tileStart, Causal causal);

  /// Copies the `[keyTile][dim]` tile of `source` (K or V) at position
  /// `start` into workgroup memory `tile`, zeros past the last position.
  /// Values decoded from `block`s are rounded to `element` (K's or V's
  /// dequantized type) first, as the dequant-once scratch holds them, then
  /// converted to the tile's type (f32 for bf16 in the scalar kernel).
  void loadTile(mlir::Value source, mlir::Value tile, int64_t dim,
                mlir::Value kvHead, mlir::Value start, mlir::Value thread,
                BlockQuantizedType block, mlir::Type element);
  /// Value `x` of K or V (`source`, `block`s or floats) at position `pos`
  /// of `kvHead`, as `element`, zero past the last position; decoded from
  /// blocks, rounded to `kvElement` (K's or V's dequantized type) first, as
  /// the dequant-once scratch holds it.
  mlir::Value loadKV(mlir::Value source, mlir::Value kvHead, mlir::Value pos,
                     mlir::Value x, BlockQuantizedType block,
                     mlir::Type kvElement, mlir::Type element);
  /// Returns the scaled, masked score of query `row` (`loadRow` clamped to
  /// the queries) and position `pos` from the dot product `dot`: -inf for
  /// positions past the end or after the causal bound.
  mlir::Value maskedScore(mlir::Value dot, double scale, mlir::Value mask,
                          mlir::Value head, mlir::Value row,
                          mlir::Value loadRow, mlir::Value pos, Causal causal);

  /// The online softmax of a row whose running max moves from `runningMax`
  /// to `newMax` (the caller folds the key tile's max in): `none`, whether
  /// no key is visible yet (`newMax` is `minusInf`, so nothing may be
  /// summed), and `alpha`, the factor exp(runningMax - newMax) that rescales
  /// the running sum and the accumulators (1 while none).
  struct SoftmaxRescale {
    mlir::Value none, alpha, newMax;
  };
  /// `base2`: exp2 (the mma kernels' scores are in base 2), else exp.
  SoftmaxRescale softmaxRescale(mlir::Value runningMax, mlir::Value newMax,
                                mlir::Value minusInf, bool base2);
  /// The online-softmax step (base 2) of a row of an mma kernel whose
  /// scores are spread over `lanes` lanes of a subgroup of `width`: the
  /// lane's max of the key tile's scores, `laneMax`, is reduced over those
  /// lanes and folded into `runningMax`.
  SoftmaxRescale foldRowMax(mlir::Value runningMax, mlir::Value laneMax,
                            int64_t lanes, int64_t width, mlir::Value minusInf);
  /// P = exp(`exponent`) (exp2 with `base2`), `zero` while `none`.
  mlir::Value softmaxWeight(mlir::Value none, mlir::Value zero,
                            mlir::Value exponent, bool base2);
  /// P = exp2(`exponent`) (`zero` while `none`) rounded to the mma kernels'
  /// 16-bit `type`, as P V uses it; adds it as rounded to `sum` (f32).
  mlir::Value roundedWeight(mlir::Value none, mlir::Value zero,
                            mlir::Value exponent, mlir::Type type,
                            mlir::Value &sum);
  /// roundedWeight of two keys of one row, their exponents `scores` less
  /// the row's `max`. bf16 weights are rounded together by one paired
  /// conversion (cvt.rn.bf16x2.f32 on NVVM: a bf16 value rounded alone is
  /// an F2F on the pipe that also runs the exponentials); f16 ones one by
  /// one. The same values, added to `sum` in order.
  std::array<mlir::Value, 2>
  roundedWeightPair(mlir::Value none, mlir::Value zero, mlir::ValueRange scores,
                    mlir::Value max, mlir::Type type, mlir::Value &sum);
  /// The running sum rescaled by `alpha` plus the key tile's `tileSum`.
  mlir::Value rescaledSum(mlir::Value runningSum, mlir::Value alpha,
                          mlir::Value tileSum);

  /// How reduceAcrossLanes combines two lanes' values.
  enum class LaneCombine { Max, Min, Sum };
  /// Reduces `v` over each group of `lanes` consecutive lanes (a power of
  /// two) of a subgroup of `width` lanes by a shuffle-xor tree: every lane
  /// of a group gets the group's result.
  mlir::Value reduceAcrossLanes(mlir::Value v, int64_t lanes, int64_t width,
                                LaneCombine combine);

  /// Whether every row of one subgroup of an mma kernel sees the whole key
  /// tile at `start`: no mask operand, no position past the end, and none
  /// after the causal bound of the subgroup's first row (tile row
  /// `subgroupRow` of the query tile at `tileStart`). Such a tile skips the
  /// masking. The constant false with a mask operand.
  ///
  /// The two mma kernels emit this test in two orders, kept so that sharing
  /// it changed no IR: `syncOrder` is the mma-sync kernel's (the tile's end
  /// computed even with a mask operand, then unused; the subgroup's first
  /// row before the causal offset), else the mma kernel's.
  mlir::Value unmaskedTile(mlir::Value start, mlir::Value tileStart,
                           mlir::Value subgroupRow, bool hasMask, Causal causal,
                           bool syncOrder);

  //===--- Shared by the mma kernels (KernelBuilder.cpp) -----------------===//

  /// The launch of an mma kernel, its workgroup-memory tiles (indexed by
  /// MmaTiles::Kind, null where the layout has none), the ids every part
  /// of it uses, and what masks the scores: the mask operand (may be null),
  /// the scale and the causal offset.
  struct MmaFrame {
    mlir::gpu::LaunchOp launch;
    llvm::SmallVector<mlir::Value> tiles;
    mlir::Value thread, head, kvHead, tileStart;
    mlir::Value mask;
    double scale;
    Causal causal;
  };
  /// Creates the launch of an mma kernel over `layout`'s tiles and moves the
  /// insertion point into its body (the caller guards it).
  MmaFrame beginMma(const MmaTiles &layout, mlir::Value mask, double scale,
                    Causal causal);
  /// Stages the query tile in workgroup memory, zeros past the last query.
  void stageQuery(mlir::Value query, const MmaFrame &f);
  /// The iteration arguments of the K/V tiles before the first key tile:
  /// the first tiles' asynchronous copies, or their f16 vectors.
  llvm::SmallVector<mlir::Value> kvInit(mlir::Value key, mlir::Value value,
                                        const MmaFrame &f);
  /// At the top of key tile `iv`, whose K/V iteration arguments are
  /// `carried`: makes the tile's K and V visible in workgroup memory,
  /// returns those tiles and appends the next tile's arguments to `next`.
  std::pair<mlir::Value, mlir::Value>
  kvStage(mlir::Value key, mlir::Value value, const MmaFrame &f,
          mlir::ValueRange carried, mlir::Value iv,
          llvm::SmallVector<mlir::Value> &next);
  /// After the key tiles: waits for copies still in flight.
  void kvFinish(mlir::ValueRange results);
  /// The loop over the key tiles of an mma kernel, `lb` to `ub` by `step`:
  /// its iteration arguments are `state` (the accumulators and the rows'
  /// running statistics), then the K/V tiles' `kvArgs` (kvInit).
  /// `body(state, start, kTile, vTile)` builds the key tile at position
  /// `start`, staged in `kTile` and `vTile` (kvStage), and returns the next
  /// state. Returns the state after the last tile, once the copies in
  /// flight are waited for (kvFinish).
  llvm::SmallVector<mlir::Value>
  mmaKeyLoop(mlir::Value key, mlir::Value value, const MmaFrame &f,
             mlir::Value lb, mlir::Value ub, mlir::Value step,
             mlir::ValueRange state, mlir::ValueRange kvArgs,
             llvm::function_ref<llvm::SmallVector<mlir::Value>(
                 mlir::ValueRange, mlir::Value, mlir::Value, mlir::Value)>
                 body);
  /// Marks the mma kernel's occupancy (markOccupancy) and ends its launch.
  void endMma(mlir::gpu::LaunchOp launch);
  /// Marks the matrix products and asynchronous copies of `launch` with the
  /// workgroups per SM its registers should allow (cachet-kernel-occupancy),
  /// where asked for.
  void markOccupancy(mlir::gpu::LaunchOp launch);
  /// The f16 vectors `thread` loads of the `[keyTile][dim]` tile of K or V
  /// at `start` (none when the kernel decodes the tile from `block`s).
  llvm::SmallVector<mlir::Value> kvVectors(mlir::Value source, int64_t dim,
                                           mlir::Value start,
                                           BlockQuantizedType block,
                                           const MmaFrame &f);
  /// Starts the asynchronous copies of the K and V tiles at `start` into
  /// `kDst` and `vDst` (zero-filled past the last position); returns their
  /// group.
  mlir::Value copyTiles(mlir::Value key, mlir::Value value, mlir::Value start,
                        mlir::Value kDst, mlir::Value vDst, const MmaFrame &f);
  /// The row and column of the `k`-th piece `thread` handles of a
  /// `[keyTile][perRow pieces of width]` tile: piece `thread + k threads`,
  /// the last repeated where the pieces do not divide among the threads.
  std::pair<mlir::Value, mlir::Value>
  tilePiece(int64_t k, int64_t perRow, int64_t width, mlir::Value thread);
  /// Starts the asynchronous copies of the blocks' bytes of the K and V
  /// tiles at `start` into buffer `buffer` (0 or 1) of the KP and VP tiles
  /// (zero-filled past the last position); returns their group.
  mlir::Value copyPackedTiles(mlir::Value key, mlir::Value value,
                              mlir::Value start, mlir::Value buffer,
                              const MmaFrame &f);
  /// Decodes buffer `buffer` of the blocks' bytes `packed` (KP or VP) into
  /// the `[keyTile][dim]` tile `tile`, rounded as the dequant-once scratch
  /// holds them: q8_0 into f16 a whole block per thread at a time, q4_0
  /// eight values, from the words that hold them (decodePairs); other
  /// blocks eight values at a time.
  void decodePackedTile(mlir::Value packed, mlir::Value buffer,
                        mlir::Value tile, int64_t dim, BlockQuantizedType block,
                        const MmaFrame &f);
  /// Row, column and "inside the tile" of the `k`-th f16 vector that
  /// `thread` copies of a `[rows][dim]` tile.
  std::tuple<mlir::Value, mlir::Value, mlir::Value>
  vectorCoords(int64_t rows, int64_t dim, mlir::Value thread, int64_t k);
  /// Loads `thread`'s vectors of a `[rows][dim]` f16 tile from `source` at
  /// the indices `at(row, column)`; zeros where `rowValid(row)` is false.
  llvm::SmallVector<mlir::Value>
  loadVectors(int64_t rows, int64_t dim, mlir::Value thread,
              llvm::function_ref<mlir::Value(mlir::Value)> rowValid,
              llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                                mlir::Value)>
                  at,
              mlir::Value source);
  /// Stores the vectors of loadVectors into the workgroup tile `tile`.
  void storeVectors(llvm::ArrayRef<mlir::Value> vectors, int64_t rows,
                    int64_t dim, mlir::Value thread, mlir::Value tile);

  //===--- The mma kernel's steps (MmaKernel.cpp) -------------------------===//

  /// The launch, the subgroup's rows and the lane's part of one of them:
  /// what every step of buildMma uses.
  struct MmaSubgroup;
  /// Creates the mma kernel's launch over `layout`'s tiles (beginMma) and
  /// the ids of the thread's subgroup and lane.
  MmaSubgroup beginMmaSubgroup(const MmaTiles &layout, mlir::Value mask,
                               double scale, Causal causal);
  /// Stages the query tile and, with one row block, loads Q's A operands.
  void loadMmaQuery(mlir::Value query, MmaSubgroup &g);
  /// Loads Q's A operand of row block `r` and column block `kb`.
  mlir::Value mmaQOperand(const MmaSubgroup &g, int64_t r, int64_t kb);
  /// Orders a subgroup's writes to its own rows before its lanes' reads:
  /// nvvm.bar.warp.sync with warpSync, else gpu.barrier.
  void syncSubgroup();
  /// The body of the key-tile loop (mmaKeyLoop): S = Q K^T, the online
  /// softmax, O = alpha O + P V. `carried` holds the accumulators, the
  /// row's running max and sum; returns them after the tile at `start`.
  llvm::SmallVector<mlir::Value>
  mmaKeyTile(const MmaSubgroup &g, mlir::ValueRange carried, mlir::Value start,
             mlir::Value kTile, mlir::Value vTile);
  /// Stores S = Q K^T of the subgroup's rows into the scores tile.
  void mmaScores(const MmaSubgroup &g, mlir::Value kTile);
  /// The first column of the lane's `i`-th chunk of its row's scores:
  /// (i lanesPerRow + part) chunk.
  mlir::Value mmaChunkColumn(const MmaSubgroup &g, int64_t i);
  /// Loads the `chunk` scores of the lane's row at `column`.
  llvm::SmallVector<mlir::Value> mmaLoadChunk(const MmaSubgroup &g,
                                              mlir::Value column);
  /// Stores the `chunk` `values` of the lane's row at `column` of `tile`
  /// (the scores or P).
  void mmaStoreChunk(const MmaSubgroup &g, llvm::ArrayRef<mlir::Value> values,
                     mlir::Value tile, mlir::Value column);
  /// Returns the max of the lane's base-2 scores of the key tile at
  /// `start`; on a tile that is not `unmasked`, writes the masked base-2
  /// scores back to the scores tile (an unmasked tile's stay unscaled).
  mlir::Value mmaLaneMax(const MmaSubgroup &g, mlir::Value start,
                         mlir::Value unmasked, mlir::Value log2e,
                         mlir::Value scaleLog2e);
  /// Writes the lane's P of the row (f16) to the P tile from the scores
  /// mmaLaneMax left and returns the lane's sum of it, as rounded.
  mlir::Value mmaProbabilities(const MmaSubgroup &g, mlir::Value unmasked,
                               const SoftmaxRescale &step,
                               mlir::Value scaleLog2e);
  /// O = alpha O through the row broadcast tile; with lazyRescale, only
  /// where one of the subgroup's rows' max moved.
  void mmaRescale(const MmaSubgroup &g, mlir::Value alpha,
                  llvm::SmallVector<mlir::Value> &acc);
  /// O += P V.
  void mmaAccumulate(const MmaSubgroup &g, mlir::Value vTile,
                     llvm::SmallVector<mlir::Value> &acc);
  /// Writes O / sum from the key-tile loop's `results` to `out`.
  void writeMmaOutput(const MmaSubgroup &g, mlir::ValueRange results,
                      mlir::Value out);

  //===--- The mma-sync kernel's steps (MmaSyncKernel.cpp) ---------------===//

  /// The launch, the lane's place in the fragments and in ldmatrix, and
  /// the subgroup's rows: what every step of buildMmaSync uses.
  struct MmaSyncWarp;
  /// Creates the mma-sync kernel's launch over `layout`'s tiles (beginMma)
  /// and the ids of the thread's subgroup and lane.
  MmaSyncWarp beginMmaSyncWarp(const MmaTiles &layout, mlir::Value mask,
                               double scale, Causal causal);
  /// Stages the query tile and, with one row block, loads Q's A operands.
  void loadMmaSyncQuery(mlir::Value query, MmaSyncWarp &w);
  /// Loads Q's A operand of row block `r` and column block `kb` (rows
  /// 16 r.., columns 16 kb.. of the subgroup's).
  mlir::Value mmaSyncQOperand(const MmaSyncWarp &w, int64_t r, int64_t kb);
  /// The tile row of the lane's row `i` (0 or 1) of row block `r`.
  mlir::Value mmaSyncTileRow(const MmaSyncWarp &w, int64_t r, int64_t i);
  /// The body of the key-tile loop (mmaKeyLoop): S = Q K^T, the online
  /// softmax, O = alpha O + P V. `carried` holds the accumulators, the
  /// rows' running maxima and sums; returns them after the tile at
  /// `start`.
  llvm::SmallVector<mlir::Value>
  mmaSyncKeyTile(const MmaSyncWarp &w, mlir::ValueRange carried,
                 mlir::Value start, mlir::Value kTile, mlir::Value vTile);
  /// mmaSyncKeyTile from the tile's `scores` (C fragments): the online
  /// softmax and O = alpha O + P V; the wgmma kernel's wait also returns
  /// `inFlight` (wgmmaAccumulate).
  llvm::SmallVector<mlir::Value>
  mmaSyncSoftmaxStep(const MmaSyncWarp &w, mlir::ValueRange carried,
                     llvm::ArrayRef<mlir::Value> scores, mlir::Value start,
                     mlir::Value vTile,
                     llvm::SmallVector<mlir::Value> *inFlight = nullptr);
  /// S = Q K^T: the C fragments of each row block and 8-key block.
  llvm::SmallVector<mlir::Value> mmaSyncScores(const MmaSyncWarp &w,
                                               mlir::Value kTile);
  /// The base-2 scores of the key tile at `start`: scaled, and masked
  /// unless no row of the subgroup needs it (unmaskedTile).
  mlir::ValueRange mmaSyncBase2Scores(const MmaSyncWarp &w,
                                      llvm::ArrayRef<mlir::Value> scores,
                                      mlir::Value start);
  /// The online softmax of the lane's rows: appends their new maxima and
  /// sums to `newMax` and `newSum`, rescales `acc` and returns P (16-bit
  /// scalars, probs[(r keyBlocks + jb) 4 + 2 i + e]).
  llvm::SmallVector<mlir::Value>
  mmaSyncSoftmax(const MmaSyncWarp &w, mlir::ValueRange scores,
                 mlir::ValueRange runningMax, mlir::ValueRange runningSum,
                 llvm::SmallVector<mlir::Value> &acc,
                 llvm::SmallVector<mlir::Value> &newMax,
                 llvm::SmallVector<mlir::Value> &newSum);
  /// Multiplies each row block r's A operand `a[r]` by the two B operands
  /// in the ldmatrix result `bMatrices` (bOperands), into the accumulators
  /// `acc[r stride + first]` and `acc[r stride + first + 1]`.
  void mmaSyncPairs(const MmaSyncWarp &w, llvm::ArrayRef<mlir::Value> a,
                    mlir::Value bMatrices, llvm::SmallVector<mlir::Value> &acc,
                    int64_t stride, int64_t first);
  /// O += P V.
  void mmaSyncAccumulate(const MmaSyncWarp &w,
                         llvm::ArrayRef<mlir::Value> probs, mlir::Value vTile,
                         llvm::SmallVector<mlir::Value> &acc);
  /// Creates `if (row < queries)` and moves the insertion point into it
  /// (the caller guards it).
  void beginIfRowValid(mlir::Value row);
  /// The key-tile loop's state from the chunk's: the lane's accumulator
  /// fragments, its rows' maxima and sums.
  llvm::SmallVector<mlir::Value> loadMmaSyncState(const MmaSyncWarp &w);
  /// Writes the key-tile loop's `results` to the chunk's state.
  void storeMmaSyncState(const MmaSyncWarp &w, mlir::ValueRange results);
  /// Writes O / sum from the key-tile loop's `results` to `out`.
  void writeMmaSyncOutput(const MmaSyncWarp &w, mlir::ValueRange results,
                          mlir::Value out);

  /// The m16n8k16 multiply-accumulate `acc + a bOp` of the fragments:
  /// nvgpu.mma.sync for f16, packedMmaSync for bf16.
  mlir::Value mmaSync(mlir::Value a, mlir::Value bOp, mlir::Value acc);
  /// The m16n8k16 multiply-accumulate of `half` fragments as nvvm.mma.sync
  /// on their pairs (bf16 packed into i32; A vector<4x2x`half`>, B
  /// vector<2x2x`half`>, C and the result vector<2x2xf32>): nvgpu.mma.sync
  /// of LLVM 22 deduces no PTX type for bf16; the mma-sync decode kernel
  /// takes it for f16 too.
  mlir::Value packedMmaSync(mlir::Value a, mlir::Value bOp, mlir::Value acc);
  /// `x + y` on indices; `x` itself for `y` 0.
  mlir::Value addIndex(mlir::Value x, int64_t y);
  /// `x + y` on indices.
  mlir::Value addIndex(mlir::Value x, mlir::Value y);
  /// nvgpu.ldmatrix of four 8x8 matrices of `tile` (16-bit), the lane's
  /// address `[row, col]`.
  mlir::Value ldMatrix(mlir::Value tile, mlir::Value row, mlir::Value col,
                       bool transpose);
  /// The two B operands in an ldmatrix result (matrices 0-1 and 2-3).
  std::pair<mlir::Value, mlir::Value> bOperands(mlir::Value v);
  /// A 2-D vector of `type` from its `rows`, row by row (the NVVM lowering
  /// takes neither n-D strided slices nor n-D from_elements).
  mlir::Value rowsOf(mlir::VectorType type, llvm::ArrayRef<mlir::Value> rows);
  /// A 2-D fragment of `type` from its scalars, row-major.
  mlir::Value fragmentOf(mlir::VectorType type,
                         llvm::ArrayRef<mlir::Value> scalars);
  /// Element `[i, e]` of the 2-D fragment `v`.
  mlir::Value fragmentElement(mlir::Value v, int64_t i, int64_t e);

  //===--- The wgmma kernel's steps (WgmmaKernel.cpp) -------------------===//

  /// S = Q K^T of the subgroup's rows on wgmma: the C fragments of each
  /// 8-key block, as mmaSyncScores gives them.
  llvm::SmallVector<mlir::Value> wgmmaScores(const MmaSyncWarp &w,
                                             mlir::Value kTile);
  /// Issues S = Q K^T on wgmma without waiting: the accumulator registers,
  /// which nothing may read before a wgmmaWait that returns them.
  llvm::SmallVector<mlir::Value> issueWgmmaScores(const MmaSyncWarp &w,
                                                  mlir::Value kTile);
  /// The C fragments of S from its waited-for registers.
  llvm::SmallVector<mlir::Value>
  scoreFragments(const MmaSyncWarp &w, llvm::ArrayRef<mlir::Value> regs);
  /// O += P V on wgmma, P (mmaSyncSoftmax's) the A operand in registers;
  /// the wait also returns `inFlight` (the registers of products issued
  /// before, e.g. the next tile's scores) in place.
  void wgmmaAccumulate(const MmaSyncWarp &w, llvm::ArrayRef<mlir::Value> probs,
                       mlir::Value vTile, llvm::SmallVector<mlir::Value> &acc,
                       llvm::SmallVector<mlir::Value> *inFlight = nullptr);
  /// The key-tile loop of the wgmma kernel with three f16 K/V buffers
  /// (kvBuffers 3): tile t + 2's copies and tile t + 1's `Q K^T` in flight
  /// while tile t's softmax and `P V` run. `state` as mmaKeyLoop's; returns
  /// the state after the last tile.
  llvm::SmallVector<mlir::Value>
  wgmmaPipelinedLoop(mlir::Value key, mlir::Value value, const MmaSyncWarp &w,
                     mlir::Value keyTiles, mlir::ValueRange state);
  /// The workgroup-memory byte address of `tile` (i64).
  mlir::Value tileAddress(mlir::Value tile);
  /// Commits the warpgroup's wgmma operations and waits for them; returns
  /// `regs` (f32) as the wait leaves them, so nothing reads them before.
  llvm::SmallVector<mlir::Value> wgmmaWait(llvm::ArrayRef<mlir::Value> regs);

  /// The indices of element (`row`, `col`) of a 16-bit workgroup tile:
  /// `[row, col]`, or in a swizzled `[cols / 64][rows][64]` tile (the wgmma
  /// kernel's) `[col / 64, row, col % 64 ^ 8 (row % 8)]`. Vectors of up to
  /// 8 values from a multiple of their width stay contiguous.
  llvm::SmallVector<mlir::Value> tileIndices(mlir::Value tile, mlir::Value row,
                                             mlir::Value col);
  /// Orders the thread's writes to the K/V (or Q) tiles before the barrier
  /// that publishes them: for the wgmma kernel, whose tensor cores read
  /// them through the async proxy, fence.proxy.async first.
  void tilesWritten();

  /// The position of chunk position `pos` (`pos` itself without a chunk).
  mlir::Value absolutePosition(mlir::Value pos);

  //===--- A chunk's state (ScalarKernel.cpp, MmaSyncKernel.cpp) ---------===//

  /// Row `row` of `head`'s running max and sum in the chunk state (loaded).
  std::pair<mlir::Value, mlir::Value> loadRowState(mlir::Value head,
                                                   mlir::Value row);
  /// Writes row `row` of `head`'s running max and sum to the chunk state.
  void storeRowState(mlir::Value head, mlir::Value row, mlir::Value max,
                     mlir::Value sum);

  mlir::OpBuilder &b;
  mlir::Location loc;
  const AttentionShape &s;
  const KernelConfig &c;
  /// The state of a chunk's kernel (null for a whole attention).
  const ChunkState *chunk = nullptr;
  /// The 16-bit type of the tensor-core tiles and fragments: bf16 when Q, K
  /// and V are bf16 (mma-sync only), f16 otherwise.
  mlir::Type half;
  /// The scales of split q8_0 K/V, by the values' memref.
  llvm::SmallDenseMap<mlir::Value, mlir::Value, 2> splitScales;
};

/// What every step of the mma-sync kernel uses: the launch (with its ids
/// and masking), the lane's place in the m16n8k16 fragments and in
/// nvgpu.ldmatrix, and the rows of the query tile its subgroup owns.
struct KernelBuilder::MmaSyncWarp {
  MmaFrame f;
  mlir::Value qTile;
  /// m16n8k16 fragments (PTX ISA, "mma.m16n8k16"): lane l = 4 g + t holds
  /// A (16x16) as [row g, k 2t..2t+1], [row g+8, k 2t..], [row g, k 2t+8..],
  /// [row g+8, k 2t+8..]; B (16x8) as [k 2t.., col g], [k 2t+8.., col g];
  /// C (16x8, f32) as [row g, col 2t..2t+1], [row g+8, col 2t..].
  mlir::Value g, t;
  /// ldmatrix rows: lane l gives the address of row l % 8 of matrix l / 8;
  /// `lane8` is l % 8, `lane16` l % 16, `half` 8 (l / 16) and `quarter`
  /// 8 ((l / 8) % 2).
  mlir::Value lane8, lane16, half, quarter;
  /// Subgroup w owns rows [16 R w, 16 R (w + 1)) of the tile, R = `blocks`,
  /// starting at `warpRows`; the lane's rows are tileRow(r, i), i = 0, 1.
  int64_t blocks;
  mlir::Value warpRows;
  /// The A (16-bit), B (16-bit) and C (f32) fragments.
  mlir::VectorType aType, bType, cType;
  mlir::Value zeroC, f32Zero, minusInf;
  /// Q's column blocks of 16 and the output's column blocks of 8 (one
  /// accumulator per row block and column block, `accCount` in all).
  int64_t qBlocks, outBlocks, accCount;
  /// The lane's rows (two per row block): one running max and sum each.
  int64_t rowCount;
  /// The key tile's blocks of 8 keys.
  int64_t keyBlocks;
  /// Q's A operands of each column block, loaded once with one row block
  /// (else per key tile).
  llvm::SmallVector<mlir::Value> qOperands;
};

/// What every step of the decode kernel's first launch uses: its workgroup
/// memory, ids, the split's positions and what masks the scores.
struct KernelBuilder::DecodeFrame {
  mlir::Value qTile, accTile, stats;
  /// Staged: the K and V rows' double buffers, `[2 * threads + 1][row]`
  /// (the last row takes the idle lanes' empty copies).
  mlir::Value kRows, vRows;
  mlir::Value thread, lane, warp, chunk, kvHead;
  /// The KV head's row that is the workgroup's first.
  mlir::Value rowBase;
  /// The split's first position, its end and its last position.
  mlir::Value start, end, last;
  mlir::Value mask;
  double scale;
  Causal causal;
};

} // namespace cachet::attention

#endif // CACHET_LIB_CONVERSION_ATTENTION_ATTENTIONKERNELS_H
