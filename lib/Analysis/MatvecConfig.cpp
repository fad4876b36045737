//===- MatvecConfig.cpp - which mat-vec kernel, which parameters ----------===//

#include "cachet/Analysis/MatvecConfig.h"

#include "cachet/Analysis/Buffers.h"
#include "cachet/Analysis/DequantTransposeConfig.h"
#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Device/DeviceProfile.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace cachet;

std::string cachet::checkMatvecConfigOptions(const MatvecConfigOptions &o) {
  auto bad = [](StringRef option, int64_t value, StringRef allowed) {
    return llvm::formatv("bad {0} {1}: {2}", option, value, allowed).str();
  };
  if (o.subgroupSize < 0 ||
      (o.subgroupSize > 0 && !llvm::isPowerOf2_64(o.subgroupSize)))
    return bad("subgroup-size", o.subgroupSize,
               "0 (the profile's) or a power of two");
  if (o.rowsPerBlock <= 0)
    return bad("rows-per-block", o.rowsPerBlock, "1 or more");
  if (o.loadsPerLane <= 0)
    return bad("loads-per-lane", o.loadsPerLane, "1 or more");
  if (o.pairedLoadsPerLane < 0)
    return bad("paired-loads-per-lane", o.pairedLoadsPerLane,
               "0 (loads-per-lane) or more");
  if (o.rowsPerSubgroup <= 0)
    return bad("rows-per-subgroup", o.rowsPerSubgroup, "1 or more");
  if (o.loadBytes <= 0 || !llvm::isPowerOf2_64(o.loadBytes))
    return bad("load-bytes", o.loadBytes, "a power of two");
  if (o.blockPairedLoadsPerLane < 0)
    return bad("block-paired-loads-per-lane", o.blockPairedLoadsPerLane,
               "0 (paired-loads-per-lane) or more");
  if (o.blockRowsPerSubgroup <= 0)
    return bad("block-rows-per-subgroup", o.blockRowsPerSubgroup, "1 or more");
  if (o.blockSlice <= 0 || 32 % o.blockSlice != 0)
    return bad("block-slice", o.blockSlice, "a divisor of 32");
  if (o.superBlockSlice < 0 ||
      (o.superBlockSlice > 0 && 32 % o.superBlockSlice != 0))
    return bad("super-block-slice", o.superBlockSlice,
               "0 (block-slice) or a divisor of 32");
  if (o.splitBlockSlice < 0 ||
      (o.splitBlockSlice > 0 &&
       (32 % o.splitBlockSlice != 0 || o.splitBlockSlice % 4 != 0)))
    return bad("split-block-slice", o.splitBlockSlice,
               "0 (block-slice) or 4, 8, 16 or 32");
  if (o.smallBatch < 0)
    return bad("small-batch", o.smallBatch, "0 (none) or more");
  if (o.smallBatchLoads < 0)
    return bad("small-batch-loads", o.smallBatchLoads, "0 (no cap) or more");
  if (o.gemmTileM < 0 || o.gemmTileM % 64 != 0)
    return bad("gemm-tile-m", o.gemmTileM,
               "0 (by the rows of x) or a "
               "multiple of 64");
  if (o.gemmTileN < 0 || o.gemmTileN % 8 != 0)
    return bad("gemm-tile-n", o.gemmTileN,
               "0 (by the kernel and shape) or a multiple of 8 (of 32 for "
               "mma-sync)");
  if (o.gemmFillEighths < 0 || o.gemmFillEighths > 8)
    return bad("gemm-fill-eighths", o.gemmFillEighths,
               "0 (never smaller tiles) to 8");
  if (o.gemmStep < 0 || o.gemmStep % 8 != 0)
    return bad("gemm-step", o.gemmStep,
               "0 (the kernel's default) or a multiple of 8 (of 16 for the "
               "mma-sync GEMM)");
  if (o.gemmSubgroups < 0)
    return bad("gemm-subgroups", o.gemmSubgroups,
               "0 (one per 64 x 64 of a 128-row tile, 64 x 32 of a "
               "64-row one) or more");
  if (o.gemmDecodeProducers < 0 || o.gemmDecodeProducers > 2)
    return bad("gemm-decode-producers", o.gemmDecodeProducers, "0, 1 or 2");
  if (o.gemmStages != 0 && (o.gemmStages < 2 || o.gemmStages > 8))
    return bad("gemm-stages", o.gemmStages,
               "0 (3 for mma-sync, 4 for wgmma) or 2 to 8");
  if (o.smallBatchMmaRows < 1)
    return bad("small-batch-mma-rows", o.smallBatchMmaRows, "1 or more");
  if (o.smallBatchMmaSteps < 1)
    return bad("small-batch-mma-steps", o.smallBatchMmaSteps, "1 or more");
  if (o.blocksPerCU < 0)
    return bad("blocks-per-cu", o.blocksPerCU, "0 (one block a tile) or more");
  if (o.pairedBlocksPerCU < 0)
    return bad("paired-blocks-per-cu", o.pairedBlocksPerCU,
               "0 (blocks-per-cu) or more");
  return "";
}

namespace {

/// Why an op between `from` and `to` (exclusive, one block) may write
/// `bytes`, or "". Writes into buffers of their own (memref.alloc) cannot
/// reach the bytes of an argument or a global.
std::string getWriteBetween(Operation *from, Operation *to, Value bytes) {
  Value root = getRootBuffer(bytes);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects)
      return "'" + op->getName().getStringRef().str() +
             "' between the dequantize and the mat-vec has unknown memory "
             "effects";
    for (const MemoryEffects::EffectInstance &effect : *effects) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      Value writtenRoot = written ? getRootBuffer(written) : Value();
      if (writtenRoot && writtenRoot != root &&
          writtenRoot.getDefiningOp<memref::AllocOp>())
        continue;
      return "'" + op->getName().getStringRef().str() +
             "' between the dequantize and the mat-vec may write the blocks";
    }
  }
  return "";
}

} // namespace

std::optional<MatvecOperands> cachet::getMatvecOperands(Operation *op) {
  if (auto matvec = dyn_cast<linalg::MatvecOp>(op))
    return MatvecOperands{matvec.getInputs()[0], matvec.getInputs()[1],
                          matvec.getOutputs()[0], 1, false};
  auto matmul = dyn_cast<linalg::MatmulOp>(op);
  if (!matmul || !linalg::MatmulTransposeBOp::classof(op) ||
      matmul.getCast() != linalg::TypeFn::cast_signed ||
      matmul.getInputs().size() != 2 || matmul.getOutputs().size() != 1)
    return std::nullopt;
  MatvecOperands operands{matmul.getInputs()[1], matmul.getInputs()[0],
                          matmul.getOutputs()[0], ShapedType::kDynamic, true};
  if (auto x = dyn_cast<ShapedType>(operands.x.getType());
      x && x.hasRank() && x.getRank() == 2)
    operands.columns = x.getDimSize(0);
  return operands;
}

std::optional<BlockWeight> cachet::getBlockWeight(Operation *op,
                                                  std::string &reason) {
  reason.clear();
  std::optional<MatvecOperands> operands = getMatvecOperands(op);
  if (!operands)
    return std::nullopt;
  Value buffer = operands->weight;
  linalg::GenericOp dequantize;
  for (Operation *user : buffer.getUsers())
    if (auto generic = dyn_cast<linalg::GenericOp>(user);
        generic &&
        generic->hasAttr(CachetDialect::getBlockDequantizeAttrName()) &&
        generic.getNumDpsInits() == 1 && generic.getDpsInits()[0] == buffer)
      dequantize = generic;
  if (!dequantize)
    return std::nullopt;
  BlockWeight w;
  w.buffer = buffer;
  w.dequantize = dequantize;
  w.block = dyn_cast<BlockQuantizedType>(
      dequantize
          ->getAttrOfType<TypeAttr>(CachetDialect::getBlockDequantizeAttrName())
          .getValue());
  auto fail = [&](const Twine &why) -> std::optional<BlockWeight> {
    reason = why.str();
    return std::nullopt;
  };
  if (!w.block)
    return fail("the dequantize's marker does not name a block format");
  std::string format = w.block.getFormatName().str();
  // A format no slice of which decodes from words would take the float
  // kernel on the copy (every block type has slices today).
  if (!BlockDecoder::takesSlice(w.block, 1))
    return fail(format + " blocks are not decoded in registers by the "
                         "subgroup kernel (no slices)");
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return fail("the " + format +
                " weight is dequantized into a buffer that is not its own "
                "(memref.alloc)");
  for (Operation *user : buffer.getUsers())
    if (user != op && user != dequantize.getOperation() &&
        !isa<memref::DeallocOp>(user))
      return fail("the dequantized " + format + " weight is also read by '" +
                  user->getName().getStringRef() + "'");
  if (dequantize->getBlock() != op->getBlock() ||
      !dequantize->isBeforeInBlock(op))
    return fail("the " + format +
                " dequantize is not before the mat-vec in its block");
  auto a = cast<MemRefType>(buffer.getType());
  bool split = dequantize.getNumDpsInputs() == 2;
  if (split) {
    // Split q8_0: the values one to one, the scales per 32 values. Split
    // q4_0: the values two per byte.
    w.bytes = dequantize.getDpsInputs()[0];
    w.scales = dequantize.getDpsInputs()[1];
    auto values = dyn_cast<MemRefType>(w.bytes.getType());
    auto scales = dyn_cast<MemRefType>(w.scales.getType());
    if (!isa<Q8_0Type, Q4_0Type>(w.block) || !values || !scales ||
        !values.getElementType().isInteger(8) ||
        !scales.getElementType().isF16())
      return fail("the split dequantize does not read i8 values (or i4 "
                  "values two per byte) and f16 scales");
    if (values.getRank() != 2 || !values.hasStaticShape() ||
        scales.getRank() != 2 || !scales.hasStaticShape() || a.getRank() != 2 ||
        !a.hasStaticShape())
      return fail("the split " + format + " weight's shape is not static 2-D");
    int64_t perByte = isa<Q4_0Type>(w.block) ? 2 : 1;
    if (values.getDimSize(0) != a.getDimSize(0) ||
        values.getDimSize(1) * perByte != a.getDimSize(1) ||
        scales.getDimSize(0) != a.getDimSize(0) ||
        scales.getDimSize(1) * 32 != a.getDimSize(1))
      return fail("the split " + format +
                  " weight's values and scales do not match its shape");
    w.rowBytes = values.getDimSize(1);
  } else {
    w.bytes = getDequantTransposeBytes(dequantize);
    if (!w.bytes)
      return fail("the " + format +
                  " dequantize does not read one buffer of blocks");
    auto bytes = dyn_cast<MemRefType>(w.bytes.getType());
    if (!bytes || bytes.getRank() != 2 || !bytes.hasStaticShape() ||
        a.getRank() != 2 || !a.hasStaticShape())
      return fail("the " + format + " weight's shape is not static 2-D");
    w.rowBytes = bytes.getDimSize(1);
    if (a.getDimSize(1) % w.block.getBlockValues() != 0 ||
        a.getDimSize(1) / w.block.getBlockValues() * w.block.getBlockBytes() !=
            w.rowBytes)
      return fail("the " + format + " weight's rows are not whole blocks");
  }
  auto bytes = cast<MemRefType>(w.bytes.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(bytes.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      ShapedType::isDynamic(strides[0]) || ShapedType::isDynamic(offset) ||
      strides[0] % 4 != 0 || offset % 4 != 0 || w.rowBytes % 4 != 0)
    return fail(split ? llvm::formatv("the split {0} weight's rows of {1} "
                                      "bytes are not whole aligned 32-bit "
                                      "words",
                                      format, w.rowBytes)
                            .str()
                      : llvm::formatv("the {0} weight's rows ({1} blocks of "
                                      "{2} bytes) are not whole aligned "
                                      "32-bit words",
                                      format,
                                      w.rowBytes / w.block.getBlockBytes(),
                                      w.block.getBlockBytes())
                            .str());
  for (Value read : {w.bytes, w.scales})
    if (read)
      if (std::string why = getWriteBetween(dequantize, op, read); !why.empty())
        return fail(why);
  return w;
}

/// Returns why the subgroup kernel cannot take `op`'s operands (memrefs of
/// static shapes, f16/bf16/f32 weights and x of one type, an f32 result;
/// bf16 only with vectors of it), or "".
static std::string whyNotOperands(Operation *op, bool bf16Vectors) {
  std::optional<MatvecOperands> operands = getMatvecOperands(op);
  if (!operands)
    return "not a linalg.matvec or a linalg.matmul reading its weight "
           "transposed";
  auto a = dyn_cast<MemRefType>(operands->weight.getType());
  auto x = dyn_cast<MemRefType>(operands->x.getType());
  auto y = dyn_cast<MemRefType>(operands->y.getType());
  if (!a || !x || !y)
    return "not on memrefs (run after bufferization)";
  if (!a.hasStaticShape() || !x.hasStaticShape() || !y.hasStaticShape())
    return "dynamic shape";
  Type element = a.getElementType();
  if (!(element.isF16() || element.isBF16() || element.isF32()) ||
      x.getElementType() != element || !y.getElementType().isF32())
    return "element types are not f16/bf16/f32 with an f32 result";
  if (element.isBF16() && !bf16Vectors)
    return "bf16 weights and bf16-vectors=false";
  return "";
}

std::string cachet::whyNotSubgroupMatvec(Operation *op, int64_t lanes,
                                         int64_t loadBytes, bool bf16Vectors) {
  if (std::string why = whyNotOperands(op, bf16Vectors); !why.empty())
    return why;
  MatvecOperands operands = *getMatvecOperands(op);
  auto a = cast<MemRefType>(operands.weight.getType());
  auto x = cast<MemRefType>(operands.x.getType());
  auto y = cast<MemRefType>(operands.y.getType());
  Type element = a.getElementType();
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(a.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      (strides[0] * elementBytes) % loadBytes != 0 ||
      (offset * elementBytes) % loadBytes != 0)
    return "the weight's rows are not unit-stride and " +
           std::to_string(loadBytes) + "-byte aligned";
  if (!x.getLayout().isIdentity() || !y.getLayout().isIdentity())
    return "x or y is not contiguous";
  if (loadBytes < elementBytes ||
      a.getDimSize(1) % (loadBytes / elementBytes) != 0)
    return "the row length is not a multiple of " + std::to_string(loadBytes) +
           " bytes";
  if (lanes <= 0 || !llvm::isPowerOf2_64(lanes))
    return "subgroup-size is not a power of two";
  return "";
}

/// Returns why the subgroup kernel with `lanes` lanes per row cannot decode
/// `w` in slices of `slice` values for `op`, or "".
static std::string whyNotBlockMatvec(Operation *op, const BlockWeight &w,
                                     int64_t lanes, int64_t slice,
                                     bool bf16Vectors) {
  if (std::string why = whyNotOperands(op, bf16Vectors); !why.empty())
    return why;
  MatvecOperands operands = *getMatvecOperands(op);
  auto x = cast<MemRefType>(operands.x.getType());
  auto y = cast<MemRefType>(operands.y.getType());
  if (!x.getLayout().isIdentity() || !y.getLayout().isIdentity())
    return "x or y is not contiguous";
  if (lanes <= 0 || !llvm::isPowerOf2_64(lanes))
    return "subgroup-size is not a power of two";
  if (w.scales && slice % 4 != 0)
    return llvm::formatv("split {0} values are read in whole 32-bit words, "
                         "not in slices of {1}",
                         w.block.getFormatName(), slice)
        .str();
  // Split values are whole words in value order: any slice of words in a
  // block of 32 (packed 4-bit blocks: one half of the nibbles, at most 16).
  if (w.scales ? 32 % slice != 0 : !BlockDecoder::takesSlice(w.block, slice))
    return llvm::formatv("{0}{1} blocks are not decoded in slices of {2} "
                         "values",
                         w.scales ? "split " : "", w.block.getFormatName(),
                         slice)
        .str();
  return "";
}

/// Returns why the mma-sync kernel cannot compute the small-batch mat-mul
/// `op` over `w`'s blocks (or its float weight where `w` is null), or "".
static std::string whyNotMmaMatvec(Operation *op, const BlockWeight *w) {
  MatvecOperands operands = *getMatvecOperands(op);
  if (std::string why = whyNotOperands(op, /*bf16Vectors=*/true); !why.empty())
    return why;
  auto a = cast<MemRefType>(operands.weight.getType());
  auto x = cast<MemRefType>(operands.x.getType());
  auto y = cast<MemRefType>(operands.y.getType());
  if (!a.getElementType().isF16() && !a.getElementType().isBF16())
    return "x and the weight are not f16 or bf16";
  if (x.getElementType() != a.getElementType())
    return "x and the weight have different element types";
  if (!x.getLayout().isIdentity() || !y.getLayout().isIdentity())
    return "x or y is not contiguous";
  if (operands.columns > 8)
    return "more than 8 rows of x (an mma's columns)";
  int64_t rows = a.getDimSize(0), cols = a.getDimSize(1);
  if (rows % 16 != 0)
    return llvm::formatv("{0} weight rows are not a multiple of 16 (an mma's "
                         "rows)",
                         rows)
        .str();
  if (cols % 128 != 0)
    return llvm::formatv("{0} columns are not a multiple of 128 (a "
                         "subgroup's step)",
                         cols)
        .str();
  if (w)
    return w->scales || BlockDecoder::takesSlice(w->block, 8)
               ? ""
               : w->block.getFormatName().str() +
                     " blocks are not decoded in slices of 8 values";
  return whyNotSubgroupMatvec(op, 32, 16, /*bf16Vectors=*/true);
}

/// Returns why x cannot be quantized once per block into workgroup memory
/// for integer dot products with `w`'s quants in slices of `slice` values,
/// or "".
static std::string whyNotInt8Dot(Operation *op, const BlockWeight &w,
                                 int64_t slice) {
  MatvecOperands operands = *getMatvecOperands(op);
  if (operands.batched)
    return "x is quantized to 8-bit blocks for a mat-vec, not for a "
           "mat-mul's rows of x";
  if (!isa<Q8_0Type>(w.block) && !isa<Q4_0Type>(w.block))
    return "integer dot products take q8_0 and q4_0 blocks, not " +
           w.block.getFormatName().str();
  if (slice % 4 != 0)
    return llvm::formatv("integer dot products take slices of whole 32-bit "
                         "words, not of {0} values",
                         slice)
        .str();
  auto x = cast<MemRefType>(operands.x.getType());
  int64_t bytes = x.getNumElements() + x.getNumElements() / 32 * 4;
  if (x.getNumElements() % 32 != 0 || bytes > kMatvecStaticSharedBytes)
    return llvm::formatv("x quantized to 8-bit blocks ({0} bytes) does not "
                         "fit a block's static workgroup memory",
                         bytes)
        .str();
  return "";
}

/// The mma-sync kernel's decision for `op` (whyNotMmaMatvec passed): a
/// small-batch mat-mul of M rows of x, or a mat-vec (x in column 0 of the
/// mma's B fragment).
static MatvecDecision getMmaDecision(Operation *op,
                                     const MatvecOperands &operands,
                                     const BlockWeight *w,
                                     const MatvecConfigOptions &o) {
  MatvecDecision d;
  MLIRContext *ctx = op->getContext();
  auto weightType = cast<MemRefType>(operands.weight.getType());
  std::string half = weightType.getElementType().isBF16() ? "bf16" : "f16";
  // Steps in flight: only where they divide among the subgroups.
  int64_t steps = o.smallBatchMmaSteps;
  int64_t columnSteps = weightType.getDimSize(1) / 128;
  if (columnSteps % (o.rowsPerBlock * steps) != 0)
    steps = 1;
  d.config = KernelConfigAttr::get(
      ctx, KernelVariant::MatvecMmaSync, {o.rowsPerBlock, 16},
      32 * o.rowsPerBlock, 32, 8, 1, 1, 1, 0, {steps, steps}, 0, {0, 0}, false,
      false, false, false, o.fuseSiblings, o.fuseEpilogues,
      /*loadBytes=*/0);
  d.remark =
      llvm::formatv(
          "mma-sync kernel for {0}: {1} subgroups per block share 16 weight "
          "rows, each taking every {1}th step of 128 columns; the {2} weight "
          "{3} {5} pairs in registers, x read as {5}, m16n8k16 mma.sync with "
          "f32 accumulators, the subgroups' sums added in workgroup "
          "memory{4}",
          operands.batched
              ? llvm::formatv("a small-batch mat-mul of {0} rows of x",
                              operands.columns)
                    .str()
              : std::string("a mat-vec (x in column 0 of the mma's B)"),
          o.rowsPerBlock,
          w ? (w->scales ? "split " : "") + w->block.getFormatName().str()
            : half,
          w ? "decoded to" : "read as",
          steps > 1 ? llvm::formatv("; {0} steps per subgroup loaded before "
                                    "their mma.syncs",
                                    steps)
                          .str()
          : o.smallBatchMmaSteps > 1
              ? llvm::formatv("; one step at a time: {0} steps do not divide "
                              "among {1} subgroups {2} at a time",
                              columnSteps, o.rowsPerBlock, o.smallBatchMmaSteps)
                    .str()
              : std::string(),
          half)
          .str();
  return d;
}

std::string cachet::whyNotGemmStagedBlocks(const BlockWeight &w,
                                           int64_t stages) {
  if (w.scales)
    return "its split form (values and scales apart) is dequantized first; "
           "only packed blocks are decoded in the GEMM";
  int64_t values = w.block.getBlockValues();
  if (values != 32)
    return llvm::formatv("its blocks hold {0} values (the GEMM decodes "
                         "blocks of 32)",
                         values)
        .str();
  int64_t stepBytes = getGemmStagedStepBytes(w);
  if (stepBytes % 4 != 0 || w.rowBytes % 4 != 0)
    return llvm::formatv("its rows ({0} bytes) or 64-value steps ({1} "
                         "bytes) are not whole 32-bit words",
                         w.rowBytes, stepBytes)
        .str();
  if (stages < 3)
    return llvm::formatv("{0} buffers: decoding a step while the one before "
                         "multiplies takes 3 or more",
                         stages)
        .str();
  return "";
}

int64_t cachet::getGemmStagedPieceBytes(const BlockWeight &w) {
  return w.rowBytes % 16 == 0 ? 16 : 4;
}

/// The mat-muls of `op`'s block (`op` among them) over its x with as many
/// rows of x and weight rows: the siblings that cachet-lower-matvec's
/// fuse-siblings puts into one wgmma GEMM kernel with it, each taking an
/// equal part of a tile's weight rows (where nothing between them writes
/// what they read).
static int64_t countGemmSiblings(Operation *op,
                                 const MatvecOperands &operands) {
  auto rowsOf = [](Value weight) {
    return cast<MemRefType>(weight.getType()).getDimSize(0);
  };
  int64_t count = 0;
  for (Operation &other : *op->getBlock())
    if (std::optional<MatvecOperands> o = getMatvecOperands(&other);
        o && o->batched && o->x == operands.x &&
        o->columns == operands.columns &&
        rowsOf(o->weight) == rowsOf(operands.weight))
      ++count;
  return std::max<int64_t>(count, 1);
}

/// The wgmma GEMM (sm_90a) for the mat-mul `op` with `tileM` rows of x per
/// workgroup, or no config and `why` not.
static MatvecDecision selectWgmma(Operation *op, const MatvecOperands &operands,
                                  int64_t tileM, int64_t sharedBytes,
                                  int64_t computeUnits,
                                  const MatvecConfigOptions &o,
                                  std::string &why) {
  MatvecDecision d;
  // 256 weight rows per tile where the grid still has a workgroup for
  // every compute unit (14336 x 4096 at 512 tokens: 0.102 ms against
  // 0.126 with 128 on an H100, run 120), else 128 (4096 rows: 0.032 ms
  // against 0.045); 4 buffers.
  std::string unused;
  std::optional<BlockWeight> w = getBlockWeight(op, unused);
  // A block weight of 32-value blocks is decoded in the kernel: its bytes
  // (1.06 per value for q8_0) are read instead of a copy's 2, which a
  // kernel of its own would write first (2 more, and 1.06 read).
  int64_t stages = o.gemmStages > 0 ? o.gemmStages : 4;
  std::string notStaged;
  if (w && !o.gemmDecodeBlocks)
    notStaged = "gemm-decode-blocks=false";
  else if (w)
    notStaged = whyNotGemmStagedBlocks(*w, stages);
  bool staged = w && notStaged.empty();
  // With producer warpgroups (384 or 512 threads: 168 or 128 registers
  // each), weight tiles of 128 rows (64 accumulators per thread).
  bool producer = staged && o.gemmDecodeProducers > 0;
  int64_t tileN = o.gemmTileN;
  if (tileN == 0 && producer)
    tileN = 128;
  std::string smallTiles, waves;
  if (tileN == 0) {
    int64_t rows = cast<MemRefType>(operands.weight.getType()).getDimSize(0);
    auto tiles = [&](int64_t m, int64_t n) -> int64_t {
      return llvm::divideCeil(operands.columns, m) * llvm::divideCeil(rows, n);
    };
    // The weight rows per tile (each of `siblings` weights taking an equal
    // part of them, a multiple of 8) from 256 down to 128 whose waves of
    // one workgroup per compute unit take the least time, a tile's time
    // taken as its weight rows + 64 (x's part of each step's copies):
    // 14336 weight rows at 512 tokens take 224 (256 workgroups, 2 waves)
    // rather than 256 (224 workgroups, also 2 waves; 0.094 against 0.102
    // ms on an H100, run 144), and gate / up over the same x 224 (112 of
    // each) rather than 256 (4 waves either way); 4096 rows keep 128 (one
    // wave).
    int64_t siblings =
        o.fuseSiblings && !staged ? countGemmSiblings(op, operands) : 1;
    tileN = computeUnits > 0 && tiles(tileM, 256) >= computeUnits ? 256 : 128;
    if (computeUnits > 0) {
      auto cost = [&](int64_t n) {
        return llvm::divideCeil(tiles(tileM, n / siblings), computeUnits) *
               (n + 64);
      };
      // The widest of the cheapest of the tiles the kernel takes (each
      // thread copying whole pieces of a step's weight rows).
      int64_t best = 0;
      for (int64_t n = 256; n >= 128; n -= 8)
        if (n % (8 * siblings) == 0 &&
            whyNotWgmmaTiles({tileM, n}, 2 * tileM, 32, stages, 0, true, false)
                .empty() &&
            (!best || cost(n) < cost(best)))
          best = n;
      if (best)
        tileN = best;
      int64_t used = tiles(tileM, tileN / siblings);
      if (best && best != 128 && best != 256)
        waves =
            llvm::formatv(
                " ({0} weight rows per tile{1}: {2} workgroups in {3} "
                "wave(s) of one per compute unit, against {4} in {5} "
                "with 256)",
                tileN,
                siblings > 1
                    ? llvm::formatv(", {0} of each of {1} mat-muls over "
                                    "the same x",
                                    tileN / siblings, siblings)
                          .str()
                    : std::string(),
                used, llvm::divideCeil(used, computeUnits),
                tiles(tileM, 256 / siblings),
                llvm::divideCeil(tiles(tileM, 256 / siblings), computeUnits))
                .str();
    }
    // Where 128 x 128 tiles give workgroups to fewer than
    // gemm-fill-eighths of the compute units, 64-row ones: 64 x 128 where
    // that grid reaches them, else 64 x 64 (K/V of Llama-3-8B, 1024 x 4096
    // at 512 tokens: 32 workgroups of 128 x 128 0.028 ms, 64 x 128 0.019,
    // 64 x 64 0.016 on an H100; 4096 rows keep 128 x 128: 0.033 against
    // 0.033 and 0.056; run 138).
    int64_t enough = llvm::divideCeil(computeUnits * o.gemmFillEighths, 8);
    int64_t before = tiles(128, 128);
    if (computeUnits > 0 && o.gemmTileM == 0 && !staged && tileM == 128 &&
        tileN == 128 && before < enough && whyNotGemm(op, 64, 64).empty()) {
      tileM = 64;
      tileN = tiles(64, 128) >= enough && whyNotGemm(op, 128, 64).empty() ? 128
                                                                          : 64;
      smallTiles = llvm::formatv(" ({0} workgroups of 128 x 128 would leave "
                                 "{1} of the {2} compute units idle; "
                                 "gemm-fill-eighths {3})",
                                 before, computeUnits - before, computeUnits,
                                 o.gemmFillEighths)
                       .str();
    }
  }
  if (std::string bad = whyNotGemm(op, tileN, 64); !bad.empty()) {
    why = bad;
    return d;
  }
  SmallVector<int64_t> tile{tileM, tileN};
  int64_t workgroup = 2 * tileM + (producer ? 128 * o.gemmDecodeProducers : 0);
  if (std::string bad =
          whyNotWgmmaTiles(tile, workgroup, 32, stages, 0, true, staged);
      !bad.empty()) {
    why = bad;
    return d;
  }
  // 16-byte pieces where the rows keep them aligned (whole sectors), else
  // 4-byte ones.
  int64_t pieceBytes = staged ? getGemmStagedPieceBytes(*w) : 0;
  int64_t stepBytes = staged ? getGemmStagedStepBytes(*w) : 0;
  int64_t stagedRowBytes =
      staged ? getStagedBlockPitch(stepBytes, pieceBytes) : 0;
  while (staged && o.gemmStages == 0 && stages > 3 && sharedBytes > 0 &&
         getWgmmaGemmBytes(tileM, tileN, stages, stagedRowBytes) > sharedBytes)
    --stages;
  int64_t bytes = getWgmmaGemmBytes(tileM, tileN, stages, stagedRowBytes);
  if (sharedBytes > 0 && bytes > sharedBytes) {
    why = llvm::formatv("its buffers take {0} bytes of workgroup memory, "
                        "more than the profile's {1}",
                        bytes, sharedBytes)
              .str();
    return d;
  }
  MLIRContext *ctx = op->getContext();
  d.config = KernelConfigAttr::get(
      ctx, KernelVariant::GemmWgmma, tile, workgroup, 32, 1, 1, stages, 1, 0,
      {}, 0, {}, /*dynamicShared=*/true, false, false, false,
      /*fuseSiblings=*/o.fuseSiblings && !staged,
      /*fuseEpilogues=*/o.fuseEpilogues, /*loadBytes=*/pieceBytes);
  auto elementType = cast<MemRefType>(operands.x.getType()).getElementType();
  std::string weight;
  if (staged)
    weight = llvm::formatv(
                 "; the {0} weight's blocks decoded in the kernel: "
                 "each step's {1} bytes per row copied by {2}-byte "
                 "cp.async with x's ({3} buffered), decoded in "
                 "workgroup memory into a double-buffered {4} tile "
                 "(no dequantized copy){5}",
                 w->block.getFormatName(), stepBytes, pieceBytes,
                 stagedRowBytes, elementType.isBF16() ? "bf16" : "f16",
                 producer ? llvm::formatv(" by {0} producer warpgroup(s) ({1} "
                                          "more threads), named barriers "
                                          "handing the tiles over",
                                          o.gemmDecodeProducers,
                                          128 * o.gemmDecodeProducers)
                                .str()
                          : std::string())
                 .str();
  else if (w)
    weight = "; the " + w->block.getFormatName().str() +
             " weight dequantized by a kernel of its own first (not decoded "
             "in the GEMM: " +
             notStaged + ")";
  d.remark =
      llvm::formatv(
          "wgmma GEMM for a mat-mul of {0} rows of x: workgroup tiles of {1} "
          "rows of x by {2} weight rows, {3} warpgroups, steps of 64 columns "
          "copied asynchronously into {4} buffers of dynamic workgroup "
          "memory ({5} bytes) in the 128-byte swizzle, wgmma.mma_async "
          "m64n{2}k16 on {6} with f32 accumulators{7}{8}",
          operands.columns, tileM, tileN, tileM / 64, stages, bytes,
          elementType.isBF16() ? "bf16" : "f16", weight, smallTiles + waves)
          .str();
  return d;
}

/// The tiled GEMM (gemm_tiled: f32 fused multiply-adds, for targets without
/// matrix instructions) for the mat-mul `op`, or no config with `whyNot`.
static MatvecDecision selectTiledGemm(Operation *op,
                                      const MatvecOperands &operands,
                                      DeviceProfileAttr profile,
                                      const MatvecConfigOptions &o,
                                      std::string &whyNot) {
  MatvecDecision d;
  auto w = cast<MemRefType>(operands.weight.getType());
  int64_t rowsM = operands.columns, rowsN = w.getDimSize(0),
          columns = w.getDimSize(1);
  int64_t units =
      profile ? static_cast<int64_t>(profile.getComputeUnits()) : int64_t(0);
  int64_t threads = o.gemmSubgroups > 0 ? 32 * o.gemmSubgroups : 256;
  // 128 x 128 tiles (8 x 8 sums per thread of 256) where their grid gives
  // workgroups to gemm-fill-eighths of the compute units; else 64 x 64 (4 x
  // 4), four times the workgroups. On an H100 through Vulkan (512 tokens,
  // docs/BENCHMARKS.md run 159) 128 x 128 took 4096x4096 from 0.72 to
  // 0.49 ms at 128 workgroups on 132 SMs, and 64 x 64 1024x4096 from 0.48
  // to 0.21 ms at 32.
  int64_t tileM = o.gemmTileM, tileN = o.gemmTileN;
  std::string tileFrom = "gemm-tile-m / gemm-tile-n";
  if (tileM <= 0 && tileN <= 0) {
    int64_t big =
        llvm::divideCeil(rowsM, int64_t(128)) * llvm::divideCeil(rowsN, 128);
    bool large = units == 0 || 8 * big >= units * o.gemmFillEighths;
    tileM = tileN = large ? 128 : 64;
    tileFrom = units == 0
                   ? std::string("no profile")
                   : llvm::formatv("{0} workgroups of 128 x 128 {1} {2} / 8 "
                                   "of the profile's {3} compute units "
                                   "(gemm-fill-eighths)",
                                   big, large ? "reach" : "would not reach",
                                   o.gemmFillEighths, units)
                         .str();
  } else {
    tileM = tileM > 0 ? tileM : 128;
    tileN = tileN > 0 ? tileN : 128;
  }
  // Steps of 16 columns, 32 for 64 x 64 tiles (their 16 products per
  // column and thread take fewer barriers: 4096x4096 0.72 -> 0.68 ms,
  // 1024x4096 0.21 -> 0.19, run 159; 128 x 128 tiles were 7% slower).
  int64_t step = o.gemmStep > 0                                  ? o.gemmStep
                 : tileM * tileN <= 64 * 64 && columns % 32 == 0 ? 32
                 : columns % 16 == 0                             ? 16
                                                                 : 8;
  int64_t perThread = tileM * tileN / std::max<int64_t>(threads, 1);
  int64_t threadColumns = tileN >= 128 && perThread >= 32 ? 8 : 4;
  if (std::string why = whyNotGemm(op, tileN, step); !why.empty()) {
    whyNot = why;
    return d;
  }
  if (std::string why =
          whyNotTiledGemmTiles({tileM, tileN, step}, threads, threadColumns);
      !why.empty()) {
    whyNot = why;
    return d;
  }
  int64_t sharedBytes =
      profile ? static_cast<int64_t>(profile.getSharedMemoryBytes()) : 0;
  if (int64_t bytes = 4 * step * (tileM + tileN);
      sharedBytes > 0 && bytes > sharedBytes) {
    whyNot = llvm::formatv("a step's f32 tiles take {0} bytes of workgroup "
                           "memory, more than the profile's {1}",
                           bytes, sharedBytes)
                 .str();
    return d;
  }
  int64_t threadRows = perThread / threadColumns;
  d.config = KernelConfigAttr::get(
      op->getContext(), KernelVariant::GemmTiled, {tileM, tileN, step}, threads,
      /*subgroup=*/0, threadColumns, 1, 1, 1, 0, {}, 0, {}, false, false, false,
      false, /*fuseSiblings=*/false,
      /*fuseEpilogues=*/o.fuseEpilogues, /*loadBytes=*/0);
  std::string unused;
  std::optional<BlockWeight> blocks = getBlockWeight(op, unused);
  auto elementType = cast<MemRefType>(operands.x.getType()).getElementType();
  d.remark =
      llvm::formatv(
          "tiled GEMM for a mat-mul of {0} rows of x: workgroup tiles of {1} "
          "rows of x by {2} weight rows ({3}), {4} threads each summing {5} "
          "rows of x by {6} weight rows with f32 fused multiply-adds, steps "
          "of {7} columns of {8} read in 16-byte loads and staged in "
          "workgroup memory as f32, the next step's loads in flight while "
          "one computes{9}",
          rowsM, tileM, tileN, tileFrom, threads, threadRows, threadColumns,
          step, elementType.isBF16() ? "bf16" : "f16",
          blocks ? "; the " + blocks->block.getFormatName().str() +
                       " weight dequantized by a kernel of its own first"
                 : std::string())
          .str();
  return d;
}

/// The mma GEMM (gemm_mma: 16x16x16 f16 cooperative matrices through
/// gpu.subgroup_mma) for the f16 mat-mul `op`, or no config with `whyNot`.
static MatvecDecision selectMmaGemm(Operation *op,
                                    const MatvecOperands &operands,
                                    DeviceProfileAttr profile,
                                    const MatvecConfigOptions &o,
                                    std::string &whyNot) {
  MatvecDecision d;
  if (!o.mma) {
    whyNot = "the target does not lower gpu.subgroup_mma (allow-mma off)";
    return d;
  }
  if (!hasCoopMatrix(profile, "16x16x16:f16->f32")) {
    whyNot = "the profile has no 16x16x16:f16->f32 cooperative matrix";
    return d;
  }
  auto x = cast<MemRefType>(operands.x.getType());
  auto w = cast<MemRefType>(operands.weight.getType());
  if (!x.getElementType().isF16() || !w.getElementType().isF16()) {
    whyNot = "x and the weight are not both f16 (the cooperative matrices "
             "are f16 ones)";
    return d;
  }
  int64_t subgroup = profile.getSubgroupSize();
  if (subgroup <= 0) {
    whyNot = "the profile gives no subgroup size";
    return d;
  }
  // 64 x 64 tiles of 4 subgroups, each 32 x 32 (2 x 2 fragments), steps of
  // 32 columns: the tiled GEMM's smaller tiles, whose workgroup memory
  // (27 KiB with the sums) leaves room for two workgroups per compute unit
  // in 64 KiB. Not measured on a GPU yet.
  int64_t tileM = o.gemmTileM > 0 ? o.gemmTileM : 64;
  int64_t tileN = o.gemmTileN > 0 ? o.gemmTileN : 64;
  int64_t columns = w.getDimSize(1);
  int64_t step = o.gemmStep > 0 ? o.gemmStep : columns % 32 == 0 ? 32 : 16;
  int64_t threads = tileM * tileN / 1024 * subgroup;
  int64_t vectorWidth = 4, padBytes = 16;
  if (std::string why = whyNotGemm(op, tileN, step); !why.empty()) {
    whyNot = why;
    return d;
  }
  if (std::string why = whyNotMmaGemmTiles({tileM, tileN, step}, threads,
                                           subgroup, vectorWidth, padBytes);
      !why.empty()) {
    whyNot = why;
    return d;
  }
  int64_t bytes = getMmaGemmBytes(tileM, tileN, step, padBytes);
  int64_t sharedBytes = static_cast<int64_t>(profile.getSharedMemoryBytes());
  if (sharedBytes > 0 && bytes > sharedBytes) {
    whyNot = llvm::formatv("its tiles take {0} bytes of workgroup memory, "
                           "more than the profile's {1}",
                           bytes, sharedBytes)
                 .str();
    return d;
  }
  d.config = KernelConfigAttr::get(
      op->getContext(), KernelVariant::GemmMma, {tileM, tileN, step}, threads,
      subgroup, vectorWidth, 1, 1, 1, padBytes, {}, 0, {}, false, false, false,
      false, /*fuseSiblings=*/false,
      /*fuseEpilogues=*/o.fuseEpilogues, /*loadBytes=*/0);
  std::string unused;
  std::optional<BlockWeight> blocks = getBlockWeight(op, unused);
  d.remark =
      llvm::formatv(
          "mma GEMM for a mat-mul of {0} rows of x: workgroup tiles of {1} "
          "rows of x by {2} weight rows, {3} subgroups of {4} lanes each "
          "summing 2 x 2 fragments of 16x16x16 f16 cooperative matrices "
          "(gpu.subgroup_mma, f32 accumulators), steps of {5} columns "
          "staged in workgroup memory ({6} bytes with the f32 sums), the "
          "next step's loads in flight while one computes{7}",
          operands.columns, tileM, tileN, threads / subgroup, subgroup, step,
          bytes,
          blocks ? "; the " + blocks->block.getFormatName().str() +
                       " weight dequantized by a kernel of its own first"
                 : std::string())
          .str();
  return d;
}

MatvecDecision cachet::selectMatvecConfig(Operation *op,
                                          DeviceProfileAttr profile,
                                          const MatvecConfigOptions &o) {
  MatvecDecision d;
  std::optional<MatvecOperands> operands = getMatvecOperands(op);
  // On tensors the weight's layout (a padded pitch) is not known yet.
  if (!operands || !isa<MemRefType>(operands->weight.getType()))
    return d;
  MLIRContext *ctx = op->getContext();
  auto generic = [&](const Twine &why) {
    d.config = KernelConfigAttr::get(
        ctx, KernelVariant::MatvecGeneric, {}, 0, 0, 1, 1, 1, 1, 0, {}, 0,
        /*resident=*/{}, false, false, false, false, false, false,
        /*loadBytes=*/0);
    d.remark = ("generic kernel: " + why).str();
    return d;
  };
  if (o.kernel == MatvecKernelChoice::Generic)
    return generic("matvec-kernel=generic");
  // A mat-mul's batch: each decoded weight slice (each load) serves its M
  // rows of x, one accumulator each, up to small-batch of them.
  std::string batch;
  if (operands->batched) {
    if (ShapedType::isDynamic(operands->columns))
      return generic("a mat-mul with a dynamic number of rows of x");
    if (operands->columns > o.smallBatch) {
      std::string why = llvm::formatv("a mat-mul of {0} rows of x, more "
                                      "than small-batch ({1})",
                                      operands->columns, o.smallBatch)
                            .str();
      if (!o.gemm)
        return generic(why);
      if (!o.mmaSync) {
        std::string notTiled;
        MatvecDecision td =
            selectTiledGemm(op, *operands, profile, o, notTiled);
        if (td.config && o.gemmMma) {
          // The mma GEMM, the tiled GEMM beside it where the device may
          // lack cooperative matrices.
          std::string notMma;
          MatvecDecision md = selectMmaGemm(op, *operands, profile, o, notMma);
          if (!md.config) {
            td.remark += "; not the mma GEMM: " + notMma;
            return td;
          }
          if (o.mmaFallback) {
            md.fallback = td.config;
            md.remark += "; where the device does not run 16x16x16 f16 "
                         "cooperative matrices (checked at run time), the "
                         "fallback: " +
                         td.remark;
          }
          return md;
        }
        if (td.config)
          return td;
        return generic(why + "; not the tiled GEMM: " + notTiled);
      }
      // A workgroup tile of 128 (64 for at most 64) rows of x by 128
      // weight rows, 8 (4) subgroups of 64 x 32, by default.
      int64_t tileM = o.gemmTileM > 0           ? o.gemmTileM
                      : operands->columns <= 64 ? 64
                                                : 128;
      int64_t sharedBytes =
          profile ? static_cast<int64_t>(profile.getSharedMemoryBytes()) : 0;
      std::string notWgmma;
      if (o.wgmma && o.gemmWgmma) {
        MatvecDecision wd = selectWgmma(
            op, *operands, tileM, sharedBytes,
            profile ? static_cast<int64_t>(profile.getComputeUnits()) : 0, o,
            notWgmma);
        if (wd.config)
          return wd;
      }
      // By default steps of 64 columns, 3 buffers (fewer where the
      // profile's workgroup memory holds fewer), and 128 x 128 tiles of 4
      // subgroups of 64 x 64 (64 x 128 ones of 4 of 64 x 32): 1.2-1.8x
      // the 32-column double-buffered 8-subgroup kernel on an H100 (run
      // 120).
      int64_t tileN = o.gemmTileN > 0 ? o.gemmTileN : 128;
      int64_t columns =
          cast<MemRefType>(operands->weight.getType()).getDimSize(1);
      int64_t step = o.gemmStep > 0 ? o.gemmStep : columns % 64 == 0 ? 64 : 32;
      int64_t warps = o.gemmSubgroups > 0 ? o.gemmSubgroups
                      : tileM == 64       ? (tileN / 32)
                                          : (tileM / 64) * (tileN / 64);
      if (std::string gemmWhy = whyNotGemm(op, tileN, step); !gemmWhy.empty())
        return generic(why + "; not the mma-sync GEMM: " + gemmWhy);
      int64_t padBytes = 16;
      int64_t stages = o.gemmStages > 0 ? o.gemmStages : 3;
      auto bytesOf = [&](int64_t s) {
        return s * (tileM + tileN) * (2 * step + padBytes);
      };
      while (o.gemmStages == 0 && stages > 2 && sharedBytes > 0 &&
             bytesOf(stages) > sharedBytes)
        --stages;
      int64_t bytes = bytesOf(stages);
      if (sharedBytes > 0 && bytes > sharedBytes)
        return generic(why + llvm::formatv("; not the mma-sync GEMM: its "
                                           "buffers take {0} bytes of "
                                           "workgroup memory, more than the "
                                           "profile's {1}",
                                           bytes, sharedBytes)
                                 .str());
      bool dynamicShared = bytes > 48 * 1024;
      SmallVector<int64_t> tile{tileM, tileN};
      if (step != 32)
        tile.push_back(step);
      // Options that make no kernel (a subgroup count the tile does not
      // divide among) leave the generic one, with the reason.
      if (std::string bad = whyNotGemmTiles(tile, 32 * warps, 32, stages,
                                            padBytes, dynamicShared);
          !bad.empty())
        return generic(why + "; not the mma-sync GEMM: " + bad);
      d.config = KernelConfigAttr::get(
          ctx, KernelVariant::GemmMmaSync, tile, 32 * warps, 32, 1, 1, stages,
          1, padBytes, {}, 0, {}, dynamicShared, false, false, false,
          /*fuseSiblings=*/false, /*fuseEpilogues=*/o.fuseEpilogues,
          /*loadBytes=*/0);
      std::string unused;
      std::optional<BlockWeight> w = getBlockWeight(op, unused);
      auto elementType =
          cast<MemRefType>(operands->x.getType()).getElementType();
      d.remark =
          llvm::formatv(
              "mma-sync GEMM for a mat-mul of {0} rows of x: workgroup tiles "
              "of {1} rows of x by {2} weight rows, {3} subgroups of 64 x {6} "
              "each, steps of {7} columns copied asynchronously into {8} "
              "buffers of workgroup memory{9}, ldmatrix operands, m16n8k16 "
              "mma.sync on {4} with f32 accumulators{5}{10}",
              operands->columns, tileM, tileN, warps,
              elementType.isBF16() ? "bf16" : "f16",
              w ? "; the " + w->block.getFormatName().str() +
                      " weight dequantized by a kernel of its own first"
                : std::string(),
              tileM * tileN / (64 * warps), step, stages,
              dynamicShared
                  ? llvm::formatv(" ({0} bytes, dynamic)", bytes).str()
                  : std::string(),
              notWgmma.empty() ? std::string()
                               : "; not the wgmma GEMM: " + notWgmma)
              .str();
      return d;
    }
    batch = operands->columns == 1
                ? std::string("; a mat-mul of one row of x (a mat-vec)")
                : llvm::formatv("; a small-batch mat-mul: each weight slice "
                                "multiplied with the {0} rows of x",
                                operands->columns)
                      .str();
    // On mma.sync (NVVM): a subgroup's 16 weight rows decoded to f16
    // pairs, x's rows read as f16, f32 accumulators: no conversions to
    // f32 (the FMA kernel's bound, run 100).
    if (o.mmaSync && o.smallBatchMma) {
      std::string unused;
      std::optional<BlockWeight> w = getBlockWeight(op, unused);
      std::string why = whyNotMmaMatvec(op, w ? &*w : nullptr);
      // Where it pays on the H200 (run 101): above 4 rows of x for every
      // format (1.11-2.13x the FMA kernel), at 4 or fewer for q4_0 and
      // q4_K blocks (1.02-1.57x; q8_0 and q6_K 0.83-0.90x there).
      // bf16 blocks: bf16-block-mma decides at any number of rows (a bf16
      // small-batch mat-mul on mma.sync is not measured against the FMA
      // kernel yet; mat-vecs were, run 122).
      bool bf16 = cast<MemRefType>(operands->weight.getType())
                      .getElementType()
                      .isBF16();
      if (why.empty() && bf16 && !(w && o.bf16BlockMma))
        why = w ? "bf16 blocks take it with bf16-block-mma only"
                : "a bf16 weight keeps the FMA kernel (the mma-sync kernel "
                  "is not measured against it for bf16)";
      if (why.empty() && !bf16 && operands->columns < o.smallBatchMmaRows &&
          !(w && isa<Q4_0Type, Q4_KType>(w->block)))
        why = llvm::formatv("at {0} rows of x (fewer than "
                            "small-batch-mma-rows, {1}) it pays for q4_0 and "
                            "q4_K blocks only (run 101)",
                            operands->columns, o.smallBatchMmaRows)
                  .str();
      if (why.empty()) {
        d = getMmaDecision(op, *operands, w ? &*w : nullptr, o);
        return d;
      }
      batch += "; not on mma.sync: " + why;
    }
  }
  // A mat-vec over bf16 blocks on mma.sync (NVVM): the FMA kernel
  // widens each decoded value and its x to f32 (two more instructions per
  // value); mma.sync takes the bf16 pairs as they are rounded.
  // By default q4_0 blocks only: on an H100 (run 122) their mat-vecs ran
  // 1.08-1.18x faster on mma.sync, q8_0's 0.89-0.92x.
  std::string mmaNote;
  if (!operands->batched && o.mmaSync &&
      cast<MemRefType>(operands->weight.getType()).getElementType().isBF16()) {
    std::string unused;
    std::optional<BlockWeight> w = getBlockWeight(op, unused);
    if (w && (o.bf16BlockMma || isa<Q4_0Type>(w->block))) {
      std::string why = whyNotMmaMatvec(op, &*w);
      if (why.empty())
        return getMmaDecision(op, *operands, &*w, o);
      mmaNote = "; not on mma.sync: " + why;
    }
  }
  // The subgroup size: the option, else the profile's, else 32.
  int64_t lanes = o.subgroupSize;
  if (lanes == 0)
    lanes = profile && profile.getSubgroupSize() > 0
                ? static_cast<int64_t>(profile.getSubgroupSize())
                : 32;
  int64_t paired =
      o.pairedLoadsPerLane > 0 ? o.pairedLoadsPerLane : o.loadsPerLane;
  int64_t pairedPerCU =
      o.pairedBlocksPerCU > 0 ? o.pairedBlocksPerCU : o.blocksPerCU;
  // A mat-mul's loads in flight each take a load of every row of x into
  // registers: at most small-batch-loads (16) / M of them (on the H200 two
  // at M = 8 ran the bf16 4096x14336 mat-mul in 73 us instead of 114 at
  // four, q6_K in 66 instead of 100; four stayed best at M = 4: run 100).
  int64_t loads = o.loadsPerLane;
  auto capLoads = [&] {
    if (!operands->batched || o.smallBatchLoads == 0)
      return;
    int64_t cap = std::max<int64_t>(1, o.smallBatchLoads / operands->columns);
    loads = std::min(loads, cap);
    paired = std::min(paired, cap);
  };
  // Block weights: the blocks read and decoded in the kernel, never
  // materialized; else (a materialized copy) the float kernel on it.
  std::string blockReason;
  if (std::optional<BlockWeight> w = getBlockWeight(op, blockReason)) {
    if (o.blockPairedLoadsPerLane > 0)
      paired = o.blockPairedLoadsPerLane;
    capLoads();
    // Split weights' values are aligned: their slices take wider loads. A
    // super-block's slice shares its scale's decoding more widely.
    int64_t slice = o.blockSlice;
    if (w->scales && o.splitBlockSlice > 0)
      slice = o.splitBlockSlice;
    if (w->block.getBlockValues() > 32 && o.superBlockSlice > 0)
      slice = o.superBlockSlice;
    if (std::string why =
            whyNotBlockMatvec(op, *w, lanes, slice, o.bf16Vectors);
        !why.empty())
      return generic(why + "; the " + w->block.getFormatName().str() +
                     " weight is dequantized by a kernel of its own");
    // stage-x: x quantized once per block to 8-bit blocks in workgroup
    // memory, the products 4-way integer dot products.
    std::string int8Reason = o.stageX ? whyNotInt8Dot(op, *w, slice) : "";
    bool int8 = o.stageX && int8Reason.empty();
    d.config = KernelConfigAttr::get(
        ctx, KernelVariant::MatvecSubgroup,
        {o.rowsPerBlock, o.blockRowsPerSubgroup}, lanes * o.rowsPerBlock, lanes,
        slice, 1, 1, 1, 0, {loads, paired}, 0, {o.blocksPerCU, pairedPerCU},
        false, false, false, /*stageX=*/int8, o.fuseSiblings, o.fuseEpilogues,
        /*loadBytes=*/0);
    d.remark = llvm::formatv("subgroup kernel on {0} blocks decoded in "
                             "registers (never materialized): {1} lanes per "
                             "row, {2} subgroups per block, {3} (paired: {4}) "
                             "slices of {5} values per lane in flight, {6} "
                             "rows per subgroup",
                             !w->scales ? w->block.getFormatName()
                             : isa<Q4_0Type>(w->block)
                                 ? "split q4_0 (i4 values two per byte, f16 "
                                   "scales)"
                                 : "split q8_0 (i8 values, f16 scales)",
                             lanes, o.rowsPerBlock, loads, paired, slice,
                             o.blockRowsPerSubgroup)
                   .str() +
               batch + mmaNote;
    if (int8)
      d.remark += "; x quantized once per block to 8-bit blocks in workgroup "
                  "memory, 4-way integer dot products (stage-x)";
    else if (o.stageX)
      d.remark += "; stage-x not taken: " + int8Reason;
    return d;
  }
  if (o.kernel == MatvecKernelChoice::Blocks)
    return generic(blockReason.empty()
                       ? "matvec-kernel=blocks keeps float weights on the "
                         "generic kernel"
                       : blockReason + ": dequantized by a kernel of its "
                                       "own, and matvec-kernel=blocks keeps "
                                       "the mat-vec over the copy on the "
                                       "generic kernel");
  if (std::string why =
          whyNotSubgroupMatvec(op, lanes, o.loadBytes, o.bf16Vectors);
      !why.empty())
    return generic(why);
  capLoads();
  auto xType = cast<MemRefType>(operands->x.getType());
  int64_t elementBytes = xType.getElementTypeBitWidth() / 8;
  int64_t xBytes = xType.getNumElements() * elementBytes;
  int64_t sharedBytes =
      profile ? static_cast<int64_t>(profile.getSharedMemoryBytes()) : 0;
  // stage-x: x in workgroup memory where it fits a block's static memory
  // (a mat-vec's x).
  bool staged = o.stageX && !operands->batched &&
                xBytes <= kMatvecStaticSharedBytes &&
                (sharedBytes <= 0 || xBytes <= sharedBytes);
  d.config = KernelConfigAttr::get(
      ctx, KernelVariant::MatvecSubgroup, {o.rowsPerBlock, o.rowsPerSubgroup},
      lanes * o.rowsPerBlock, lanes, o.loadBytes / elementBytes, 1, 1, 1, 0,
      {loads, paired}, 0, {o.blocksPerCU, pairedPerCU}, false, false, false,
      staged, o.fuseSiblings, o.fuseEpilogues, /*loadBytes=*/0);
  d.remark = llvm::formatv("subgroup kernel: {0} lanes per row, {1} subgroups "
                           "per block, {2} (paired: {3}) {4}-byte loads per "
                           "lane in flight",
                           lanes, o.rowsPerBlock, loads, paired, o.loadBytes)
                 .str() +
             batch;
  if (!blockReason.empty())
    d.remark += "; on the dequantized copy: " + blockReason;
  if (staged)
    d.remark += "; x staged in workgroup memory once per block";
  else if (o.stageX && operands->batched)
    d.remark += "; x not staged: stage-x takes a mat-vec's x";
  else if (o.stageX)
    d.remark += llvm::formatv("; x ({0} bytes) not staged: more than the "
                              "static workgroup memory of a block",
                              xBytes)
                    .str();
  return d;
}

std::string cachet::whyNotGemm(Operation *op, int64_t tileN, int64_t step) {
  std::optional<MatvecOperands> operands = getMatvecOperands(op);
  if (!operands || !operands->batched)
    return "not a linalg.matmul reading its weight transposed";
  if (std::string why = whyNotOperands(op, /*bf16Vectors=*/true); !why.empty())
    return why;
  auto x = cast<MemRefType>(operands->x.getType());
  auto w = cast<MemRefType>(operands->weight.getType());
  auto y = cast<MemRefType>(operands->y.getType());
  if (x.getElementType().isF32())
    return "x and the weight are not both f16 or both bf16";
  int64_t rows = w.getDimSize(0), cols = w.getDimSize(1);
  if (step <= 0 || cols % step != 0)
    return llvm::formatv("{0} columns are not a multiple of {1} (a step)", cols,
                         step)
        .str();
  if (rows % 2 != 0)
    return llvm::formatv("{0} weight rows are odd (pairs of results are "
                         "stored together)",
                         rows)
        .str();
  if (tileN <= 0 || llvm::divideCeil(rows, tileN) > 65535)
    return llvm::formatv("{0} weight rows need more than 65535 workgroups "
                         "of {1} (grid y)",
                         rows, tileN)
        .str();
  // 16-byte asynchronous copies of x's and the weight's rows, 8-byte
  // stores of y's pairs.
  auto aligned = [](MemRefType type, int64_t elements) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return false;
    return strides[1] == 1 && !ShapedType::isDynamic(strides[0]) &&
           strides[0] % elements == 0 && !ShapedType::isDynamic(offset) &&
           offset % elements == 0;
  };
  if (!aligned(x, 8) || !aligned(w, 8))
    return "x's or the weight's rows are not contiguous and 16-byte aligned";
  if (!aligned(y, 2))
    return "the result's rows are not contiguous and 8-byte aligned";
  return "";
}

std::string cachet::whyNotMatvecConfig(Operation *op, KernelConfigAttr config) {
  if (config.isAttention())
    return "the variant is not a mat-vec kernel";
  if (config.getVariant() == KernelVariant::MatvecGeneric)
    return "";
  std::optional<MatvecOperands> operands = getMatvecOperands(op);
  if (!operands)
    return "not a linalg.matvec or a linalg.matmul reading its weight "
           "transposed";
  if (config.getVariant() == KernelVariant::GemmMmaSync)
    return whyNotGemm(op, config.getTile()[1],
                      config.getTile().size() > 2 ? config.getTile()[2] : 32);
  if (config.getVariant() == KernelVariant::GemmTiled)
    return whyNotGemm(op, config.getTile()[1], config.getTile()[2]);
  if (config.getVariant() == KernelVariant::GemmMma) {
    if (std::string why =
            whyNotGemm(op, config.getTile()[1], config.getTile()[2]);
        !why.empty())
      return why;
    if (!cast<MemRefType>(operands->x.getType()).getElementType().isF16())
      return "x and the weight are not both f16 (the cooperative matrices "
             "are f16 ones)";
    return "";
  }
  if (config.getVariant() == KernelVariant::GemmWgmma) {
    if (std::string why = whyNotGemm(op, config.getTile()[1], 64);
        !why.empty() || config.getLoadBytes() == 0)
      return why;
    std::string reason;
    std::optional<BlockWeight> w = getBlockWeight(op, reason);
    if (!w)
      return "'load_bytes' decodes a block weight in the kernel, and the "
             "weight is not one" +
             (reason.empty() ? std::string() : ": " + reason);
    if (std::string why = whyNotGemmStagedBlocks(*w, config.getStages());
        !why.empty())
      return "'load_bytes' cannot decode the weight in the kernel: " + why;
    if (config.getLoadBytes() > w->rowBytes ||
        w->rowBytes % config.getLoadBytes() != 0)
      return llvm::formatv("'load_bytes' {0} does not divide the weight's "
                           "rows of {1} bytes",
                           config.getLoadBytes(), w->rowBytes)
          .str();
    return "";
  }
  if (config.getVariant() == KernelVariant::MatvecMmaSync) {
    if (config.getTile().size() != 2 || config.getTile()[1] != 16)
      return "the mma-sync kernel's subgroups take 16 rows ('tile' [n, 16])";
    if (config.getSubgroup() != 32)
      return "the mma-sync kernel takes subgroups of 32 lanes";
    if (config.getLoads().size() != 2 || config.getLoads()[0] < 1)
      return "the mma-sync kernel's 'loads' are its 128-column steps in "
             "flight per subgroup ([n, n], n >= 1)";
    if (auto a = dyn_cast<MemRefType>(operands->weight.getType());
        a && a.hasStaticShape() && config.getLoads()[0] > 1 &&
        (a.getDimSize(1) / 128) %
                (config.getTile()[0] * config.getLoads()[0]) !=
            0)
      return llvm::formatv("{0} steps of 128 columns do not divide among {1} "
                           "subgroups {2} at a time",
                           a.getDimSize(1) / 128, config.getTile()[0],
                           config.getLoads()[0])
          .str();
    std::string unused;
    std::optional<BlockWeight> w = getBlockWeight(op, unused);
    return whyNotMmaMatvec(op, w ? &*w : nullptr);
  }
  auto a = dyn_cast<MemRefType>(operands->weight.getType());
  if (!a)
    return "not on memrefs (run after bufferization)";
  int64_t elementBytes = a.getElementTypeBitWidth() / 8;
  if (config.getSubgroup() <= 0)
    return "the config names no subgroup size";
  if (config.getLoads().size() != 2 || config.getLoads()[0] <= 0 ||
      config.getLoads()[1] <= 0)
    return "'loads' must be [alone, paired], both positive";
  if (config.getResident().size() != 2)
    return "'resident' must be [alone, paired] blocks per compute unit";
  if (config.getStageX() && operands->batched)
    return "stage_x takes a mat-vec's x, not a mat-mul's rows of x";
  std::string blockReason;
  if (std::optional<BlockWeight> w = getBlockWeight(op, blockReason)) {
    if (config.getStageX())
      if (std::string why = whyNotInt8Dot(op, *w, config.getVectorWidth());
          !why.empty())
        return "stage_x (x quantized to 8-bit blocks): " + why;
    return whyNotBlockMatvec(op, *w, config.getSubgroup(),
                             config.getVectorWidth(), /*bf16Vectors=*/true);
  }
  return whyNotSubgroupMatvec(op, config.getSubgroup(),
                              config.getVectorWidth() * elementBytes,
                              /*bf16Vectors=*/true);
}
