//===- SpirvReflect.h - What a launch needs from SPIR-V ---------*- C++ -*-===//
//
// A small SPIR-V reader: it checks that a blob is well-formed (header, every
// instruction inside the blob) and finds, for a compute entry point, the
// storage-buffer bindings, the push-constant block size and the workgroup
// size. No SPIR-V library is needed at run time.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_RUNTIME_LIB_SPIRVREFLECT_H
#define CACHET_RUNTIME_LIB_SPIRVREFLECT_H

#include "Backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cachet {
namespace runtime {

/// SPIR-V capability CooperativeMatrixKHR (SPV_KHR_cooperative_matrix).
constexpr uint32_t spirvCapabilityCooperativeMatrixKHR = 6022;
/// SPV_KHR_bfloat16's capabilities.
constexpr uint32_t spirvCapabilityBFloat16TypeKHR = 5116;
constexpr uint32_t spirvCapabilityBFloat16DotProductKHR = 5117;
constexpr uint32_t spirvCapabilityBFloat16CooperativeMatrixKHR = 5118;

/// How a Vulkan device lays out blocks, for the validator.
struct SpirvLayoutRules {
  bool scalarBlockLayout = false;
  bool uniformBufferStandardLayout = false;
};

/// Runs the SPIR-V validator (SPIRV-Tools, linked statically when the build
/// found it) for a Vulkan 1.`vulkanMinor` device; fails with
/// CACHET_ERROR_INVALID_BINARY and the validator's message. It succeeds
/// without validating, and says why in `skipped`, where there is no
/// SPIRV-Tools or where the module declares one of `capabilities` that the
/// linked SPIRV-Tools does not know (e.g. CooperativeMatrixKHR before
/// SPIRV-Tools 2023.4): the structural checks of SpirvModuleInfo remain.
Status validateForVulkan(const std::vector<uint32_t> &words,
                         const std::vector<uint32_t> &capabilities,
                         unsigned vulkanMinor, const SpirvLayoutRules &rules,
                         std::string &skipped);

/// The parsed facts of one SPIR-V module.
class SpirvModuleInfo {
public:
  /// Parses `words`; fails with CACHET_ERROR_INVALID_BINARY and a reason.
  static Status parse(const std::vector<uint32_t> &words,
                      SpirvModuleInfo &result);

  /// Describes the GLCompute entry point `name`; fails with
  /// CACHET_ERROR_NOT_FOUND (listing the entry points) or
  /// CACHET_ERROR_UNSUPPORTED (a resource other than storage buffers and
  /// push constants, or a descriptor set other than 0).
  Status describeEntryPoint(const std::string &name,
                            CachetKernelInfo &info) const;

  /// The version word of the header (0x00010600 for SPIR-V 1.6).
  uint32_t getVersion() const { return version; }
  /// The capabilities the module declares (OpCapability), in order.
  const std::vector<uint32_t> &getCapabilities() const { return capabilities; }
  /// Fails with CACHET_ERROR_UNSUPPORTED when the module's SPIR-V version is
  /// above the highest one Vulkan 1.`vulkanMinor` accepts (1.0: 1.0, 1.1:
  /// 1.3, 1.2: 1.5, 1.3: 1.6); `device` describes the device for the message.
  Status checkVersionForVulkan(unsigned vulkanMinor,
                               const std::string &device) const;

private:
  struct EntryPoint {
    uint32_t model;
    uint32_t id;
    std::string name;
    std::vector<uint32_t> interface;
    uint32_t localSize[3] = {0, 0, 0};
  };
  struct Variable {
    uint32_t id;
    uint32_t pointerType;
    uint32_t storageClass;
  };
  /// Adds global `var`, used by entry point `name`, to `info`.
  Status addVariable(const Variable &var, const std::string &name,
                     CachetKernelInfo &info) const;
  /// The byte size of type `id` in a push-constant block, 0 if unknown.
  uint64_t typeSize(uint32_t id, unsigned depth) const;

  uint32_t version = 0;
  /// The subgroup size the module's kernels were written for: the default
  /// value of its specialization constant decorated with SpecId
  /// CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID; 0 where there is none.
  uint32_t subgroupSize = 0;
  std::vector<uint32_t> capabilities;
  std::vector<EntryPoint> entryPoints;
  std::vector<Variable> variables;
  // Indexed by result id.
  std::vector<std::vector<uint32_t>> typeWords;
  std::vector<int64_t> descriptorSet;
  std::vector<int64_t> binding;
  std::vector<uint32_t> blockKind;
  std::vector<uint32_t> arrayStride;
  std::vector<uint64_t> constantValue;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> memberOffsets;
};

} // namespace runtime
} // namespace cachet

#endif // CACHET_RUNTIME_LIB_SPIRVREFLECT_H
