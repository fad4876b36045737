//===- vulkan-allocations.cpp - Counts the runtime's vkAllocateMemory -----===//
//
// libcachet_runtime calls the Vulkan loader's exported vkAllocateMemory. The
// definition below, in the test executable, comes first in symbol lookup:
// it counts each call and forwards it to the loader's, so that a test can
// see how many device memory allocations a sequence of runtime calls made.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <dlfcn.h>

namespace {
std::atomic<uint64_t> allocations{0};
} // namespace

extern "C" VKAPI_ATTR VkResult VKAPI_CALL
vkAllocateMemory(VkDevice device, const VkMemoryAllocateInfo *allocateInfo,
                 const VkAllocationCallbacks *allocator,
                 VkDeviceMemory *memory) {
  static auto next = reinterpret_cast<PFN_vkAllocateMemory>(
      dlsym(RTLD_NEXT, "vkAllocateMemory"));
  if (!next)
    return VK_ERROR_INITIALIZATION_FAILED;
  ++allocations;
  return next(device, allocateInfo, allocator, memory);
}

uint64_t cachet_test::vulkanMemoryAllocations() { return allocations; }
