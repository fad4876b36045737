//===- DequantOnceCost.cpp - does dequantizing a KV cache once pay? -------===//

#include "cachet/Analysis/DequantOnceCost.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;
using namespace cachet;

/// Returns M of the first `MxNxK:f16->...` cooperative-matrix shape of
/// `profile`, or 0 if there is none.
static int64_t getF16CoopRows(DeviceProfileAttr profile) {
  for (Attribute entry : profile.getCoopMatrix()) {
    auto str = dyn_cast<StringAttr>(entry);
    if (!str)
      continue;
    auto [dims, types] = str.getValue().split(':');
    if (!types.starts_with("f16"))
      continue;
    int64_t rows = 0;
    if (!dims.split('x').first.getAsInteger(10, rows) && rows > 0)
      return rows;
  }
  return 0;
}

DequantOnceEstimate cachet::estimateDequantOnce(DeviceProfileAttr profile,
                                                const KVAttentionShape &shape,
                                                double dequantCost) {
  DequantOnceEstimate e;
  int64_t group = shape.kvHeads > 0 ? shape.queryHeads / shape.kvHeads : 1;
  e.queriesPerKVHead = group * shape.queries;
  int64_t coopRows = getF16CoopRows(profile);
  e.coopMatrix = coopRows > 0;
  e.tile =
      e.coopMatrix ? coopRows : std::max<int64_t>(1, profile.getSubgroupSize());
  e.passes = (e.queriesPerKVHead + e.tile - 1) / e.tile;
  e.penalty =
      shape.kvHeads > 1 ? profile.getStridedReadPenalty().convertToDouble() : 1;
  e.dequantCost = dequantCost >= 0 ? dequantCost : e.coopMatrix ? 1.0 : 0.25;
  e.f16Bytes =
      2 * shape.kvHeads * shape.positions * (shape.headDim + shape.valueDim);
  double bytesPerMicro = profile.getDramGbps().convertToDouble() * 1e3;
  double bq = static_cast<double>(shape.quantizedBytes);
  double bf = static_cast<double>(e.f16Bytes);
  double passes = static_cast<double>(e.passes);
  e.inKernelMicros =
      passes * (bq * e.penalty + e.dequantCost * bf) / bytesPerMicro;
  e.onceMicros = (bq + bf + passes * bf) / bytesPerMicro;
  return e;
}
