//===- spirv-reflect.cpp - What the runtime reads from a SPIR-V file ------===//
//
// Unit test driver of the Vulkan backend's SPIR-V reader (SpirvReflect.cpp,
// compiled in): prints the version and capabilities it parsed, what it
// reflects for each named entry point (the bindings, push-constant bytes,
// workgroup size and subgroup size a launch checks), whether Vulkan 1.N accepts
// the module's version, and what the SPIR-V validator makes of it. No device is
// needed.
//
//   cachet-spirv-reflect FILE.spv [--entry=NAME]... [--vulkan=N]
//
// Exits 0 when the file parses, 1 when it does not, 2 on a usage error.
//
//===----------------------------------------------------------------------===//

#include "SpirvReflect.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace cachet::runtime;

namespace {

std::string describe(const Status &status) {
  return std::string(cachetStatusString(status.getCode())) + " " +
         status.getMessage();
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  std::vector<std::string> entries;
  unsigned vulkanMinor = 3;
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--entry=", 0) == 0)
      entries.push_back(arg.substr(8));
    else if (arg.rfind("--vulkan=", 0) == 0)
      vulkanMinor = static_cast<unsigned>(std::atoi(arg.c_str() + 9));
    else if (path.empty() && arg[0] != '-')
      path = arg;
    else
      usage = true;
  }
  if (usage || path.empty()) {
    std::fprintf(stderr, "usage: cachet-spirv-reflect FILE.spv "
                         "[--entry=NAME]... [--vulkan=N]\n");
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  if (!words.empty())
    std::memcpy(words.data(), bytes.data(), words.size() * 4);

  SpirvModuleInfo module;
  Status parsed = SpirvModuleInfo::parse(words, module);
  if (!parsed.ok()) {
    std::printf("parse: %s\n", describe(parsed).c_str());
    return 1;
  }
  uint32_t version = module.getVersion();
  std::printf("SPIR-V %u.%u, capabilities:", (version >> 16) & 0xff,
              (version >> 8) & 0xff);
  for (uint32_t capability : module.getCapabilities())
    std::printf(" %u", capability);
  std::printf("\n");
  for (const std::string &entry : entries) {
    CachetKernelInfo info;
    Status described = module.describeEntryPoint(entry, info);
    if (described.ok()) {
      std::string subgroup =
          info.subgroupSize
              ? "subgroups of " + std::to_string(info.subgroupSize)
              : std::string("any subgroup size");
      std::printf("entry point '%s': %u bindings, %u push-constant bytes, "
                  "workgroup %ux%ux%u, %s\n",
                  entry.c_str(), info.numBindings, info.pushConstantBytes,
                  info.workgroupSize[0], info.workgroupSize[1],
                  info.workgroupSize[2], subgroup.c_str());
    } else
      std::printf("entry point '%s': %s\n", entry.c_str(),
                  describe(described).c_str());
  }
  Status accepted = module.checkVersionForVulkan(vulkanMinor, "the device");
  std::printf("Vulkan 1.%u: %s\n", vulkanMinor,
              accepted.ok() ? "version accepted" : describe(accepted).c_str());
  std::string skipped;
  Status valid = validateForVulkan(words, module.getCapabilities(), vulkanMinor,
                                   SpirvLayoutRules(), skipped);
  std::string verdict = !valid.ok()       ? describe(valid)
                        : skipped.empty() ? std::string("valid")
                                          : "skipped: " + skipped;
  std::printf("validator for Vulkan 1.%u: %s\n", vulkanMinor, verdict.c_str());
  return 0;
}
