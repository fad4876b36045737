//===- AttentionConfig.cpp - which flash-attention kernel, which tiles ----===//

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Device/DeviceProfile.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace cachet;

/// getAttentionShape of a cachet.attention or cachet.attention_partial.
template <typename OpTy>
static FailureOr<AttentionShape> getShape(OpTy op, Type resultElement,
                                          std::string &reason) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto key = cast<RankedTensorType>(op.getKey().getType());
  auto value = cast<RankedTensorType>(op.getValue().getType());
  if (!query.hasStaticShape() || !key.hasStaticShape() ||
      !value.hasStaticShape()) {
    reason = "dynamic shape";
    return failure();
  }
  if (op.getAccumulator() && !op.getAccumulator()->isF32()) {
    reason = "the accumulator is not f32";
    return failure();
  }
  for (Type t : {query.getElementType(), key.getElementType(),
                 value.getElementType(), resultElement})
    if (!t.isF16() && !t.isBF16() && !t.isF32()) {
      reason = "element types other than f16, bf16 and f32";
      return failure();
    }
  AttentionShape s;
  s.tokenMajor = op.getKvLayout() == KVLayout::TokenMajor;
  s.queryHeads = query.getDimSize(0);
  s.queries = query.getDimSize(1);
  s.headDim = query.getDimSize(2);
  s.positions = key.getDimSize(op.getKVPosDim());
  s.kvHeads = key.getDimSize(op.getKVHeadDim());
  s.valueDim = value.getDimSize(2);
  s.group = s.queryHeads / s.kvHeads;
  s.queryElement = query.getElementType();
  s.keyElement = key.getElementType();
  s.valueElement = value.getElementType();
  s.resultElement = resultElement;
  if (Value mask = op.getMask())
    s.maskRank = cast<RankedTensorType>(mask.getType()).getRank();
  // K or V that is cachet.dequantize of a token-major packed cache passed
  // as a function argument is decoded inside the kernel.
  auto blockOf = [&](Value kv) -> BlockQuantizedType {
    DequantizeOp dequant = getPackedDequantize(kv, s.tokenMajor);
    if (!dequant)
      return {};
    return cast<BlockQuantizedType>(
        cast<RankedTensorType>(dequant.getInput().getType()).getElementType());
  };
  s.keyBlock = blockOf(op.getKey());
  s.valueBlock = blockOf(op.getValue());
  s.keySplit = bool(getSplitDequantize(op.getKey(), s.tokenMajor));
  s.valueSplit = bool(getSplitDequantize(op.getValue(), s.tokenMajor));
  return s;
}

FailureOr<AttentionShape> cachet::getAttentionShape(Operation *op,
                                                    std::string &reason) {
  if (auto attention = dyn_cast<AttentionOp>(op))
    return getShape(attention, getElementTypeOrSelf(attention.getType()),
                    reason);
  if (auto partial = dyn_cast<AttentionPartialOp>(op)) {
    // The chunk's kernel is the whole attention's, whose result has the
    // query's type; the state it writes is f32.
    FailureOr<AttentionShape> s = getShape(
        partial, getElementTypeOrSelf(partial.getQuery().getType()), reason);
    if (succeeded(s))
      s->partial = true;
    return s;
  }
  reason = "not an attention";
  return failure();
}

/// Whether `packed` is a function argument, or that argument with rows
/// inserted (`tensor.insert_slice`: a cache updated in place, as front
/// ends write a decode step): its bytes are a buffer the kernel can read.
static bool isArgumentOrUpdate(Value packed) {
  for (int depth = 0; depth < 8; ++depth) {
    if (isa<BlockArgument>(packed))
      return true;
    auto insert = packed.getDefiningOp<tensor::InsertSliceOp>();
    if (!insert)
      return false;
    packed = insert.getDest();
  }
  return false;
}

DequantizeOp cachet::getPackedDequantize(Value kv, bool tokenMajor) {
  auto dequant = kv.getDefiningOp<DequantizeOp>();
  if (!dequant || !tokenMajor || dequant.getScales() ||
      !isArgumentOrUpdate(dequant.getInput()))
    return {};
  auto input = cast<RankedTensorType>(dequant.getInput().getType());
  // The in-kernel decoders take the 32-value formats (KV caches), not the
  // weights' super-blocks.
  auto block = dyn_cast<BlockQuantizedType>(input.getElementType());
  if (!block || block.getBlockValues() != 32 || input.getRank() != 3 ||
      !input.hasStaticShape())
    return {};
  return dequant;
}

DequantizeOp cachet::getSplitDequantize(Value kv, bool tokenMajor) {
  auto dequant = kv.getDefiningOp<DequantizeOp>();
  if (!dequant || !tokenMajor || !dequant.getScales() ||
      !isArgumentOrUpdate(dequant.getInput()) ||
      !isArgumentOrUpdate(dequant.getScales()))
    return {};
  auto values = cast<RankedTensorType>(dequant.getInput().getType());
  auto scales = cast<RankedTensorType>(dequant.getScales().getType());
  if (!values.getElementType().isSignlessInteger(8) || values.getRank() != 3 ||
      !values.hasStaticShape() || scales.getRank() != 3 ||
      !scales.hasStaticShape() || !scales.getElementType().isF16() ||
      values.getDimSize(2) % 32 != 0 ||
      scales.getShape() != ArrayRef<int64_t>{values.getDimSize(0),
                                             values.getDimSize(1),
                                             values.getDimSize(2) / 32})
    return {};
  return dequant;
}

bool cachet::readsSplitKV(KernelVariant variant, int64_t stages) {
  return variant == KernelVariant::AttentionDecodeMmaSync ||
         (variant == KernelVariant::AttentionDecode && stages != 2);
}

Type cachet::getScalarTileElement(Type element) {
  return element.isBF16() ? Float32Type::get(element.getContext()) : element;
}

std::string
cachet::checkAttentionConfigOptions(const AttentionConfigOptions &o) {
  auto bad = [](StringRef option, int64_t value, StringRef allowed) {
    return llvm::formatv("bad {0} {1}: {2}", option, value, allowed).str();
  };
  if (o.queryTile < 0)
    return bad("query-tile", o.queryTile, "0 (from the profile) or more");
  if (o.keyTile < 0 || o.keyTile > kMaxKeyTile)
    return bad(
        "key-tile", o.keyTile,
        llvm::formatv("0 (from the profile) up to {0}", kMaxKeyTile).str());
  if (o.vectorBytes < 2 || !llvm::isPowerOf2_64(o.vectorBytes))
    return bad("vector-bytes", o.vectorBytes, "a power of two from 2");
  if (o.tilePadBytes < 0 || o.tilePadBytes % 16 != 0)
    return bad("tile-pad-bytes", o.tilePadBytes,
               "a non-negative multiple of 16");
  if (o.residentWorkgroups < 1)
    return bad("resident-workgroups", o.residentWorkgroups, "1 or more");
  if (o.wgmmaStages != 2 && o.wgmmaStages != 3)
    return bad("attention-wgmma-stages", o.wgmmaStages, "2 or 3");
  if (o.rowBlocks < 1 || !llvm::isPowerOf2_64(o.rowBlocks))
    return bad("row-blocks", o.rowBlocks, "a power of two from 1");
  if (o.decodeRows < 0 || o.decodeRows > kMaxDecodeRows)
    return bad("decode-rows", o.decodeRows,
               llvm::formatv("0 (never) to {0}", kMaxDecodeRows).str());
  if (o.decodeSplit < 0)
    return bad("decode-split", o.decodeSplit, "0 (from the profile) or more");
  if (o.decodeWorkgroupRows < 0 || o.decodeWorkgroupRows > kMaxDecodeRows)
    return bad(
        "decode-workgroup-rows", o.decodeWorkgroupRows,
        llvm::formatv("0 (8, or 16 on mma.sync) to {0}", kMaxDecodeRows).str());
  if (o.decodeThreads < 0 || o.decodeThreads > 1024)
    return bad("decode-threads", o.decodeThreads,
               "0 (from the K/V types) to 1024");
  if (o.decodeStages != 1 && o.decodeStages != 2)
    return bad("decode-stages", o.decodeStages, "1 or 2");
  if (o.decodeRowValues < 0 || o.decodeRowValues > 32 ||
      (o.decodeRowValues && !llvm::isPowerOf2_64(o.decodeRowValues)))
    return bad("decode-row-values", o.decodeRowValues,
               "0 (auto) or a power of two up to 32");
  if (o.decodeUnroll < 1 || o.decodeUnroll > 16)
    return bad("decode-unroll", o.decodeUnroll, "1 to 16");
  if (o.decodeMmaSync < -1 || o.decodeMmaSync > 1)
    return bad("decode-mma-sync", o.decodeMmaSync,
               "-1 (never), 0 (auto) or 1 (where it serves)");
  if (o.decodeMmaUnroll < 1 || o.decodeMmaUnroll > 8)
    return bad("decode-mma-unroll", o.decodeMmaUnroll, "1 to 8");
  if (o.decodeMmaStages != 1 && o.decodeMmaStages != 2)
    return bad("decode-mma-stages", o.decodeMmaStages, "1 or 2");
  if (o.decodeWorkgroupsPerUnit < 0 || o.decodeWorkgroupsPerUnit > 32)
    return bad("decode-workgroups-per-cu", o.decodeWorkgroupsPerUnit,
               "0 (auto) to 32");
  if (o.decodeBlockWorkgroupsPerUnit < 0 || o.decodeBlockWorkgroupsPerUnit > 32)
    return bad("decode-block-workgroups-per-cu", o.decodeBlockWorkgroupsPerUnit,
               "0 (its default) to 32");
  if (o.decodeLoadBytes < 1 || o.decodeLoadBytes > 16 ||
      !llvm::isPowerOf2_64(o.decodeLoadBytes))
    return bad("decode-load-bytes", o.decodeLoadBytes,
               "a power of two from 1 to 16");
  return "";
}

/// Returns why the mma kernel cannot run `s` on `profile`, or "".
/// `allowBF16`: the kernel also takes bf16 Q, K and V (mma-sync).
static std::string whyNotMma(const AttentionShape &s, DeviceProfileAttr profile,
                             bool allowBF16) {
  if (!profile)
    return "no device profile";
  if (!hasCoopMatrix(profile, "16x16x16:f16->f32"))
    return "the profile has no 16x16x16:f16->f32 cooperative matrix";
  bool f16 =
      s.queryElement.isF16() && s.keyElement.isF16() && s.valueElement.isF16();
  bool bf16 = s.queryElement.isBF16() && s.keyElement.isBF16() &&
              s.valueElement.isBF16();
  if (!f16 && !(allowBF16 && bf16))
    return allowBF16 ? "Q, K and V are not all f16 or all bf16"
                     : "Q, K and V are not all f16";
  if (s.headDim % 16 != 0 || s.valueDim % 16 != 0)
    return "the head dimensions are not multiples of 16";
  return "";
}

/// Returns the largest power of two `t <= limit` with `fits(t)`, or 0.
/// Why a chunk (cachet.attention_partial) cannot run the mma or decode
/// kernel.
static constexpr llvm::StringLiteral kNoPartialState =
    "a chunk of keys (cachet.attention_partial) carries its online-softmax "
    "state in the scalar, tiled and mma-sync kernels only";

static int64_t largestPowerOfTwo(int64_t limit,
                                 function_ref<bool(int64_t)> fits) {
  int64_t t = 1;
  while (t * 2 <= limit)
    t *= 2;
  for (; t >= 1; t /= 2)
    if (fits(t))
      return t;
  return 0;
}

/// The profile's subgroup size and workgroup memory, with the defaults of a
/// module without a profile.
static std::pair<uint64_t, uint64_t> getLimits(DeviceProfileAttr profile) {
  uint64_t subgroup = profile ? profile.getSubgroupSize() : 0;
  uint64_t sharedBytes = profile ? profile.getSharedMemoryBytes() : 0;
  return {subgroup ? subgroup : 32, sharedBytes ? sharedBytes : 16384};
}

/// Workgroup memory of the scalar kernel with query tile `q`, key tile `t`:
/// K and V tiles, the f32 accumulator rows and the f32 score rows.
static int64_t getScalarBytes(const AttentionShape &s, int64_t q, int64_t t) {
  int64_t bytesPerPosition =
      s.headDim *
          (getScalarTileElement(s.keyElement).getIntOrFloatBitWidth() / 8) +
      s.valueDim *
          (getScalarTileElement(s.valueElement).getIntOrFloatBitWidth() / 8);
  return t * bytesPerPosition + 4 * q * (s.valueDim + t);
}

/// Iterations of the scalar kernel's KV-tile loop nest, which llvmpipe caps.
static int64_t getScalarIterations(const AttentionShape &s, int64_t keyTile,
                                   int64_t threads) {
  int64_t perTile =
      llvm::divideCeil(keyTile * (s.headDim + s.valueDim), threads) +
      2 * keyTile + s.valueDim + 1;
  return llvm::divideCeil(s.positions, keyTile) * perTile;
}

/// Workgroup memory of the decode kernel with `rows` query rows and
/// `warps` subgroups: Q (f32), the output accumulator (f32) and each
/// subgroup's row max and sum (f32).
static int64_t getDecodeBytes(const AttentionShape &s, int64_t rows,
                              int64_t warps) {
  return 4 * rows * (s.headDim + s.valueDim + 2 * warps);
}

/// Workgroup memory of the mma-sync decode kernel with `rows` query rows
/// and `warps` subgroups: the output accumulator and each subgroup's row
/// max and sum (f32), the accumulator's rows padded to the 8 of an n8
/// block, and a placeholder Q tile (Q is in registers).
static int64_t getDecodeMmaBytes(const AttentionShape &s, int64_t rows,
                                 int64_t warps) {
  return 4 * (1 + llvm::alignTo(rows, 8) * s.valueDim + warps * 2 * rows);
}

int64_t cachet::getDecodeRowBytes(int64_t dim, Type element,
                                  BlockQuantizedType block) {
  if (block)
    return dim / 32 * block.getBlockBytes();
  return dim * (element.getIntOrFloatBitWidth() / 8);
}

int64_t cachet::getDecodePositionsPerSplit(int64_t positions, int64_t split,
                                           int64_t threads) {
  return llvm::alignTo(llvm::divideCeil(std::max<int64_t>(positions, 1), split),
                       threads);
}

int64_t cachet::getDecodeLoadBytes(const AttentionShape &s,
                                   KernelConfigAttr config) {
  int64_t rowBytes = getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock);
  int64_t bytes = config.getLoadBytes() ? config.getLoadBytes() : 16;
  while (bytes > 1 && rowBytes % bytes != 0)
    bytes /= 2;
  return bytes;
}

int64_t cachet::getDecodeKeyStride(int64_t rowBytes) {
  int64_t width = getPackedCopyBytes(rowBytes);
  if (width == 0)
    return 0;
  return (rowBytes / width) % 2 == 1 ? rowBytes : rowBytes + width;
}

/// The bytes of the staged decode kernel's double buffers of `threads` K
/// rows of `keyRow` bytes and V rows of `valueRow` bytes.
static int64_t getStagedBytes(int64_t keyRow, int64_t valueRow,
                              int64_t threads) {
  return llvm::alignTo(2 * threads * getDecodeKeyStride(keyRow), 128) +
         llvm::alignTo(2 * threads * valueRow, 128);
}

DecodeLayout cachet::getDecodeLayout(const AttentionShape &s, int64_t rows,
                                     int64_t threads, int64_t subgroup) {
  DecodeLayout l;
  l.keyStride = getDecodeKeyStride(
      getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock));
  l.valueStride = getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock);
  int64_t at = 0;
  auto place = [&](int64_t bytes) {
    int64_t offset = at;
    at += llvm::alignTo(bytes, 128);
    return offset;
  };
  l.query = place(4 * rows * s.headDim);
  l.acc = place(4 * rows * s.valueDim);
  l.stats = place(4 * 2 * rows * (threads / subgroup));
  // One more row each: where the pieces of a row leave lanes of a subgroup
  // idle, their copies (of no bytes) land there.
  l.keys = place((2 * threads + 1) * l.keyStride);
  l.values = place((2 * threads + 1) * l.valueStride);
  l.total = at;
  return l;
}

namespace {
/// What a head-major scratch of cachet-dequant-once-kv was filled from:
/// packed blocks (their format) or the split q8_0 form (i8 values, f16
/// scales). Rewrites off read those K/V in the kernel as such, and the
/// decode kernels' choices that set the order of their sums follow what
/// rewrites off read, so that off and on give the same bytes.
struct DequantizedOnceFrom {
  BlockQuantizedType block;
  bool split = false;
};
} // namespace

/// How `kv` was dequantized once (whole, or the positions the attention
/// reads inserted into the scratch); nothing where it is not a scratch.
static DequantizedOnceFrom getDequantizedOnceFrom(Value kv) {
  if (auto insert = kv.getDefiningOp<tensor::InsertSliceOp>())
    kv = insert.getSource();
  auto dequant = kv.getDefiningOp<DequantTransposeOp>();
  if (!dequant)
    return {};
  Type element =
      cast<ShapedType>(dequant.getInput().getType()).getElementType();
  if (auto block = dyn_cast<BlockQuantizedType>(element))
    return {block, false};
  return {nullptr, true};
}

/// getDequantizedOnceFrom of `op`'s K and V (nothing for a partial).
static std::pair<DequantizedOnceFrom, DequantizedOnceFrom>
getKVDequantizedOnceFrom(Operation *op) {
  auto attention = dyn_cast<AttentionOp>(op);
  if (!attention)
    return {};
  return {getDequantizedOnceFrom(attention.getKey()),
          getDequantizedOnceFrom(attention.getValue())};
}

/// Iterations of the decode kernel's loops in one workgroup (llvmpipe caps
/// a loop nest): the Q staging, the KV steps of one split and the
/// accumulator's merge and store.
static int64_t getDecodeIterations(const AttentionShape &s, int64_t rows,
                                   int64_t threads, int64_t stepPositions,
                                   int64_t split) {
  int64_t perSplit = llvm::divideCeil(s.positions, split);
  return llvm::divideCeil(rows * s.headDim, threads) +
         llvm::divideCeil(perSplit, stepPositions) +
         2 * llvm::divideCeil(rows * s.valueDim, threads) + split;
}

KVStaging cachet::getKVStaging(const AttentionShape &s, int64_t stages) {
  if (stages < 2)
    return KVStaging::Registers;
  if (!s.keyBlock && !s.valueBlock)
    return KVStaging::AsyncCopy;
  if (s.keyBlock && s.valueBlock &&
      getPackedCopyBytes(
          getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock)) &&
      getPackedCopyBytes(
          getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock)))
    return KVStaging::AsyncPacked;
  return KVStaging::Registers;
}

int64_t cachet::getPackedCopyBytes(int64_t rowBytes) {
  for (int64_t bytes : {16, 8, 4})
    if (rowBytes % bytes == 0)
      return bytes;
  return 0;
}

MmaTiles cachet::getMmaTiles(const AttentionShape &s, KernelVariant variant,
                             int64_t queryTile, int64_t keyTile,
                             int64_t padBytes, int64_t rowBlocks,
                             KVStaging staging, int64_t stages) {
  bool packed = staging == KVStaging::AsyncPacked;
  return MmaTiles(
      queryTile, keyTile, s.headDim, s.valueDim, padBytes,
      staging == KVStaging::AsyncCopy, rowBlocks == 1,
      variant == KernelVariant::AttentionMma,
      packed ? getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock) : 0,
      packed ? getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock) : 0,
      variant == KernelVariant::AttentionWgmma,
      staging == KVStaging::AsyncCopy && stages == 3);
}

int64_t cachet::getAttentionWorkgroupBytes(const AttentionShape &s,
                                           KernelConfigAttr config) {
  ArrayRef<int64_t> tile = config.getTile();
  if (config.getVariant() == KernelVariant::AttentionDecodeMmaSync)
    return getDecodeMmaBytes(s, tile[0], config.getWorkgroup() / 32);
  if (config.getVariant() == KernelVariant::AttentionDecode) {
    int64_t subgroup = config.getSubgroup() ? config.getSubgroup() : 32;
    if (config.getStages() == 2)
      return getDecodeLayout(s, tile[0], tile[1], subgroup).total;
    return getDecodeBytes(s, tile[0], tile[1] / subgroup);
  }
  if (config.getVariant() == KernelVariant::AttentionScalar)
    return getScalarBytes(s, tile[0], tile[1]);
  if (config.getVariant() == KernelVariant::AttentionTiled)
    return TiledAttentionLayout(tile[0], tile[1], tile[2],
                                config.getWorkgroup(), s.valueDim)
        .bytes();
  return getMmaTiles(s, config.getVariant(), tile[0], tile[1],
                     config.getPadBytes(), config.getRowBlocks(),
                     getKVStaging(s, config.getStages()), config.getStages())
      .totalBytes;
}

/// "; K decoded from q8_0 blocks `where`" (and V), for the K/V of `s` the
/// kernel decodes from blocks.
static std::string describeDecodedKV(const AttentionShape &s, StringRef where) {
  std::string decoded;
  for (auto [what, block] :
       {std::pair<StringRef, BlockQuantizedType>{"K", s.keyBlock},
        {"V", s.valueBlock}})
    if (block)
      decoded += llvm::formatv("; {0} decoded from {1} blocks {2}", what,
                               block.getFormatName(), where)
                     .str();
  return decoded;
}

/// "; K read as split q8_0 ..." (and V), for the split q8_0 K/V of `s`
/// that the decode kernels read themselves.
static std::string describeSplitKV(const AttentionShape &s, StringRef where) {
  std::string read;
  for (auto [what, split] :
       {std::pair<StringRef, bool>{"K", s.keySplit}, {"V", s.valueSplit}})
    if (split)
      read += llvm::formatv("; {0} read as split q8_0 (i8 values, f16 "
                            "scales) and decoded {1}",
                            what, where)
                  .str();
  return read;
}

/// The workgroups of `subgroups` subgroups that the budget of workgroup
/// memory is shared by: resident-workgroups counts workgroups of up to four
/// subgroups, so larger ones share it among as many subgroups.
static int64_t getResidentWorkgroups(const AttentionConfigOptions &o,
                                     int64_t subgroups) {
  if (subgroups <= 4)
    return o.residentWorkgroups;
  return std::max<int64_t>(
      1, llvm::divideCeil(o.residentWorkgroups * 4, subgroups));
}

/// The mma-sync kernel's subgroups per workgroup without a query-tile
/// option: 8 where that leaves no compute unit with more query rows than 4
/// would (the workgroups spread evenly over the profile's compute units),
/// so each K/V tile is copied (and decoded) once for twice the rows; else
/// 4. On the H200 at pp512 (128 workgroups on 132 units, against 256) 8
/// took q8_0 decoded in the kernel from 1.77 to 1.59 ms and f16 from 1.185
/// to 1.152 (run 73).
static int64_t getAutoSubgroups(const AttentionShape &s,
                                DeviceProfileAttr profile, int64_t rows) {
  if (!profile || !profile.getComputeUnits())
    return 4;
  int64_t units = profile.getComputeUnits();
  auto perUnit = [&](int64_t subgroups) {
    int64_t tile = subgroups * rows;
    int64_t workgroups = llvm::divideCeil(s.queries, tile) * s.queryHeads;
    return llvm::divideCeil(workgroups, units) * tile;
  };
  return perUnit(8) <= perUnit(4) ? 8 : 4;
}

/// Why the tiled kernel cannot run `s` with `tile` (query rows, key
/// positions, columns per step) and `threads`, or "": the checks that
/// depend on the attention's shape (whyNotTiledAttentionTiles has the
/// others).
static std::string whyNotTiledAttention(const AttentionShape &s,
                                        ArrayRef<int64_t> tile,
                                        int64_t threads) {
  if (std::string why = whyNotTiledAttentionTiles(tile, threads); !why.empty())
    return why;
  int64_t rowThreads = threads / (tile[0] / 4);
  if (s.valueDim % rowThreads != 0)
    return llvm::formatv("the value dimension {0} is not a multiple of the "
                         "{1} threads sharing a group of rows",
                         s.valueDim, rowThreads)
        .str();
  if (s.valueDim / rowThreads > 32)
    return llvm::formatv("each thread would hold {0} value columns of its 4 "
                         "rows (value dimension {1} over {2} threads a "
                         "group), more than 32",
                         s.valueDim / rowThreads, s.valueDim, rowThreads)
        .str();
  // The staging is unrolled: at most 64 values a thread per step.
  int64_t staged = llvm::divideCeil(tile[2] * tile[0], threads) +
                   llvm::divideCeil(tile[2] * tile[1], threads) +
                   llvm::divideCeil(tile[2] * s.valueDim, threads);
  if (staged > 64)
    return llvm::formatv("each thread would stage {0} values a step (steps "
                         "of {1} over {2} threads), more than 64",
                         staged, tile[2], threads)
        .str();
  if (s.headDim % tile[2] != 0)
    return llvm::formatv("a step of {0} columns does not divide the head "
                         "dimension {1}",
                         tile[2], s.headDim)
        .str();
  return "";
}

/// Iterations of the tiled kernel's loops (llvmpipe caps them): per key
/// tile its head-dim steps and its V steps.
static int64_t getTiledIterations(const AttentionShape &s,
                                  ArrayRef<int64_t> tile) {
  return llvm::divideCeil(s.positions, tile[1]) *
         (1 + s.headDim / tile[2] + tile[1] / tile[2]);
}

/// The tiled kernel for `s` within `budget` bytes of workgroup memory: query
/// and key tiles of 64 (or the options'), 16 threads per group of 4 rows
/// (fewer where they do not divide the key tile and the value dimension),
/// the widest step of up to 32 columns that fits. Null with `why`.
static KernelConfigAttr
selectTiledAttention(MLIRContext *ctx, const AttentionShape &s,
                     DeviceProfileAttr profile, const AttentionConfigOptions &o,
                     int64_t subgroup, uint64_t budget, std::string &why) {
  int64_t queryTile = o.queryTile > 0 ? o.queryTile : 64;
  int64_t keyTile = o.keyTile > 0 ? o.keyTile : 64;
  if (queryTile % 4 != 0) {
    why = llvm::formatv("query-tile {0} is not a multiple of 4 (each "
                        "thread's rows)",
                        queryTile);
    return {};
  }
  int64_t rowGroups = queryTile / 4, rowThreads = 16;
  while (rowThreads > 1 &&
         (keyTile % rowThreads != 0 || s.valueDim % rowThreads != 0 ||
          rowGroups * rowThreads > 256))
    rowThreads /= 2;
  int64_t threads = rowGroups * rowThreads;
  why.clear();
  for (int64_t step = 32; step >= 1; step /= 2) {
    SmallVector<int64_t> tile = {queryTile, keyTile, step};
    std::string no = whyNotTiledAttention(s, tile, threads);
    int64_t bytes =
        TiledAttentionLayout(queryTile, keyTile, step, threads, s.valueDim)
            .bytes();
    if (no.empty() && bytes > int64_t(budget))
      no = llvm::formatv("{0} bytes of workgroup memory, the budget is {1}",
                         bytes, budget);
    int64_t iterations = getTiledIterations(s, tile);
    if (no.empty() && profile && profile.getVendor() == "mesa" &&
        iterations > kLlvmpipeLoopIterations)
      no = llvm::formatv("its loops run {0} iterations, more than the {1} "
                         "llvmpipe executes (profile vendor mesa)",
                         iterations, kLlvmpipeLoopIterations);
    if (no.empty())
      return KernelConfigAttr::get(
          ctx, KernelVariant::AttentionTiled, tile, threads, subgroup,
          /*vectorWidth=*/1, /*rowBlocks=*/1, /*stages=*/1, /*split=*/1,
          /*padBytes=*/0, /*loads=*/{}, /*minWorkgroupsPerSM=*/0,
          /*resident=*/{}, /*dynamicShared=*/false, /*warpSync=*/false,
          /*lazyRescale=*/false, /*stageX=*/false, /*fuseSiblings=*/false,
          /*fuseEpilogues=*/false, /*loadBytes=*/0);
    if (why.empty())
      why = llvm::formatv("query tile {0}, key tile {1}, {2} threads, steps "
                          "of {3} columns: {4}",
                          queryTile, keyTile, threads, step, no);
  }
  return {};
}

/// The remark for `config` chosen for `s`: the kernel, its tiles and
/// memory, and for the scalar kernel why no mma kernel (`noMma`).
static std::string describeAttentionConfig(const AttentionShape &s,
                                           KernelConfigAttr config,
                                           DeviceProfileAttr profile,
                                           const AttentionConfigOptions &o,
                                           StringRef noMma) {
  auto [subgroup, sharedBytes] = getLimits(profile);
  std::string from = profile ? ("profile " + profile.getName()).str()
                             : std::string("no profile: defaults");
  int64_t queryTile = config.getTile()[0], keyTile = config.getTile()[1];
  int64_t threads = config.getWorkgroup(), rowBlocks = config.getRowBlocks();
  std::string decoded = describeDecodedKV(s, "in the kernel");
  // The workgroup memory the kernel allocates: the mma kernel's tiles were
  // sized for double buffers, which K/V decoded in the kernel do not use.
  int64_t used = getAttentionWorkgroupBytes(s, config);
  std::string common = llvm::formatv(
      "key tile {0} ({1} bytes of workgroup memory), {2}x{3} workgroups of "
      "{4} threads, GQA {5}:1 ({6}; subgroup {7}, {8} bytes of workgroup "
      "memory)",
      keyTile, used, llvm::divideCeil(s.queries, queryTile), s.queryHeads,
      threads, s.group, from, subgroup, sharedBytes);
  common += decoded;
  std::string remark;
  llvm::raw_string_ostream os(remark);
  if (config.getVariant() == KernelVariant::AttentionTiled) {
    int64_t rowThreads = threads / (queryTile / 4);
    os << "tiled flash-attention kernel (f32 fused multiply-adds; " << noMma
       << "): "
       << llvm::formatv("query tile {0}, each thread 4 rows by {1} positions "
                        "of Q K^T and {2} value columns of P V, steps of {3} "
                        "columns, ",
                        queryTile, keyTile / rowThreads,
                        s.valueDim / rowThreads, config.getTile()[2])
       << common;
    return remark;
  }
  if (config.getVariant() == KernelVariant::AttentionScalar) {
    os << "scalar flash-attention kernel (" << noMma << "): "
       << llvm::formatv("query tile {0} (one thread per row), ", queryTile)
       << common;
    return remark;
  }
  // The tensor-core kernels: the rows, the tiles' memory and staging.
  KVStaging staging = getKVStaging(s, config.getStages());
  auto stagingText = [&]() -> std::string {
    if (staging == KVStaging::AsyncCopy && config.getStages() == 3)
      return ", K/V in three buffers filled by asynchronous copies, the next "
             "key tile's Q K^T in flight during this one's softmax";
    if (staging == KVStaging::AsyncCopy)
      return ", K/V double-buffered by asynchronous copies";
    if (staging == KVStaging::AsyncPacked)
      return llvm::formatv(
          ", K/V blocks double-buffered by asynchronous copies ({0}- and "
          "{1}-byte) and decoded in workgroup memory",
          getPackedCopyBytes(
              getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock)),
          getPackedCopyBytes(
              getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock)));
    return ", K/V through registers";
  };
  if (config.getVariant() == KernelVariant::AttentionWgmma) {
    os << "wgmma flash-attention kernel (sm_90a wgmma.mma_async m64n" << keyTile
       << "k16 for Q K^T and m64n" << s.valueDim << "k16 for P V, "
       << (s.queryElement.isBF16() ? "bf16" : "f16")
       << ", f32 accumulate, softmax in registers): "
       << llvm::formatv("query tile {0} ({1} warpgroups of 64 rows), ",
                        queryTile, queryTile / 64)
       << common
       << "; Q/K/V tiles in the 128-byte swizzle in dynamic workgroup "
          "memory"
       << stagingText() << " (16-byte vectors)";
    return remark;
  }
  std::string subgroups =
      llvm::formatv("{0} subgroups of {1} rows", queryTile / (16 * rowBlocks),
                    16 * rowBlocks);
  if (o.queryTile <= 0 && queryTile / (16 * rowBlocks) == 8)
    subgroups += ": 8, as no compute unit then holds more rows than with 4, "
                 "and each K/V tile serves twice the rows";
  else if (o.queryTile <= 0 &&
           config.getVariant() == KernelVariant::AttentionMmaSync &&
           getAutoSubgroups(s, profile, 16 * rowBlocks) == 8)
    subgroups += ": 4, as 8 subgroups' tiles take a smaller key tile, none, "
                 "or copies that do not divide among their threads";
  std::string tiles =
      llvm::formatv("query tile {0} ({1}), ", queryTile, subgroups).str() +
      common +
      llvm::formatv("; tile rows padded by {0} bytes, {1} workgroup memory",
                    config.getPadBytes(),
                    config.getDynamicShared() ? "dynamic" : "static")
          .str();
  if (config.getDynamicShared())
    tiles +=
        llvm::formatv(" (budget: 1/{0} of the profile's)",
                      getResidentWorkgroups(o, queryTile / (16 * rowBlocks)));
  if (config.getMinWorkgroupsPerSm() > 0)
    tiles += llvm::formatv(", registers for {0} workgroups per SM asked "
                           "for (cachet.min_workgroups_per_sm)",
                           config.getMinWorkgroupsPerSm());
  tiles += stagingText();
  tiles += llvm::formatv(" ({0}-byte vectors)", 2 * config.getVectorWidth());
  if (config.getVariant() == KernelVariant::AttentionMmaSync)
    os << "mma-sync flash-attention kernel ("
       << (s.queryElement.isBF16() ? "nvvm.mma.sync m16n8k16 bf16"
                                   : "nvgpu.mma.sync m16n8k16 f16")
       << ", f32 accumulate, softmax in registers): " << tiles;
  else
    os << "mma flash-attention kernel (gpu.subgroup_mma 16x16x16 f16, f32 "
          "accumulate): "
       << tiles
       << llvm::formatv(", subgroup staging synchronized by {0}",
                        config.getWarpSync() ? "nvvm.bar.warp.sync"
                                             : "gpu.barrier")
       << (config.getLazyRescale() ? ", lazy rescaling" : "");
  return remark;
}

/// Returns why the decode kernel with `threads` threads of `subgroup`-lane
/// subgroups cannot run `s`, or "".
static std::string whyNotDecode(const AttentionShape &s, int64_t subgroup,
                                int64_t threads, int64_t rowValues) {
  int64_t rows = s.group * s.queries;
  if (rows > kMaxDecodeRows)
    return llvm::formatv("{0} query rows per KV head (group {1} x {2} "
                         "queries; the decode kernel keeps at most {3} in "
                         "registers)",
                         rows, s.group, s.queries, kMaxDecodeRows);
  if (subgroup < 4 || subgroup > 64 || !llvm::isPowerOf2_64(subgroup))
    return llvm::formatv("subgroups of {0} lanes (the decode kernel takes a "
                         "power of two from 4 to 64)",
                         subgroup);
  if (threads <= 0 || threads > 1024 || threads % subgroup != 0)
    return llvm::formatv("{0} threads are not whole subgroups of {1} lanes "
                         "(at most 1024)",
                         threads, subgroup);
  // Each row read by lanes together: whyNotRowValues checks the rest.
  if (rowValues > 1)
    return "";
  if (s.valueDim % subgroup != 0)
    return llvm::formatv("the value dimension {0} is not a multiple of the "
                         "subgroup {1} (each lane owns a slice of it)",
                         s.valueDim, subgroup);
  int64_t slice = s.valueDim / subgroup;
  if (s.valueBlock && 32 % slice != 0 && slice % 32 != 0)
    return llvm::formatv("V decoded from blocks: each lane's {0} values "
                         "neither lie in one 32-value block nor fill whole "
                         "ones",
                         slice);
  return "";
}

/// Why `n` values per lane (each K/V row read by head-dim / n lanes) cannot
/// serve `s` with `rows` query rows per workgroup, or "": K and V as their
/// blocks `keyFrom` / `valueFrom` (the cache's, or those dequantized once;
/// null for f16/bf16).
static std::string whyNotRowValues(const AttentionShape &s, int64_t n,
                                   int64_t subgroup, int64_t rows,
                                   BlockQuantizedType keyFrom,
                                   BlockQuantizedType valueFrom) {
  if (s.headDim % n != 0)
    return llvm::formatv("the head dimension {0} is not a multiple of {1}",
                         s.headDim, n);
  int64_t lanes = s.headDim / n;
  if (lanes > subgroup || !llvm::isPowerOf2_64(lanes))
    return llvm::formatv("{0} lanes per row are not a power of two up to "
                         "the subgroup ({1})",
                         lanes, subgroup);
  if (s.valueDim % lanes != 0)
    return llvm::formatv("the value dimension {0} is not a multiple of the "
                         "{1} lanes of a row",
                         s.valueDim, lanes);
  int64_t valueN = s.valueDim / lanes;
  // A lane's values lie in one block (in one half of a 4-bit block's
  // nibbles), and rows are whole 32-bit words.
  auto blockWhy = [&](BlockQuantizedType block, int64_t dim, int64_t count,
                      StringRef what) -> std::string {
    if (!block)
      return "";
    if (32 % count != 0 || (!isa<Q8_0Type>(block) && count > 16))
      return llvm::formatv("{0} values of a {1} block per lane", count,
                           block.getFormatName());
    if (dim / 32 * block.getBlockBytes() % 4 != 0)
      return llvm::formatv("{0} rows are not whole 32-bit words", what);
    return "";
  };
  std::string why = blockWhy(keyFrom, s.headDim, n, "K");
  if (why.empty())
    why = blockWhy(valueFrom, s.valueDim, valueN, "V");
  if (!why.empty())
    return why;
  if (rows * (n + valueN) > 256)
    return llvm::formatv("{0} rows x {1} values of Q and the accumulators "
                         "per lane would not stay in registers",
                         rows, n + valueN);
  return "";
}

/// Why the mma-sync decode kernel cannot serve `s` with `rows` query rows
/// per workgroup, or "": K and V as their blocks `keyFrom` / `valueFrom`
/// (the cache's, or those dequantized once; null for f16/bf16).
static std::string whyNotDecodeMma(const AttentionShape &s, int64_t rows,
                                   BlockQuantizedType keyFrom,
                                   BlockQuantizedType valueFrom) {
  if (rows > 16)
    return llvm::formatv("{0} query rows per workgroup (one m16 block holds "
                         "16)",
                         rows);
  Type q = s.queryElement;
  if ((!q.isF16() && !q.isBF16()) || s.keyElement != q || s.valueElement != q)
    return "Q, K and V are not all f16 or all bf16";
  for (BlockQuantizedType block : {keyFrom, valueFrom}) {
    if (block && !isa<Q8_0Type, Q4_0Type>(block))
      return llvm::formatv("{0} blocks (it decodes q8_0 and q4_0 into f16 "
                           "or bf16 pairs in registers)",
                           block.getFormatName());
  }
  // Lane l holds head-dim / 4 consecutive values of a K row (whole blocks,
  // or 16-byte loads) and value-dim / 8 of a V row (16 or 32 values of one
  // block, or 16-byte loads).
  if (keyFrom ? s.headDim % 128 != 0 : s.headDim % 32 != 0)
    return llvm::formatv("the head dimension {0} is not a multiple of {1}",
                         s.headDim, keyFrom ? 128 : 32);
  if (valueFrom ? s.valueDim != 128 && s.valueDim != 256 : s.valueDim % 64 != 0)
    return llvm::formatv("the value dimension {0} is not {1}", s.valueDim,
                         valueFrom ? "128 or 256" : "a multiple of 64");
  return "";
}

/// The decode kernel's split (workgroups per KV head): decode-split, or
/// enough workgroups to fill the device (decode-workgroups-per-cu, or
/// `registerWorkgroups` per compute unit where the kernel's registers
/// allow that many, else four and a power of two), each with at least one
/// step of `stepPositions`; `from` says which. The kernel gives each
/// workgroup a multiple of `threads` positions: a split set from the
/// device is cut to the workgroups that then have any.
static int64_t getDecodeSplit(const AttentionShape &s,
                              DeviceProfileAttr profile,
                              const AttentionConfigOptions &o,
                              int64_t stepPositions, int64_t threads,
                              std::string &from,
                              int64_t registerWorkgroups = 0) {
  int64_t units = profile && profile.getComputeUnits()
                      ? int64_t(profile.getComputeUnits())
                      : 16;
  int64_t split = o.decodeSplit;
  from = llvm::formatv("decode-split={0}", split).str();
  if (split != 0)
    return split;
  // As many workgroups as the kernel's registers let each compute unit
  // hold (not rounded); else four, the split a power of two.
  bool exact = o.decodeWorkgroupsPerUnit || registerWorkgroups;
  int64_t perUnit = o.decodeWorkgroupsPerUnit ? o.decodeWorkgroupsPerUnit
                    : registerWorkgroups      ? registerWorkgroups
                                              : 4;
  int64_t target = std::max<int64_t>(1, perUnit * units / s.kvHeads);
  split = exact ? target : int64_t(llvm::bit_floor(uint64_t(target)));
  while (split > 1 && llvm::divideCeil(s.positions, split) < stepPositions)
    split = exact ? split - 1 : split / 2;
  int64_t cut = exact ? llvm::divideCeil(std::max<int64_t>(s.positions, 1),
                                         getDecodePositionsPerSplit(
                                             s.positions, split, threads))
                      : split;
  from = llvm::formatv("{3} workgroups on each of {0} compute units over "
                       "{1} KV heads, at least {2} positions each",
                       units, s.kvHeads, stepPositions, perUnit)
             .str();
  if (cut != split)
    from += llvm::formatv(", cut from {0} to the workgroups that get "
                          "positions (a multiple of {1} each)",
                          split, threads)
                .str();
  return cut;
}

/// The mma-sync decode kernel's decision for `s` with `rows` of its
/// `allRows` query rows per workgroup; `keyFromBlocks`: K is a cache's
/// blocks, decoded in the kernel or dequantized once; `keySplit`: K is a
/// split q8_0 cache, read in the kernel or dequantized once.
static AttentionDecision selectDecodeMmaConfig(
    Operation *op, const AttentionShape &s, int64_t rows, bool keyFromBlocks,
    bool keySplit, DeviceProfileAttr profile, const AttentionConfigOptions &o) {
  AttentionDecision d;
  int64_t allRows = s.group * s.queries;
  int64_t threads = o.decodeThreads ? o.decodeThreads : 128;
  if (threads % 32 != 0) {
    d.remark = llvm::formatv("reference lowering kept: decode-mma-sync: {0} "
                             "threads are not whole subgroups of 32 lanes",
                             threads);
    return d;
  }
  int64_t warps = threads / 32;
  int64_t stepPositions = 16 * warps * o.decodeMmaUnroll;
  // Pipelined, a lane holds two steps' K/V (about 190-215 registers on
  // sm_90): 256 threads per SM (two workgroups of 128), which the split
  // targets (run 76: 42 against 60 us at tg1 @ d32768 f16, where 64
  // splits at 150 registers and 3 workgroups per SM ran a second wave).
  int64_t minWorkgroups = o.decodeWorkgroupsPerUnit ? o.decodeWorkgroupsPerUnit
                          : o.decodeMmaStages == 2
                              ? std::max<int64_t>(1, 256 / threads)
                              : 0;
  std::string splitFrom;
  int64_t split = getDecodeSplit(s, profile, o, stepPositions, threads,
                                 splitFrom, minWorkgroups);
  // Blocks are read 8 bytes at a time (their scale with their quants:
  // rows of 136 / 72 bytes are 8-byte aligned), or as aligned 4-byte words
  // (load_bytes = 4) with decode-load-bytes below 8.
  bool blocks = s.keyBlock || s.valueBlock;
  bool wordLoads = blocks && o.decodeLoadBytes < 8;
  // Each lane's K values: whole blocks where K is (or was) blocks, so that
  // the blocks decode in registers and the scratch of rewrites on is read
  // in the same order; else 8 at a time (16 bytes), the quad's lanes
  // reading 64 consecutive bytes of a row per load.
  // Split q8_0 K: runs of 16 (16-byte loads of its i8 values) where they
  // divide the lane's values.
  int64_t keyRun = keyFromBlocks                           ? s.headDim / 4
                   : keySplit && (s.headDim / 4) % 16 == 0 ? 16
                                                           : 8;
  d.config = KernelConfigAttr::get(
      op->getContext(), KernelVariant::AttentionDecodeMmaSync,
      {rows, stepPositions}, threads, /*subgroup=*/32, keyRun,
      /*rowBlocks=*/1, o.decodeMmaStages, split, /*padBytes=*/0,
      /*loads=*/{}, minWorkgroups, /*resident=*/{},
      /*dynamicShared=*/false,
      /*warpSync=*/false, /*lazyRescale=*/false, /*stageX=*/false,
      /*fuseSiblings=*/false, /*fuseEpilogues=*/false,
      /*loadBytes=*/wordLoads ? 4 : 0);
  d.remark = llvm::formatv(
      "decode flash-attention kernel on mma.sync (split-KV, {0} splits: "
      "{1}): {2} query rows per KV head (GQA {3}:1 x {4} queries), {5} per "
      "workgroup, {0}x{6}x{7} workgroups of {8} threads (subgroup 32), "
      "Q K^T and P V as m16n8k16 {9} mma.sync, {12} positions per subgroup "
      "per step, each lane's K values in runs of {13}, {10} "
      "bytes of workgroup memory; partial softmax states merged by a second "
      "kernel ({11})",
      split, splitFrom, allRows, s.group, s.queries, rows, s.kvHeads,
      allRows / rows, threads, s.queryElement,
      getDecodeMmaBytes(s, rows, warps),
      profile ? ("profile " + profile.getName()).str()
              : std::string("no profile: defaults"),
      16 * o.decodeMmaUnroll, keyRun);
  if (o.decodeMmaStages == 2)
    d.remark += "; each step's loads issued before the previous step's "
                "products (decode-mma-stages=2)";
  if (minWorkgroups)
    d.remark +=
        llvm::formatv("; registers for {0} workgroups per SM", minWorkgroups);
  if (blocks)
    d.remark += wordLoads ? "; blocks read as aligned 4-byte words "
                            "(decode-load-bytes)"
                          : "; blocks read 8 bytes at a time (whole blocks "
                            "with their scales)";
  StringRef pairs = s.queryElement.isBF16()
                        ? "in f32 and rounded into bf16 pairs in registers"
                        : "into f16 pairs in registers";
  d.remark += describeDecodedKV(s, pairs);
  d.remark += describeSplitKV(s, pairs);
  return d;
}

/// The decode kernel's decision for `s` (attention-kernel=decode, or auto
/// with few query rows per KV head).
static AttentionDecision selectDecodeConfig(Operation *op,
                                            const AttentionShape &s,
                                            DeviceProfileAttr profile,
                                            const AttentionConfigOptions &o) {
  AttentionDecision d;
  auto [subgroup, sharedBytes] = getLimits(profile);
  // 256 threads where K is decoded from blocks, 128 otherwise: on the H200
  // (docs/BENCHMARKS.md, run 56) 256 took tg1 @ d32768 from 104 to 80 us
  // for q8_0 and from 100 to 81 us for q4_0, and f16 from 77 to 83 us.
  // The same with K dequantized once from blocks (cachet-dequant-once-kv's
  // head-major scratch): rewrites off and on must split the positions alike
  // to sum in the same order.
  // A scratch filled from the split form counts as split, as rewrites off
  // read it.
  auto [keyOnce, valueOnce] = getKVDequantizedOnceFrom(op);
  BlockQuantizedType keyOnceFrom = keyOnce.block;
  BlockQuantizedType valueOnceFrom = valueOnce.block;
  bool keyFromBlocks = s.keyBlock || keyOnceFrom;
  bool keySplit = s.keySplit || keyOnce.split;
  bool valueSplit = s.valueSplit || valueOnce.split;
  // Staged (NVVM): each step's K/V rows copied into double-buffered
  // workgroup memory. The threads (positions per step) are the most, from
  // 128 down to 64, whose buffers of rows as the cache holds them (blocks
  // for K/V dequantized once) fit 1/resident-workgroups of the profile's
  // memory: rewrites off and on then split the positions alike.
  int64_t keyRow = getDecodeRowBytes(s.headDim, s.keyElement,
                                     keyOnceFrom ? keyOnceFrom : s.keyBlock);
  int64_t valueRow = getDecodeRowBytes(
      s.valueDim, s.valueElement, valueOnceFrom ? valueOnceFrom : s.valueBlock);
  // Not for split q8_0 K/V, which the staged kernel would copy as floats.
  bool staged = o.decodeStages == 2 && o.asyncCopy && o.dynamicShared &&
                !keySplit && !valueSplit && getDecodeKeyStride(keyRow) &&
                getPackedCopyBytes(valueRow) &&
                getDecodeKeyStride(
                    getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock)) &&
                getPackedCopyBytes(getDecodeRowBytes(s.valueDim, s.valueElement,
                                                     s.valueBlock));
  // The KV head's rows, in workgroups of the most rows up to
  // decode-workgroup-rows that divide them.
  int64_t allRows = s.group * s.queries;
  int64_t rows = std::min<int64_t>(
      allRows, o.decodeWorkgroupRows ? o.decodeWorkgroupRows : 8);
  while (allRows % rows != 0)
    --rows;
  // Each K/V row read by lanes together (decode-row-values): the same for
  // K/V as the cache holds them and as dequantized once, so that rewrites
  // off and on sum in the same order. Auto takes it for f16/bf16 K and V,
  // at most 4 rows per workgroup and 16384 positions or more, where it was
  // faster on the H200 (docs/BENCHMARKS.md, run 68: tg1 @ d32768 f16 59
  // against 68 us, d65536 94 against 112); not at d4096 (bf16 22 against
  // 21 us), for blocks (q8_0 tg1 @ d32768 93 against 74 us) or at 8 rows
  // (f16 tg4 @ d32768 215 against 168 us).
  BlockQuantizedType keyFrom = keyOnceFrom ? keyOnceFrom : s.keyBlock;
  BlockQuantizedType valueFrom = valueOnceFrom ? valueOnceFrom : s.valueBlock;
  // Q K^T and P V on mma.sync (NVVM): one m16 block holds 16 rows, so a
  // workgroup takes up to 16 of them (the most up to
  // decode-workgroup-rows that divide the KV head's): on the H200 (run 71)
  // tg4 @ d32768 with 16 rows per workgroup took f16 from 103 to 74 us and
  // q8_0 from 90 to 76 against two workgroups of 8.
  // The same kernel for K/V as the cache holds them and as dequantized
  // once (blocks decoded exactly to the scratch's f16).
  std::string mmaWhy;
  if (o.decodeMmaSync < 0)
    mmaWhy = "decode-mma-sync=-1";
  else if (!o.allowMmaSync)
    mmaWhy = "allow-mma-sync is off";
  else if (subgroup != 32)
    mmaWhy =
        llvm::formatv("subgroups of {0} lanes (mma.sync takes 32)", subgroup)
            .str();
  int64_t mmaRows = std::min<int64_t>(
      {allRows, o.decodeWorkgroupRows ? o.decodeWorkgroupRows : 16, 16});
  while (allRows % mmaRows != 0)
    --mmaRows;
  if (mmaWhy.empty())
    mmaWhy = whyNotDecodeMma(s, mmaRows, keyFrom, valueFrom);
  // Auto: everywhere it serves but for blocks at up to 4 rows and fewer
  // than 16384 positions, where a position per thread was faster on the
  // H200 (run 72: tg1 @ d4096 q8_0 20 against 22 us, q4_0 20 against 21;
  // at d32768 48 against 74 and 41 against 74).
  if (mmaWhy.empty() && o.decodeMmaSync == 0 && keyFrom && allRows <= 4 &&
      s.positions < 16384)
    mmaWhy = "auto keeps a position per thread for blocks at up to 4 rows "
             "and fewer than 16384 positions";
  if (mmaWhy.empty())
    return selectDecodeMmaConfig(op, s, mmaRows, keyFromBlocks, keySplit,
                                 profile, o);
  int64_t rowValues = 1;
  std::string rowValuesWhy;
  // Where mma.sync does not serve (SPIR-V, ROCDL) auto takes lanes for
  // blocks and up to 8 rows too: on NVIDIA's Vulkan driver (run 93, H200)
  // tg1 @ d32768 q8_0 0.79 against 1.08 ms a position per thread, q4_0
  // 0.79 / 0.85, tg4 f16 1.59 / 2.90, q8_0 1.79 / 2.35; d65536 alike; at
  // d4096 blocks lost (q8_0 tg1 61 against 50 us). ROCDL follows SPIR-V
  // unmeasured.
  bool autoLanes =
      (o.allowMmaSync ? !keyFrom && !valueFrom && rows <= 4 : rows <= 8) &&
      s.positions >= 16384;
  if (!staged &&
      (o.decodeRowValues > 1 || (o.decodeRowValues == 0 && autoLanes))) {
    // Auto: 8 values (16 bytes of f16) per lane, or more where a row
    // would take more lanes than a subgroup has.
    SmallVector<int64_t> candidates = {o.decodeRowValues};
    if (!o.decodeRowValues)
      candidates = {8, 16, 32};
    for (int64_t n : candidates) {
      std::string why =
          whyNotRowValues(s, n, subgroup, rows, keyFrom, valueFrom);
      if (rowValuesWhy.empty())
        rowValuesWhy = why;
      if (why.empty()) {
        rowValues = n;
        rowValuesWhy.clear();
        break;
      }
    }
  }
  int64_t stagedBudget =
      sharedBytes / std::max<int64_t>(1, o.residentWorkgroups);
  int64_t threads = o.decodeThreads;
  if (threads == 0 && staged) {
    threads = 128;
    while (threads > 64 &&
           getStagedBytes(keyRow, valueRow, threads) > stagedBudget)
      threads /= 2;
  } else if (threads == 0) {
    threads = keyFromBlocks && rowValues == 1 ? 256 : 128;
  }
  std::string why = whyNotDecode(s, subgroup, threads, rowValues);
  if (!why.empty()) {
    d.remark = "reference lowering kept: attention-kernel=decode: " + why;
    return d;
  }
  // Positions per step: one per thread, or `decode-unroll` per group of
  // lanes sharing a row.
  int64_t rowLanes = s.headDim / rowValues;
  int64_t stepPositions =
      rowValues > 1 ? threads / rowLanes * o.decodeUnroll : threads;
  int64_t warps = threads / subgroup;
  uint64_t budget = std::min<uint64_t>(sharedBytes, 49152);
  if (uint64_t(getDecodeBytes(s, rows, warps)) > budget) {
    d.remark = llvm::formatv("reference lowering kept: the decode kernel "
                             "needs {0} bytes of workgroup memory, the "
                             "budget is {1}",
                             getDecodeBytes(s, rows, warps), budget);
    return d;
  }
  int64_t stagedBytes =
      staged ? getDecodeLayout(s, rows, threads, subgroup).total : 0;
  if (stagedBytes > int64_t(sharedBytes))
    staged = false;
  // Staged: registers for as many workgroups per SM as the memory holds,
  // up to resident-workgroups, and no fewer than 128 per thread.
  int64_t minWorkgroups = 0;
  if (staged) {
    minWorkgroups =
        std::min({o.residentWorkgroups, int64_t(sharedBytes) / stagedBytes,
                  std::max<int64_t>(1, 512 / threads)});
    if (minWorkgroups < 2)
      minWorkgroups = 0;
  }
  // Over packed block K/V (as the cache holds them, or dequantized once
  // from them, whole or bounded: rewrites off and on must split alike),
  // decode-block-workgroups-per-cu. Not split caches: rewrites off reads
  // their i8 values as floats.
  AttentionConfigOptions splitOptions = o;
  bool packed = keyFromBlocks || s.valueBlock || valueOnceFrom;
  if (!o.decodeWorkgroupsPerUnit && packed)
    splitOptions.decodeWorkgroupsPerUnit = o.decodeBlockWorkgroupsPerUnit;
  std::string splitFrom;
  int64_t split = getDecodeSplit(s, profile, splitOptions, stepPositions,
                                 threads, splitFrom);
  if (profile && profile.getVendor() == "mesa") {
    int64_t iterations =
        getDecodeIterations(s, rows, threads, stepPositions, split);
    if (iterations > kLlvmpipeLoopIterations) {
      d.remark = llvm::formatv(
          "reference lowering kept: the decode kernel's loops run {0} "
          "iterations, more than the {1} llvmpipe executes (profile vendor "
          "mesa)",
          iterations, kLlvmpipeLoopIterations);
      return d;
    }
  }
  d.config = KernelConfigAttr::get(
      op->getContext(), KernelVariant::AttentionDecode, {rows, stepPositions},
      threads, subgroup, /*vectorWidth=*/rowValues,
      /*rowBlocks=*/1,
      /*stages=*/staged ? 2 : 1, split,
      /*padBytes=*/0, /*loads=*/{}, minWorkgroups,
      /*resident=*/{}, /*dynamicShared=*/staged, /*warpSync=*/false,
      /*lazyRescale=*/false, /*stageX=*/false, /*fuseSiblings=*/false,
      /*fuseEpilogues=*/false, o.decodeLoadBytes);
  std::string decoded = describeDecodedKV(s, "in registers");
  decoded += describeSplitKV(s, "in registers");
  if (staged)
    decoded += llvm::formatv(
        "; each step's K/V rows double-buffered in dynamic workgroup memory "
        "by asynchronous copies ({0}- and {1}-byte pieces, K rows padded "
        "to {2} bytes), registers for {3} workgroups per SM",
        getPackedCopyBytes(
            getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock)),
        getPackedCopyBytes(
            getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock)),
        getDecodeKeyStride(
            getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock)),
        std::max<int64_t>(minWorkgroups, 1));
  d.remark = llvm::formatv(
      "decode flash-attention kernel (split-KV, {0} splits: {1}): {2} query "
      "rows per KV head (GQA {3}:1 x {4} queries), {12} per workgroup, "
      "{5}x{6}x{13} workgroups of {7} threads (subgroup {8}), {9}, {10} "
      "bytes of workgroup memory; partial softmax states merged by a second "
      "kernel ({11})",
      split, splitFrom, allRows, s.group, s.queries, split, s.kvHeads, threads,
      subgroup,
      rowValues > 1
          ? llvm::formatv("each K/V row read by {0} lanes together ({1} "
                          "values each), Q and the accumulators in "
                          "registers, {2} positions per group of lanes per "
                          "step",
                          rowLanes, rowValues, o.decodeUnroll)
                .str()
          : llvm::formatv("one KV position per thread per step, {0}-byte K "
                          "loads",
                          getDecodeLoadBytes(s, d.config))
                .str(),
      staged ? stagedBytes : getDecodeBytes(s, rows, warps),
      profile ? ("profile " + profile.getName()).str()
              : std::string("no profile: defaults"),
      rows, allRows / rows);
  d.remark += decoded;
  if (o.decodeMmaSync > 0 || (o.allowMmaSync && o.decodeMmaSync == 0))
    d.remark += llvm::formatv("; not on mma.sync: {0}", mmaWhy);
  if (!rowValuesWhy.empty())
    d.remark +=
        llvm::formatv("; rows not read by lanes together: {0}", rowValuesWhy);
  else if (rowValues == 1 && !staged && o.decodeRowValues == 0)
    d.remark += "; a position per thread (auto reads rows by lanes together "
                "only for f16/bf16 K and V, at most 4 rows per workgroup and "
                "16384 positions or more)";
  return d;
}

/// Returns why the wgmma kernel cannot run `s`, or "".
static std::string whyNotWgmmaAttention(const AttentionShape &s) {
  if (s.headDim % 64 != 0 || s.valueDim % 64 != 0 || s.valueDim > 256)
    return llvm::formatv("head dimensions {0} and {1} (the wgmma kernel's "
                         "tiles are 64-value swizzle rows, and P V's n, the "
                         "value dimension, is at most 256)",
                         s.headDim, s.valueDim);
  return "";
}

/// The wgmma kernel's config for `s` (sm_90a): two warpgroups of 64 query
/// rows and 64-position key tiles unless query-tile / key-tile say
/// otherwise; K/V double-buffered by asynchronous copies where two
/// workgroups' tiles fit a compute unit's `sharedBytes` (else through
/// registers). Null, with `why`, where the kernel cannot serve it.
static KernelConfigAttr selectWgmmaAttention(MLIRContext *ctx,
                                             const AttentionShape &s,
                                             uint64_t sharedBytes,
                                             const AttentionConfigOptions &o,
                                             std::string &why) {
  why = whyNotWgmmaAttention(s);
  if (!why.empty())
    return {};
  int64_t queryTile = o.queryTile > 0 ? o.queryTile : 128;
  // Key tiles of 128 where they fit, else 64: 0.624 against 0.795 ms at
  // pp512 @ d32768 on an H100 (run 124; 96: 0.649, 32: 0.951).
  SmallVector<int64_t> keyTiles = o.keyTile > 0
                                      ? SmallVector<int64_t>{o.keyTile}
                                      : SmallVector<int64_t>{128, 64};
  for (int64_t keyTile : keyTiles)
    if (queryTile % 64 != 0 || queryTile > 256 || keyTile % 16 != 0 ||
        keyTile > 256) {
      why = llvm::formatv("query tile {0} and key tile {1} (it takes a "
                          "multiple of 64 up to 256 and one of 16 up to 256)",
                          queryTile, keyTile);
      return {};
    }
  int64_t threads = 2 * queryTile;
  // One workgroup per compute unit: at 150-200 registers a thread its two
  // warpgroups are all the registers allow, so its tiles may take the
  // profile's whole workgroup memory.
  int64_t budget = int64_t(sharedBytes);
  int64_t keyTile = 0, stages = 2;
  KVStaging staging = KVStaging::Registers;
  auto bytes = [&]() {
    return getMmaTiles(s, KernelVariant::AttentionWgmma, queryTile, keyTile, 0,
                       1, staging, stages)
        .totalBytes;
  };
  for (int64_t candidate : keyTiles) {
    keyTile = candidate;
    stages = 2;
    staging = getKVStaging(s, /*stages=*/2);
    bool even = keyTile * s.headDim % (8 * threads) == 0 &&
                keyTile * s.valueDim % (8 * threads) == 0;
    if (staging == KVStaging::AsyncCopy && !even)
      staging = KVStaging::Registers;
    // f16/bf16 K/V: three buffers where asked for and they fit.
    if (staging == KVStaging::AsyncCopy && o.wgmmaStages == 3) {
      stages = 3;
      if (bytes() > budget)
        stages = 2;
    }
    if (bytes() <= budget)
      break;
  }
  if (bytes() > budget) {
    staging = KVStaging::Registers;
    stages = 1;
  }
  if (bytes() > budget) {
    why = llvm::formatv("query tile {0} and key tile {1} need {2} bytes of "
                        "workgroup memory, the profile has {3}",
                        queryTile, keyTile, bytes(), budget);
    return {};
  }
  if (staging == KVStaging::Registers)
    stages = 1;
  return KernelConfigAttr::get(
      ctx, KernelVariant::AttentionWgmma, {queryTile, keyTile}, threads,
      /*subgroup=*/32, /*vectorWidth=*/8, /*rowBlocks=*/1, stages,
      /*split=*/1, /*padBytes=*/0,
      /*loads=*/{}, /*minWorkgroupsPerSM=*/0, /*resident=*/{},
      /*dynamicShared=*/true, /*warpSync=*/false, /*lazyRescale=*/false,
      /*stageX=*/false, /*fuseSiblings=*/false, /*fuseEpilogues=*/false,
      /*loadBytes=*/0);
}

AttentionDecision
cachet::selectAttentionConfig(Operation *op, DeviceProfileAttr profile,
                              const AttentionConfigOptions &o) {
  AttentionDecision d;
  auto keep = [&](const Twine &why) {
    d.remark = ("reference lowering kept: " + why).str();
    return d;
  };
  std::string reason;
  FailureOr<AttentionShape> shape = getAttentionShape(op, reason);
  if (failed(shape))
    return keep(reason);
  const AttentionShape &s = *shape;
  if (o.kernel == AttentionKernelChoice::Reference)
    return keep("attention-kernel=reference");
  // A chunk of a longer attention (cachet.attention_partial) runs a
  // kernel that carries the online-softmax state from chunk to chunk: the
  // scalar or mma-sync one.
  if (!s.partial && (o.kernel == AttentionKernelChoice::Decode ||
                     (o.kernel == AttentionKernelChoice::Auto &&
                      o.decodeRows > 0 && s.group * s.queries <= o.decodeRows)))
    return selectDecodeConfig(op, s, profile, o);
  auto [subgroup, sharedBytes] = getLimits(profile);
  // Static workgroup memory: at most the profile's, and at most 48 KiB
  // (the most a CUDA kernel gets without a dynamic opt-in). The mma
  // kernel's dynamic workgroup memory: the profile's share of
  // resident-workgroups workgroups.
  uint64_t budget = std::min<uint64_t>(sharedBytes, 49152);
  // Why each tensor-core kernel cannot run ("" when it can): mma takes f16,
  // mma-sync f16 or bf16.
  bool automatic = o.kernel == AttentionKernelChoice::Auto;
  std::string noMma, noSync;
  for (bool sync : {false, true}) {
    std::string &why = sync ? noSync : noMma;
    why = o.kernel == AttentionKernelChoice::Scalar
              ? std::string("attention-kernel=scalar")
          : o.kernel == AttentionKernelChoice::Tiled
              ? std::string("attention-kernel=tiled")
              : whyNotMma(s, profile, /*allowBF16=*/sync);
    if (why.empty() && automatic && !o.allowMma)
      why = "allow-mma is off: the target does not run the mma kernel";
    if (why.empty() && !sync && s.partial)
      why = kNoPartialState;
    if (why.empty() &&
        (subgroup < 16 || subgroup > 64 || !llvm::isPowerOf2_64(subgroup)))
      why = llvm::formatv("subgroups of {0} lanes (the mma kernel takes 16, "
                          "32 or 64)",
                          subgroup)
                .str();
  }
  // mma-sync: the same tensor cores through PTX's mma.sync, whose fragment
  // layout is known (NVVM only: allow-mma-sync or attention-kernel=mma-sync).
  if (noSync.empty() && subgroup != 32)
    noSync =
        llvm::formatv("subgroups of {0} lanes (mma.sync takes 32)", subgroup)
            .str();
  if (noSync.empty() && automatic && !o.allowMmaSync)
    noSync = "allow-mma-sync is off";
  if (o.kernel == AttentionKernelChoice::MmaSync && !noSync.empty())
    return keep("attention-kernel=mma-sync: " + noSync);

  KernelVariant variant;
  int64_t queryTile, threads, rowBlocks = 1, padBytes = 0, vectorWidth = 1;
  int64_t minWorkgroups = 0;
  bool doubleBuffered = false, dynamicShared = false, warpSync = false,
       lazyRescale = false;
  std::function<uint64_t(int64_t)> sharedUse;
  // The mma kernels' query tile, its threads and workgroup-memory budget.
  std::function<void(int64_t)> useQueryTile;
  int64_t subgroupRows = 16;
  bool useSync = o.kernel != AttentionKernelChoice::Mma && noSync.empty();
  if (useSync || noMma.empty()) {
    variant =
        useSync ? KernelVariant::AttentionMmaSync : KernelVariant::AttentionMma;
    bool staged = variant == KernelVariant::AttentionMma;
    // Four subgroups of 16 rows (row-blocks blocks of them) each unless the
    // options say otherwise.
    rowBlocks = o.rowBlocks;
    if (16 * rowBlocks > int64_t(subgroup))
      return keep(llvm::formatv("row-blocks {0} is more than subgroup / 16 "
                                "({1})",
                                rowBlocks, subgroup / 16));
    subgroupRows = 16 * rowBlocks;
    queryTile = o.queryTile > 0 ? o.queryTile : 4 * subgroupRows;
    if (queryTile % subgroupRows != 0)
      return keep(llvm::formatv("query-tile {0} is not a multiple of {1} (the "
                                "mma kernel's rows per subgroup)",
                                queryTile, subgroupRows));
    padBytes = o.tilePadBytes;
    dynamicShared = o.dynamicShared;
    warpSync = o.warpSync;
    // Asynchronous copies need dynamic memory (the second K/V buffers). The
    // tiles are sized for them whether or not this attention's K/V are
    // decoded in the kernel (which copies nothing asynchronously): rewrites
    // off and on must pick the same tiles to give the same bytes.
    doubleBuffered = o.asyncCopy && dynamicShared;
    lazyRescale = o.lazyRescale && warpSync;
    uint64_t staticBudget = budget;
    useQueryTile = [&, staticBudget](int64_t rows) {
      queryTile = rows;
      threads = queryTile / subgroupRows * subgroup;
      budget = staticBudget;
      if (dynamicShared) {
        int64_t resident = getResidentWorkgroups(o, queryTile / subgroupRows);
        budget = sharedBytes / resident;
        if (o.occupancyHint)
          minWorkgroups = resident;
      }
    };
    useQueryTile(queryTile);
    // Q, K, V tiles (f16), scores (f32), P (f16), the row broadcast (f32).
    sharedUse = [&, staged](int64_t t) -> uint64_t {
      return MmaTiles(queryTile, t, s.headDim, s.valueDim, padBytes,
                      doubleBuffered, rowBlocks == 1, staged)
          .totalBytes;
    };
    // The widest vector of at most vector-bytes that divides the rows.
    vectorWidth = std::max<int64_t>(1, o.vectorBytes / 2);
    while (vectorWidth > 1 &&
           (s.headDim % vectorWidth != 0 || s.valueDim % vectorWidth != 0))
      vectorWidth /= 2;
  } else {
    // The tiled kernel on f32 fused multiply-adds where it fits, else the
    // scalar one.
    if (o.kernel != AttentionKernelChoice::Scalar) {
      std::string noTiled;
      if (KernelConfigAttr tiled = selectTiledAttention(
              op->getContext(), s, profile, o, subgroup, budget, noTiled)) {
        d.config = tiled;
        d.remark = describeAttentionConfig(s, tiled, profile, o, noMma);
        return d;
      }
      if (o.kernel == AttentionKernelChoice::Tiled)
        return keep("attention-kernel=tiled: " + noTiled);
      noMma += "; not the tiled kernel: " + noTiled;
    }
    variant = KernelVariant::AttentionScalar;
    // One thread per query row: two subgroups, at least 32 rows.
    queryTile =
        o.queryTile > 0 ? o.queryTile : std::max<int64_t>(32, 2 * subgroup);
    threads = queryTile;
    sharedUse = [&](int64_t t) -> uint64_t {
      return getScalarBytes(s, queryTile, t);
    };
  }
  bool scalar = variant == KernelVariant::AttentionScalar;
  auto chooseKeyTile = [&]() -> int64_t {
    if (o.keyTile > 0)
      return o.keyTile;
    return largestPowerOfTwo(64, [&](int64_t t) {
      return sharedUse(t) <= budget && (scalar || t >= 16);
    });
  };
  // Asynchronous copies move 4, 8 or 16 bytes, the same number per thread.
  auto copiesEvenly = [&](int64_t t) {
    int64_t perCopy = vectorWidth * threads;
    return vectorWidth >= 2 && t * s.headDim % perCopy == 0 &&
           t * s.valueDim % perCopy == 0;
  };
  // mma-sync without a query-tile option: 8 subgroups where they spread as
  // well as 4 (getAutoSubgroups) and their tiles do as well: a key tile
  // that fits, copied evenly by the threads, no smaller.
  if (variant == KernelVariant::AttentionMmaSync && o.queryTile <= 0 &&
      getAutoSubgroups(s, profile, subgroupRows) == 8) {
    auto outcome = [&](int64_t subgroups) {
      useQueryTile(subgroups * subgroupRows);
      int64_t t = chooseKeyTile();
      return std::make_tuple(t > 0 && sharedUse(t) <= budget,
                             !doubleBuffered || copiesEvenly(t), t);
    };
    auto eight = outcome(8), four = outcome(4);
    useQueryTile((std::get<0>(eight) && eight >= four ? 8 : 4) * subgroupRows);
  }
  int64_t keyTile = chooseKeyTile();
  if (doubleBuffered && !copiesEvenly(keyTile)) {
    doubleBuffered = false;
    keyTile = chooseKeyTile();
  }
  // Asynchronous copies: of f16 K/V, or of both K's and V's blocks (decoded
  // in workgroup memory) where their double buffers fit the budget too.
  KVStaging staging =
      doubleBuffered ? getKVStaging(s, /*stages=*/2) : KVStaging::Registers;
  if (staging == KVStaging::AsyncPacked &&
      getMmaTiles(s, variant, queryTile, keyTile, padBytes, rowBlocks, staging)
              .totalBytes > budget)
    staging = KVStaging::Registers;
  // Without a query-tile option, the scalar kernel halves its query tile
  // (down to 32 rows) until its accumulator rows leave room for a key tile.
  while (scalar && o.queryTile <= 0 && queryTile > 32 &&
         (keyTile == 0 || sharedUse(keyTile) > budget)) {
    queryTile /= 2;
    threads = queryTile;
    keyTile = chooseKeyTile();
  }
  if (keyTile == 0 || sharedUse(keyTile) > budget)
    return keep(llvm::formatv(
        "query tile {0} and key tile {1} need {2} bytes of workgroup memory, "
        "the budget is {3}",
        queryTile, std::max<int64_t>(keyTile, 1),
        sharedUse(std::max<int64_t>(keyTile, 1)), budget));
  if (!scalar && keyTile % 16 != 0)
    return keep(llvm::formatv("key-tile {0} is not a multiple of 16 (the mma "
                              "kernel's column block)",
                              keyTile));
  if (profile && profile.getVendor() == "mesa" && scalar) {
    int64_t iterations = getScalarIterations(s, keyTile, threads);
    if (iterations > kLlvmpipeLoopIterations)
      return keep(llvm::formatv(
          "the scalar kernel's KV-tile loop nest runs {0} iterations, more "
          "than the {1} llvmpipe executes (profile vendor mesa; {2})",
          iterations, kLlvmpipeLoopIterations, noMma));
  }
  MLIRContext *ctx = op->getContext();
  d.config = KernelConfigAttr::get(
      ctx, variant, {queryTile, keyTile}, threads, subgroup, vectorWidth,
      rowBlocks, staging == KVStaging::Registers ? 1 : 2, /*split=*/1, padBytes,
      /*loads=*/{}, minWorkgroups, /*resident=*/{}, dynamicShared,
      !scalar && warpSync, !scalar && lazyRescale, /*stageX=*/false,
      /*fuseSiblings=*/false,
      /*fuseEpilogues=*/false, /*loadBytes=*/0);

  d.remark = describeAttentionConfig(s, d.config, profile, o, noMma);
  if (variant == KernelVariant::AttentionMmaSync && o.allowWgmma &&
      o.attentionWgmma) {
    std::string noWgmma;
    if (KernelConfigAttr wgmma =
            selectWgmmaAttention(ctx, s, sharedBytes, o, noWgmma)) {
      d.config = wgmma;
      d.remark = describeAttentionConfig(s, d.config, profile, o, noMma);
    } else {
      d.remark += "; not the wgmma kernel: " + noWgmma;
    }
  }
  // The mma kernel on KHR cooperative matrices, which the profile promises
  // but a device need not run: the kernel auto would take without them as
  // well, launched instead where the device lacks them at run time.
  if (variant == KernelVariant::AttentionMma && automatic && o.mmaFallback) {
    AttentionConfigOptions without = o;
    without.allowMma = false;
    without.mmaFallback = false;
    AttentionDecision other = selectAttentionConfig(op, profile, without);
    if (other.config) {
      d.fallback = other.config;
      d.remark += "; where the device does not run 16x16x16 f16 cooperative "
                  "matrices (checked at run time), the fallback: " +
                  other.remark;
    } else {
      d.remark += "; no fallback where the device lacks cooperative "
                  "matrices: " +
                  other.remark;
    }
  }
  return d;
}

std::string cachet::whyNotAttentionConfig(Operation *op,
                                          KernelConfigAttr config,
                                          DeviceProfileAttr profile) {
  if (!config.isAttention())
    return "the variant is not an attention kernel";
  std::string reason;
  FailureOr<AttentionShape> shape = getAttentionShape(op, reason);
  if (failed(shape))
    return reason;
  const AttentionShape &s = *shape;
  auto [profileSubgroup, sharedBytes] = getLimits(profile);
  ArrayRef<int64_t> tile = config.getTile();
  KernelVariant variant = config.getVariant();
  bool scalar = variant == KernelVariant::AttentionScalar;
  int64_t subgroup =
      config.getSubgroup() ? config.getSubgroup() : int64_t(profileSubgroup);
  if (s.partial &&
      (config.isDecode() || variant == KernelVariant::AttentionMma))
    return kNoPartialState.str();
  if (!config.isDecode() && tile.size() > 1 && tile[1] > kMaxKeyTile)
    return llvm::formatv("key tile {0}: at most {1} positions (a kernel "
                         "reads keys to the end of the tile that holds the "
                         "causal bound, and dequant-once writes {1} past it)",
                         tile[1], kMaxKeyTile)
        .str();
  if (variant == KernelVariant::AttentionDecodeMmaSync) {
    auto [keyOnceFrom, valueOnceFrom] = getKVDequantizedOnceFrom(op);
    BlockQuantizedType keyOnce = keyOnceFrom.block;
    BlockQuantizedType valueOnce = valueOnceFrom.block;
    std::string why =
        whyNotDecodeMma(s, tile[0], keyOnce ? keyOnce : s.keyBlock,
                        valueOnce ? valueOnce : s.valueBlock);
    if (!why.empty())
      return why;
    int64_t run = config.getVectorWidth();
    if (run < 8 || (s.headDim / 4) % run != 0 ||
        ((keyOnce || s.keyBlock) && run % 32 != 0))
      return llvm::formatv("vector_width {0}: each lane's K values come in "
                           "runs of 8 or more dividing head-dim / 4 ({1}), "
                           "whole blocks where K is decoded from blocks",
                           run, s.headDim / 4);
    if (profile && profile.getSubgroupSize() != 0 &&
        profile.getSubgroupSize() != 32)
      return llvm::formatv("the mma-sync decode kernel takes subgroups of 32 "
                           "lanes, the device's are {0}",
                           profile.getSubgroupSize());
    if ((s.group * s.queries) % tile[0] != 0)
      return llvm::formatv("the decode kernel's query rows {0} do not divide "
                           "the {1} rows of one KV head (group {2} x {3} "
                           "queries)",
                           tile[0], s.group * s.queries, s.group, s.queries);
    return "";
  }
  if (variant == KernelVariant::AttentionDecode) {
    int64_t threads = config.getWorkgroup() ? config.getWorkgroup() : tile[1];
    int64_t rowValues = config.getVectorWidth();
    std::string why = whyNotDecode(s, subgroup, threads, rowValues);
    if (!why.empty())
      return why;
    if (rowValues > 1) {
      auto [keyOnceFrom, valueOnceFrom] = getKVDequantizedOnceFrom(op);
      BlockQuantizedType keyOnce = keyOnceFrom.block;
      BlockQuantizedType valueOnce = valueOnceFrom.block;
      why = whyNotRowValues(s, rowValues, subgroup, tile[0],
                            keyOnce ? keyOnce : s.keyBlock,
                            valueOnce ? valueOnce : s.valueBlock);
      if (!why.empty())
        return llvm::formatv("vector_width {0}: {1}", rowValues, why);
      int64_t groups = threads / (s.headDim / rowValues);
      if (groups == 0 || tile[1] % groups != 0)
        return llvm::formatv("the decode kernel's {0} positions per step are "
                             "not a multiple of its {1} groups of lanes",
                             tile[1], groups);
    }
    if (profile && profile.getSubgroupSize() != 0 &&
        subgroup != int64_t(profile.getSubgroupSize()))
      return llvm::formatv("the decode kernel's subgroup {0} is not the "
                           "device's {1} (its shuffles span one subgroup)",
                           subgroup, profile.getSubgroupSize());
    if ((s.group * s.queries) % tile[0] != 0)
      return llvm::formatv("the decode kernel's query rows {0} do not divide "
                           "the {1} rows of one KV head (group {2} x {3} "
                           "queries)",
                           tile[0], s.group * s.queries, s.group, s.queries);
    if (config.getStages() == 2) {
      int64_t keyRow = getDecodeRowBytes(s.headDim, s.keyElement, s.keyBlock);
      int64_t valueRow =
          getDecodeRowBytes(s.valueDim, s.valueElement, s.valueBlock);
      if (!getDecodeKeyStride(keyRow) || !getPackedCopyBytes(valueRow))
        return llvm::formatv("stages = 2: the decode kernel copies K and V "
                             "rows in pieces of 4, 8 or 16 bytes, and rows "
                             "of {0} and {1} bytes are not",
                             keyRow, valueRow);
    }
    if (profile && profile.getVendor() == "mesa") {
      int64_t iterations =
          getDecodeIterations(s, tile[0], threads, tile[1], config.getSplit());
      if (iterations > kLlvmpipeLoopIterations)
        return llvm::formatv(
            "the decode kernel's loops run {0} iterations, more than the {1} "
            "llvmpipe executes (profile vendor mesa)",
            iterations, kLlvmpipeLoopIterations);
    }
  } else if (variant == KernelVariant::AttentionTiled) {
    std::string why = whyNotTiledAttention(s, tile, config.getWorkgroup());
    if (!why.empty())
      return why;
    int64_t iterations = getTiledIterations(s, tile);
    if (profile && profile.getVendor() == "mesa" &&
        iterations > kLlvmpipeLoopIterations)
      return llvm::formatv(
          "the tiled kernel's loops run {0} iterations, more than the {1} "
          "llvmpipe executes (profile vendor mesa)",
          iterations, kLlvmpipeLoopIterations);
  } else if (scalar) {
    if (config.getWorkgroup() != 0 && config.getWorkgroup() != tile[0])
      return llvm::formatv("the scalar kernel runs one thread per query row: "
                           "workgroup {0} is not the query tile {1}",
                           config.getWorkgroup(), tile[0]);
  } else {
    bool sync = variant == KernelVariant::AttentionMmaSync ||
                variant == KernelVariant::AttentionWgmma;
    std::string why = whyNotMma(s, profile, /*allowBF16=*/sync);
    if (why.empty() && variant == KernelVariant::AttentionWgmma)
      why = whyNotWgmmaAttention(s);
    if (why.empty() && config.getStages() == 3 && (s.keyBlock || s.valueBlock))
      why = "stages = 3 (three K/V buffers) takes f16 or bf16 K/V, not "
            "blocks decoded in the kernel";
    if (!why.empty())
      return why;
    if (sync ? subgroup != 32 : (subgroup < 16 || subgroup > 64))
      return llvm::formatv("subgroups of {0} lanes (the kernel takes {1})",
                           subgroup, sync ? "32" : "16, 32 or 64");
    int64_t rows = 16 * config.getRowBlocks();
    if (rows > subgroup)
      return llvm::formatv("row_blocks {0} is more than subgroup / 16 ({1})",
                           config.getRowBlocks(), subgroup / 16);
    int64_t threads = tile[0] / rows * subgroup;
    if (config.getWorkgroup() != 0 && config.getWorkgroup() != threads)
      return llvm::formatv("workgroup {0} is not one subgroup of {1} lanes "
                           "per {2} query rows ({3} threads)",
                           config.getWorkgroup(), subgroup, rows, threads);
    int64_t width = config.getVectorWidth();
    if (s.headDim % width != 0 || s.valueDim % width != 0)
      return llvm::formatv("vector_width {0} does not divide the head "
                           "dimensions {1} and {2}",
                           width, s.headDim, s.valueDim);
    if (config.getStages() == 2 && !s.keyBlock && !s.valueBlock) {
      int64_t perCopy = width * threads;
      if (width < 2 || tile[1] * s.headDim % perCopy != 0 ||
          tile[1] * s.valueDim % perCopy != 0)
        return llvm::formatv("stages = 2: the key tile {0} is not copied in "
                             "whole {1}-element vectors by {2} threads",
                             tile[1], width, threads);
    }
  }
  // Static workgroup memory: at most 48 KiB; dynamic: the device's.
  int64_t budget = config.getDynamicShared()
                       ? int64_t(sharedBytes)
                       : std::min<int64_t>(sharedBytes, 49152);
  int64_t used = getAttentionWorkgroupBytes(s, config);
  if (used > budget)
    return llvm::formatv("query tile {0} and key tile {1} need {2} bytes of "
                         "{3} workgroup memory, the device has {4}",
                         tile[0], tile[1], used,
                         config.getDynamicShared() ? "dynamic" : "static",
                         budget);
  if (scalar && profile && profile.getVendor() == "mesa") {
    int64_t iterations = getScalarIterations(s, tile[1], tile[0]);
    if (iterations > kLlvmpipeLoopIterations)
      return llvm::formatv(
          "the scalar kernel's KV-tile loop nest runs {0} iterations, more "
          "than the {1} llvmpipe executes (profile vendor mesa)",
          iterations, kLlvmpipeLoopIterations);
  }
  return "";
}
