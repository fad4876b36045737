//===- VulkanBackend.cpp - The Vulkan backend of libcachet_runtime --------===//
//
// One device, one compute queue, one command buffer that collects launches
// until the host needs a result (a download, a timestamp, a synchronize).
// Each launch gets a descriptor set from a pool that is reset after every
// submission; pipelines are built once per (module, entry point). Buffers
// live in device-local memory. Where the host can map that memory cheaply
// (unified memory, as on lavapipe, or host-cached device memory) it copies
// directly through a persistent mapping; otherwise (a discrete GPU, whose
// memory behind the PCIe BAR the host would read uncached) it copies through
// a pair of staging buffers in host memory, filling or draining one while
// the device copies out of or into the other.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "DriverApi.h"
#include "SpirvReflect.h"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <map>
#include <vector>

using namespace cachet::runtime;

#ifndef VK_KHR_cooperative_matrix
// VK_KHR_cooperative_matrix (registry extension 507), which Vulkan headers
// before 1.3.255 (Debian 12 has 1.3.239) do not declare: the names, values and
// layouts of the Vulkan registry.
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
constexpr VkStructureType
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR =
        static_cast<VkStructureType>(1000506000);
constexpr VkStructureType VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR =
    static_cast<VkStructureType>(1000506001);
constexpr VkStructureType
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR =
        static_cast<VkStructureType>(1000506002);

typedef enum VkComponentTypeKHR {
  VK_COMPONENT_TYPE_FLOAT16_KHR = 0,
  VK_COMPONENT_TYPE_FLOAT32_KHR = 1,
  VK_COMPONENT_TYPE_FLOAT64_KHR = 2,
  VK_COMPONENT_TYPE_SINT8_KHR = 3,
  VK_COMPONENT_TYPE_SINT16_KHR = 4,
  VK_COMPONENT_TYPE_SINT32_KHR = 5,
  VK_COMPONENT_TYPE_SINT64_KHR = 6,
  VK_COMPONENT_TYPE_UINT8_KHR = 7,
  VK_COMPONENT_TYPE_UINT16_KHR = 8,
  VK_COMPONENT_TYPE_UINT32_KHR = 9,
  VK_COMPONENT_TYPE_UINT64_KHR = 10,
  // VK_KHR_shader_bfloat16's.
  VK_COMPONENT_TYPE_BFLOAT16_KHR = 1000141000,
  VK_COMPONENT_TYPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkComponentTypeKHR;

typedef enum VkScopeKHR {
  VK_SCOPE_DEVICE_KHR = 1,
  VK_SCOPE_WORKGROUP_KHR = 2,
  VK_SCOPE_SUBGROUP_KHR = 3,
  VK_SCOPE_QUEUE_FAMILY_KHR = 5,
  VK_SCOPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkScopeKHR;

typedef struct VkCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void *pNext;
  uint32_t MSize;
  uint32_t NSize;
  uint32_t KSize;
  VkComponentTypeKHR AType;
  VkComponentTypeKHR BType;
  VkComponentTypeKHR CType;
  VkComponentTypeKHR ResultType;
  VkBool32 saturatingAccumulation;
  VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;

typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void *pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;

typedef struct VkPhysicalDeviceCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void *pNext;
  VkShaderStageFlags cooperativeMatrixSupportedStages;
} VkPhysicalDeviceCooperativeMatrixPropertiesKHR;

typedef VkResult(
    VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount,
    VkCooperativeMatrixPropertiesKHR *pProperties);
#endif // VK_KHR_cooperative_matrix

#ifndef VK_KHR_shader_bfloat16
#define VK_KHR_shader_bfloat16 1
#define VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME "VK_KHR_shader_bfloat16"
constexpr VkStructureType
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR =
        static_cast<VkStructureType>(1000141000);
typedef struct VkPhysicalDeviceShaderBfloat16FeaturesKHR {
  VkStructureType sType;
  void *pNext;
  VkBool32 shaderBFloat16Type;
  VkBool32 shaderBFloat16DotProduct;
  VkBool32 shaderBFloat16CooperativeMatrix;
} VkPhysicalDeviceShaderBfloat16FeaturesKHR;
#endif // VK_KHR_shader_bfloat16

namespace {

const char *resultName(VkResult result) {
  switch (result) {
#define CACHET_VK_RESULT(name)                                                 \
  case name:                                                                   \
    return #name;
    CACHET_VK_RESULT(VK_NOT_READY)
    CACHET_VK_RESULT(VK_TIMEOUT)
    CACHET_VK_RESULT(VK_INCOMPLETE)
    CACHET_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    CACHET_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CACHET_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    CACHET_VK_RESULT(VK_ERROR_DEVICE_LOST)
    CACHET_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    CACHET_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    CACHET_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    CACHET_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    CACHET_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    CACHET_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    CACHET_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    CACHET_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    CACHET_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef CACHET_VK_RESULT
  default:
    return "VkResult error";
  }
}

Status vulkanFailure(const char *call, VkResult result) {
  bool oom = result == VK_ERROR_OUT_OF_DEVICE_MEMORY ||
             result == VK_ERROR_OUT_OF_HOST_MEMORY;
  return Status(oom ? CACHET_ERROR_OUT_OF_MEMORY : CACHET_ERROR_BACKEND,
                std::string(call) + " failed: " + resultName(result) + " (" +
                    std::to_string(static_cast<int>(result)) + ")");
}

#define CACHET_VK_CHECK(call, expr)                                            \
  do {                                                                         \
    VkResult vkResult_ = (expr);                                               \
    if (vkResult_ != VK_SUCCESS)                                               \
      return vulkanFailure(call, vkResult_);                                   \
  } while (false)

/// Returns a zero-initialized Vulkan structure of type `type`.
template <typename T> T makeStruct(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

/// Returns the extension properties structure of type `type` of `device`
/// (through vkGetPhysicalDeviceProperties2).
template <typename T>
T queryProperties(VkPhysicalDevice device, VkStructureType type) {
  T value = makeStruct<T>(type);
  auto properties2 = makeStruct<VkPhysicalDeviceProperties2>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  properties2.pNext = &value;
  vkGetPhysicalDeviceProperties2(device, &properties2);
  value.pNext = nullptr;
  return value;
}

/// Returns the device-profile name of a component type of
/// VK_KHR_cooperative_matrix itself or of VK_KHR_shader_bfloat16 (bf16), or
/// null (fp8 and other types of later extensions).
const char *componentName(VkComponentTypeKHR type) {
  switch (type) {
  case VK_COMPONENT_TYPE_FLOAT16_KHR:
    return "f16";
  case VK_COMPONENT_TYPE_BFLOAT16_KHR:
    return "bf16";
  case VK_COMPONENT_TYPE_FLOAT32_KHR:
    return "f32";
  case VK_COMPONENT_TYPE_FLOAT64_KHR:
    return "f64";
  case VK_COMPONENT_TYPE_SINT8_KHR:
    return "i8";
  case VK_COMPONENT_TYPE_SINT16_KHR:
    return "i16";
  case VK_COMPONENT_TYPE_SINT32_KHR:
    return "i32";
  case VK_COMPONENT_TYPE_SINT64_KHR:
    return "i64";
  case VK_COMPONENT_TYPE_UINT8_KHR:
    return "u8";
  case VK_COMPONENT_TYPE_UINT16_KHR:
    return "u16";
  case VK_COMPONENT_TYPE_UINT32_KHR:
    return "u32";
  case VK_COMPONENT_TYPE_UINT64_KHR:
    return "u64";
  default:
    return nullptr;
  }
}

/// Writes the subgroup-scope entries of `shapes` into `out` (`capacity`
/// bytes, NUL included) as device profiles write coop_matrix entries,
/// "MxNxK:A->C", comma-separated, each once; entries that do not fit are
/// left out, and bf16 ones unless `bf16` (the runtime enabled
/// shaderBFloat16CooperativeMatrix).
void formatShapes(const std::vector<VkCooperativeMatrixPropertiesKHR> &shapes,
                  bool bf16, char *out, size_t capacity) {
  std::string list;
  for (const VkCooperativeMatrixPropertiesKHR &shape : shapes) {
    const char *a = componentName(shape.AType);
    const char *c = componentName(shape.ResultType);
    if (shape.scope != VK_SCOPE_SUBGROUP_KHR || shape.saturatingAccumulation ||
        shape.AType != shape.BType || shape.CType != shape.ResultType || !a ||
        !c ||
        (!bf16 && (shape.AType == VK_COMPONENT_TYPE_BFLOAT16_KHR ||
                   shape.CType == VK_COMPONENT_TYPE_BFLOAT16_KHR)))
      continue;
    std::string entry = std::to_string(shape.MSize) + "x" +
                        std::to_string(shape.NSize) + "x" +
                        std::to_string(shape.KSize) + ":" + a + "->" + c;
    if (("," + list + ",").find("," + entry + ",") != std::string::npos ||
        list.size() + entry.size() + 1 >= capacity)
      continue;
    list += (list.empty() ? "" : ",") + entry;
  }
  std::snprintf(out, capacity, "%s", list.c_str());
}

/// Bytes a staging buffer holds at most; larger copies go in pieces.
constexpr uint64_t stagingChunkBytes = 64ull << 20;
/// Staging buffers of the host transfers: chunk i of a transfer goes through
/// buffer i % 2.
constexpr unsigned numStagingSlots = 2;
/// Launches recorded before the command buffer is submitted on its own.
constexpr uint32_t maxRecordedCommands = 4096;
constexpr uint32_t descriptorPoolSets = 256;
constexpr uint32_t descriptorPoolBuffers = 2048;

class VulkanBuffer final : public Buffer {
public:
  VulkanBuffer(VkDevice device, uint64_t size) : Buffer(size), device(device) {}
  ~VulkanBuffer() override {
    if (buffer)
      vkDestroyBuffer(device, buffer, nullptr);
    if (memory) {
      if (mapped)
        vkUnmapMemory(device, memory);
      vkFreeMemory(device, memory, nullptr);
    }
  }

  VkDevice device;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  /// Host mapping, when the host copies directly.
  char *mapped = nullptr;
  /// Whether uploads and downloads copy through `mapped`: false for memory
  /// behind a discrete GPU's PCIe BAR (host-visible device-local memory that
  /// is not host-cached, mapped for CACHET_BUFFER_HOST_VISIBLE buffers), which
  /// the host writes slowly and reads uncached; those transfers go through
  /// staging and a device-side copy.
  bool copyThroughMapping = false;
  bool hostVisible = false;
  VkDeviceAddress address = 0;
};

class VulkanModule final : public Module {
public:
  explicit VulkanModule(VkDevice device) : device(device) {}
  ~VulkanModule() override {
    if (shader)
      vkDestroyShaderModule(device, shader, nullptr);
  }

  VkDevice device;
  VkShaderModule shader = VK_NULL_HANDLE;
  SpirvModuleInfo spirv;
  /// Why the device cannot run this module's kernels ("" when it can): a
  /// module that needs a feature the device lacks (cooperative matrices)
  /// loads without a shader, and getting a kernel of it fails with this
  /// reason. Compiled code that checks the feature first
  /// (cachetMgpuHasCooperativeMatrixF16) and launches a fallback then runs.
  std::string unsupported;
};

class VulkanKernel final : public Kernel {
public:
  VulkanKernel(VkDevice device, const CachetKernelInfo &info, std::string name)
      : Kernel(info), device(device), name(std::move(name)) {}
  ~VulkanKernel() override {
    if (pipeline)
      vkDestroyPipeline(device, pipeline, nullptr);
    if (layout)
      vkDestroyPipelineLayout(device, layout, nullptr);
    if (setLayout)
      vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
  }

  VkDevice device;
  std::string name;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t pushRangeBytes = 0;
  /// The set layout is a push-descriptor layout: launches push the
  /// bindings into the command buffer (no set allocated or updated).
  bool pushDescriptors = false;
};

class VulkanEvent final : public Event {
public:
  explicit VulkanEvent(VkDevice device) : device(device) {}
  ~VulkanEvent() override {
    if (pool)
      vkDestroyQueryPool(device, pool, nullptr);
  }

  VkDevice device;
  VkQueryPool pool = VK_NULL_HANDLE;
  bool recorded = false;
};

/// Writes or reads `bytes` of a host view, `regionOffset` bytes into the
/// region being copied.
using HostAccess =
    std::function<void(char *data, uint64_t regionOffset, uint64_t bytes)>;

/// What a buffer is for, which decides its memory type and whether the host
/// maps it.
enum class BufferKind {
  /// A device buffer: device-local memory, mapped where host access is cheap.
  Device,
  /// A CACHET_BUFFER_HOST_VISIBLE buffer: host-visible memory, preferably
  /// device-local, always mapped.
  HostVisible,
  /// A staging buffer of host transfers: host memory, preferably cached and
  /// not device-local, always mapped.
  Staging,
};

/// A staging buffer and the command buffer and fence of the copy through it.
struct StagingSlot {
  std::unique_ptr<VulkanBuffer> buffer;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  /// Whether a submitted copy through `buffer` may still run (`fence` not
  /// waited for yet).
  bool busy = false;
};

/// The CUDA primary context of an NVIDIA GPU, retained and never used.
/// NVIDIA's driver holds a GPU's SM clock at its application clock while a
/// CUDA context exists on it, and under Vulkan alone lets it fall to the
/// idle clock whenever the SMs idle, between a call's uploads and its
/// kernels (docs/BENCHMARKS.md, run 150: 345 MHz in 258 of 636 samples of
/// the Vulkan suites, 1980 MHz in all 612 while another process held a
/// context; a q8_0 decode step's attention 239 against 103 us). Through the
/// driver API (dlopen'ed, as the CUDA backend does); no device setting is
/// changed. CACHET_VULKAN_CUDA_CONTEXT=0 leaves it out.
class CudaContextHold {
public:
  ~CudaContextHold() {
    if (release)
      release(device);
  }

  /// Retains the primary context of the CUDA device whose UUID is `uuid`;
  /// returns whether one is held. Any missing library, symbol, device or
  /// failed call leaves it out.
  bool hold(const uint8_t (&uuid)[VK_UUID_SIZE]) {
    if (const char *env = std::getenv("CACHET_VULKAN_CUDA_CONTEXT");
        env && std::strcmp(env, "0") == 0)
      return false;
    const char *path = nullptr;
    void *library = openCudaLibrary(path);
    if (!library)
      return false;
    auto symbol = [&](const char *name) { return dlsym(library, name); };
    auto init = reinterpret_cast<int (*)(unsigned)>(symbol("cuInit"));
    auto count = reinterpret_cast<int (*)(int *)>(symbol("cuDeviceGetCount"));
    auto get = reinterpret_cast<int (*)(int *, int)>(symbol("cuDeviceGet"));
    void *uuidSymbol = symbol("cuDeviceGetUuid_v2");
    if (!uuidSymbol)
      uuidSymbol = symbol("cuDeviceGetUuid");
    auto getUuid = reinterpret_cast<int (*)(char *, int)>(uuidSymbol);
    auto retain = reinterpret_cast<int (*)(void **, int)>(
        symbol("cuDevicePrimaryCtxRetain"));
    auto releaseFn =
        reinterpret_cast<int (*)(int)>(symbol("cuDevicePrimaryCtxRelease_v2"));
    int devices = 0;
    if (!init || !count || !get || !getUuid || !retain || !releaseFn ||
        init(0) != 0 || count(&devices) != 0)
      return false;
    for (int i = 0; i < devices; ++i) {
      int candidate = 0;
      char id[16] = {};
      if (get(&candidate, i) != 0 || getUuid(id, candidate) != 0 ||
          std::memcmp(id, uuid, sizeof(id)) != 0)
        continue;
      void *context = nullptr;
      if (retain(&context, candidate) != 0)
        return false;
      device = candidate;
      release = releaseFn;
      return true;
    }
    return false;
  }

private:
  int (*release)(int) = nullptr;
  int device = 0;
};

class VulkanBackend final : public Backend {
public:
  ~VulkanBackend() override;

  Status init(uint32_t flags);

  const CachetDeviceInfo &getDeviceInfo() const override { return info; }
  const CachetCooperativeMatrixInfo &getCooperativeMatrixInfo() const override {
    return coopMatrix;
  }
  Status allocate(uint64_t bytes, uint32_t flags,
                  std::unique_ptr<Buffer> &result) override;
  void release(std::unique_ptr<Buffer> buffer) override;
  Status upload(Buffer &buffer, uint64_t offset, const void *src,
                uint64_t bytes) override;
  Status download(Buffer &buffer, uint64_t offset, void *dst,
                  uint64_t bytes) override;
  Status upload2D(Buffer &buffer, uint64_t offset, uint64_t dstPitch,
                  const void *src, uint64_t srcPitch, uint64_t rowBytes,
                  uint64_t rows) override;
  Status download2D(Buffer &buffer, uint64_t offset, uint64_t srcPitch,
                    void *dst, uint64_t dstPitch, uint64_t rowBytes,
                    uint64_t rows) override;
  Status copy(Buffer &src, uint64_t srcOffset, Buffer &dst, uint64_t dstOffset,
              uint64_t bytes) override;
  Status fill(Buffer &buffer, uint64_t offset, uint64_t bytes,
              uint32_t value) override;
  Status map(Buffer &buffer, void **ptr) override;
  Status deviceAddress(Buffer &buffer, uint64_t *address) override;
  Status loadModule(const void *data, size_t bytes,
                    std::unique_ptr<Module> &result) override;
  Status getKernel(Module &module, const char *name,
                   std::unique_ptr<Kernel> &result) override;
  Status launch(Kernel &kernel, const LaunchConfig &config) override;
  Status createEvent(std::unique_ptr<Event> &result) override;
  Status recordEvent(Event &event) override;
  Status eventTimestampNs(Event &event, uint64_t *ns) override;
  Status synchronize() override;

private:
  Status pickDevice();
  Status createDevice();
  void describeCooperativeMatrix(bool exposed, bool feature);
  /// Fails with CACHET_ERROR_UNSUPPORTED where the device cannot run kernel
  /// `name` at the subgroup size it was compiled for; sets `request` where
  /// its pipeline is to ask for that size.
  Status checkSubgroupSize(const char *name, const CachetKernelInfo &kernelInfo,
                           uint64_t invocations, bool &request) const;
  /// "device 'NAME'", for messages.
  std::string deviceName() const;
  /// Whether host access to device memory crosses a bus: a discrete GPU, or a
  /// device of unknown type (not a CPU, integrated or virtual GPU).
  bool isDiscrete() const;
  int findMemoryType(uint32_t allowed, VkMemoryPropertyFlags required,
                     VkMemoryPropertyFlags preferred,
                     VkMemoryPropertyFlags avoided = 0) const;
  Status createBuffer(uint64_t bytes, BufferKind kind,
                      std::unique_ptr<VulkanBuffer> &result);
  Status ensureRecording();
  void recordBarrier(VkCommandBuffer commands);
  Status flush();
  /// Waits for the copy through `slot`, if one is in flight.
  Status waitStaging(StagingSlot &slot);
  /// Waits for every copy through a staging buffer.
  Status waitTransfers();
  /// Returns the next staging slot, idle and holding at least `bytes`.
  Status acquireStaging(uint64_t bytes, StagingSlot *&slot);
  /// Submits `region` from `src` to `dst` on `slot`'s command buffer.
  Status submitStagingCopy(StagingSlot &slot, VkBuffer src, VkBuffer dst,
                           const VkBufferCopy &region);
  Status allocateDescriptorSet(VkDescriptorSetLayout layout,
                               VkDescriptorSet &set);
  Status hostWrite(VulkanBuffer &buffer, uint64_t offset, uint64_t bytes,
                   const HostAccess &produce);
  Status hostRead(VulkanBuffer &buffer, uint64_t offset, uint64_t bytes,
                  const HostAccess &consume);

  CachetDeviceInfo info = {};
  CachetCooperativeMatrixInfo coopMatrix = {};
  /// Why cooperative matrices are off ("" when coopMatrix.enabled).
  std::string noCoopMatrix;
  /// VK_KHR_shader_bfloat16 enabled, and its cooperative matrices (bf16
  /// shapes are then in coopMatrix.shapes); `noBF16` says why not.
  bool bf16Enabled = false, bf16CoopMatrix = false;
  std::string noBF16;
  /// The Vulkan version the runtime uses on the device: the lower of the
  /// instance's (the loader's, at most 1.3) and the device's.
  uint32_t apiVersion = VK_API_VERSION_1_0;
  bool forceStaging = false;
  bool bufferDeviceAddressEnabled = false;
  /// VK_KHR_push_descriptor: vkCmdPushDescriptorSetKHR where the device
  /// has it (and CACHET_RUNTIME_NO_PUSH_DESCRIPTORS is not set), null
  /// otherwise; kernels of more bindings than maxPushDescriptors take sets.
  PFN_vkCmdPushDescriptorSetKHR pushDescriptorSet = nullptr;
  uint32_t maxPushDescriptors = 0;
  bool pushDescriptorsAllowed = true;
  SpirvLayoutRules layoutRules;
  /// VK_EXT_subgroup_size_control (core in Vulkan 1.3): the sizes a
  /// pipeline may ask for, where subgroupSizeControl is on.
  bool subgroupSizeControl = false;
  bool computeFullSubgroups = false;
  VkPhysicalDeviceSubgroupSizeControlProperties sizeControl = {};
  uint32_t timestampValidBits = 0;
  /// Declared first, destroyed last: the context outlives the device.
  CudaContextHold cudaContext;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties = {};
  VkPhysicalDeviceMemoryProperties memoryProperties = {};
  uint32_t queueFamily = 0;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptorPools;
  size_t currentPool = 0;
  bool recording = false;
  uint32_t recordedCommands = 0;
  /// Buffers freed while recorded work may still use them.
  std::vector<std::unique_ptr<Buffer>> pendingFrees;
  /// Buffers freed and done with (no recorded work uses them), by size and
  /// host visibility, that allocate() hands out again: vkCreateBuffer +
  /// vkAllocateMemory took 65 us per buffer on NVIDIA's driver (an H100,
  /// CACHET_MGPU_PROFILE), and compiled code allocates each call's
  /// temporaries afresh. At most getFreedCacheLimit() bytes.
  std::multimap<std::pair<uint64_t, bool>, std::unique_ptr<Buffer>>
      cachedBuffers;
  uint64_t cachedBytes = 0;
  /// Keeps `buffer`, which no work uses any more, for allocate() where it
  /// fits the cache; destroys it otherwise.
  void recycle(std::unique_ptr<Buffer> buffer);
  /// The staging buffers of host transfers, created at the first transfer
  /// that needs one; `nextSlot` is the one the next chunk goes through.
  StagingSlot staging[numStagingSlots];
  unsigned nextSlot = 0;
};

VulkanBackend::~VulkanBackend() {
  if (device) {
    (void)flush();
    vkDeviceWaitIdle(device);
    pendingFrees.clear();
    cachedBuffers.clear();
    for (StagingSlot &slot : staging) {
      slot.buffer.reset();
      if (slot.fence)
        vkDestroyFence(device, slot.fence, nullptr);
    }
    for (VkDescriptorPool pool : descriptorPools)
      vkDestroyDescriptorPool(device, pool, nullptr);
    if (pipelineCache)
      vkDestroyPipelineCache(device, pipelineCache, nullptr);
    if (fence)
      vkDestroyFence(device, fence, nullptr);
    if (commandPool)
      vkDestroyCommandPool(device, commandPool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (instance)
    vkDestroyInstance(instance, nullptr);
}

Status VulkanBackend::init(uint32_t flags) {
  forceStaging = flags & CACHET_RUNTIME_FORCE_STAGING;
  pushDescriptorsAllowed = !(flags & CACHET_RUNTIME_NO_PUSH_DESCRIPTORS);
  // The loader's version up to 1.3, so that a Vulkan 1.3 device accepts
  // SPIR-V 1.6 (KHR cooperative matrices). A 1.0 loader has no
  // vkEnumerateInstanceVersion.
  uint32_t loaderVersion = VK_API_VERSION_1_0;
  auto enumerateVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  if (enumerateVersion && enumerateVersion(&loaderVersion) != VK_SUCCESS)
    loaderVersion = VK_API_VERSION_1_0;
  if (loaderVersion < VK_API_VERSION_1_1)
    return Status(CACHET_ERROR_NO_DEVICE,
                  "the Vulkan loader is 1.0; the runtime needs 1.1");
  auto app = makeStruct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "cachet";
  app.pEngineName = "libcachet_runtime";
  app.apiVersion =
      std::min(VK_API_VERSION_1_3,
               VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(loaderVersion),
                                   VK_API_VERSION_MINOR(loaderVersion), 0));
  auto instanceInfo =
      makeStruct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  instanceInfo.pApplicationInfo = &app;
  VkResult result = vkCreateInstance(&instanceInfo, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
    return Status(CACHET_ERROR_NO_DEVICE,
                  "no Vulkan driver (vkCreateInstance returned "
                  "VK_ERROR_INCOMPATIBLE_DRIVER)");
  if (result != VK_SUCCESS) {
    instance = VK_NULL_HANDLE;
    return vulkanFailure("vkCreateInstance", result);
  }
  CACHET_RETURN_IF_ERROR(pickDevice());
  apiVersion = std::min(
      app.apiVersion,
      VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(properties.apiVersion),
                          VK_API_VERSION_MINOR(properties.apiVersion), 0));
  return createDevice();
}

std::string VulkanBackend::deviceName() const {
  return std::string("device '") + properties.deviceName + "'";
}

Status VulkanBackend::pickDevice() {
  uint32_t count = 0;
  CACHET_VK_CHECK("vkEnumeratePhysicalDevices",
                  vkEnumeratePhysicalDevices(instance, &count, nullptr));
  if (count == 0)
    return Status(CACHET_ERROR_NO_DEVICE, "no Vulkan physical device");
  std::vector<VkPhysicalDevice> devices(count);
  CACHET_VK_CHECK("vkEnumeratePhysicalDevices",
                  vkEnumeratePhysicalDevices(instance, &count, devices.data()));

  auto hasComputeQueue = [](VkPhysicalDevice candidate) {
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families,
                                             props.data());
    return std::any_of(props.begin(), props.end(), [](auto &family) {
      return family.queueFlags & VK_QUEUE_COMPUTE_BIT;
    });
  };

  if (const char *env = std::getenv("CACHET_VULKAN_DEVICE")) {
    char *end = nullptr;
    unsigned long index = std::strtoul(env, &end, 10);
    if (!*env || *end || index >= count)
      return Status(CACHET_ERROR_NO_DEVICE,
                    std::string("CACHET_VULKAN_DEVICE=") + env +
                        " names no device (there are " + std::to_string(count) +
                        ")");
    physicalDevice = devices[index];
  } else {
    int bestScore = -1;
    for (VkPhysicalDevice candidate : devices) {
      VkPhysicalDeviceProperties props;
      vkGetPhysicalDeviceProperties(candidate, &props);
      if (props.apiVersion < VK_API_VERSION_1_1 || !hasComputeQueue(candidate))
        continue;
      int score = 0;
      switch (props.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        score = 4;
        break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        score = 3;
        break;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        score = 2;
        break;
      case VK_PHYSICAL_DEVICE_TYPE_CPU:
        score = 1;
        break;
      default:
        break;
      }
      if (score > bestScore) {
        bestScore = score;
        physicalDevice = candidate;
      }
    }
    if (!physicalDevice)
      return Status(CACHET_ERROR_NO_DEVICE,
                    "no Vulkan 1.1 device with a compute queue among " +
                        std::to_string(count) + " devices");
  }
  vkGetPhysicalDeviceProperties(physicalDevice, &properties);
  if (properties.apiVersion < VK_API_VERSION_1_1 ||
      !hasComputeQueue(physicalDevice))
    return Status(CACHET_ERROR_NO_DEVICE,
                  std::string("device '") + properties.deviceName +
                      "' lacks Vulkan 1.1 or a compute queue");
  vkGetPhysicalDeviceMemoryProperties(physicalDevice, &memoryProperties);
  return Status::success();
}

Status VulkanBackend::createDevice() {
  // Queue: a compute family, preferring one with timestamps and without
  // graphics (a dedicated compute queue).
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice, &families, nullptr);
  std::vector<VkQueueFamilyProperties> familyProps(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice, &families,
                                           familyProps.data());
  int bestScore = -1;
  for (uint32_t i = 0; i < families; ++i) {
    const VkQueueFamilyProperties &family = familyProps[i];
    if (!(family.queueFlags & VK_QUEUE_COMPUTE_BIT))
      continue;
    int score = (family.timestampValidBits ? 2 : 0) +
                (family.queueFlags & VK_QUEUE_GRAPHICS_BIT ? 0 : 1);
    if (score > bestScore) {
      bestScore = score;
      queueFamily = i;
    }
  }
  timestampValidBits = familyProps[queueFamily].timestampValidBits;

  uint32_t extensionCount = 0;
  CACHET_VK_CHECK("vkEnumerateDeviceExtensionProperties",
                  vkEnumerateDeviceExtensionProperties(
                      physicalDevice, nullptr, &extensionCount, nullptr));
  std::vector<VkExtensionProperties> extensions(extensionCount);
  CACHET_VK_CHECK("vkEnumerateDeviceExtensionProperties",
                  vkEnumerateDeviceExtensionProperties(physicalDevice, nullptr,
                                                       &extensionCount,
                                                       extensions.data()));
  extensions.resize(extensionCount);
  auto exposed = [&](const char *name) {
    return std::any_of(extensions.begin(), extensions.end(),
                       [&](const VkExtensionProperties &extension) {
                         return std::strcmp(extension.extensionName, name) == 0;
                       });
  };
  bool coopMatrixExposed = exposed(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  bool bf16Exposed = exposed(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  bool pushDescriptorsExposed =
      pushDescriptorsAllowed && exposed(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  // Enable every supported feature (f16, int8, 8/16-bit storage, buffer
  // device address, cooperative matrices, ...) except robustness, which
  // costs speed.
  bool vulkan12 = apiVersion >= VK_API_VERSION_1_2;
  bool vulkan13 = apiVersion >= VK_API_VERSION_1_3;
  auto coopFeatures = makeStruct<VkPhysicalDeviceCooperativeMatrixFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR);
  auto bf16Features = makeStruct<VkPhysicalDeviceShaderBfloat16FeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR);
  auto features13 = makeStruct<VkPhysicalDeviceVulkan13Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  auto features12 = makeStruct<VkPhysicalDeviceVulkan12Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto features11 = makeStruct<VkPhysicalDeviceVulkan11Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto features = makeStruct<VkPhysicalDeviceFeatures2>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  void **chainEnd = &features.pNext;
  auto chain = [&](auto &next) {
    *chainEnd = &next;
    chainEnd = &next.pNext;
  };
  if (vulkan12) {
    chain(features11);
    chain(features12);
  }
  if (vulkan13)
    chain(features13);
  // The last two in the chain, so that they can be unlinked.
  void **bf16Link = chainEnd;
  if (bf16Exposed)
    chain(bf16Features);
  void **coopLink = chainEnd;
  if (coopMatrixExposed)
    chain(coopFeatures);
  vkGetPhysicalDeviceFeatures2(physicalDevice, &features);
  features.features.robustBufferAccess = VK_FALSE;
  features13.robustImageAccess = VK_FALSE;
  coopFeatures.cooperativeMatrixRobustBufferAccess = VK_FALSE;
  bf16CoopMatrix = bf16Features.shaderBFloat16Type &&
                   bf16Features.shaderBFloat16CooperativeMatrix;
  describeCooperativeMatrix(coopMatrixExposed, coopFeatures.cooperativeMatrix);
  bf16CoopMatrix = bf16CoopMatrix && coopMatrix.enabled;
  bf16Enabled = bf16Features.shaderBFloat16Type;
  noBF16 = !bf16Exposed ? "it does not expose VK_KHR_shader_bfloat16"
           : !bf16Enabled
               ? "its VK_KHR_shader_bfloat16 lacks the shaderBFloat16Type "
                 "feature"
               : "";
  bf16Features.shaderBFloat16CooperativeMatrix = bf16CoopMatrix;
  std::vector<const char *> enabledExtensions;
  if (coopMatrix.enabled)
    enabledExtensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  else
    *coopLink = nullptr;
  if (bf16Enabled)
    enabledExtensions.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  else if (bf16Exposed)
    *bf16Link = bf16Features.pNext;
  if (pushDescriptorsExposed) {
    maxPushDescriptors =
        queryProperties<VkPhysicalDevicePushDescriptorPropertiesKHR>(
            physicalDevice,
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR)
            .maxPushDescriptors;
    if (maxPushDescriptors)
      enabledExtensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  }
  bufferDeviceAddressEnabled = vulkan12 && features12.bufferDeviceAddress;
  layoutRules.scalarBlockLayout = vulkan12 && features12.scalarBlockLayout;
  layoutRules.uniformBufferStandardLayout =
      vulkan12 && features12.uniformBufferStandardLayout;
  // Capture/replay and multi-device addresses need more than we set up.
  features12.bufferDeviceAddressCaptureReplay = VK_FALSE;
  features12.bufferDeviceAddressMultiDevice = VK_FALSE;
  subgroupSizeControl = vulkan13 && features13.subgroupSizeControl;
  computeFullSubgroups = subgroupSizeControl && features13.computeFullSubgroups;

  float priority = 1.0f;
  auto queueInfo = makeStruct<VkDeviceQueueCreateInfo>(
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queueInfo.queueFamilyIndex = queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  auto deviceInfo =
      makeStruct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  deviceInfo.pNext = &features;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount =
      static_cast<uint32_t>(enabledExtensions.size());
  deviceInfo.ppEnabledExtensionNames = enabledExtensions.data();
  CACHET_VK_CHECK("vkCreateDevice", vkCreateDevice(physicalDevice, &deviceInfo,
                                                   nullptr, &device));
  vkGetDeviceQueue(device, queueFamily, 0, &queue);
  if (maxPushDescriptors)
    pushDescriptorSet = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
        vkGetDeviceProcAddr(device, "vkCmdPushDescriptorSetKHR"));
  if (!pushDescriptorSet)
    maxPushDescriptors = 0;

  auto poolInfo = makeStruct<VkCommandPoolCreateInfo>(
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = queueFamily;
  CACHET_VK_CHECK(
      "vkCreateCommandPool",
      vkCreateCommandPool(device, &poolInfo, nullptr, &commandPool));
  auto bufferInfo = makeStruct<VkCommandBufferAllocateInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  bufferInfo.commandPool = commandPool;
  bufferInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  bufferInfo.commandBufferCount = 1;
  CACHET_VK_CHECK(
      "vkAllocateCommandBuffers",
      vkAllocateCommandBuffers(device, &bufferInfo, &commandBuffer));
  auto fenceInfo =
      makeStruct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  CACHET_VK_CHECK("vkCreateFence",
                  vkCreateFence(device, &fenceInfo, nullptr, &fence));
  for (StagingSlot &slot : staging) {
    CACHET_VK_CHECK(
        "vkAllocateCommandBuffers",
        vkAllocateCommandBuffers(device, &bufferInfo, &slot.commands));
    CACHET_VK_CHECK("vkCreateFence",
                    vkCreateFence(device, &fenceInfo, nullptr, &slot.fence));
  }
  auto cacheInfo = makeStruct<VkPipelineCacheCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  CACHET_VK_CHECK(
      "vkCreatePipelineCache",
      vkCreatePipelineCache(device, &cacheInfo, nullptr, &pipelineCache));

  // Limits.
  auto subgroup = makeStruct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto maintenance3 = makeStruct<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  subgroup.pNext = &maintenance3;
  auto ids = makeStruct<VkPhysicalDeviceIDProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
  maintenance3.pNext = &ids;
  sizeControl = makeStruct<VkPhysicalDeviceSubgroupSizeControlProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
  if (subgroupSizeControl)
    ids.pNext = &sizeControl;
  auto props2 = makeStruct<VkPhysicalDeviceProperties2>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  props2.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physicalDevice, &props2);
  sizeControl.pNext = nullptr;
  subgroupSizeControl =
      subgroupSizeControl &&
      (sizeControl.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  // NVIDIA: the GPU's SM clock held while the runtime lives (see
  // CudaContextHold).
  if (properties.vendorID == 0x10de)
    (void)cudaContext.hold(ids.deviceUUID);
  const VkPhysicalDeviceLimits &limits = properties.limits;
  std::snprintf(info.backend, sizeof(info.backend), "vulkan");
  std::snprintf(info.name, sizeof(info.name), "%s", properties.deviceName);
  info.vendorId = properties.vendorID;
  info.deviceId = properties.deviceID;
  info.maxBindingBytes = limits.maxStorageBufferRange;
  info.maxAllocationBytes = maintenance3.maxMemoryAllocationSize;
  for (uint32_t i = 0; i < memoryProperties.memoryHeapCount; ++i)
    if (memoryProperties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.deviceMemoryBytes = std::max<uint64_t>(
          info.deviceMemoryBytes, memoryProperties.memoryHeaps[i].size);
  info.bindingOffsetAlignment =
      std::max<uint64_t>(limits.minStorageBufferOffsetAlignment, 4);
  info.maxPushConstantBytes = limits.maxPushConstantsSize;
  info.subgroupSize = subgroup.subgroupSize;
  for (int i = 0; i < 3; ++i) {
    info.maxWorkgroupSize[i] = limits.maxComputeWorkGroupSize[i];
    info.maxWorkgroupCount[i] = limits.maxComputeWorkGroupCount[i];
  }
  info.maxWorkgroupInvocations = limits.maxComputeWorkGroupInvocations;
  info.maxSharedMemoryBytes = limits.maxComputeSharedMemorySize;
  info.unifiedMemory =
      properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
      properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  info.bufferDeviceAddress = bufferDeviceAddressEnabled;
  info.timestamps = timestampValidBits != 0;
  info.timestampPeriodNs = limits.timestampPeriod;
  return Status::success();
}

void VulkanBackend::describeCooperativeMatrix(bool exposed, bool feature) {
  if (const char *env = std::getenv("CACHET_VULKAN_COOP_MATRIX");
      env && std::string(env) == "0") {
    noCoopMatrix = "CACHET_VULKAN_COOP_MATRIX=0 leaves it off";
    return;
  }
  if (!exposed) {
    noCoopMatrix = "it does not expose VK_KHR_cooperative_matrix";
    return;
  }
  if (!feature) {
    noCoopMatrix = "its VK_KHR_cooperative_matrix lacks the cooperativeMatrix "
                   "feature";
    return;
  }
  auto coopProperties =
      queryProperties<VkPhysicalDeviceCooperativeMatrixPropertiesKHR>(
          physicalDevice,
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR);
  if (!(coopProperties.cooperativeMatrixSupportedStages &
        VK_SHADER_STAGE_COMPUTE_BIT)) {
    noCoopMatrix = "its cooperative matrices are not supported in compute "
                   "shaders";
    return;
  }
  auto listShapes =
      reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
          vkGetInstanceProcAddr(
              instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!listShapes) {
    noCoopMatrix = "the Vulkan loader has no "
                   "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR";
    return;
  }
  uint32_t count = 0;
  VkResult result = listShapes(physicalDevice, &count, nullptr);
  std::vector<VkCooperativeMatrixPropertiesKHR> shapes(
      count, makeStruct<VkCooperativeMatrixPropertiesKHR>(
                 VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));
  if (result == VK_SUCCESS)
    result = listShapes(physicalDevice, &count, shapes.data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    noCoopMatrix =
        vulkanFailure("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
                      result)
            .getMessage();
    return;
  }
  shapes.resize(std::min<size_t>(count, shapes.size()));
  coopMatrix.enabled = 1;
  formatShapes(shapes, bf16CoopMatrix, coopMatrix.shapes,
               sizeof(coopMatrix.shapes));
}

bool VulkanBackend::isDiscrete() const {
  return properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU &&
         properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU &&
         properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

/// Returns the first of the `allowed` memory types with all of `required`
/// flags, ranked: none of `avoided` first, then all of `preferred`; -1 when
/// no type has `required`.
int VulkanBackend::findMemoryType(uint32_t allowed,
                                  VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred,
                                  VkMemoryPropertyFlags avoided) const {
  int best = -1, bestRank = -1;
  for (uint32_t i = 0; i < memoryProperties.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags flags = memoryProperties.memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (flags & required) != required)
      continue;
    int rank = (flags & avoided ? 0 : 2) + ((flags & preferred) == preferred);
    if (rank > bestRank) {
      best = static_cast<int>(i);
      bestRank = rank;
    }
  }
  return best;
}

Status VulkanBackend::createBuffer(uint64_t bytes, BufferKind kind,
                                   std::unique_ptr<VulkanBuffer> &result) {
  if (bytes > info.maxAllocationBytes)
    return Status(CACHET_ERROR_OUT_OF_MEMORY,
                  std::to_string(bytes) +
                      " bytes exceed the device's maxMemoryAllocationSize of " +
                      std::to_string(info.maxAllocationBytes) + " bytes");
  auto buffer = std::make_unique<VulkanBuffer>(device, bytes);
  auto bufferInfo =
      makeStruct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bufferInfo.size = bytes;
  bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (bufferDeviceAddressEnabled)
    bufferInfo.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  CACHET_VK_CHECK("vkCreateBuffer", vkCreateBuffer(device, &bufferInfo, nullptr,
                                                   &buffer->buffer));
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device, buffer->buffer, &requirements);

  const VkMemoryPropertyFlags hostFlags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags deviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const VkMemoryPropertyFlags hostCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const uint32_t allowed = requirements.memoryTypeBits;
  const bool discrete = isDiscrete();
  int type = -1;
  switch (kind) {
  case BufferKind::HostVisible:
    type = findMemoryType(allowed, hostFlags, deviceLocal);
    break;
  case BufferKind::Staging:
    // Host memory, cached for the reads of downloads; device-local memory
    // would put the staging buffer behind the PCIe BAR.
    type = findMemoryType(allowed, hostFlags, hostCached, deviceLocal);
    break;
  case BufferKind::Device:
    // A discrete GPU's device memory is mapped only where host reads of it
    // are cached; otherwise memory the host cannot see, copied through
    // staging.
    if (discrete && !forceStaging)
      type = findMemoryType(allowed, deviceLocal | hostFlags | hostCached, 0);
    if (type < 0)
      type = findMemoryType(allowed, deviceLocal,
                            discrete || forceStaging ? 0 : hostFlags,
                            discrete ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT : 0);
    if (type < 0)
      type = findMemoryType(allowed, 0, 0);
    break;
  }
  const bool hostVisible = kind != BufferKind::Device;
  if (type < 0)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  std::string("no ") + (hostVisible ? "host-visible " : "") +
                      "memory type can hold a storage buffer");
  const VkMemoryType &memoryType = memoryProperties.memoryTypes[type];
  uint64_t heapSize = memoryProperties.memoryHeaps[memoryType.heapIndex].size;
  if (requirements.size > heapSize)
    return Status(CACHET_ERROR_OUT_OF_MEMORY,
                  std::to_string(bytes) + " bytes exceed the " +
                      std::to_string(heapSize) + "-byte memory heap");

  auto flagsInfo = makeStruct<VkMemoryAllocateFlagsInfo>(
      VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flagsInfo.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  auto allocInfo =
      makeStruct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  allocInfo.pNext = bufferDeviceAddressEnabled ? &flagsInfo : nullptr;
  allocInfo.allocationSize = requirements.size;
  allocInfo.memoryTypeIndex = static_cast<uint32_t>(type);
  CACHET_VK_CHECK(
      "vkAllocateMemory",
      vkAllocateMemory(device, &allocInfo, nullptr, &buffer->memory));
  CACHET_VK_CHECK(
      "vkBindBufferMemory",
      vkBindBufferMemory(device, buffer->buffer, buffer->memory, 0));
  buffer->hostVisible = kind == BufferKind::HostVisible;
  bool mapForHost =
      hostVisible ||
      (!forceStaging && (!discrete || memoryType.propertyFlags & hostCached));
  if ((memoryType.propertyFlags & hostFlags) == hostFlags && mapForHost) {
    void *ptr = nullptr;
    CACHET_VK_CHECK("vkMapMemory", vkMapMemory(device, buffer->memory, 0,
                                               VK_WHOLE_SIZE, 0, &ptr));
    buffer->mapped = static_cast<char *>(ptr);
    buffer->copyThroughMapping = !discrete ||
                                 !(memoryType.propertyFlags & deviceLocal) ||
                                 (memoryType.propertyFlags & hostCached);
  }
  if (bufferDeviceAddressEnabled) {
    auto addressInfo = makeStruct<VkBufferDeviceAddressInfo>(
        VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
    addressInfo.buffer = buffer->buffer;
    buffer->address = vkGetBufferDeviceAddress(device, &addressInfo);
  }
  result = std::move(buffer);
  return Status::success();
}

Status VulkanBackend::allocate(uint64_t bytes, uint32_t flags,
                               std::unique_ptr<Buffer> &result) {
  auto it =
      cachedBuffers.find({bytes, (flags & CACHET_BUFFER_HOST_VISIBLE) != 0});
  if (it != cachedBuffers.end()) {
    result = std::move(it->second);
    cachedBuffers.erase(it);
    cachedBytes -= bytes;
    return Status::success();
  }
  BufferKind kind = flags & CACHET_BUFFER_HOST_VISIBLE ? BufferKind::HostVisible
                                                       : BufferKind::Device;
  std::unique_ptr<VulkanBuffer> buffer;
  Status status = createBuffer(bytes, kind, buffer);
  if (!status.ok() && status.getCode() == CACHET_ERROR_OUT_OF_MEMORY &&
      !cachedBuffers.empty()) {
    // The cached buffers' memory first.
    cachedBuffers.clear();
    cachedBytes = 0;
    buffer.reset();
    status = createBuffer(bytes, kind, buffer);
  }
  CACHET_RETURN_IF_ERROR(status);
  result = std::move(buffer);
  return Status::success();
}

void VulkanBackend::release(std::unique_ptr<Buffer> buffer) {
  if (recording) {
    pendingFrees.push_back(std::move(buffer));
    return;
  }
  // A copy through a staging buffer may still use it.
  (void)waitTransfers();
  recycle(std::move(buffer));
}

void VulkanBackend::recycle(std::unique_ptr<Buffer> buffer) {
  auto *vkBuffer = static_cast<VulkanBuffer *>(buffer.get());
  uint64_t bytes = buffer->getSize();
  if (cachedBytes + bytes > getFreedCacheLimit())
    return;
  cachedBytes += bytes;
  cachedBuffers.emplace(std::make_pair(bytes, vkBuffer->hostVisible),
                        std::move(buffer));
}

Status VulkanBackend::ensureRecording() {
  if (recording)
    return Status::success();
  auto beginInfo = makeStruct<VkCommandBufferBeginInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  beginInfo.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CACHET_VK_CHECK("vkBeginCommandBuffer",
                  vkBeginCommandBuffer(commandBuffer, &beginInfo));
  recording = true;
  recordedCommands = 0;
  return Status::success();
}

void VulkanBackend::recordBarrier(VkCommandBuffer commands) {
  // Every launch or copy sees the writes of the ones before it.
  auto barrier = makeStruct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask =
      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
      VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(
      commands,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
          VK_PIPELINE_STAGE_HOST_BIT,
      0, 1, &barrier, 0, nullptr, 0, nullptr);
}

Status VulkanBackend::flush() {
  if (!recording)
    return Status::success();
  recording = false;
  VkResult result = vkEndCommandBuffer(commandBuffer);
  if (result == VK_SUCCESS)
    result = vkResetFences(device, 1, &fence);
  if (result == VK_SUCCESS) {
    auto submit = makeStruct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commandBuffer;
    result = vkQueueSubmit(queue, 1, &submit, fence);
    if (result == VK_SUCCESS)
      result = vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    else
      vkQueueWaitIdle(queue);
  }
  vkResetCommandBuffer(commandBuffer, 0);
  for (VkDescriptorPool pool : descriptorPools)
    vkResetDescriptorPool(device, pool, 0);
  currentPool = 0;
  for (std::unique_ptr<Buffer> &buffer : pendingFrees)
    if (result == VK_SUCCESS)
      recycle(std::move(buffer));
  pendingFrees.clear();
  if (result != VK_SUCCESS)
    return vulkanFailure("vkQueueSubmit/vkWaitForFences", result);
  return Status::success();
}

Status VulkanBackend::allocateDescriptorSet(VkDescriptorSetLayout layout,
                                            VkDescriptorSet &set) {
  while (true) {
    if (currentPool == descriptorPools.size()) {
      VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                   descriptorPoolBuffers};
      auto poolInfo = makeStruct<VkDescriptorPoolCreateInfo>(
          VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
      poolInfo.maxSets = descriptorPoolSets;
      poolInfo.poolSizeCount = 1;
      poolInfo.pPoolSizes = &size;
      VkDescriptorPool pool;
      CACHET_VK_CHECK(
          "vkCreateDescriptorPool",
          vkCreateDescriptorPool(device, &poolInfo, nullptr, &pool));
      descriptorPools.push_back(pool);
    }
    auto allocInfo = makeStruct<VkDescriptorSetAllocateInfo>(
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocInfo.descriptorPool = descriptorPools[currentPool];
    allocInfo.descriptorSetCount = 1;
    allocInfo.pSetLayouts = &layout;
    VkResult result = vkAllocateDescriptorSets(device, &allocInfo, &set);
    if (result == VK_SUCCESS)
      return Status::success();
    if (result != VK_ERROR_OUT_OF_POOL_MEMORY &&
        result != VK_ERROR_FRAGMENTED_POOL)
      return vulkanFailure("vkAllocateDescriptorSets", result);
    ++currentPool;
  }
}

Status VulkanBackend::synchronize() {
  CACHET_RETURN_IF_ERROR(flush());
  return waitTransfers();
}

Status VulkanBackend::waitStaging(StagingSlot &slot) {
  if (!slot.busy)
    return Status::success();
  CACHET_VK_CHECK("vkWaitForFences",
                  vkWaitForFences(device, 1, &slot.fence, VK_TRUE, UINT64_MAX));
  slot.busy = false;
  return Status::success();
}

Status VulkanBackend::waitTransfers() {
  for (StagingSlot &slot : staging)
    CACHET_RETURN_IF_ERROR(waitStaging(slot));
  return Status::success();
}

Status VulkanBackend::acquireStaging(uint64_t bytes, StagingSlot *&slot) {
  slot = &staging[nextSlot];
  nextSlot = (nextSlot + 1) % numStagingSlots;
  CACHET_RETURN_IF_ERROR(waitStaging(*slot));
  if (slot->buffer && slot->buffer->getSize() >= bytes)
    return Status::success();
  // Grown at least twofold, so that growing transfers reallocate rarely.
  uint64_t size = bytes;
  if (slot->buffer)
    size = std::min(stagingChunkBytes,
                    std::max(bytes, 2 * slot->buffer->getSize()));
  slot->buffer.reset();
  return createBuffer(size, BufferKind::Staging, slot->buffer);
}

Status VulkanBackend::submitStagingCopy(StagingSlot &slot, VkBuffer src,
                                        VkBuffer dst,
                                        const VkBufferCopy &region) {
  auto beginInfo = makeStruct<VkCommandBufferBeginInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  beginInfo.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CACHET_VK_CHECK("vkBeginCommandBuffer",
                  vkBeginCommandBuffer(slot.commands, &beginInfo));
  vkCmdCopyBuffer(slot.commands, src, dst, 1, &region);
  // Orders the copy before later transfers and the work recorded after it,
  // and makes a download's bytes visible to the host.
  recordBarrier(slot.commands);
  CACHET_VK_CHECK("vkEndCommandBuffer", vkEndCommandBuffer(slot.commands));
  CACHET_VK_CHECK("vkResetFences", vkResetFences(device, 1, &slot.fence));
  auto submit = makeStruct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &slot.commands;
  CACHET_VK_CHECK("vkQueueSubmit",
                  vkQueueSubmit(queue, 1, &submit, slot.fence));
  slot.busy = true;
  return Status::success();
}

Status VulkanBackend::hostWrite(VulkanBuffer &buffer, uint64_t offset,
                                uint64_t bytes, const HostAccess &produce) {
  // The device may still read the old contents.
  CACHET_RETURN_IF_ERROR(flush());
  if (buffer.mapped && buffer.copyThroughMapping) {
    produce(buffer.mapped + offset, 0, bytes);
    return Status::success();
  }
  // The host fills one staging buffer while the device copies out of the
  // other. The last copies stay in flight: the next transfer through their
  // staging buffer waits for them, work recorded later is ordered after them
  // by their barrier.
  const uint64_t slotBytes = std::min(bytes, stagingChunkBytes);
  for (uint64_t done = 0; done < bytes; done += stagingChunkBytes) {
    uint64_t chunk = std::min(bytes - done, stagingChunkBytes);
    StagingSlot *slot = nullptr;
    CACHET_RETURN_IF_ERROR(acquireStaging(slotBytes, slot));
    produce(slot->buffer->mapped, done, chunk);
    CACHET_RETURN_IF_ERROR(submitStagingCopy(
        *slot, slot->buffer->buffer, buffer.buffer, {0, offset + done, chunk}));
  }
  return Status::success();
}

Status VulkanBackend::hostRead(VulkanBuffer &buffer, uint64_t offset,
                               uint64_t bytes, const HostAccess &consume) {
  CACHET_RETURN_IF_ERROR(flush());
  if (buffer.mapped && buffer.copyThroughMapping) {
    consume(buffer.mapped + offset, 0, bytes);
    return Status::success();
  }
  // The device copies chunk i + 1 into one staging buffer while the host
  // drains chunk i from the other.
  const uint64_t slotBytes = std::min(bytes, stagingChunkBytes);
  auto copyOut = [&](uint64_t done, StagingSlot *&slot) {
    uint64_t chunk = std::min(bytes - done, stagingChunkBytes);
    CACHET_RETURN_IF_ERROR(acquireStaging(slotBytes, slot));
    return submitStagingCopy(*slot, buffer.buffer, slot->buffer->buffer,
                             {offset + done, 0, chunk});
  };
  StagingSlot *next = nullptr;
  if (bytes)
    CACHET_RETURN_IF_ERROR(copyOut(0, next));
  for (uint64_t done = 0; done < bytes; done += stagingChunkBytes) {
    StagingSlot *slot = next;
    if (bytes - done > stagingChunkBytes)
      CACHET_RETURN_IF_ERROR(copyOut(done + stagingChunkBytes, next));
    CACHET_RETURN_IF_ERROR(waitStaging(*slot));
    consume(slot->buffer->mapped, done,
            std::min(bytes - done, stagingChunkBytes));
  }
  return Status::success();
}

Status VulkanBackend::upload(Buffer &buffer, uint64_t offset, const void *src,
                             uint64_t bytes) {
  const char *bytesIn = static_cast<const char *>(src);
  return hostWrite(static_cast<VulkanBuffer &>(buffer), offset, bytes,
                   [&](char *data, uint64_t at, uint64_t n) {
                     std::memcpy(data, bytesIn + at, n);
                   });
}

Status VulkanBackend::download(Buffer &buffer, uint64_t offset, void *dst,
                               uint64_t bytes) {
  char *bytesOut = static_cast<char *>(dst);
  return hostRead(static_cast<VulkanBuffer &>(buffer), offset, bytes,
                  [&](char *data, uint64_t at, uint64_t n) {
                    std::memcpy(bytesOut + at, data, n);
                  });
}

Status VulkanBackend::upload2D(Buffer &buffer, uint64_t offset,
                               uint64_t dstPitch, const void *src,
                               uint64_t srcPitch, uint64_t rowBytes,
                               uint64_t rows) {
  const char *bytesIn = static_cast<const char *>(src);
  // Produces bytes [at, at + n) of the padded image: each row is the source
  // row followed by a zeroed gap up to the pitch.
  return hostWrite(static_cast<VulkanBuffer &>(buffer), offset, rows * dstPitch,
                   [&](char *data, uint64_t at, uint64_t n) {
                     uint64_t end = at + n;
                     while (at < end) {
                       uint64_t row = at / dstPitch, col = at % dstPitch;
                       uint64_t rowEnd = std::min(end - at, dstPitch - col);
                       if (col < rowBytes) {
                         uint64_t copy = std::min(rowBytes - col, rowEnd);
                         std::memcpy(data, bytesIn + row * srcPitch + col,
                                     copy);
                         std::memset(data + copy, 0, rowEnd - copy);
                       } else {
                         std::memset(data, 0, rowEnd);
                       }
                       data += rowEnd;
                       at += rowEnd;
                     }
                   });
}

Status VulkanBackend::download2D(Buffer &buffer, uint64_t offset,
                                 uint64_t srcPitch, void *dst,
                                 uint64_t dstPitch, uint64_t rowBytes,
                                 uint64_t rows) {
  char *bytesOut = static_cast<char *>(dst);
  uint64_t bytes = (rows - 1) * srcPitch + rowBytes;
  return hostRead(static_cast<VulkanBuffer &>(buffer), offset, bytes,
                  [&](char *data, uint64_t at, uint64_t n) {
                    uint64_t end = at + n;
                    while (at < end) {
                      uint64_t row = at / srcPitch, col = at % srcPitch;
                      uint64_t rowEnd = std::min(end - at, srcPitch - col);
                      if (col < rowBytes)
                        std::memcpy(bytesOut + row * dstPitch + col, data,
                                    std::min(rowBytes - col, rowEnd));
                      data += rowEnd;
                      at += rowEnd;
                    }
                  });
}

Status VulkanBackend::copy(Buffer &src, uint64_t srcOffset, Buffer &dst,
                           uint64_t dstOffset, uint64_t bytes) {
  CACHET_RETURN_IF_ERROR(ensureRecording());
  VkBufferCopy region = {srcOffset, dstOffset, bytes};
  vkCmdCopyBuffer(commandBuffer, static_cast<VulkanBuffer &>(src).buffer,
                  static_cast<VulkanBuffer &>(dst).buffer, 1, &region);
  recordBarrier(commandBuffer);
  return Status::success();
}

Status VulkanBackend::fill(Buffer &buffer, uint64_t offset, uint64_t bytes,
                           uint32_t value) {
  CACHET_RETURN_IF_ERROR(ensureRecording());
  vkCmdFillBuffer(commandBuffer, static_cast<VulkanBuffer &>(buffer).buffer,
                  offset, bytes, value);
  recordBarrier(commandBuffer);
  return Status::success();
}

Status VulkanBackend::map(Buffer &buffer, void **ptr) {
  auto &vkBuffer = static_cast<VulkanBuffer &>(buffer);
  if (!vkBuffer.hostVisible || !vkBuffer.mapped)
    return Status(CACHET_ERROR_INVALID_ARGUMENT,
                  "the buffer was not allocated with "
                  "CACHET_BUFFER_HOST_VISIBLE");
  *ptr = vkBuffer.mapped;
  return Status::success();
}

Status VulkanBackend::deviceAddress(Buffer &buffer, uint64_t *address) {
  if (!bufferDeviceAddressEnabled)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  std::string("device '") + info.name +
                      "' lacks the bufferDeviceAddress feature");
  *address = static_cast<VulkanBuffer &>(buffer).address;
  return Status::success();
}

Status VulkanBackend::loadModule(const void *data, size_t bytes,
                                 std::unique_ptr<Module> &result) {
  if (bytes % 4 != 0)
    return Status(CACHET_ERROR_INVALID_BINARY,
                  "invalid SPIR-V: size " + std::to_string(bytes) +
                      " is not a multiple of 4 bytes");
  std::vector<uint32_t> words(bytes / 4);
  if (bytes)
    std::memcpy(words.data(), data, bytes);
  auto module = std::make_unique<VulkanModule>(device);
  CACHET_RETURN_IF_ERROR(SpirvModuleInfo::parse(words, module->spirv));
  // A driver may crash on SPIR-V it cannot run, or on invalid SPIR-V;
  // reject it here instead.
  unsigned vulkanMinor = VK_API_VERSION_MINOR(apiVersion);
  CACHET_RETURN_IF_ERROR(
      module->spirv.checkVersionForVulkan(vulkanMinor, deviceName()));
  const std::vector<uint32_t> &capabilities = module->spirv.getCapabilities();
  if (!coopMatrix.enabled &&
      std::find(capabilities.begin(), capabilities.end(),
                spirvCapabilityCooperativeMatrixKHR) != capabilities.end()) {
    // Loaded without a shader (the driver never sees it): its kernels fail
    // when they are asked for, so that code which launches them only where
    // the device has cooperative matrices loads everywhere.
    module->unsupported = "the module declares capability "
                          "CooperativeMatrixKHR, which needs "
                          "VK_KHR_cooperative_matrix; " +
                          deviceName() + " cannot run it: " + noCoopMatrix;
    result = std::move(module);
    return Status::success();
  }
  auto declares = [&](uint32_t capability) {
    return std::find(capabilities.begin(), capabilities.end(), capability) !=
           capabilities.end();
  };
  const char *bf16Missing =
      !bf16Enabled && (declares(spirvCapabilityBFloat16TypeKHR) ||
                       declares(spirvCapabilityBFloat16DotProductKHR))
          ? "BFloat16TypeKHR"
      : !bf16CoopMatrix && declares(spirvCapabilityBFloat16CooperativeMatrixKHR)
          ? "BFloat16CooperativeMatrixKHR"
          : nullptr;
  if (bf16Missing) {
    // As above: refused when a kernel is asked for, not at load.
    module->unsupported =
        std::string("the module declares capability ") + bf16Missing +
        ", which needs VK_KHR_shader_bfloat16" +
        (bf16Enabled ? "'s shaderBFloat16CooperativeMatrix" : "") + "; " +
        deviceName() + " cannot run it: " +
        (!noBF16.empty()       ? noBF16
         : !coopMatrix.enabled ? noCoopMatrix
                               : "its VK_KHR_shader_bfloat16 lacks the "
                                 "shaderBFloat16CooperativeMatrix feature");
    result = std::move(module);
    return Status::success();
  }
  // Where the linked SPIRV-Tools does not know one of the module's
  // capabilities (CooperativeMatrixKHR before SPIRV-Tools 2023.4), it cannot
  // validate the module and is skipped (`skipped` says why; the runtime has
  // no verbose mode to print it): the checks above and the structural ones
  // of SpirvModuleInfo::parse() remain.
  std::string skipped;
  CACHET_RETURN_IF_ERROR(validateForVulkan(words, capabilities, vulkanMinor,
                                           layoutRules, skipped));
  auto shaderInfo = makeStruct<VkShaderModuleCreateInfo>(
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  shaderInfo.codeSize = bytes;
  shaderInfo.pCode = words.data();
  VkResult vkResult =
      vkCreateShaderModule(device, &shaderInfo, nullptr, &module->shader);
  if (vkResult != VK_SUCCESS) {
    Status failure = vulkanFailure("vkCreateShaderModule", vkResult);
    return Status(vkResult == VK_ERROR_INVALID_SHADER_NV
                      ? CACHET_ERROR_INVALID_BINARY
                      : failure.getCode(),
                  failure.getMessage());
  }
  result = std::move(module);
  return Status::success();
}

Status VulkanBackend::checkSubgroupSize(const char *name,
                                        const CachetKernelInfo &kernelInfo,
                                        uint64_t invocations,
                                        bool &request) const {
  uint32_t need = kernelInfo.subgroupSize;
  // With subgroupSizeControl the pipeline asks for the size; without it (or
  // beyond its limits) the driver picks one, which must be the one it
  // reports and the only one it has.
  request =
      need && subgroupSizeControl && need >= sizeControl.minSubgroupSize &&
      need <= sizeControl.maxSubgroupSize &&
      invocations <= uint64_t(need) * sizeControl.maxComputeWorkgroupSubgroups;
  bool fixed = need == info.subgroupSize &&
               (!subgroupSizeControl ||
                sizeControl.minSubgroupSize == sizeControl.maxSubgroupSize);
  if (!need || request || fixed)
    return Status::success();
  std::string why;
  if (!subgroupSizeControl)
    why = " (without subgroupSizeControl a size cannot be asked for)";
  else if (need < sizeControl.minSubgroupSize ||
           need > sizeControl.maxSubgroupSize)
    why = " (it can run " + std::to_string(sizeControl.minSubgroupSize) +
          " to " + std::to_string(sizeControl.maxSubgroupSize) + " lanes)";
  else
    why = "; the kernel's " + std::to_string(invocations) +
          " invocations are more than the " +
          std::to_string(sizeControl.maxComputeWorkgroupSubgroups) +
          " subgroups per workgroup it allows";
  return Status(CACHET_ERROR_UNSUPPORTED,
                "kernel '" + std::string(name) +
                    "' was compiled for subgroups of " + std::to_string(need) +
                    " lanes (its device profile's); " + deviceName() +
                    " runs subgroups of " + std::to_string(info.subgroupSize) +
                    why + ": compile for this device's profile");
}

Status VulkanBackend::getKernel(Module &module, const char *name,
                                std::unique_ptr<Kernel> &result) {
  auto &vkModule = static_cast<VulkanModule &>(module);
  if (!vkModule.unsupported.empty())
    return Status(CACHET_ERROR_UNSUPPORTED, "kernel '" + std::string(name) +
                                                "': " + vkModule.unsupported);
  CachetKernelInfo kernelInfo;
  CACHET_RETURN_IF_ERROR(vkModule.spirv.describeEntryPoint(name, kernelInfo));
  if (kernelInfo.pushConstantBytes > info.maxPushConstantBytes)
    return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                  "entry point '" + std::string(name) + "' has " +
                      std::to_string(kernelInfo.pushConstantBytes) +
                      " bytes of push constants; the device allows " +
                      std::to_string(info.maxPushConstantBytes));
  uint64_t invocations = uint64_t(kernelInfo.workgroupSize[0]) *
                         kernelInfo.workgroupSize[1] *
                         kernelInfo.workgroupSize[2];
  if (invocations > info.maxWorkgroupInvocations)
    return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                  "entry point '" + std::string(name) + "' has " +
                      std::to_string(invocations) +
                      " invocations per workgroup; the device allows " +
                      std::to_string(info.maxWorkgroupInvocations));

  if (kernelInfo.numBindings >
      properties.limits.maxPerStageDescriptorStorageBuffers)
    return Status(
        CACHET_ERROR_LIMIT_EXCEEDED,
        "entry point '" + std::string(name) + "' binds " +
            std::to_string(kernelInfo.numBindings) +
            " storage buffers; the device allows " +
            std::to_string(
                properties.limits.maxPerStageDescriptorStorageBuffers) +
            " (maxPerStageDescriptorStorageBuffers)");
  bool requestSubgroupSize = false;
  CACHET_RETURN_IF_ERROR(
      checkSubgroupSize(name, kernelInfo, invocations, requestSubgroupSize));
  auto kernel = std::make_unique<VulkanKernel>(device, kernelInfo, name);
  std::vector<VkDescriptorSetLayoutBinding> bindings(kernelInfo.numBindings);
  for (uint32_t i = 0; i < kernelInfo.numBindings; ++i) {
    bindings[i] = {};
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  auto setInfo = makeStruct<VkDescriptorSetLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  setInfo.bindingCount = kernelInfo.numBindings;
  setInfo.pBindings = bindings.data();
  kernel->pushDescriptors =
      kernelInfo.numBindings && kernelInfo.numBindings <= maxPushDescriptors;
  if (kernel->pushDescriptors)
    setInfo.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  CACHET_VK_CHECK("vkCreateDescriptorSetLayout",
                  vkCreateDescriptorSetLayout(device, &setInfo, nullptr,
                                              &kernel->setLayout));
  kernel->pushRangeBytes = (kernelInfo.pushConstantBytes + 3) & ~3u;
  VkPushConstantRange pushRange = {VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                   kernel->pushRangeBytes};
  auto layoutInfo = makeStruct<VkPipelineLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &kernel->setLayout;
  layoutInfo.pushConstantRangeCount = kernel->pushRangeBytes ? 1 : 0;
  layoutInfo.pPushConstantRanges = &pushRange;
  CACHET_VK_CHECK(
      "vkCreatePipelineLayout",
      vkCreatePipelineLayout(device, &layoutInfo, nullptr, &kernel->layout));
  auto pipelineInfo = makeStruct<VkComputePipelineCreateInfo>(
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  pipelineInfo.stage.sType =
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  auto requiredSize = makeStruct<
      VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO);
  if (requestSubgroupSize) {
    requiredSize.requiredSubgroupSize = kernelInfo.subgroupSize;
    pipelineInfo.stage.pNext = &requiredSize;
    if (computeFullSubgroups &&
        kernelInfo.workgroupSize[0] % kernelInfo.subgroupSize == 0)
      pipelineInfo.stage.flags |=
          VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipelineInfo.stage.module = vkModule.shader;
  pipelineInfo.stage.pName = kernel->name.c_str();
  pipelineInfo.layout = kernel->layout;
  CACHET_VK_CHECK("vkCreateComputePipelines",
                  vkCreateComputePipelines(device, pipelineCache, 1,
                                           &pipelineInfo, nullptr,
                                           &kernel->pipeline));
  result = std::move(kernel);
  return Status::success();
}

Status VulkanBackend::launch(Kernel &kernel, const LaunchConfig &config) {
  auto &vkKernel = static_cast<VulkanKernel &>(kernel);
  const CachetKernelInfo &kernelInfo = kernel.getInfo();
  const std::string quoted = "kernel '" + vkKernel.name + "'";
  const uint32_t *grid = config.grid;
  const uint32_t *block = config.block;
  const BindingRef *bindings = config.bindings;
  const uint32_t numBindings = config.numBindings;
  const void *pushConstants = config.pushConstants;
  const uint32_t pushBytes = config.pushBytes;
  const uint32_t *wg = kernelInfo.workgroupSize;
  if (config.params)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  "Vulkan kernels take buffer bindings and push constants, "
                  "not a parameter list; use cachetLaunch");
  if (config.sharedBytes)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  "dynamic shared memory is not supported on Vulkan; the "
                  "shader declares its workgroup memory");
  if ((block[0] || block[1] || block[2]) &&
      (block[0] != wg[0] || block[1] != wg[1] || block[2] != wg[2]))
    return Status(
        CACHET_ERROR_ARGUMENT_MISMATCH,
        "block size (" + std::to_string(block[0]) + ", " +
            std::to_string(block[1]) + ", " + std::to_string(block[2]) +
            ") differs from the "
            "workgroup size in the shader of " +
            quoted + " (" + std::to_string(wg[0]) + ", " +
            std::to_string(wg[1]) + ", " + std::to_string(wg[2]) + ")");
  if (config.sharedBytes)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  "dynamic shared memory is not supported on Vulkan; the "
                  "shader declares its workgroup memory");
  if (numBindings != kernelInfo.numBindings)
    return Status(CACHET_ERROR_ARGUMENT_MISMATCH,
                  quoted + " takes " + std::to_string(kernelInfo.numBindings) +
                      " buffer arguments, got " + std::to_string(numBindings));
  if (pushBytes && !kernelInfo.pushConstantBytes)
    return Status(CACHET_ERROR_ARGUMENT_MISMATCH,
                  quoted + " takes no push constants, got " +
                      std::to_string(pushBytes) + " bytes");
  if (pushBytes < kernelInfo.pushConstantBytes)
    return Status(
        CACHET_ERROR_ARGUMENT_MISMATCH,
        quoted + " takes " + std::to_string(kernelInfo.pushConstantBytes) +
            " bytes of push constants, got " + std::to_string(pushBytes));
  for (int i = 0; i < 3; ++i)
    if (grid[i] > info.maxWorkgroupCount[i])
      return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                    "grid dimension " + std::to_string(i) + " of " +
                        std::to_string(grid[i]) +
                        " workgroups exceeds the device's "
                        "maxComputeWorkGroupCount of " +
                        std::to_string(info.maxWorkgroupCount[i]));
  std::vector<VkDescriptorBufferInfo> bufferInfos(numBindings);
  for (uint32_t i = 0; i < numBindings; ++i) {
    const BindingRef &binding = bindings[i];
    if (binding.range > info.maxBindingBytes)
      return Status(
          CACHET_ERROR_LIMIT_EXCEEDED,
          "binding " + std::to_string(i) + " of " + quoted + " covers " +
              std::to_string(binding.range) +
              " bytes, above the device's maxStorageBufferRange of " +
              std::to_string(info.maxBindingBytes) +
              " bytes: bind the buffer in pieces (CachetBinding offset and "
              "range) or pass its device address");
    if (binding.offset % info.bindingOffsetAlignment)
      return Status(CACHET_ERROR_INVALID_ARGUMENT,
                    "binding " + std::to_string(i) + " of " + quoted +
                        " starts at offset " + std::to_string(binding.offset) +
                        ", not a multiple of minStorageBufferOffsetAlignment " +
                        std::to_string(info.bindingOffsetAlignment));
    bufferInfos[i] = {static_cast<VulkanBuffer *>(binding.buffer)->buffer,
                      binding.offset, binding.range};
  }

  CACHET_RETURN_IF_ERROR(ensureRecording());
  vkCmdBindPipeline(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                    vkKernel.pipeline);
  if (numBindings) {
    std::vector<VkWriteDescriptorSet> writes(numBindings);
    for (uint32_t i = 0; i < numBindings; ++i) {
      writes[i] = makeStruct<VkWriteDescriptorSet>(
          VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &bufferInfos[i];
    }
    if (vkKernel.pushDescriptors) {
      // The bindings go into the command buffer: nothing is allocated or
      // updated per launch.
      pushDescriptorSet(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                        vkKernel.layout, 0, numBindings, writes.data());
    } else {
      VkDescriptorSet set;
      CACHET_RETURN_IF_ERROR(allocateDescriptorSet(vkKernel.setLayout, set));
      for (VkWriteDescriptorSet &write : writes)
        write.dstSet = set;
      vkUpdateDescriptorSets(device, numBindings, writes.data(), 0, nullptr);
      vkCmdBindDescriptorSets(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                              vkKernel.layout, 0, 1, &set, 0, nullptr);
    }
  }
  if (vkKernel.pushRangeBytes) {
    std::vector<char> push(vkKernel.pushRangeBytes, 0);
    std::memcpy(push.data(), pushConstants,
                std::min<uint32_t>(pushBytes, vkKernel.pushRangeBytes));
    vkCmdPushConstants(commandBuffer, vkKernel.layout,
                       VK_SHADER_STAGE_COMPUTE_BIT, 0, vkKernel.pushRangeBytes,
                       push.data());
  }
  vkCmdDispatch(commandBuffer, grid[0], grid[1], grid[2]);
  recordBarrier(commandBuffer);
  if (++recordedCommands >= maxRecordedCommands)
    return flush();
  return Status::success();
}

Status VulkanBackend::createEvent(std::unique_ptr<Event> &result) {
  if (!timestampValidBits)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  std::string("the compute queue of '") + info.name +
                      "' has no timestamps (timestampValidBits = 0)");
  auto event = std::make_unique<VulkanEvent>(device);
  auto poolInfo = makeStruct<VkQueryPoolCreateInfo>(
      VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  poolInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
  poolInfo.queryCount = 1;
  CACHET_VK_CHECK("vkCreateQueryPool",
                  vkCreateQueryPool(device, &poolInfo, nullptr, &event->pool));
  result = std::move(event);
  return Status::success();
}

Status VulkanBackend::recordEvent(Event &event) {
  auto &vkEvent = static_cast<VulkanEvent &>(event);
  CACHET_RETURN_IF_ERROR(ensureRecording());
  vkCmdResetQueryPool(commandBuffer, vkEvent.pool, 0, 1);
  vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                      vkEvent.pool, 0);
  vkEvent.recorded = true;
  return Status::success();
}

Status VulkanBackend::eventTimestampNs(Event &event, uint64_t *ns) {
  auto &vkEvent = static_cast<VulkanEvent &>(event);
  if (!vkEvent.recorded)
    return Status(CACHET_ERROR_INVALID_ARGUMENT,
                  "the event was never recorded");
  CACHET_RETURN_IF_ERROR(flush());
  uint64_t ticks = 0;
  CACHET_VK_CHECK(
      "vkGetQueryPoolResults",
      vkGetQueryPoolResults(device, vkEvent.pool, 0, 1, sizeof(ticks), &ticks,
                            sizeof(ticks),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  if (timestampValidBits < 64)
    ticks &= (uint64_t(1) << timestampValidBits) - 1;
  *ns = static_cast<uint64_t>(static_cast<double>(ticks) *
                              info.timestampPeriodNs);
  return Status::success();
}

} // namespace

Status cachet::runtime::createVulkanBackend(uint32_t flags,
                                            std::unique_ptr<Backend> &result) {
  auto backend = std::make_unique<VulkanBackend>();
  CACHET_RETURN_IF_ERROR(backend->init(flags));
  result = std::move(backend);
  return Status::success();
}
