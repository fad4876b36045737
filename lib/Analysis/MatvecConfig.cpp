//===- MatvecConfig.cpp - which mat-vec kernel, which parameters ----------===//

#include "cachet/Analysis/MatvecConfig.h"

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
  if (o.blocksPerCU < 0)
    return bad("blocks-per-cu", o.blocksPerCU, "0 (one block a tile) or more");
  if (o.pairedBlocksPerCU < 0)
    return bad("paired-blocks-per-cu", o.pairedBlocksPerCU,
               "0 (blocks-per-cu) or more");
  return "";
}

std::string cachet::whyNotSubgroupMatvec(linalg::MatvecOp op, int64_t lanes,
                                         int64_t loadBytes, bool bf16Vectors) {
  auto a = dyn_cast<MemRefType>(op.getInputs()[0].getType());
  auto x = dyn_cast<MemRefType>(op.getInputs()[1].getType());
  auto y = dyn_cast<MemRefType>(op.getOutputs()[0].getType());
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

MatvecDecision cachet::selectMatvecConfig(linalg::MatvecOp op,
                                          DeviceProfileAttr profile,
                                          const MatvecConfigOptions &o) {
  MatvecDecision d;
  // On tensors the weight's layout (a padded pitch) is not known yet.
  if (!isa<MemRefType>(op.getInputs()[0].getType()))
    return d;
  MLIRContext *ctx = op.getContext();
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
  // The subgroup size: the option, else the profile's, else 32.
  int64_t lanes = o.subgroupSize;
  if (lanes == 0)
    lanes = profile && profile.getSubgroupSize() > 0
                ? static_cast<int64_t>(profile.getSubgroupSize())
                : 32;
  if (std::string why =
          whyNotSubgroupMatvec(op, lanes, o.loadBytes, o.bf16Vectors);
      !why.empty())
    return generic(why);
  auto xType = cast<MemRefType>(op.getInputs()[1].getType());
  int64_t elementBytes = xType.getElementTypeBitWidth() / 8;
  int64_t xBytes = xType.getNumElements() * elementBytes;
  int64_t sharedBytes =
      profile ? static_cast<int64_t>(profile.getSharedMemoryBytes()) : 0;
  // stage-x: x in workgroup memory where it fits a block's static memory.
  bool staged = o.stageX && xBytes <= kMatvecStaticSharedBytes &&
                (sharedBytes <= 0 || xBytes <= sharedBytes);
  int64_t paired =
      o.pairedLoadsPerLane > 0 ? o.pairedLoadsPerLane : o.loadsPerLane;
  int64_t pairedPerCU =
      o.pairedBlocksPerCU > 0 ? o.pairedBlocksPerCU : o.blocksPerCU;
  d.config = KernelConfigAttr::get(
      ctx, KernelVariant::MatvecSubgroup, {o.rowsPerBlock, o.rowsPerSubgroup},
      lanes * o.rowsPerBlock, lanes, o.loadBytes / elementBytes, 1, 1, 1, 0,
      {o.loadsPerLane, paired}, 0, {o.blocksPerCU, pairedPerCU}, false, false,
      false, staged, o.fuseSiblings, o.fuseEpilogues, /*loadBytes=*/0);
  d.remark =
      llvm::formatv("subgroup kernel: {0} lanes per row, {1} subgroups "
                    "per block, {2} (paired: {3}) {4}-byte loads per "
                    "lane in flight",
                    lanes, o.rowsPerBlock, o.loadsPerLane, paired, o.loadBytes)
          .str();
  if (staged)
    d.remark += "; x staged in workgroup memory once per block";
  else if (o.stageX)
    d.remark += llvm::formatv("; x ({0} bytes) not staged: more than the "
                              "static workgroup memory of a block",
                              xBytes)
                    .str();
  return d;
}

std::string cachet::whyNotMatvecConfig(linalg::MatvecOp op,
                                       KernelConfigAttr config) {
  if (config.isAttention())
    return "the variant is not a mat-vec kernel";
  if (config.getVariant() == KernelVariant::MatvecGeneric)
    return "";
  auto a = dyn_cast<MemRefType>(op.getInputs()[0].getType());
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
  return whyNotSubgroupMatvec(op, config.getSubgroup(),
                              config.getVectorWidth() * elementBytes,
                              /*bf16Vectors=*/true);
}
