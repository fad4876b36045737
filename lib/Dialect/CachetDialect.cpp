//===- CachetDialect.cpp - cachet dialect, types and attributes ----------===//

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cachet;

#include "cachet/Dialect/CachetOpsDialect.cpp.inc"

#include "cachet/Dialect/CachetEnums.cpp.inc"

#include "cachet/Dialect/CachetTypeInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cachet/Dialect/CachetOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cachet/Dialect/CachetAttrs.cpp.inc"

void CachetDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "cachet/Dialect/CachetOps.cpp.inc"
      >();
}

void CachetDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "cachet/Dialect/CachetOpsTypes.cpp.inc"
      >();
}

void CachetDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cachet/Dialect/CachetAttrs.cpp.inc"
      >();
}

/// Returns true if `shape` is `MxNxK:A->C` with positive M, N, K and float
/// type names A and C, the form of one cooperative-matrix entry.
static bool isCoopMatrixShape(StringRef shape) {
  auto [dims, types] = shape.split(':');
  auto [ab, acc] = types.split("->");
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  if (parts.size() != 3)
    return false;
  for (StringRef part : parts) {
    unsigned value;
    if (part.getAsInteger(10, value) || value == 0)
      return false;
  }
  auto isElementName = [](StringRef name) {
    return llvm::is_contained({"f16", "bf16", "f32", "i8", "i32", "f8e4m3"},
                              name);
  };
  return isElementName(ab) && isElementName(acc);
}

LogicalResult DeviceProfileAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef name,
    StringRef vendor, StringRef arch, uint64_t cacheLine, uint64_t l2Bytes,
    uint64_t aliasStride, uint64_t aliasPad, uint64_t computeUnits,
    APFloat dramGbpsValue, bool unifiedMemory, APFloat stridedReadPenaltyValue,
    bool pdl, StringRef l2Prefetch, ArrayAttr coopMatrix, uint64_t subgroupSize,
    uint64_t sharedMemoryBytes) {
  double dramGbps = dramGbpsValue.convertToDouble();
  double stridedReadPenalty = stridedReadPenaltyValue.convertToDouble();
  if (name.empty())
    return emitError() << "device profile: 'name' must not be empty";
  if (!llvm::is_contained({"nvidia", "amd", "mesa", "generic"}, vendor))
    return emitError() << "device profile '" << name << "': 'vendor' must be "
                       << "nvidia, amd, mesa or generic, got '" << vendor
                       << "'";
  if (cacheLine == 0 || !llvm::isPowerOf2_64(cacheLine))
    return emitError() << "device profile '" << name
                       << "': 'cache_line' must be a power of two, got "
                       << cacheLine;
  if (dramGbps <= 0)
    return emitError() << "device profile '" << name
                       << "': 'dram_gbps' must be positive";
  if (stridedReadPenalty < 1.0)
    return emitError() << "device profile '" << name
                       << "': 'strided_read_penalty' must be >= 1.0, got "
                       << stridedReadPenalty;
  if (!llvm::is_contained(
          {"none", "l2", "bulk", "s_prefetch_data", "global_prefetch"},
          l2Prefetch))
    return emitError() << "device profile '" << name
                       << "': 'l2_prefetch' must be none, l2, bulk, "
                          "s_prefetch_data or global_prefetch, got '"
                       << l2Prefetch << "'";
  for (Attribute entry : coopMatrix) {
    auto shape = dyn_cast<StringAttr>(entry);
    if (!shape || !isCoopMatrixShape(shape.getValue()))
      return emitError() << "device profile '" << name
                         << "': 'coop_matrix' entries must look like "
                            "\"16x16x16:f16->f32\", got "
                         << entry;
  }
  if (subgroupSize == 0 || !llvm::isPowerOf2_64(subgroupSize))
    return emitError() << "device profile '" << name
                       << "': 'subgroup_size' must be a power of two, got "
                       << subgroupSize;
  return success();
}

LogicalResult CachetDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  if (attr.getName() != getArgmaxOfAttrName())
    return success();
  auto function = dyn_cast<FunctionOpInterface>(op);
  auto of = dyn_cast<IntegerAttr>(attr.getValue());
  if (!function || !of)
    return op->emitError("'")
           << getArgmaxOfAttrName()
           << "' must be an integer attribute on a function result";
  ArrayRef<Type> results = function.getResultTypes();
  int64_t source = of.getInt();
  if (source < 0 || source >= static_cast<int64_t>(results.size()) ||
      source == resultIndex)
    return op->emitError("'")
           << getArgmaxOfAttrName() << "' of result " << resultIndex
           << " names result " << source << ", not another result";
  auto index = dyn_cast<ShapedType>(results[resultIndex]);
  auto values = dyn_cast<ShapedType>(results[source]);
  if (!index || !isa<IntegerType, IndexType>(index.getElementType()) ||
      !values || !isa<FloatType>(values.getElementType()) ||
      values.getRank() == 0)
    return op->emitError("'")
           << getArgmaxOfAttrName() << "': result " << resultIndex
           << " must be a shaped integer result and result " << source
           << " a shaped float result of rank 1 or more";
  return success();
}
