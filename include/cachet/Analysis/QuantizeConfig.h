//===- QuantizeConfig.h - the quantize kernel -------------------*- C++ -*-===//
//
// The #cachet.kernel_config of a cachet.quantize to packed blocks on
// buffers: cachet-lower-to-linalg lowers one to a generic of one iteration
// per byte, each scanning its block (marked `cachet.quantize`); the
// `quantize_subgroup` kernel has the lanes of a subgroup per block
// instead, which scan it once through shuffles.
// cachet-select-kernel-configs calls selectQuantizeConfig;
// cachet-lower-quantize builds the config where getQuantizeShape takes the
// op (the attribute's verifier checks the config itself).
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_QUANTIZECONFIG_H
#define CACHET_ANALYSIS_QUANTIZECONFIG_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <string>

namespace cachet {

/// The kernels `quantize-kernel` may ask for.
enum class QuantizeKernel { Subgroup, Generic };

/// The parts of one marked quantize on buffers.
struct QuantizeShape {
  BlockQuantizedType block;
  Rounding rounding = Rounding::Away;
  /// The values ([..][blocks * 32], f32 / f16 / bf16) the generic reads
  /// in its body, and its result bytes ([..][blocks * block bytes]).
  mlir::Value values, bytes;
};

/// Returns the parts of `op` (the generic marked `cachet.quantize`),
/// or std::nullopt with `reason`.
std::optional<QuantizeShape> getQuantizeShape(mlir::linalg::GenericOp op,
                                              std::string &reason);

/// The knobs (cachet-select-kernel-configs' options).
struct QuantizeConfigOptions {
  QuantizeKernel kernel = QuantizeKernel::Subgroup;
  int64_t threads = 64;
  /// The subgroup kernel's shuffle width (0: the device profile's, else
  /// 32).
  int64_t subgroupSize = 0;
};

/// Returns why an option of `options` is out of range, or "".
std::string checkQuantizeConfigOptions(const QuantizeConfigOptions &options);

/// A decision: the config (null: the generic kernel) and the remark.
struct QuantizeDecision {
  KernelConfigAttr config;
  std::string remark;
};

/// Chooses the kernel for `op`.
QuantizeDecision selectQuantizeConfig(mlir::linalg::GenericOp op,
                                      DeviceProfileAttr profile,
                                      const QuantizeConfigOptions &options);

} // namespace cachet

#endif // CACHET_ANALYSIS_QUANTIZECONFIG_H
