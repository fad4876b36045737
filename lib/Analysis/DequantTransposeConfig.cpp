//===- DequantTransposeConfig.cpp - the dequant-transpose kernel ----------===//

#include "cachet/Analysis/DequantTransposeConfig.h"
#include "cachet/Analysis/Buffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace cachet;

namespace {

/// Returns true if `type` is laid out row-major without gaps, at a static
/// offset (identity, or a contiguous view such as a scratch slice).
bool isContiguous(MemRefType type, int64_t &offset) {
  SmallVector<int64_t> strides;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return false;
  int64_t expected = 1;
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    if (strides[i] != expected)
      return false;
    expected *= type.getDimSize(i);
  }
  return true;
}

/// Returns true if `type` [heads][positions][dim] holds each head's rows
/// without gaps at a static offset, its heads `headStride` elements apart
/// (the first positions of a larger head-major buffer, or all of them).
bool hasContiguousRows(MemRefType type, int64_t &offset, int64_t &headStride) {
  SmallVector<int64_t> strides;
  if (type.getRank() != 3 ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || ShapedType::isDynamic(strides[0]))
    return false;
  headStride = strides[0];
  return strides[2] == 1 && strides[1] == type.getDimSize(2) &&
         (ShapedType::isDynamic(type.getDimSize(1)) ||
          headStride >= type.getDimSize(1) * type.getDimSize(2));
}

/// Returns true if `view` takes whole positions (all of dimensions 1 and
/// 2, unit strides) of its source from a position that may be known only
/// at run time.
bool isPositionChunk(memref::SubViewOp view) {
  MemRefType source = view.getSourceType();
  if (source.getRank() != 3 || !source.hasStaticShape())
    return false;
  ArrayRef<int64_t> offsets = view.getStaticOffsets();
  ArrayRef<int64_t> sizes = view.getStaticSizes();
  ArrayRef<int64_t> strides = view.getStaticStrides();
  return offsets.size() == 3 && offsets[1] == 0 && offsets[2] == 0 &&
         sizes[1] == source.getDimSize(1) && sizes[2] == source.getDimSize(2) &&
         llvm::all_of(strides, [](int64_t s) { return s == 1; });
}

} // namespace

Value cachet::getDequantTransposeBytes(linalg::GenericOp op) {
  // The packed form reads the bytes in its body (the reference lowering
  // decodes each value from its block there).
  if (op.getNumDpsInputs() != 0)
    return {};
  return getOnlyBufferLoadedIn(op.getRegion());
}

std::optional<DequantTransposeShape>
cachet::getDequantTransposeShape(linalg::GenericOp op, std::string &reason) {
  DequantTransposeShape s;
  auto marker =
      op->getAttrOfType<TypeAttr>(CachetDialect::getDequantTransposeAttrName());
  s.block = marker ? dyn_cast<BlockQuantizedType>(marker.getValue())
                   : BlockQuantizedType();
  if (!s.block) {
    reason = "the marker does not name a block format";
    return std::nullopt;
  }
  s.bytes = getDequantTransposeBytes(op);
  if (!s.bytes || op.getNumDpsInits() != 1) {
    reason = "not the packed form (one byte buffer read in the body, one "
             "result)";
    return std::nullopt;
  }
  s.result = op.getDpsInits()[0];
  auto in = dyn_cast<MemRefType>(s.bytes.getType());
  auto out = dyn_cast<MemRefType>(s.result.getType());
  if (!in || !out) {
    reason = "not on memrefs (run after bufferization)";
    return std::nullopt;
  }
  // A run-time number of positions (dimension 0 of the bytes, 1 of the
  // result); every other size static.
  if (in.getRank() != 3 || out.getRank() != 3 || in.isDynamicDim(1) ||
      in.isDynamicDim(2) || out.isDynamicDim(0) || out.isDynamicDim(2) ||
      in.isDynamicDim(0) != out.isDynamicDim(1)) {
    reason = "not rank-3 shapes, or dynamic sizes other than the positions";
    return std::nullopt;
  }
  // The bytes of a chunk of positions (a chunked dequant-once's loop) are
  // a view at a run-time position of a contiguous cache: its offset is a
  // multiple of one position's bytes, which then stands for it in the
  // loads' alignment.
  bool chunk = false;
  if (auto view = s.bytes.getDefiningOp<memref::SubViewOp>();
      view && isPositionChunk(view)) {
    int64_t sourceOffset;
    MemRefType source = view.getSourceType();
    if (isContiguous(source, sourceOffset) && sourceOffset == 0) {
      s.inOffset = source.getDimSize(1) * source.getDimSize(2);
      chunk = true;
    }
  }
  if ((!chunk && !isContiguous(in, s.inOffset)) ||
      !hasContiguousRows(out, s.outOffset, s.outHeadStride)) {
    reason = "the bytes or the result's rows are not contiguous with a "
             "static offset";
    return std::nullopt;
  }
  Type element = out.getElementType();
  if (!element.isF16() && !element.isBF16() && !element.isF32()) {
    reason = "the result is not f16, bf16 or f32";
    return std::nullopt;
  }
  s.elementBytes = element.getIntOrFloatBitWidth() / 8;
  s.positions = in.getDimSize(0);
  s.heads = in.getDimSize(1);
  s.rowBytes = in.getDimSize(2);
  s.dim = out.getDimSize(2);
  if (s.dim % 32) {
    reason = "the head dimension is not a whole number of blocks";
    return std::nullopt;
  }
  return s;
}

std::string cachet::checkDequantTransposeConfigOptions(
    const DequantTransposeConfigOptions &o) {
  auto bad = [](StringRef option, int64_t value, StringRef allowed) {
    return llvm::formatv("bad {0} {1}: {2}", option, value, allowed).str();
  };
  if (o.positionsPerGroup <= 0)
    return bad("positions-per-group", o.positionsPerGroup, "1 or more");
  if (o.maxWorkgroupBytes <= 0)
    return bad("max-workgroup-bytes", o.maxWorkgroupBytes, "1 or more");
  if (o.threads <= 0)
    return bad("dequant-transpose-threads", o.threads, "1 or more");
  if (o.loadBytes < 4 || !llvm::isPowerOf2_64(o.loadBytes))
    return bad("dequant-transpose-load-bytes", o.loadBytes,
               "a power of two from 4");
  if (o.storeBytes <= 0 || !llvm::isPowerOf2_64(o.storeBytes))
    return bad("dequant-transpose-store-bytes", o.storeBytes, "a power of two");
  return "";
}

DequantTransposeDecision
cachet::selectDequantTransposeConfig(linalg::GenericOp op,
                                     const DequantTransposeConfigOptions &o) {
  DequantTransposeDecision d;
  std::string reason;
  std::optional<DequantTransposeShape> s = getDequantTransposeShape(op, reason);
  auto generic = [&](const Twine &why) {
    d.remark = ("dequant-transpose: generic kernel: " + why).str();
    return d;
  };
  if (!s)
    return generic(reason);
  int64_t values = o.storeBytes / s->elementBytes;
  if (o.storeBytes % s->elementBytes || values == 0 || values > 32 ||
      32 % values)
    return generic("store-bytes does not give a power-of-two count of values "
                   "within a block");
  if ((s->outOffset * s->elementBytes) % o.storeBytes ||
      (s->outHeadStride * s->elementBytes) % o.storeBytes)
    return generic("the result is not aligned to store-bytes");
  MLIRContext *ctx = op.getContext();
  auto config = [&](KernelVariant variant, ArrayRef<int64_t> tile,
                    int64_t loadBytes) {
    return KernelConfigAttr::get(ctx, variant, tile, o.threads, 0, values, 1, 1,
                                 1, 0, {}, 0, {}, false, false, false, false,
                                 false, false, loadBytes);
  };
  if (o.kernel == DequantTransposeKernel::Direct && !s->dynamicPositions()) {
    d.config = config(KernelVariant::DequantTransposeDirect, {}, 0);
    d.remark = llvm::formatv("dequant-transpose: direct kernel: a thread per "
                             "{0} values (one store), bytes read from global "
                             "memory, workgroups of {1} threads",
                             values, o.threads)
                   .str();
    return d;
  }
  // Positions per workgroup: the largest power of two up to the option
  // that divides the positions (every workgroup stages a whole chunk) and
  // keeps the chunk within max-workgroup-bytes.
  int64_t rowBytes = s->heads * s->rowBytes;
  if (rowBytes > o.maxWorkgroupBytes)
    return generic("one position's blocks exceed max-workgroup-bytes");
  // A run-time number of positions: the last workgroup may get fewer, so
  // loads are whole positions (they stop at its last one).
  bool dynamic = s->dynamicPositions();
  int64_t perGroup = 1;
  while (perGroup * 2 <= o.positionsPerGroup &&
         (dynamic || s->positions % (perGroup * 2) == 0) &&
         perGroup * 2 * rowBytes <= o.maxWorkgroupBytes)
    perGroup *= 2;
  int64_t chunkBytes = perGroup * rowBytes;
  int64_t loadBytes = o.loadBytes;
  while (loadBytes > 4 && (chunkBytes % loadBytes || s->inOffset % loadBytes ||
                           (dynamic && rowBytes % loadBytes)))
    loadBytes /= 2;
  if (dynamic && rowBytes % loadBytes)
    return generic("one position's bytes are not a whole number of 4-byte "
                   "words (a run-time number of positions)");
  if (chunkBytes % loadBytes || s->inOffset % loadBytes)
    return generic("a chunk of positions is not a whole number of aligned "
                   "4-byte words");
  d.config =
      config(KernelVariant::DequantTransposeStaged, {perGroup}, loadBytes);
  d.remark = llvm::formatv("dequant-transpose: {0} positions ({1} B) per "
                           "workgroup of {2} threads, {3} B loads, {4} values "
                           "per store{5}",
                           perGroup, chunkBytes, o.threads, loadBytes, values,
                           dynamic ? "; a run-time number of positions (the "
                                     "grid from it, the last workgroup's "
                                     "loads and stores guarded)"
                                   : "")
                 .str();
  return d;
}

std::string cachet::whyNotDequantTransposeConfig(const DequantTransposeShape &s,
                                                 KernelConfigAttr config) {
  int64_t values = config.getVectorWidth();
  if (values > 32 || 32 % values)
    return "vector_width " + std::to_string(values) +
           " does not divide a block's 32 values";
  if ((s.outOffset % values) != 0)
    return "the result is not aligned to vector_width values";
  if (config.getWorkgroup() <= 0)
    return "'workgroup' (threads) must be positive";
  if (s.outHeadStride % values)
    return "the result's heads are not aligned to vector_width values";
  if (config.getVariant() == KernelVariant::DequantTransposeDirect)
    return s.dynamicPositions()
               ? "the direct kernel takes a static number of positions"
               : "";
  int64_t perGroup = config.getTile()[0];
  if (s.dynamicPositions()) {
    if ((s.heads * s.rowBytes) % config.getLoadBytes())
      return llvm::formatv("one position's {0} B are not a whole number of "
                           "{1}-byte loads (a run-time number of positions)",
                           s.heads * s.rowBytes, config.getLoadBytes())
          .str();
  } else if (s.positions % perGroup)
    return llvm::formatv("{0} positions are not a multiple of tile {1}",
                         s.positions, perGroup)
        .str();
  int64_t chunkBytes = perGroup * s.heads * s.rowBytes;
  int64_t loadBytes = config.getLoadBytes();
  if (chunkBytes % loadBytes || s.inOffset % loadBytes)
    return llvm::formatv("a chunk of {0} B at offset {1} is not a whole "
                         "number of aligned {2}-byte loads",
                         chunkBytes, s.inOffset, loadBytes)
        .str();
  return "";
}
