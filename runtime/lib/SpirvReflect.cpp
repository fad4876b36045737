//===- SpirvReflect.cpp - What a launch needs to know about SPIR-V --------===//

#include "SpirvReflect.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>

#ifdef CACHET_RUNTIME_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.h>
#endif

using namespace cachet::runtime;

namespace {
// Opcodes, decorations and enumerants of the SPIR-V specification.
enum : uint32_t {
  OpEntryPoint = 15,
  OpExecutionMode = 16,
  OpCapability = 17,
  OpTypeInt = 21,
  OpTypeFloat = 22,
  OpTypeVector = 23,
  OpTypeArray = 28,
  OpTypeStruct = 30,
  OpTypePointer = 32,
  OpConstant = 43,
  OpSpecConstant = 50,
  OpVariable = 59,
  OpDecorate = 71,
  OpMemberDecorate = 72,
  // SPV_KHR_cooperative_matrix: a matrix held by a subgroup; it has no size
  // in a block, so a push-constant block that holds one cannot be sized.
  OpTypeCooperativeMatrixKHR = 4456,
};
enum : uint32_t {
  DecorationSpecId = 1,
  DecorationBlock = 2,
  DecorationBufferBlock = 3,
  DecorationArrayStride = 6,
  DecorationBinding = 33,
  DecorationDescriptorSet = 34,
  DecorationOffset = 35,
};
enum : uint32_t {
  StorageClassUniformConstant = 0,
  StorageClassUniform = 2,
  StorageClassPushConstant = 9,
  StorageClassStorageBuffer = 12,
  StorageClassPhysicalStorageBuffer = 5349,
};
constexpr uint32_t spirvMagic = 0x07230203;
constexpr uint32_t executionModelGLCompute = 5;
constexpr uint32_t executionModeLocalSize = 17;

Status invalid(const std::string &reason) {
  return Status(CACHET_ERROR_INVALID_BINARY, "invalid SPIR-V: " + reason);
}

/// Decodes the literal string starting at `words[at]` (within `end`).
std::string literalString(const std::vector<uint32_t> &words, size_t at,
                          size_t end, size_t &next) {
  std::string result;
  for (size_t i = at; i < end; ++i) {
    for (unsigned b = 0; b < 4; ++b) {
      char c = static_cast<char>((words[i] >> (8 * b)) & 0xff);
      if (c == '\0') {
        next = i + 1;
        return result;
      }
      result.push_back(c);
    }
  }
  next = end;
  return result;
}
} // namespace

Status SpirvModuleInfo::parse(const std::vector<uint32_t> &words,
                              SpirvModuleInfo &result) {
  if (words.size() < 5)
    return invalid("blob of " + std::to_string(words.size() * 4) +
                   " bytes is shorter than the 20-byte header");
  if (words[0] != spirvMagic) {
    char hex[16];
    snprintf(hex, sizeof(hex), "0x%08x", words[0]);
    return invalid(std::string("bad magic number ") + hex +
                   " (expected 0x07230203)");
  }
  uint32_t bound = words[3];
  if (bound == 0 || bound > (1u << 22))
    return invalid("implausible id bound " + std::to_string(bound));
  SpirvModuleInfo info;
  info.version = words[1];
  info.typeWords.resize(bound);
  info.descriptorSet.assign(bound, -1);
  info.binding.assign(bound, -1);
  info.blockKind.assign(bound, 0);
  info.arrayStride.assign(bound, 0);
  // The default value (first word) of each OpSpecConstant, by id, and the
  // id decorated with the subgroup size's SpecId.
  std::vector<uint64_t> specDefault(bound, UINT64_MAX);
  uint32_t subgroupSizeId = 0;
  info.constantValue.assign(bound, UINT64_MAX);
  info.memberOffsets.resize(bound);
  auto checkId = [&](uint32_t id) { return id < bound; };

  size_t at = 5;
  while (at < words.size()) {
    uint32_t count = words[at] >> 16;
    uint32_t opcode = words[at] & 0xffff;
    if (count == 0)
      return invalid("instruction at word " + std::to_string(at) +
                     " has a word count of 0");
    size_t end = at + count;
    if (end > words.size())
      return invalid("instruction at word " + std::to_string(at) + " (opcode " +
                     std::to_string(opcode) +
                     ") runs past the end of the blob");
    const uint32_t *op = &words[at];
    switch (opcode) {
    case OpEntryPoint: {
      if (count < 4)
        return invalid("truncated OpEntryPoint");
      EntryPoint entry;
      entry.model = op[1];
      entry.id = op[2];
      size_t next = end;
      entry.name = literalString(words, at + 3, end, next);
      entry.interface.assign(words.begin() + next, words.begin() + end);
      info.entryPoints.push_back(std::move(entry));
      break;
    }
    case OpCapability:
      if (count < 2)
        return invalid("truncated OpCapability");
      info.capabilities.push_back(op[1]);
      break;
    case OpExecutionMode:
      if (count >= 6 && op[2] == executionModeLocalSize) {
        for (EntryPoint &entry : info.entryPoints)
          if (entry.id == op[1])
            std::copy(op + 3, op + 6, entry.localSize);
      }
      break;
    case OpTypeInt:
    case OpTypeFloat:
    case OpTypeVector:
    case OpTypeArray:
    case OpTypeStruct:
    case OpTypePointer:
    case OpTypeCooperativeMatrixKHR:
      if (count < 2 || !checkId(op[1]))
        return invalid("type id out of bounds");
      info.typeWords[op[1]].assign(op, op + count);
      break;
    case OpConstant:
      if (count >= 4 && checkId(op[2]))
        info.constantValue[op[2]] = op[3];
      break;
    case OpSpecConstant:
      if (count < 4 || !checkId(op[2]))
        return invalid("malformed OpSpecConstant");
      specDefault[op[2]] = op[3];
      break;
    case OpVariable:
      if (count < 4 || !checkId(op[2]))
        return invalid("malformed OpVariable");
      info.variables.push_back({op[2], op[1], op[3]});
      break;
    case OpDecorate:
      if (count < 3 || !checkId(op[1]))
        return invalid("malformed OpDecorate");
      if (op[2] == DecorationDescriptorSet && count >= 4)
        info.descriptorSet[op[1]] = op[3];
      else if (op[2] == DecorationBinding && count >= 4)
        info.binding[op[1]] = op[3];
      else if (op[2] == DecorationBlock || op[2] == DecorationBufferBlock)
        info.blockKind[op[1]] = op[2];
      else if (op[2] == DecorationArrayStride && count >= 4)
        info.arrayStride[op[1]] = op[3];
      else if (op[2] == DecorationSpecId && count >= 4 &&
               op[3] == CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID)
        subgroupSizeId = op[1];
      break;
    case OpMemberDecorate:
      if (count < 4 || !checkId(op[1]))
        return invalid("malformed OpMemberDecorate");
      if (op[3] == DecorationOffset && count >= 5)
        info.memberOffsets[op[1]].push_back({op[2], op[4]});
      break;
    default:
      break;
    }
    at = end;
  }
  if (info.entryPoints.empty())
    return invalid("the module has no entry point");
  if (subgroupSizeId) {
    uint64_t size = specDefault[subgroupSizeId];
    if (size == UINT64_MAX || size == 0 || (size & (size - 1)) != 0)
      return invalid("the subgroup-size specialization constant (SpecId " +
                     std::to_string(CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID) +
                     ") is not an OpSpecConstant of a power of two");
    info.subgroupSize = uint32_t(size);
  }
  result = std::move(info);
  return Status::success();
}

uint64_t SpirvModuleInfo::typeSize(uint32_t id, unsigned depth) const {
  if (id >= typeWords.size() || typeWords[id].empty() || depth > 16)
    return 0;
  const std::vector<uint32_t> &op = typeWords[id];
  switch (op[0] & 0xffff) {
  case OpTypeInt:
  case OpTypeFloat:
    return op.size() >= 3 ? op[2] / 8 : 0;
  case OpTypeVector:
    return op.size() >= 4 ? op[3] * typeSize(op[2], depth + 1) : 0;
  case OpTypeArray: {
    if (op.size() < 4 || op[3] >= constantValue.size() ||
        constantValue[op[3]] == UINT64_MAX)
      return 0;
    uint64_t stride =
        arrayStride[id] ? arrayStride[id] : typeSize(op[2], depth + 1);
    return constantValue[op[3]] * stride;
  }
  case OpTypeStruct: {
    uint64_t size = 0;
    for (size_t member = 0; member + 2 < op.size(); ++member) {
      const auto &offsets = memberOffsets[id];
      auto it = std::find_if(offsets.begin(), offsets.end(),
                             [&](auto &p) { return p.first == member; });
      uint64_t memberSize = typeSize(op[member + 2], depth + 1);
      if (it == offsets.end() || memberSize == 0)
        return 0;
      size = std::max<uint64_t>(size, it->second + memberSize);
    }
    return size;
  }
  case OpTypePointer:
    // A buffer device address.
    return op.size() >= 3 && op[2] == StorageClassPhysicalStorageBuffer ? 8 : 0;
  default:
    return 0;
  }
}

Status SpirvModuleInfo::addVariable(const Variable &var,
                                    const std::string &name,
                                    CachetKernelInfo &info) const {
  const std::vector<uint32_t> *pointer = var.pointerType < typeWords.size()
                                             ? &typeWords[var.pointerType]
                                             : nullptr;
  uint32_t pointee =
      pointer && pointer->size() >= 4 ? (*pointer)[3] : UINT32_MAX;
  std::string varName = "%" + std::to_string(var.id);
  switch (var.storageClass) {
  case StorageClassPushConstant: {
    uint64_t size = typeSize(pointee, 0);
    if (size == 0)
      return Status(CACHET_ERROR_UNSUPPORTED,
                    "cannot size the push-constant block " + varName +
                        " of entry point '" + name + "'");
    info.pushConstantBytes = static_cast<uint32_t>(size);
    break;
  }
  case StorageClassUniform:
    if (pointee >= blockKind.size() ||
        blockKind[pointee] != DecorationBufferBlock)
      return Status(CACHET_ERROR_UNSUPPORTED,
                    "entry point '" + name + "' uses a uniform buffer (" +
                        varName + "); only storage buffers are bound");
    [[fallthrough]];
  case StorageClassStorageBuffer: {
    if (descriptorSet[var.id] != 0 || binding[var.id] < 0)
      return Status(CACHET_ERROR_UNSUPPORTED,
                    "storage buffer " + varName + " of entry point '" + name +
                        "' is not in descriptor set 0");
    info.numBindings = std::max<uint32_t>(
        info.numBindings, static_cast<uint32_t>(binding[var.id]) + 1);
    break;
  }
  case StorageClassUniformConstant:
    return Status(CACHET_ERROR_UNSUPPORTED,
                  "entry point '" + name + "' uses an image or sampler (" +
                      varName + "); only storage buffers are bound");
  default:
    break;
  }
  return Status::success();
}

Status SpirvModuleInfo::describeEntryPoint(const std::string &name,
                                           CachetKernelInfo &info) const {
  const EntryPoint *entry = nullptr;
  std::string known;
  for (const EntryPoint &candidate : entryPoints) {
    if (candidate.name == name && candidate.model == executionModelGLCompute)
      entry = &candidate;
    known += (known.empty() ? "'" : ", '") + candidate.name + "'";
  }
  if (!entry)
    return Status(CACHET_ERROR_NOT_FOUND, "no compute entry point '" + name +
                                              "' in the module (it has " +
                                              known + ")");

  info = CachetKernelInfo();
  std::copy(entry->localSize, entry->localSize + 3, info.workgroupSize);
  info.subgroupSize = subgroupSize;
  // From SPIR-V 1.4 on, the interface lists every global the entry point
  // uses; before, only inputs and outputs, so every global counts.
  bool useInterface = version >= 0x00010400;
  for (const Variable &var : variables) {
    if (useInterface &&
        std::find(entry->interface.begin(), entry->interface.end(), var.id) ==
            entry->interface.end())
      continue;
    CACHET_RETURN_IF_ERROR(addVariable(var, name, info));
  }
  return Status::success();
}

Status SpirvModuleInfo::checkVersionForVulkan(unsigned vulkanMinor,
                                              const std::string &device) const {
  uint32_t highest = vulkanMinor >= 3   ? 0x00010600
                     : vulkanMinor == 2 ? 0x00010500
                     : vulkanMinor == 1 ? 0x00010300
                                        : 0x00010000;
  if (version <= highest)
    return Status::success();
  auto name = [](uint32_t v) {
    return std::to_string((v >> 16) & 0xff) + "." +
           std::to_string((v >> 8) & 0xff);
  };
  return Status(CACHET_ERROR_UNSUPPORTED,
                "the module is SPIR-V " + name(version) + "; " + device +
                    " runs Vulkan 1." + std::to_string(vulkanMinor) +
                    ", which accepts SPIR-V up to " + name(highest));
}

#ifdef CACHET_RUNTIME_HAVE_SPIRV_TOOLS
namespace {
/// Returns the first of `capabilities` that the linked SPIRV-Tools does not
/// know: its binary parser checks an OpCapability operand against the
/// grammar it was built with (for the newest SPIR-V it knows, so that only
/// unknown names fail), so a module of one OpCapability tells.
std::optional<uint32_t>
unknownCapability(const std::vector<uint32_t> &capabilities) {
  spv_context context = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  std::optional<uint32_t> unknown;
  for (uint32_t capability : capabilities) {
    const uint32_t probe[] = {
        spirvMagic, 0x00010000, 0, 1, 0, (2u << 16) | OpCapability, capability};
    spv_diagnostic diagnostic = nullptr;
    spv_result_t result =
        spvBinaryParse(context, nullptr, probe, sizeof(probe) / 4, nullptr,
                       nullptr, &diagnostic);
    spvDiagnosticDestroy(diagnostic);
    if (result != SPV_SUCCESS) {
      unknown = capability;
      break;
    }
  }
  spvContextDestroy(context);
  return unknown;
}
} // namespace
#endif

Status cachet::runtime::validateForVulkan(
    const std::vector<uint32_t> &words,
    const std::vector<uint32_t> &capabilities, unsigned vulkanMinor,
    const SpirvLayoutRules &rules, std::string &skipped) {
  skipped.clear();
#ifdef CACHET_RUNTIME_HAVE_SPIRV_TOOLS
  spv_target_env env = vulkanMinor >= 3   ? SPV_ENV_VULKAN_1_3
                       : vulkanMinor == 2 ? SPV_ENV_VULKAN_1_2
                       : vulkanMinor == 1 ? SPV_ENV_VULKAN_1_1
                                          : SPV_ENV_VULKAN_1_0;
  // The validator rejects a capability it does not know as an invalid
  // operand, whatever the module's merits: such a module is not validated
  // (the structural checks of SpirvModuleInfo::parse() and the runtime's
  // capability checks remain), rather than refused.
  if (std::optional<uint32_t> unknown = unknownCapability(capabilities)) {
    skipped = "the linked SPIRV-Tools does not know capability " +
              std::to_string(*unknown);
    return Status::success();
  }
  spv_context context = spvContextCreate(env);
  spv_validator_options options = spvValidatorOptionsCreate();
  // Vulkan 1.1 made relaxed block layout core.
  spvValidatorOptionsSetRelaxBlockLayout(options, vulkanMinor >= 1);
  spvValidatorOptionsSetScalarBlockLayout(options, rules.scalarBlockLayout);
  spvValidatorOptionsSetUniformBufferStandardLayout(
      options, rules.uniformBufferStandardLayout);
  spv_const_binary_t binary = {words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  spv_result_t result =
      spvValidateWithOptions(context, options, &binary, &diagnostic);
  std::string message;
  if (result != SPV_SUCCESS) {
    message = diagnostic && diagnostic->error ? diagnostic->error
                                              : "unknown validation error";
    // One line: the reason, then the offending instruction.
    while (!message.empty() && std::isspace(message.back()))
      message.pop_back();
    for (size_t nl = message.find('\n'); nl != std::string::npos;
         nl = message.find('\n', nl)) {
      size_t end = message.find_first_not_of(" \t", nl + 1);
      message.replace(
          nl, end == std::string::npos ? std::string::npos : end - nl, " in: ");
    }
  }
  spvDiagnosticDestroy(diagnostic);
  spvValidatorOptionsDestroy(options);
  spvContextDestroy(context);
  if (result != SPV_SUCCESS)
    return Status(CACHET_ERROR_INVALID_BINARY,
                  "SPIR-V validation failed for Vulkan 1." +
                      std::to_string(vulkanMinor) + ": " + message);
#else
  (void)words;
  (void)capabilities;
  (void)vulkanMinor;
  (void)rules;
  skipped = "the runtime was built without SPIRV-Tools";
#endif
  return Status::success();
}
