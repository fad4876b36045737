//===- CachetDialect.cpp - cachet dialect, types and attributes ----------===//

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

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

/// The GEMMs' `stages` check.
static std::string whyNotGemmStages(int64_t stages) {
  if (stages >= 2 && stages <= 8)
    return "";
  return llvm::formatv("'stages' must be 2 to 8 (steps buffered in "
                       "workgroup memory), got {0}",
                       stages)
      .str();
}

std::string cachet::whyNotGemmTiles(ArrayRef<int64_t> tile, int64_t workgroup,
                                    int64_t subgroup, int64_t stages,
                                    int64_t padBytes, bool dynamicShared) {
  if ((tile.size() != 2 && tile.size() != 3) || tile[0] <= 0 ||
      tile[0] % 64 != 0 || tile[1] <= 0 || tile[1] % 32 != 0 ||
      (tile.size() == 3 && (tile[2] <= 0 || tile[2] % 16 != 0)))
    return "'tile' must be [rows of x, weight rows] or [rows of x, weight "
           "rows, columns per step], multiples of 64, 32 and 16";
  int64_t m = tile[0], n = tile[1], k = tile.size() == 3 ? tile[2] : 32;
  // Each subgroup computes 64 rows of x by a multiple of 16 weight rows
  // that divides the tile's.
  int64_t subgroups = workgroup / 32;
  int64_t cols = subgroups > 0 && (m * n) % (64 * subgroups) == 0
                     ? m * n / (64 * subgroups)
                     : 0;
  if (subgroup != 32 || workgroup % 32 != 0 || cols <= 0 || cols % 16 != 0 ||
      n % cols != 0)
    return llvm::formatv("'workgroup' must be subgroups of 32 lanes "
                         "('subgroup' 32), each computing 64 rows of x by a "
                         "multiple of 16 weight rows that divides the tile's "
                         "{0}",
                         n)
        .str();
  // Every thread copies whole 16-byte pieces of each step.
  if ((m * k / 8) % workgroup != 0 || (n * k / 8) % workgroup != 0)
    return llvm::formatv("'workgroup' ({0}) must divide the 16-byte pieces "
                         "of a step of x's and of the weight's rows ({1}, "
                         "{2})",
                         workgroup, m * k / 8, n * k / 8)
        .str();
  if (std::string why = whyNotGemmStages(stages); !why.empty())
    return why;
  if (padBytes < 0 || padBytes % 16 != 0)
    return llvm::formatv("'pad_bytes' must be a non-negative multiple of "
                         "16, got {0}",
                         padBytes)
        .str();
  int64_t bytes = stages * (m + n) * (2 * k + padBytes);
  if (!dynamicShared && bytes > 48 * 1024)
    return llvm::formatv("the buffers take {0} bytes of workgroup memory: "
                         "more than 48 KiB needs 'dynamic_shared'",
                         bytes)
        .str();
  return "";
}

std::string cachet::whyNotTiledAttentionTiles(ArrayRef<int64_t> tile,
                                              int64_t workgroup) {
  if (tile.size() != 3 || tile[0] <= 0 || tile[0] % 4 != 0 || tile[0] > 256 ||
      tile[1] <= 0 || tile[1] > 1024 || tile[2] <= 0 || tile[2] > 32)
    return "'tile' must be [query rows, key positions, columns per step]: a "
           "multiple of 4 up to 256, up to 1024 and up to 32";
  if (workgroup <= 0 || workgroup > 1024)
    return llvm::formatv("'workgroup' must be 1 to 1024 threads, got {0}",
                         workgroup)
        .str();
  int64_t rowGroups = tile[0] / 4;
  if (workgroup % rowGroups != 0)
    return llvm::formatv("'workgroup' ({0}) must be a multiple of the query "
                         "tile's {1} groups of 4 rows",
                         workgroup, rowGroups)
        .str();
  int64_t rowThreads = workgroup / rowGroups;
  if (tile[1] % rowThreads != 0 || tile[1] / rowThreads > 16)
    return llvm::formatv("the {0} threads per group of rows must divide the "
                         "key tile {1} into at most 16 positions a thread "
                         "(its scores are in registers)",
                         rowThreads, tile[1])
        .str();
  if (tile[1] % tile[2] != 0)
    return llvm::formatv("a step of {0} positions must divide the key tile "
                         "{1}",
                         tile[2], tile[1])
        .str();
  return "";
}

std::string cachet::whyNotMmaGemmTiles(ArrayRef<int64_t> tile,
                                       int64_t workgroup, int64_t subgroup,
                                       int64_t vectorWidth, int64_t padBytes) {
  if (tile.size() != 3 || tile[0] <= 0 || tile[0] % 32 != 0 || tile[1] <= 0 ||
      tile[1] % 32 != 0 || tile[2] <= 0 || tile[2] % 16 != 0 ||
      llvm::any_of(tile, [](int64_t v) { return v > 4096; }))
    return "'tile' must be [rows of x, weight rows, columns per step], "
           "multiples of 32, 32 and 16 (at most 4096)";
  if (subgroup <= 0 || subgroup > 128)
    return llvm::formatv("'subgroup' must be the device's lanes per "
                         "subgroup (1 to 128), got {0}",
                         subgroup)
        .str();
  int64_t subgroups = tile[0] * tile[1] / 1024;
  if (workgroup != subgroups * subgroup || workgroup > 1024)
    return llvm::formatv("'workgroup' must be one subgroup of {0} lanes per "
                         "32 x 32 of the {1} x {2} tile ({3}), at most 1024 "
                         "threads, got {4}",
                         subgroup, tile[0], tile[1], subgroups * subgroup,
                         workgroup)
        .str();
  if (vectorWidth != 4 && vectorWidth != 8)
    return llvm::formatv("'vector_width' (f16 values per staging load) "
                         "must be 4 or 8, got {0}",
                         vectorWidth)
        .str();
  if (padBytes < 0 || padBytes % 16 != 0 || padBytes > 256)
    return llvm::formatv("'pad_bytes' must be a multiple of 16 up to 256, "
                         "got {0}",
                         padBytes)
        .str();
  int64_t bytes = getMmaGemmBytes(tile[0], tile[1], tile[2], padBytes);
  if (bytes > 48 * 1024)
    return llvm::formatv("the f16 step tiles and the f32 sums take {0} bytes "
                         "of workgroup memory, more than 49152",
                         bytes)
        .str();
  return "";
}

std::string cachet::whyNotTiledGemmTiles(ArrayRef<int64_t> tile,
                                         int64_t workgroup,
                                         int64_t threadColumns) {
  if (tile.size() != 3 || tile[0] <= 0 || tile[0] % 4 != 0 || tile[1] <= 0 ||
      tile[1] % 4 != 0 || tile[2] <= 0 || tile[2] % 8 != 0 ||
      llvm::any_of(tile, [](int64_t v) { return v > 65536; }))
    return "'tile' must be [rows of x, weight rows, columns per step], "
           "multiples of 4, 4 and 8 (at most 65536)";
  if (workgroup > 1024)
    return llvm::formatv("'workgroup' must be at most 1024 threads, got {0}",
                         workgroup)
        .str();
  int64_t m = tile[0], n = tile[1];
  if (workgroup <= 0 || threadColumns <= 0 || threadColumns % 4 != 0 ||
      n % threadColumns != 0 || (m * n) % (workgroup * threadColumns) != 0)
    return llvm::formatv("'vector_width' ({0}, weight rows per thread) must "
                         "be a multiple of 4 dividing the tile's {1}, and "
                         "'workgroup' ({2}) threads of that many must divide "
                         "the tile's {3} x {1} sums",
                         threadColumns, n, workgroup, m)
        .str();
  int64_t threadRows = m * n / (workgroup * threadColumns);
  if (threadRows % 4 != 0 || m % threadRows != 0)
    return llvm::formatv("each thread's {0} rows of x (the tile's {1} x {2} "
                         "sums over {3} threads of {4} weight rows) must be "
                         "a multiple of 4 dividing {1}",
                         threadRows, m, n, workgroup, threadColumns)
        .str();
  int64_t bytes = 4 * tile[2] * (m + n);
  if (bytes > 48 * 1024)
    return llvm::formatv("a step's f32 tiles take {0} bytes of workgroup "
                         "memory, more than 48 KiB",
                         bytes)
        .str();
  return "";
}

std::string cachet::whyNotWgmmaTiles(ArrayRef<int64_t> tile, int64_t workgroup,
                                     int64_t subgroup, int64_t stages,
                                     int64_t padBytes, bool dynamicShared,
                                     bool decodesBlocks) {
  if (tile.size() != 2 || tile[0] <= 0 || tile[0] % 64 != 0 || tile[0] > 256 ||
      tile[1] <= 0 || tile[1] % 8 != 0 || tile[1] > 256)
    return "'tile' must be [rows of x, weight rows]: a multiple of 64 up "
           "to 256 (one warpgroup per 64) and a multiple of 8 up to 256 (a "
           "wgmma's n)";
  int64_t m = tile[0], n = tile[1];
  bool producer =
      decodesBlocks && (workgroup == 2 * m + 128 || workgroup == 2 * m + 256);
  if ((workgroup != 2 * m && !producer) || subgroup != 32)
    return llvm::formatv("'workgroup' must be one warpgroup of 128 threads "
                         "per 64 rows of x ({0}; {1} or {2} with one or two "
                         "producer warpgroups where 'load_bytes' decodes "
                         "blocks), 'subgroup' 32",
                         2 * m, 2 * m + 128, 2 * m + 256)
        .str();
  if (producer && (8 * n) % (workgroup - 2 * m) != 0)
    return llvm::formatv("the producer warpgroups' {0} threads decode the "
                         "{1} pieces of 8 values of a step: they must "
                         "divide them",
                         workgroup - 2 * m, 8 * n)
        .str();
  // Every thread copies whole 16-byte pieces of each step (8 per row).
  if (!producer && (8 * n) % workgroup != 0)
    return llvm::formatv("'workgroup' ({0}) must divide the {1} 16-byte "
                         "pieces of a step of the weight's rows",
                         workgroup, 8 * n)
        .str();
  if (std::string why = whyNotGemmStages(stages); !why.empty())
    return why;
  if (padBytes != 0 || !dynamicShared)
    return "the buffers are unpadded ('pad_bytes' 0) in dynamic workgroup "
           "memory ('dynamic_shared')";
  return "";
}

LogicalResult KernelConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, KernelVariant variant,
    ArrayRef<int64_t> tile, int64_t workgroup, int64_t subgroup,
    int64_t vectorWidth, int64_t rowBlocks, int64_t stages, int64_t split,
    int64_t padBytes, ArrayRef<int64_t> loads, int64_t minWorkgroupsPerSM,
    ArrayRef<int64_t> resident, bool dynamicShared, bool warpSync,
    bool lazyRescale, bool stageX, bool fuseSiblings, bool fuseEpilogues,
    int64_t loadBytes) {
  auto fail = [&]() {
    return emitError() << "#cachet.kernel_config<variant = "
                       << stringifyKernelVariant(variant) << ">: ";
  };
  auto isPow2 = [](int64_t v) {
    return v > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(v));
  };
  bool decodeMma = variant == KernelVariant::AttentionDecodeMmaSync;
  bool decode = variant == KernelVariant::AttentionDecode || decodeMma;
  bool wgmma = variant == KernelVariant::AttentionWgmma;
  bool attention = variant == KernelVariant::AttentionScalar ||
                   variant == KernelVariant::AttentionMma ||
                   variant == KernelVariant::AttentionMmaSync || wgmma ||
                   decode;
  bool mma = variant == KernelVariant::AttentionMma ||
             variant == KernelVariant::AttentionMmaSync || wgmma;
  bool dequant = variant == KernelVariant::DequantTransposeStaged ||
                 variant == KernelVariant::DequantTransposeDirect;
  if (dequant) {
    if (variant == KernelVariant::DequantTransposeStaged &&
        (tile.size() != 1 || tile[0] <= 0))
      return fail() << "'tile' must have one positive entry (positions per "
                       "workgroup)";
    if (variant == KernelVariant::DequantTransposeStaged &&
        (loadBytes < 4 || !llvm::isPowerOf2_64(loadBytes)))
      return fail() << "'load_bytes' must be a power of two from 4, got "
                    << loadBytes;
    if (variant == KernelVariant::DequantTransposeDirect &&
        (!tile.empty() || loadBytes != 0))
      return fail() << "the direct kernel takes no 'tile' or 'load_bytes'";
    if (workgroup <= 0)
      return fail() << "'workgroup' (threads) must be positive, got "
                    << workgroup;
    if (!isPow2(vectorWidth))
      return fail() << "'vector_width' must be a power of two, got "
                    << vectorWidth;
    if (subgroup != 0 || rowBlocks != 1 || stages != 1 || split != 1 ||
        padBytes != 0 || !loads.empty() || minWorkgroupsPerSM != 0 ||
        !resident.empty() || dynamicShared || warpSync || lazyRescale ||
        stageX || fuseSiblings || fuseEpilogues)
      return fail() << "a dequant-transpose kernel takes only 'tile', "
                       "'workgroup', 'vector_width' and 'load_bytes'";
    return success();
  }
  if (variant == KernelVariant::QuantizeSubgroup) {
    if (workgroup <= 0)
      return fail() << "'workgroup' (threads) must be positive, got "
                    << workgroup;
    if (!isPow2(subgroup) || workgroup % subgroup != 0)
      return fail() << "'subgroup' (the shuffles' width) must be a power of "
                       "two dividing 'workgroup' ("
                    << workgroup << "), got " << subgroup;
    if (!tile.empty() || vectorWidth != 1 || rowBlocks != 1 || stages != 1 ||
        split != 1 || padBytes != 0 || !loads.empty() ||
        minWorkgroupsPerSM != 0 || !resident.empty() || dynamicShared ||
        warpSync || lazyRescale || stageX || fuseSiblings || fuseEpilogues ||
        loadBytes != 0)
      return fail() << "the quantize kernel takes only 'workgroup' and "
                       "'subgroup'";
    return success();
  }
  if (variant == KernelVariant::GemmMmaSync ||
      variant == KernelVariant::GemmWgmma) {
    if (std::string why =
            variant == KernelVariant::GemmMmaSync
                ? cachet::whyNotGemmTiles(tile, workgroup, subgroup, stages,
                                          padBytes, dynamicShared)
                : cachet::whyNotWgmmaTiles(tile, workgroup, subgroup, stages,
                                           padBytes, dynamicShared,
                                           loadBytes != 0);
        !why.empty())
      return fail() << why;
    if (variant == KernelVariant::GemmWgmma && loadBytes != 0 &&
        loadBytes != 4 && loadBytes != 16)
      return fail() << "'load_bytes' must be 0 (the weight as it is), or 4 "
                       "or 16 (a block weight's bytes copied in pieces of "
                       "that many and decoded in the kernel), got "
                    << loadBytes;
    if (vectorWidth != 1 || rowBlocks != 1 || split != 1 || !loads.empty() ||
        minWorkgroupsPerSM != 0 || !resident.empty() || warpSync ||
        lazyRescale || stageX ||
        (loadBytes != 0 && variant != KernelVariant::GemmWgmma))
      return fail() << "the GEMM takes only 'tile', 'workgroup', "
                       "'subgroup', 'stages', 'pad_bytes', 'dynamic_shared' "
                       "and 'fuse_epilogues' (and the wgmma GEMM "
                       "'load_bytes' and 'fuse_siblings')";
    if (fuseSiblings && (variant != KernelVariant::GemmWgmma || loadBytes != 0))
      return fail() << "'fuse_siblings' needs the wgmma GEMM over a float "
                       "weight (no 'load_bytes'): siblings share its tiles";
    return success();
  }
  if (variant == KernelVariant::GemmMma) {
    if (std::string why = cachet::whyNotMmaGemmTiles(tile, workgroup, subgroup,
                                                     vectorWidth, padBytes);
        !why.empty())
      return fail() << why;
    if (rowBlocks != 1 || stages != 1 || split != 1 || !loads.empty() ||
        minWorkgroupsPerSM != 0 || !resident.empty() || dynamicShared ||
        warpSync || lazyRescale || stageX || fuseSiblings || loadBytes != 0)
      return fail() << "the mma GEMM takes only 'tile', 'workgroup', "
                       "'subgroup', 'vector_width', 'pad_bytes' and "
                       "'fuse_epilogues'";
    return success();
  }
  if (variant == KernelVariant::GemmTiled) {
    if (std::string why =
            cachet::whyNotTiledGemmTiles(tile, workgroup, vectorWidth);
        !why.empty())
      return fail() << why;
    if (rowBlocks != 1 || stages != 1 || split != 1 || padBytes != 0 ||
        !loads.empty() || minWorkgroupsPerSM != 0 || !resident.empty() ||
        dynamicShared || warpSync || lazyRescale || stageX || fuseSiblings ||
        loadBytes != 0)
      return fail() << "the tiled GEMM takes only 'tile', 'workgroup', "
                       "'subgroup', 'vector_width' and 'fuse_epilogues'";
    return success();
  }
  if (variant == KernelVariant::AttentionTiled) {
    if (std::string why = cachet::whyNotTiledAttentionTiles(tile, workgroup);
        !why.empty())
      return fail() << why;
    if (vectorWidth != 1 || rowBlocks != 1 || stages != 1 || split != 1 ||
        padBytes != 0 || !loads.empty() || minWorkgroupsPerSM != 0 ||
        !resident.empty() || dynamicShared || warpSync || lazyRescale ||
        stageX || fuseSiblings || fuseEpilogues || loadBytes != 0)
      return fail() << "the tiled attention kernel takes only 'tile', "
                       "'workgroup' and 'subgroup'";
    return success();
  }
  if (decode && loadBytes != 0 &&
      (loadBytes > 16 || !llvm::isPowerOf2_64(loadBytes)))
    return fail() << "'load_bytes' must be 0 or a power of two up to 16, got "
                  << loadBytes;
  if (!decode && loadBytes != 0)
    return fail() << "only the staged dequant-transpose and the decode "
                     "kernel take 'load_bytes'";
  if (variant != KernelVariant::MatvecGeneric &&
      (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0))
    return fail() << "'tile' must have two positive entries ("
                  << (attention ? "query rows, key positions"
                                : "subgroups per workgroup, rows per subgroup")
                  << ")";
  if (workgroup < 0)
    return fail() << "'workgroup' must not be negative, got " << workgroup;
  if (subgroup != 0 && !isPow2(subgroup))
    return fail() << "'subgroup' must be 0 or a power of two, got " << subgroup;
  if (!isPow2(vectorWidth))
    return fail() << "'vector_width' must be a power of two, got "
                  << vectorWidth;
  if (!isPow2(rowBlocks))
    return fail() << "'row_blocks' must be a power of two, got " << rowBlocks;
  if (stages != 1 && stages != 2 && !(wgmma && stages == 3))
    return fail() << "'stages' must be 1 or 2 (3 for attention_wgmma), got "
                  << stages;
  if (stages == 2 && !dynamicShared && !decodeMma)
    return fail() << "'stages = 2' needs 'dynamic_shared = true'";
  if (split < 1)
    return fail() << "'split' must be positive, got " << split;
  if (padBytes < 0 || padBytes % 16 != 0)
    return fail() << "'pad_bytes' must be a non-negative multiple of 16, got "
                  << padBytes;
  if (minWorkgroupsPerSM < 0)
    return fail() << "'min_workgroups_per_sm' must not be negative, got "
                  << minWorkgroupsPerSM;
  if (lazyRescale && !warpSync)
    return fail() << "'lazy_rescale' needs 'warp_sync = true'";
  if (llvm::any_of(loads, [](int64_t v) { return v < 0; }) || loads.size() > 2)
    return fail() << "'loads' must have at most two non-negative entries";
  if (llvm::any_of(resident, [](int64_t v) { return v < 0; }) ||
      resident.size() > 2)
    return fail() << "'resident' must have at most two non-negative entries";
  if (mma) {
    if (tile[1] % 16 != 0)
      return fail() << "the key tile " << tile[1]
                    << " is not a multiple of 16 (the mma kernels' column "
                       "block)";
    if (tile[0] % (16 * rowBlocks) != 0)
      return fail() << "the query tile " << tile[0]
                    << " is not a multiple of 16 * row_blocks ("
                    << 16 * rowBlocks << ")";
  }
  if (wgmma) {
    if (tile[0] % 64 != 0 || tile[0] > 256 || tile[1] > 256)
      return fail() << "'tile' must be [query rows, key positions]: a "
                       "multiple of 64 up to 256 (one warpgroup per 64 "
                       "rows) and a multiple of 16 up to 256 (a wgmma's n)";
    if (workgroup != 2 * tile[0] || (subgroup != 0 && subgroup != 32))
      return fail() << "'workgroup' must be one warpgroup of 128 threads per "
                       "64 query rows ("
                    << 2 * tile[0] << "), 'subgroup' 0 or 32";
    if (vectorWidth != 8 || rowBlocks != 1 || padBytes != 0 || !dynamicShared ||
        warpSync || lazyRescale)
      return fail() << "the wgmma kernel's tiles are unpadded 128-byte "
                       "swizzles in dynamic workgroup memory, filled in "
                       "16-byte vectors: 'vector_width = 8', "
                       "'dynamic_shared', no 'row_blocks', 'pad_bytes', "
                       "'warp_sync' or 'lazy_rescale'";
  }
  if (decode) {
    if (rowBlocks != 1 || padBytes != 0 || warpSync || lazyRescale)
      return fail() << "the decode kernel takes no 'row_blocks', "
                       "'pad_bytes', 'warp_sync' or 'lazy_rescale'";
    if (!decodeMma && vectorWidth != 1 && stages != 1)
      return fail() << "the decode kernel reads rows by lanes together "
                       "('vector_width' > 1) only with 'stages = 1'";
    if (minWorkgroupsPerSM != 0 && stages != 2 && !decodeMma)
      return fail() << "the decode kernel asks for registers for "
                       "'min_workgroups_per_sm' only with 'stages = 2'";
    if (dynamicShared && decodeMma)
      return fail() << "the mma-sync decode kernel holds its K/V in "
                       "registers: no 'dynamic_shared'";
    if (dynamicShared && stages != 2)
      return fail() << "the decode kernel's dynamic workgroup memory holds "
                       "its staged K/V rows: 'dynamic_shared' needs "
                       "'stages = 2'";
    if (decodeMma) {
      if (vectorWidth < 8)
        return fail() << "the mma-sync decode kernel's 'vector_width' (K "
                         "values in a run per lane) must be 8 or more, got "
                      << vectorWidth;
      if (workgroup <= 0 || workgroup % 32 != 0 ||
          (subgroup != 0 && subgroup != 32))
        return fail() << "the mma-sync decode kernel needs 'workgroup' "
                         "(threads), whole subgroups of 32 lanes, got "
                      << workgroup;
      if (tile[0] > 16)
        return fail() << "the mma-sync decode kernel computes at most 16 "
                         "query rows (one m16 block), got "
                      << tile[0];
      if (tile[1] % (16 * (workgroup / 32)) != 0)
        return fail() << "the key tile " << tile[1]
                      << " is not a multiple of 16 positions per subgroup ("
                      << 16 * (workgroup / 32) << ")";
    } else if (vectorWidth == 1 && workgroup != 0 && workgroup != tile[1]) {
      return fail() << "the decode kernel reads one KV position per thread "
                       "per step: workgroup "
                    << workgroup << " is not the key tile " << tile[1];
    }
    if (!decodeMma && vectorWidth != 1 && workgroup == 0)
      return fail() << "the decode kernel with rows read by lanes together "
                       "('vector_width' > 1) needs 'workgroup' (threads)";
    if (!decodeMma && vectorWidth == 1 && subgroup != 0 &&
        tile[1] % subgroup != 0)
      return fail() << "the key tile " << tile[1]
                    << " is not a multiple of the subgroup " << subgroup;
  }
  if (split != 1 && !decode)
    return fail() << "only the decode kernel takes 'split'";
  if (variant == KernelVariant::AttentionScalar &&
      (rowBlocks != 1 || stages != 1 || dynamicShared || warpSync))
    return fail() << "the scalar kernel takes no 'row_blocks', 'stages', "
                     "'dynamic_shared' or 'warp_sync'";
  if (!attention && (rowBlocks != 1 || stages != 1 || split != 1 ||
                     padBytes != 0 || dynamicShared || warpSync || lazyRescale))
    return fail() << "a mat-vec kernel takes no 'row_blocks', 'stages', "
                     "'split', 'pad_bytes', 'dynamic_shared', 'warp_sync' or "
                     "'lazy_rescale'";
  if (attention && (stageX || !loads.empty() || !resident.empty() ||
                    fuseSiblings || fuseEpilogues))
    return fail() << "an attention kernel takes no 'stage_x', 'loads', "
                     "'resident' or 'fuse_*'";
  return success();
}

LogicalResult
PrefetchPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         PrefetchKind next, ArrayRef<int64_t> nextBytes,
                         int64_t ctas, int64_t line, bool pdl, PrefetchKind own,
                         ArrayRef<int64_t> ownBytes, PdlTrigger trigger,
                         PdlWait wait) {
  auto fail = [&]() { return emitError() << "#cachet.prefetch_plan: "; };
  if (line <= 0)
    return fail() << "'line' must be positive, got " << line;
  if (ctas < 0)
    return fail() << "'ctas' must not be negative, got " << ctas;
  for (ArrayRef<int64_t> bytes : {nextBytes, ownBytes})
    for (int64_t b : bytes)
      if (b < 0 || b % line != 0)
        return fail() << "bytes must be non-negative multiples of 'line' ("
                      << line << "), got " << b;
  if ((next == PrefetchKind::None) != nextBytes.empty())
    return fail() << "'next' and 'next_bytes' come together";
  if (next != PrefetchKind::None && ctas < 1)
    return fail() << "'next = " << stringifyPrefetchKind(next)
                  << "' needs 'ctas' of 1 or more";
  if ((own == PrefetchKind::None) != ownBytes.empty())
    return fail() << "'own' and 'own_bytes' come together";
  if (own != PrefetchKind::None && !pdl)
    return fail() << "'own' (the pdl prologue) needs 'pdl = true'";
  if (!pdl && (trigger != PdlTrigger::Start || wait != PdlWait::Start))
    return fail() << "'trigger' and 'wait' need 'pdl = true'";
  return success();
}

LogicalResult CachetDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() == getPrefetchPlanAttrName()) {
    if (!isa<PrefetchPlanAttr>(attr.getValue()))
      return op->emitError("'") << getPrefetchPlanAttrName()
                                << "' must be a #cachet.prefetch_plan";
    if (op->getName().getStringRef() != "gpu.launch_func")
      return op->emitError("'")
             << getPrefetchPlanAttrName() << "' must be on a gpu.launch_func";
    return success();
  }
  if (attr.getName() == getFallbackKernelConfigAttrName()) {
    auto fallback = dyn_cast<KernelConfigAttr>(attr.getValue());
    auto primary =
        op->getAttrOfType<KernelConfigAttr>(getKernelConfigAttrName());
    // The GEMM on cooperative matrices (a mat-mul's gemm_mma) falls back
    // to the tiled GEMM.
    if (primary && primary.getVariant() == KernelVariant::GemmMma) {
      if (!fallback || fallback.getVariant() != KernelVariant::GemmTiled)
        return op->emitError("'")
               << getFallbackKernelConfigAttrName()
               << "' of a gemm_mma config must be a gemm_tiled "
                  "#cachet.kernel_config";
      return success();
    }
    if (!fallback || !fallback.isAttention())
      return op->emitError("'")
             << getFallbackKernelConfigAttrName()
             << "' must be an attention #cachet.kernel_config (or the "
                "gemm_tiled one of a gemm_mma mat-mul)";
    if (!isa<AttentionOp>(op) || !primary ||
        primary.getVariant() != KernelVariant::AttentionMma)
      return op->emitError("'")
             << getFallbackKernelConfigAttrName()
             << "' must be on a cachet.attention whose '"
             << getKernelConfigAttrName()
             << "' is of variant attention_mma (or on a mat-mul whose is "
                "gemm_mma)";
    if (fallback.getVariant() == KernelVariant::AttentionMma)
      return op->emitError("'") << getFallbackKernelConfigAttrName()
                                << "' cannot be the mma kernel it replaces";
    return success();
  }
  if (attr.getName() != getKernelConfigAttrName())
    return success();
  auto config = dyn_cast<KernelConfigAttr>(attr.getValue());
  if (!config)
    return op->emitError("'")
           << getKernelConfigAttrName() << "' must be a #cachet.kernel_config";
  bool onAttention = isa<AttentionOp, AttentionPartialOp>(op);
  // A mat-vec kernel computes linalg.matvec and small-batch linalg.matmul
  // (whose maps cachet-lower-matvec checks).
  bool onMatvec = op->getName().getStringRef() == "linalg.matvec" ||
                  op->getName().getStringRef() == "linalg.matmul";
  bool onDequant = op->getName().getStringRef() == "linalg.generic" &&
                   op->hasAttr(getDequantTransposeAttrName());
  bool onQuantize = op->getName().getStringRef() == "linalg.generic" &&
                    op->hasAttr(getQuantizeAttrName());
  bool placed = config.isAttention()          ? onAttention
                : config.isDequantTranspose() ? onDequant
                : config.isQuantize()         ? onQuantize
                                              : onMatvec;
  if (!placed)
    return op->emitError("'")
           << getKernelConfigAttrName() << "' of variant "
           << stringifyKernelVariant(config.getVariant()) << " must be on "
           << (config.isAttention() ? "a cachet.attention or attention_partial"
               : config.isDequantTranspose()
                   ? "a linalg.generic marked cachet.dequant_transpose"
               : config.isQuantize() ? "a linalg.generic marked cachet.quantize"
                                     : "a linalg.matvec or linalg.matmul");
  return success();
}
