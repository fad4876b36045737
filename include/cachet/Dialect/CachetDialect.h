//===- CachetDialect.h - cachet dialect, types, attributes and ops -------===//

#ifndef CACHET_DIALECT_CACHETDIALECT_H
#define CACHET_DIALECT_CACHETDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cachet/Dialect/CachetOpsDialect.h.inc"

#include "cachet/Dialect/CachetEnums.h.inc"

#include "cachet/Dialect/CachetTypeInterfaces.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cachet/Dialect/CachetOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cachet/Dialect/CachetAttrs.h.inc"

#define GET_OP_CLASSES
#include "cachet/Dialect/CachetOps.h.inc"

namespace cachet {

/// Returns why a gemm_mma_sync config's `tile`, `workgroup`, `subgroup`,
/// `stages`, `pad_bytes` and `dynamic_shared` describe no GEMM kernel, or
/// "" (the attribute's verifier and the decision that builds one share it).
std::string whyNotGemmTiles(llvm::ArrayRef<int64_t> tile, int64_t workgroup,
                            int64_t subgroup, int64_t stages, int64_t padBytes,
                            bool dynamicShared);

/// The same for a gemm_tiled config's `tile`, `workgroup` and
/// `vector_width` (weight rows per thread).
std::string whyNotTiledGemmTiles(llvm::ArrayRef<int64_t> tile,
                                 int64_t workgroup, int64_t threadColumns);

/// The same for a gemm_mma config's `tile`, `workgroup`, `subgroup`,
/// `vector_width` (values per staging load) and `pad_bytes`.
std::string whyNotMmaGemmTiles(llvm::ArrayRef<int64_t> tile, int64_t workgroup,
                               int64_t subgroup, int64_t vectorWidth,
                               int64_t padBytes);

/// The same for an attention_tiled config's `tile` (query rows, key
/// positions, columns per step) and `workgroup` (threads), apart from the
/// attention's shape.
std::string whyNotTiledAttentionTiles(llvm::ArrayRef<int64_t> tile,
                                      int64_t workgroup);

/// The same for a gemm_wgmma config (`tile`, `workgroup`, `subgroup`,
/// `stages`, `pad_bytes`, `dynamic_shared`); `decodesBlocks` (its
/// `load_bytes` set) allows one or two producer warpgroups (`workgroup`
/// 2 * tile[0] + 128 or + 256).
std::string whyNotWgmmaTiles(llvm::ArrayRef<int64_t> tile, int64_t workgroup,
                             int64_t subgroup, int64_t stages, int64_t padBytes,
                             bool dynamicShared, bool decodesBlocks = false);

/// The bytes of a row the wgmma GEMM buffers per step where it decodes a
/// block weight from pieces of `pieceBytes` (4 or 16): a step's
/// `stepBytes` (a multiple of 4) from their first piece, which may start
/// up to `pieceBytes - 4` bytes before them.
inline int64_t getStagedBlockPitch(int64_t stepBytes, int64_t pieceBytes) {
  return (stepBytes + 2 * pieceBytes - 5) / pieceBytes * pieceBytes;
}

/// The dynamic workgroup memory of the wgmma GEMM with `tileM x tileN`
/// workgroup tiles and `stages` buffers of 64 columns: the unpadded
/// 128-byte rows of x and of the weight, and up to 1024 bytes to align
/// them to the swizzle's atoms. Where the kernel decodes a block weight
/// itself (`stagedRowBytes`, its getStagedBlockPitch), the
/// weight's decoded tile is double-buffered and `stages` buffers hold the
/// blocks' bytes instead.
inline int64_t getWgmmaGemmBytes(int64_t tileM, int64_t tileN, int64_t stages,
                                 int64_t stagedRowBytes = 0) {
  if (stagedRowBytes > 0)
    return stages * tileM * 128 + 2 * tileN * 128 +
           stages * tileN * stagedRowBytes + 1024;
  return stages * (tileM + tileN) * 128 + 1024;
}

/// The workgroup memory of the mma GEMM (gemm_mma) with `tileM x tileN`
/// tiles and steps of `step` columns: a step's f16 rows of x and of the
/// weight, each padded by `padBytes`, and the tile's f32 sums (rows padded
/// by 16 bytes) through which they leave. The sums reuse nothing: the
/// last step's tiles may still be read by a slower subgroup when the first
/// stores its sums.
inline int64_t getMmaGemmBytes(int64_t tileM, int64_t tileN, int64_t step,
                               int64_t padBytes) {
  return (tileM + tileN) * (2 * step + padBytes) + tileM * (4 * tileN + 16);
}

} // namespace cachet

#endif // CACHET_DIALECT_CACHETDIALECT_H
