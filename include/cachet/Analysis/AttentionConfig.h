//===- AttentionConfig.h - which flash-attention kernel, which tiles ------===//
//
// The cost model behind the #cachet.kernel_config of a cachet.attention:
// which kernel (scalar, mma, mma-sync), which query and key tiles, vectors,
// workgroup memory and staging, from the attention's shapes and the device
// profile. cachet-select-kernel-configs calls selectAttentionConfig and puts
// the result on the op; cachet-lower-attention checks a config with
// whyNotAttentionConfig and builds it.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_ATTENTIONCONFIG_H
#define CACHET_ANALYSIS_ATTENTIONCONFIG_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Value.h"
#include "llvm/Support/Alignment.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <string>

namespace cachet {

/// The shapes and types of one attention, all static.
struct AttentionShape {
  int64_t queryHeads, queries, positions, kvHeads, headDim, valueDim;
  int64_t group;
  bool tokenMajor;
  mlir::Type queryElement, keyElement, valueElement, resultElement;
  /// Rank of the mask (2 or 3), 0 without one.
  int64_t maskRank = 0;
  /// The block formats K and V are decoded from inside the kernel (null
  /// when the kernel reads them as floats).
  BlockQuantizedType keyBlock, valueBlock;
  /// Whether K / V is a split q8_0 cache (getSplitDequantize): the decode
  /// kernels read its i8 values and f16 scales and decode them in
  /// registers; the other kernels read it dequantized into a copy.
  bool keySplit = false, valueSplit = false;
  /// Whether the op is a cachet.attention_partial: one chunk of the keys,
  /// continuing an online-softmax state (the scalar and mma-sync kernels
  /// carry it; `resultElement` is then the query's).
  bool partial = false;
};

/// Returns the static shape of `op` (a cachet.attention or
/// cachet.attention_partial), K/V decoded in the kernel included, or a
/// reason why no kernel takes it.
mlir::FailureOr<AttentionShape> getAttentionShape(mlir::Operation *op,
                                                  std::string &reason);

/// Returns the cachet.dequantize producing `kv` when the kernel can decode
/// its input itself: a packed block-quantized, token-major cache that is a
/// function argument, dequantized without separate scales.
DequantizeOp getPackedDequantize(mlir::Value kv, bool tokenMajor);

/// Returns the cachet.dequantize producing `kv` when the decode kernels can
/// read its split q8_0 input themselves: `i8` values `[pos][kv_head][dim]`
/// and `f16` scales `[pos][kv_head][dim / 32]`, token-major, each a function
/// argument or its in-place update (the form front ends write a quantized
/// cache in).
DequantizeOp getSplitDequantize(mlir::Value kv, bool tokenMajor);

/// Whether the kernel of `variant` with `stages` reads split q8_0 K/V
/// (AttentionShape::keySplit) itself: the decode kernels, but for the
/// staged one, which copies rows of K/V's element type.
bool readsSplitKV(KernelVariant variant, int64_t stages);

/// The element type of the scalar kernel's K and V tiles: the data's, except
/// that bf16 is staged as f32 (exact; Vulkan devices have no bf16 workgroup
/// memory, and every product is taken in f32 anyway).
mlir::Type getScalarTileElement(mlir::Type element);

/// How an mma kernel fills its K and V tiles in workgroup memory, from its
/// config's `stages` and the K/V it decodes from blocks.
enum class KVStaging {
  /// Through registers: the next tile's f16 vectors are loaded before the
  /// current one is multiplied; K/V decoded from blocks are decoded value by
  /// value from global memory (stages = 1, or K packed and V not).
  Registers,
  /// f16 K/V double buffered, filled by asynchronous copies (stages = 2;
  /// the wgmma kernel's stages = 3: three buffers, the next tile's
  /// `Q K^T` in flight during this tile's softmax).
  AsyncCopy,
  /// K and V both packed: their blocks' bytes double buffered by
  /// asynchronous copies and decoded in workgroup memory into the f16 tiles
  /// (stages = 2).
  AsyncPacked,
};

/// The staging of the mma kernel of `stages` for `s`.
KVStaging getKVStaging(const AttentionShape &s, int64_t stages);

/// The bytes of one asynchronous copy of a packed row of `rowBytes` (16, 8
/// or 4: the largest dividing it), or 0 where none does.
int64_t getPackedCopyBytes(int64_t rowBytes);

/// The workgroup-memory tiles of the mma kernels: Q, K, V (f16) and, for
/// the kernel that stages its softmax (wmma), the scores (f32), P (f16) and a
/// 16-column row broadcast (f32); double buffered, a second K and V. Each
/// row is padded by `padBytes`. With packed rows (`packedKeyRow` and
/// `packedValueRow` bytes, KVStaging::AsyncPacked), two buffers of K's and
/// of V's block bytes (KP, VP, each `2 keyTile` rows) instead of the second
/// K and V.
struct MmaTiles {
  enum Kind { Q, K, V, Scores, Probs, Rows, K2, V2, KP, VP, K3, V3, Count };
  struct Tile {
    int64_t rows = 0, cols = 0, stride = 0;
    /// Bytes per element: 2 (f16 / bf16), 4 (f32) or 1 (block bytes).
    int64_t elementBytes = 2;
    int64_t bytes() const { return rows * stride * elementBytes; }
  };
  /// Indexed by Kind; tiles the kernel does not use have no rows.
  Tile tiles[Count];
  /// Byte offset of each tile in one dynamic allocation (128-byte aligned;
  /// `swizzled`: 1024-byte aligned from a 1024-byte boundary the kernel
  /// finds at run time, the allocation 1024 bytes larger for it).
  int64_t offsets[Count] = {};
  int64_t totalBytes = 0;
  /// The wgmma kernel's tiles: its 16-bit tiles unpadded, each row's 64
  /// values a 128-byte swizzle row (a `[cols / 64][rows][64]` view).
  bool swizzled = false;

  MmaTiles(int64_t queryTile, int64_t keyTile, int64_t headDim,
           int64_t valueDim, int64_t padBytes, bool doubleBuffer = false,
           bool qReadOnce = true, bool stagedSoftmax = true,
           int64_t packedKeyRow = 0, int64_t packedValueRow = 0,
           bool swizzle = false, bool tripleBuffer = false)
      : swizzled(swizzle) {
    int64_t align = swizzled ? 1024 : 128;
    auto add = [&](Kind kind, int64_t rows, int64_t cols, int64_t elementBytes,
                   bool place = true) {
      int64_t stride = cols + (elementBytes == 1 ? 0 : padBytes / elementBytes);
      tiles[kind] = {rows, cols, stride, elementBytes};
      offsets[kind] = totalBytes;
      if (place)
        totalBytes += llvm::alignTo(tiles[kind].bytes(), align);
    };
    bool packed = packedKeyRow > 0 && packedValueRow > 0;
    // Q (read once, before the first key tile) shares the second K/V
    // buffers' memory where it fits: the f16 K tile, or the block bytes
    // (not with the wgmma kernel, whose Q is read by every key tile).
    int64_t qBytes = queryTile * (headDim + padBytes / 2) * 2;
    int64_t packedBytes = llvm::alignTo(2 * keyTile * packedKeyRow, 128) +
                          llvm::alignTo(2 * keyTile * packedValueRow, 128);
    bool shareQ =
        qReadOnce && !swizzled &&
        (packed ? qBytes <= packedBytes : doubleBuffer && queryTile <= keyTile);
    add(Q, queryTile, headDim, 2, !shareQ);
    add(K, keyTile, headDim, 2);
    add(V, keyTile, valueDim, 2);
    if (stagedSoftmax) {
      add(Scores, queryTile, keyTile, 4);
      add(Probs, queryTile, keyTile, 2);
      add(Rows, queryTile, 16, 4);
    }
    if (packed) {
      add(KP, 2 * keyTile, packedKeyRow, 1);
      add(VP, 2 * keyTile, packedValueRow, 1);
      if (shareQ)
        offsets[Q] = offsets[KP];
    } else if (doubleBuffer) {
      add(K2, keyTile, headDim, 2);
      add(V2, keyTile, valueDim, 2);
      if (shareQ)
        offsets[Q] = offsets[K2];
      if (tripleBuffer) {
        add(K3, keyTile, headDim, 2);
        add(V3, keyTile, valueDim, 2);
      }
    }
    if (swizzled)
      totalBytes += 1024;
  }
  bool has(Kind kind) const { return tiles[kind].rows > 0; }
};

/// The tiles of the mma kernel `variant` (attention_mma stages its softmax)
/// with `staging` (`stages` 3: the wgmma kernel's three K/V buffers).
MmaTiles getMmaTiles(const AttentionShape &s, KernelVariant variant,
                     int64_t queryTile, int64_t keyTile, int64_t padBytes,
                     int64_t rowBlocks, KVStaging staging, int64_t stages = 2);

/// The workgroup memory of the tiled kernel (attention_tiled), one f32
/// buffer: P for the key tile ([query rows][keys + 4]) at 0, then a region
/// that holds in turn a step's Q and K columns transposed ([step][rows +
/// 1], [step][keys + 1]), a step's V rows ([step][value-dim]) and the rows'
/// partial maxima and sums ([rows][threads per row group + 1]). Offsets
/// and strides in f32 elements; the paddings keep the threads' stores and
/// reads in distinct banks.
struct TiledAttentionLayout {
  /// Threads sharing 4 query rows (each holds keyTile / this many
  /// positions and valueDim / this many value columns of them).
  int64_t rowThreads;
  int64_t pStride, region, qStride, kOffset, kStride, redStride, total;
  TiledAttentionLayout(int64_t queryTile, int64_t keyTile, int64_t step,
                       int64_t threads, int64_t valueDim)
      : rowThreads(threads / (queryTile / 4)), pStride(keyTile + 4),
        region(queryTile * (keyTile + 4)), qStride(queryTile + 1),
        kOffset(region + step * (queryTile + 1)), kStride(keyTile + 1),
        redStride(rowThreads + 1) {
    int64_t phase = std::max({step * (queryTile + 1) + step * (keyTile + 1),
                              step * valueDim, queryTile * redStride});
    total = region + phase;
  }
  int64_t bytes() const { return 4 * total; }
};

/// The most positions a key tile of the prefill kernels may hold: a kernel
/// reads keys up to the end of the tile that holds the causal bound, so
/// cachet-dequant-once-kv dequantizes that many positions past the bound.
constexpr int64_t kMaxKeyTile = 1024;

/// llvmpipe (lavapipe) ends a loop nest after this many iterations in all,
/// silently.
constexpr int64_t kLlvmpipeLoopIterations = 65535;

/// The kernels `attention-kernel` may ask for.
enum class AttentionKernelChoice {
  Auto,
  Scalar,
  Mma,
  MmaSync,
  Decode,
  Tiled,
  Reference
};

/// The knobs of the attention cost model (cachet-select-kernel-configs'
/// options).
struct AttentionConfigOptions {
  AttentionKernelChoice kernel = AttentionKernelChoice::Auto;
  /// Whether auto may choose the mma-sync / mma kernel.
  bool allowMmaSync = false, allowMma = true;
  /// Where auto chooses the mma kernel (KHR cooperative matrices), also
  /// the kernel it would choose without it, as the fallback that runs where
  /// the device lacks them (AttentionDecision::fallback).
  bool mmaFallback = false;
  /// The target has sm_90a's warpgroup MMA, and attention-wgmma: where auto
  /// or attention-kernel=mma-sync would take the mma-sync kernel, the
  /// wgmma kernel runs instead wherever it can.
  bool allowWgmma = false, attentionWgmma = true;
  /// The wgmma kernel's K/V buffers where K/V are f16/bf16: 2, or 3 (the
  /// next key tile's `Q K^T` issued before this tile's softmax).
  int64_t wgmmaStages = 2;
  /// 0: from the profile.
  int64_t queryTile = 0, keyTile = 0;
  int64_t vectorBytes = 16, tilePadBytes = 16;
  bool dynamicShared = false;
  int64_t residentWorkgroups = 3;
  bool occupancyHint = false, asyncCopy = false;
  int64_t rowBlocks = 1;
  bool lazyRescale = false, warpSync = false;
  /// The decode kernel (split-KV flash-decoding): auto takes it where one
  /// KV head has at most `decodeRows` query rows (group x queries; 0:
  /// never); `decodeSplit` workgroups per KV head (0: from the profile's
  /// compute units), `decodeThreads` threads per workgroup (0: 256 where K
  /// is decoded from blocks, else 128), K rows read `decodeLoadBytes` at a
  /// time, at most `decodeWorkgroupRows` of the KV head's rows per
  /// workgroup.
  int64_t decodeRows = 16, decodeSplit = 0, decodeThreads = 0;
  /// 0: 8, or 16 on mma.sync (one m16 block).
  int64_t decodeWorkgroupRows = 0;
  int64_t decodeLoadBytes = 16;
  /// 1: every decode thread reads its rows from global memory; 2: with
  /// `asyncCopy` and `dynamicShared`, each step's K/V rows are staged in
  /// double-buffered workgroup memory by asynchronous copies (coalesced;
  /// the next step's copies in flight while this one computes).
  int64_t decodeStages = 1;
  /// Values of a K/V row each decode lane reads: 1, a position per thread;
  /// n > 1, each row read by head-dim / n lanes together, `decodeUnroll`
  /// positions per group of lanes per step; 0: auto.
  int64_t decodeRowValues = 0, decodeUnroll = 4;
  /// The decode kernel with `Q K^T` and `P V` on m16n8k16 mma.sync (NVVM,
  /// with `allowMmaSync`): 1 wherever it can serve the attention, -1 never,
  /// 0 auto.
  int64_t decodeMmaSync = 0;
  /// Matrix products of 16 positions each subgroup of the mma-sync decode
  /// kernel takes per step (their loads in flight together).
  int64_t decodeMmaUnroll = 1;
  /// Steps of the mma-sync decode kernel whose loads are in flight: 2
  /// (each step's loads issued before the previous step's products), or 1.
  int64_t decodeMmaStages = 2;
  /// Decode workgroups per compute unit the split targets, not rounded (0: 256
  /// threads' worth for the pipelined mma-sync kernel, else four with the
  /// split a power of two); on mma.sync also its min_workgroups_per_sm.
  int64_t decodeWorkgroupsPerUnit = 0;
  /// decodeWorkgroupsPerUnit of the decode kernel (not mma.sync) over
  /// block-quantized K/V where decodeWorkgroupsPerUnit is 0 (0: its
  /// default).
  int64_t decodeBlockWorkgroupsPerUnit = 0;
};

/// The most query rows of one KV head the decode kernel keeps in registers.
constexpr int64_t kMaxDecodeRows = 32;

/// The bytes of one row (one position of one KV head) of K or V as the
/// decode kernel reads it: `dim` values of `element`, or of `block`s.
int64_t getDecodeRowBytes(int64_t dim, mlir::Type element,
                          BlockQuantizedType block);

/// The positions each of `split` decode workgroups takes of `positions`:
/// whole multiples of `threads` (the last workgroups may get fewer, or
/// none).
int64_t getDecodePositionsPerSplit(int64_t positions, int64_t split,
                                   int64_t threads);

/// The bytes per load of a K row in the decode kernel of `config`: its
/// `load_bytes` (16 when 0), at most the largest power of two dividing the
/// row's bytes (each row starts at a multiple of them).
int64_t getDecodeLoadBytes(const AttentionShape &s, KernelConfigAttr config);

/// The stride, in bytes, of a K row of `rowBytes` that the staged decode
/// kernel (stages = 2) keeps in workgroup memory: the row padded to an odd
/// number of its copy width (getPackedCopyBytes), so that the threads'
/// loads of one row each hit distinct banks. 0 when the row is not copied
/// in pieces of at least 4 bytes.
int64_t getDecodeKeyStride(int64_t rowBytes);

/// The dynamic workgroup memory of the staged decode kernel (stages = 2)
/// with `rows` query rows and `threads` threads of `subgroup` lanes: byte
/// offsets, each 128-byte aligned, of Q (f32), the merged accumulator
/// (f32), the subgroups' row maxima and sums (f32), and the two buffers of
/// `threads` K rows (at getDecodeKeyStride) and V rows each, plus one row
/// that the idle lanes' empty copies write; the total.
struct DecodeLayout {
  int64_t query = 0, acc = 0, stats = 0, keys = 0, values = 0, total = 0;
  /// Bytes of a K row and of a V row in the buffers.
  int64_t keyStride = 0, valueStride = 0;
};
DecodeLayout getDecodeLayout(const AttentionShape &s, int64_t rows,
                             int64_t threads, int64_t subgroup);

/// Returns "" or which option is out of range, and its allowed values.
std::string checkAttentionConfigOptions(const AttentionConfigOptions &options);

/// The decision for one attention: a config, or none (the reference
/// lowering is kept); `remark` says what was chosen and why.
struct AttentionDecision {
  KernelConfigAttr config;
  std::string remark;
  /// With AttentionConfigOptions::mmaFallback: the kernel to launch where
  /// the device does not run `config`'s cooperative matrices, or null.
  KernelConfigAttr fallback;
};

/// Chooses the kernel of `op` (a cachet.attention or
/// cachet.attention_partial) on `profile` (may be null: defaults).
AttentionDecision selectAttentionConfig(mlir::Operation *op,
                                        DeviceProfileAttr profile,
                                        const AttentionConfigOptions &options);

/// Returns why `config` cannot be built for `op` on `profile` (element
/// types, head dimensions, subgroups, workgroup memory), or "".
std::string whyNotAttentionConfig(mlir::Operation *op, KernelConfigAttr config,
                                  DeviceProfileAttr profile);

/// The workgroup memory, in bytes, the kernel of `config` allocates for
/// `shape`.
int64_t getAttentionWorkgroupBytes(const AttentionShape &shape,
                                   KernelConfigAttr config);

} // namespace cachet

#endif // CACHET_ANALYSIS_ATTENTIONCONFIG_H
