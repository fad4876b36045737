//===- DequantTransposeConfig.h - the dequant-transpose kernel --*- C++ -*-===//
//
// The cost model behind the #cachet.kernel_config of a packed
// dequant-transpose (the linalg.generic that cachet-lower-to-linalg marks
// `cachet.dequant_transpose`, on buffers): the staged kernel (a workgroup
// stages its positions' bytes in workgroup memory with wide loads, then
// decodes) or the direct one (a thread per store decodes bytes read from
// global memory), with positions per workgroup, threads, load and store
// widths. cachet-select-kernel-configs calls selectDequantTransposeConfig;
// cachet-lower-dequant-transpose checks a config with
// whyNotDequantTransposeConfig and builds it.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_DEQUANTTRANSPOSECONFIG_H
#define CACHET_ANALYSIS_DEQUANTTRANSPOSECONFIG_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace cachet {

/// The kernels `dequant-transpose-kernel` may ask for.
enum class DequantTransposeKernel { Staged, Direct };

/// The shapes of one packed dequant-transpose on buffers.
struct DequantTransposeShape {
  BlockQuantizedType block;
  /// The buffer of packed bytes, [positions][heads][rowBytes], and the
  /// head-major result, [heads][positions][dim].
  mlir::Value bytes, result;
  /// `positions` is ShapedType::kDynamic where only a run-time number of
  /// positions is converted (a dequant-once bounded by a run-time causal
  /// position): the kernel's grid and its last workgroup follow it.
  int64_t positions = 0, heads = 0, dim = 0;
  /// Bytes of one position's blocks of one head.
  int64_t rowBytes = 0;
  /// Bytes per result element; static element offsets of both buffers
  /// (for bytes at a run-time position, one position's bytes, of which the
  /// offset is a multiple).
  int64_t elementBytes = 0, inOffset = 0, outOffset = 0;
  /// Elements between the result's heads (positions x dim where the result
  /// is a whole buffer; more where it is the first positions of one).
  int64_t outHeadStride = 0;

  bool dynamicPositions() const {
    return mlir::ShapedType::isDynamic(positions);
  }
};

/// Returns the packed bytes `op` (a marked dequant-transpose) reads in its
/// body, or null.
mlir::Value getDequantTransposeBytes(mlir::linalg::GenericOp op);

/// Returns the shapes of `op`, or std::nullopt with `reason`.
std::optional<DequantTransposeShape>
getDequantTransposeShape(mlir::linalg::GenericOp op, std::string &reason);

/// The knobs of the cost model (cachet-select-kernel-configs' options).
struct DequantTransposeConfigOptions {
  DequantTransposeKernel kernel = DequantTransposeKernel::Staged;
  int64_t positionsPerGroup = 16, maxWorkgroupBytes = 32768, threads = 256;
  int64_t loadBytes = 16, storeBytes = 16;
};

/// Returns why an option of `options` is out of range, or "".
std::string
checkDequantTransposeConfigOptions(const DequantTransposeConfigOptions &o);

/// A decision: the config (null: the generic lowering) and the remark.
struct DequantTransposeDecision {
  KernelConfigAttr config;
  std::string remark;
};

/// Chooses the kernel for `op`.
DequantTransposeDecision
selectDequantTransposeConfig(mlir::linalg::GenericOp op,
                             const DequantTransposeConfigOptions &options);

/// Returns why `config` cannot be built for `shape`, or "".
std::string whyNotDequantTransposeConfig(const DequantTransposeShape &shape,
                                         KernelConfigAttr config);

} // namespace cachet

#endif // CACHET_ANALYSIS_DEQUANTTRANSPOSECONFIG_H
