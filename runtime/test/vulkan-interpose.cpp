//===- vulkan-interpose.cpp - The test's stand-ins for Vulkan entry points ===//
//
// libcachet_runtime calls the Vulkan loader's exported functions. The
// definitions below, in the test executable, come first in symbol lookup and
// forward to the loader's: vkAllocateMemory counts the device memory
// allocations of each memory type, and, once fakeDiscreteGpu() is called,
// the physical device queries present the device as a discrete GPU with the
// memory types of one, every one of which is backed by the device's real
// first type (host visible on lavapipe).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <dlfcn.h>

using namespace cachet_test;

namespace {

constexpr uint32_t maxCountedTypes = 32;
std::atomic<uint64_t> allocations[maxCountedTypes];
std::atomic<uint64_t> bufferCopies{0};
std::atomic<uint64_t> timestampWrites{0};
std::atomic<FakeMemory> fakeLayout{FakeMemory::None};
/// Whether a device was presented with a fake layout.
std::atomic<bool> faked{false};

/// The loader's definition of `name`.
template <typename Fn> Fn next(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

/// Whether `device`'s first memory type can back every fake type.
bool fakeable(VkPhysicalDevice device) {
  static auto real = next<PFN_vkGetPhysicalDeviceMemoryProperties>(
      "vkGetPhysicalDeviceMemoryProperties");
  VkPhysicalDeviceMemoryProperties memory;
  real(device, &memory);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  return fakeLayout != FakeMemory::None && memory.memoryTypeCount > 0 &&
         (memory.memoryTypes[0].propertyFlags & host) == host;
}

} // namespace

uint64_t cachet_test::vulkanMemoryAllocations(int type) {
  if (type >= 0)
    return type < int(maxCountedTypes) ? allocations[type].load() : 0;
  uint64_t total = 0;
  for (const std::atomic<uint64_t> &count : allocations)
    total += count;
  return total;
}

uint64_t cachet_test::vulkanBufferCopies() { return bufferCopies.load(); }

uint64_t cachet_test::vulkanTimestampWrites() { return timestampWrites.load(); }

void cachet_test::fakeDiscreteGpu(FakeMemory layout) { fakeLayout = layout; }

bool cachet_test::fakeDiscreteGpuActive() { return faked; }

extern "C" {

VKAPI_ATTR void VKAPI_CALL vkCmdCopyBuffer(VkCommandBuffer commandBuffer,
                                           VkBuffer src, VkBuffer dst,
                                           uint32_t regionCount,
                                           const VkBufferCopy *regions) {
  static auto real = next<PFN_vkCmdCopyBuffer>("vkCmdCopyBuffer");
  ++bufferCopies;
  real(commandBuffer, src, dst, regionCount, regions);
}

VKAPI_ATTR void VKAPI_CALL vkCmdWriteTimestamp(VkCommandBuffer commandBuffer,
                                               VkPipelineStageFlagBits stage,
                                               VkQueryPool pool,
                                               uint32_t query) {
  static auto real = next<PFN_vkCmdWriteTimestamp>("vkCmdWriteTimestamp");
  ++timestampWrites;
  real(commandBuffer, stage, pool, query);
}

VKAPI_ATTR VkResult VKAPI_CALL vkAllocateMemory(
    VkDevice device, const VkMemoryAllocateInfo *allocateInfo,
    const VkAllocationCallbacks *allocator, VkDeviceMemory *memory) {
  static auto real = next<PFN_vkAllocateMemory>("vkAllocateMemory");
  if (allocateInfo->memoryTypeIndex < maxCountedTypes)
    ++allocations[allocateInfo->memoryTypeIndex];
  if (!faked)
    return real(device, allocateInfo, allocator, memory);
  VkMemoryAllocateInfo backed = *allocateInfo;
  backed.memoryTypeIndex = 0;
  return real(device, &backed, allocator, memory);
}

VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceProperties(
    VkPhysicalDevice device, VkPhysicalDeviceProperties *properties) {
  static auto real =
      next<PFN_vkGetPhysicalDeviceProperties>("vkGetPhysicalDeviceProperties");
  real(device, properties);
  if (fakeable(device))
    properties->deviceType = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
}

VKAPI_ATTR void VKAPI_CALL vkGetPhysicalDeviceMemoryProperties(
    VkPhysicalDevice device, VkPhysicalDeviceMemoryProperties *memory) {
  static auto real = next<PFN_vkGetPhysicalDeviceMemoryProperties>(
      "vkGetPhysicalDeviceMemoryProperties");
  real(device, memory);
  if (!fakeable(device))
    return;
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  // Heap 0 is the device's, heap 1 the host's. The types are those of
  // FakeMemory's documentation, in that order.
  VkDeviceSize size =
      memory->memoryHeaps[memory->memoryTypes[0].heapIndex].size;
  *memory = {};
  memory->memoryHeapCount = 2;
  memory->memoryHeaps[0] = {size, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
  memory->memoryHeaps[1] = {size, 0};
  auto add = [&](VkMemoryPropertyFlags flags, uint32_t heap) {
    memory->memoryTypes[memory->memoryTypeCount++] = {flags, heap};
  };
  if (fakeLayout == FakeMemory::ResizableBar) {
    add(0, 1);
    add(local, 0);
    add(host, 1);
    add(host | cached, 1);
    add(local | host, 0);
  } else {
    add(local, 0);
    add(host | cached, 1);
    add(local | host | cached, 0);
  }
  faked = true;
}

VKAPI_ATTR void VKAPI_CALL vkGetBufferMemoryRequirements(
    VkDevice device, VkBuffer buffer, VkMemoryRequirements *requirements) {
  static auto real =
      next<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements");
  real(device, buffer, requirements);
  if (faked && (requirements->memoryTypeBits & 1))
    requirements->memoryTypeBits = ~0u;
}

} // extern "C"
