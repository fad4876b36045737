//===- DeviceProfile.h - device profiles: built-ins, JSON, attribute -----===//
//
// A device profile records what the cachet passes need to know about a GPU:
// cache geometry, bandwidth and capabilities. Profiles are built in (from
// measured or quoted figures, see docs/device-profiles.md), loaded from JSON
// (for example written by cachet-probe), and attached to a module as the
// #cachet.device attribute.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_DEVICE_DEVICEPROFILE_H
#define CACHET_DEVICE_DEVICEPROFILE_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cachet {

/// The fields of a device profile, as plain data. The JSON keys and the
/// #cachet.device parameters carry the snake_case names shown next to each.
struct DeviceProfile {
  std::string name;                    ///< name
  std::string vendor;                  ///< vendor: nvidia, amd, mesa, generic
  std::string arch;                    ///< arch: sm_90, gfx1151, x86_64, ...
  uint64_t cacheLine = 0;              ///< cache_line: bytes
  uint64_t l2Bytes = 0;                ///< l2_bytes
  uint64_t aliasStride = 0;            ///< alias_stride: line x sets, 0 = none
  uint64_t aliasPad = 0;               ///< alias_pad: bytes, 0 = one cache line
  uint64_t computeUnits = 0;           ///< compute_units: SMs or CUs
  double dramGbps = 0;                 ///< dram_gbps: GB/s
  bool unifiedMemory = false;          ///< unified_memory
  double stridedReadPenalty = 1;       ///< strided_read_penalty: >= 1
  bool pdl = false;                    ///< pdl: programmatic dependent launch
  std::string l2Prefetch;              ///< l2_prefetch: none, l2, bulk, ...
  std::vector<std::string> coopMatrix; ///< coop_matrix: "MxNxK:A->C"
  uint64_t subgroupSize = 0;           ///< subgroup_size
  uint64_t sharedMemoryBytes = 0;      ///< shared_memory_bytes: per workgroup
};

/// Returns the names of the built-in profiles, in documentation order.
llvm::ArrayRef<llvm::StringRef> getBuiltinProfileNames();

/// Whether `profile` (may be null) lists the cooperative-matrix shape
/// `shape` ("MxNxK:A->C", e.g. "16x16x16:f16->f32").
bool hasCoopMatrix(DeviceProfileAttr profile, llvm::StringRef shape);

/// The runtime function compiled code calls to ask whether the Vulkan
/// device runs MxNxK f16 cooperative matrices (runtime.h): `i32 (i32, i32,
/// i32)`, non-zero where it does. A kernel with a fallback launches one or
/// the other on its answer.
constexpr llvm::StringLiteral kHasCooperativeMatrixF16 =
    "cachetMgpuHasCooperativeMatrixF16";

/// Declares kHasCooperativeMatrixF16 in `module` (an llvm.func, as the
/// other runtime calls of host code: a func.func would be called through
/// the `_mlir_ciface_` wrapper that llvm-request-c-wrappers asks for)
/// unless it is declared.
void declareCooperativeMatrixCheck(mlir::ModuleOp module);

/// `kHasCooperativeMatrixF16(16, 16, 16) != 0` (i1) at the insertion point
/// of `b`, calling the declaration in the module of `op`; null where the
/// module does not declare it.
mlir::Value buildCooperativeMatrixCheck(mlir::OpBuilder &b,
                                        mlir::Operation *op);

/// Returns the built-in profile `name`, or an error listing the known names.
llvm::Expected<DeviceProfile> getBuiltinProfile(llvm::StringRef name);

/// Parses a profile from JSON text. Errors name `source` and the field.
llvm::Expected<DeviceProfile> parseProfileJSON(llvm::StringRef text,
                                               llvm::StringRef source);

/// Resolves `nameOrPath`: a path (it contains '/' or ends in ".json") is read
/// as JSON, anything else must be a built-in name.
llvm::Expected<DeviceProfile> resolveProfile(llvm::StringRef nameOrPath);

/// Builds the #cachet.device attribute for `profile`. Returns a null
/// attribute, after reporting through `emitError`, if a field is out of range.
DeviceProfileAttr
getProfileAttr(mlir::MLIRContext *context, const DeviceProfile &profile,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Returns the #cachet.device attribute of the closest enclosing module of
/// `op` (or of `op` itself), or null if there is none.
DeviceProfileAttr lookupDeviceProfile(mlir::Operation *op);

} // namespace cachet

#endif // CACHET_DEVICE_DEVICEPROFILE_H
