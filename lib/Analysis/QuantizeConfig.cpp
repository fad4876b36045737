//===- QuantizeConfig.cpp - the quantize kernel ---------------------------===//

#include "cachet/Analysis/QuantizeConfig.h"
#include "cachet/Analysis/Buffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace cachet;

std::optional<QuantizeShape> cachet::getQuantizeShape(linalg::GenericOp op,
                                                      std::string &reason) {
  QuantizeShape s;
  auto marker =
      op->getAttrOfType<TypeAttr>(CachetDialect::getQuantizeAttrName());
  s.block = marker ? dyn_cast<BlockQuantizedType>(marker.getValue())
                   : BlockQuantizedType();
  if (!s.block) {
    reason = "not marked cachet.quantize with a block type";
    return std::nullopt;
  }
  if (auto rounding = op->getAttrOfType<RoundingAttr>(
          CachetDialect::getQuantizeRoundingAttrName()))
    s.rounding = rounding.getValue();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 0) {
    reason = "not on buffers with one result and no inputs (run after "
             "bufferization)";
    return std::nullopt;
  }
  s.bytes = op.getDpsInits()[0];
  // The values: the one buffer from outside loaded in the body.
  s.values = getOnlyBufferLoadedIn(op.getRegion());
  if (!s.values) {
    reason = "its body does not read one buffer of values";
    return std::nullopt;
  }
  auto values = cast<MemRefType>(s.values.getType());
  auto bytes = cast<MemRefType>(s.bytes.getType());
  int64_t rank = bytes.getRank();
  if (values.getRank() != rank || !bytes.getElementType().isInteger(8) ||
      !isa<FloatType>(values.getElementType())) {
    reason = "the values and bytes are not float and i8 buffers of one rank";
    return std::nullopt;
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (values.getDimSize(i) != bytes.getDimSize(i)) {
      reason = "the values and bytes differ outside the innermost dimension";
      return std::nullopt;
    }
  int64_t inner = bytes.getDimSize(rank - 1);
  if (!ShapedType::isDynamic(inner) && inner % s.block.getBlockBytes()) {
    reason = "the innermost bytes are not whole blocks";
    return std::nullopt;
  }
  return s;
}

std::string cachet::checkQuantizeConfigOptions(const QuantizeConfigOptions &o) {
  if (o.threads <= 0 || o.threads > 1024)
    return "quantize-threads must be in [1, 1024], got " +
           std::to_string(o.threads);
  return "";
}

QuantizeDecision cachet::selectQuantizeConfig(linalg::GenericOp op,
                                              DeviceProfileAttr profile,
                                              const QuantizeConfigOptions &o) {
  QuantizeDecision d;
  std::string reason;
  std::optional<QuantizeShape> s = getQuantizeShape(op, reason);
  if (!s) {
    d.remark = "quantize: the generic kernel (a thread per byte, each "
               "scanning its block): " +
               reason;
    return d;
  }
  if (o.kernel == QuantizeKernel::Generic) {
    d.remark = "quantize: the generic kernel (a thread per byte, each "
               "scanning its block): quantize-kernel=generic";
    return d;
  }
  // The shuffles' width: the option, else the profile's subgroup size,
  // else 32.
  int64_t width = o.subgroupSize;
  if (width == 0)
    width = profile && profile.getSubgroupSize() > 0
                ? static_cast<int64_t>(profile.getSubgroupSize())
                : 32;
  if (o.threads % width != 0) {
    d.remark = llvm::formatv("quantize: the generic kernel (a thread per "
                             "byte, each scanning its block): "
                             "quantize-threads ({0}) is not a multiple of "
                             "the subgroup size ({1})",
                             o.threads, width)
                   .str();
    return d;
  }
  int64_t lanes = std::min<int64_t>(width, 32);
  d.config = KernelConfigAttr::get(
      op.getContext(), KernelVariant::QuantizeSubgroup, {}, o.threads, width, 1,
      1, 1, 1, 0, {}, 0, {}, false, false, false, false, false, false, 0);
  d.remark = llvm::formatv("quantize: one kernel, {0} lanes of a subgroup "
                           "of {1} per {2}-byte block ({3} of its values "
                           "each, the block scanned through shuffles, each "
                           "byte stored by one lane), workgroups of {4} "
                           "threads",
                           lanes, width, s->block.getBlockBytes(), 32 / lanes,
                           o.threads)
                 .str();
  return d;
}
