//===- fake-cuda.cpp - A host-memory stand-in for libcuda, for tests ------===//
//
// The driver API entry points that libcachet_runtime's CUDA backend
// resolves, implemented on the host so that the backend's own logic (the
// parameter block, pitched uploads with zeroed gaps, stream ordering,
// events, PDL launches, the mgpu* paths, error mapping) is tested where
// there is no GPU:
//
//   CACHET_CUDA_LIBRARY=build/lib/libcachet-fake-cuda.so \
//     cachet-runtime-test --backend=cuda
//
// "Device memory" is host memory; work runs when it is submitted. Modules
// are the PTX text of cachet-runtime-test and cachet-probe: an entry named in
// the text is a kernel the fake runs on the host (vadd_f32, pdl_inc_u32,
// probe_read, probe_read_l2, probe_copy, probe_copy_pdl, probe_chase; the
// host has no L1 to skip, so probe_read_l2 is probe_read). It says nothing
// about a real driver's behaviour; test/Runtime/cuda.test does, on a GPU.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

enum : CUresult {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kInvalidPtx = 218,
  kNotFound = 500,
};

const uint64_t kTotalMemory = 1ull << 30;

struct Memcpy2D {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t widthInBytes, height;
};

struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;
  } value;
};

struct LaunchConfig {
  unsigned grid[3], block[3], sharedMemBytes;
  void *stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

/// What a fake module defines: the names of the kernels in its text.
struct FakeModule {
  std::string text;
};

enum class FakeKernel { VaddF32, PdlIncU32, ProbeRead, ProbeCopy, ProbeChase };

std::map<uintptr_t, size_t> allocations;
uint64_t allocated = 0;
FakeKernel kernels[] = {FakeKernel::VaddF32, FakeKernel::PdlIncU32,
                        FakeKernel::ProbeRead, FakeKernel::ProbeCopy,
                        FakeKernel::ProbeChase};

const char *pointerTo(CUdeviceptr address) {
  return reinterpret_cast<const char *>(uintptr_t(address));
}

/// Runs `kernel` for every thread of the grid, reading its parameters from
/// `params` (kernelParams) or from the packed `buffer` (the extra path).
CUresult run(FakeKernel kernel, const unsigned grid[3], const unsigned block[3],
             void **params, void **extra) {
  const char *buffer = nullptr;
  size_t bufferBytes = 0;
  for (void **e = extra; e && *e; e += 2) {
    if (*e == reinterpret_cast<void *>(1))
      buffer = static_cast<const char *>(e[1]);
    else if (*e == reinterpret_cast<void *>(2))
      bufferBytes = *static_cast<size_t *>(e[1]);
  }
  // Parameter i at its natural offset in the parameter block.
  auto param = [&](size_t index, size_t offset, size_t size, void *out) {
    if (params)
      std::memcpy(out, params[index], size);
    else
      std::memcpy(out, buffer + offset, size);
  };
  uint64_t threads = uint64_t(grid[0]) * block[0];
  if (kernel == FakeKernel::ProbeRead) {
    // cachet-probe's probe_read (tools/cachet-probe/probe.ptx).
    if (!params && (!buffer || bufferBytes != 48))
      return kInvalidValue;
    uint64_t src, out;
    uint32_t w[8];
    param(0, 0, 8, &src);
    param(1, 8, 8, &out);
    for (size_t i = 0; i < 8; ++i)
      param(2 + i, 16 + 4 * i, 4, &w[i]);
    uint32_t chunkShift = w[0], chunkMask = w[1], rowMask = w[2],
             rowShift = w[3], pitch = w[4], span = w[5], perGroup = w[6],
             sentinel = w[7];
    auto shr = [](uint32_t v, uint32_t s) { return s >= 32 ? 0u : v >> s; };
    for (uint32_t g = 0; g < grid[0]; ++g)
      for (uint32_t t = 0; t < block[0]; ++t) {
        uint32_t k = (g * perGroup) % span + t;
        if (k >= span)
          k -= span;
        uint32_t acc[4] = {};
        for (uint32_t j = 0; j < perGroup >> 6; ++j) {
          uint32_t i = shr(k, chunkShift);
          uint32_t addr = (i & rowMask) * pitch +
                          (shr(i, rowShift) << chunkShift) + (k & chunkMask);
          uint32_t v[4];
          std::memcpy(v, pointerTo(src) + uint64_t(addr) * 16, 16);
          for (int c = 0; c < 4; ++c)
            acc[c] += v[c];
          k += 64;
          if (k >= span)
            k -= span;
        }
        if (acc[0] == sentinel)
          std::memcpy(const_cast<char *>(pointerTo(out)) +
                          (uint64_t(g) * 64 + t) * 16,
                      acc, 16);
      }
    return kSuccess;
  }
  if (kernel == FakeKernel::ProbeCopy) {
    // probe_copy and probe_copy_pdl (tools/cachet-probe/probe*.ptx).
    if (!params && (!buffer || bufferBytes != 24))
      return kInvalidValue;
    uint64_t src, dst;
    uint32_t base, perGroup;
    param(0, 0, 8, &src);
    param(1, 8, 8, &dst);
    param(2, 16, 4, &base);
    param(3, 20, 4, &perGroup);
    for (uint64_t g = 0; g < grid[0]; ++g)
      std::memmove(
          const_cast<char *>(pointerTo(dst)) + (g * perGroup + base) * 16,
          pointerTo(src) + (g * perGroup + base) * 16, uint64_t(perGroup) * 16);
    return kSuccess;
  }
  if (kernel == FakeKernel::ProbeChase) {
    // probe_chase: i = src[i].x, `steps` times, by one thread.
    if (!params && (!buffer || bufferBytes != 28))
      return kInvalidValue;
    uint64_t src, out;
    uint32_t i, steps, sentinel;
    param(0, 0, 8, &src);
    param(1, 8, 8, &out);
    param(2, 16, 4, &i);
    param(3, 20, 4, &steps);
    param(4, 24, 4, &sentinel);
    for (uint32_t s = 0; s < steps; ++s)
      std::memcpy(&i, pointerTo(src) + uint64_t(i) * 16, 4);
    if (i == sentinel)
      std::memcpy(const_cast<char *>(pointerTo(out)),
                  pointerTo(src) + uint64_t(i) * 16, 16);
    return kSuccess;
  }
  if (kernel == FakeKernel::VaddF32) {
    if (!params && (!buffer || bufferBytes != 28))
      return kInvalidValue;
    uint64_t a, b, c;
    uint32_t n;
    param(0, 0, 8, &a);
    param(1, 8, 8, &b);
    param(2, 16, 8, &c);
    param(3, 24, 4, &n);
    for (uint64_t i = 0; i < threads && i < n; ++i) {
      float x, y;
      std::memcpy(&x, pointerTo(a) + 4 * i, 4);
      std::memcpy(&y, pointerTo(b) + 4 * i, 4);
      float z = x + y;
      std::memcpy(const_cast<char *>(pointerTo(c)) + 4 * i, &z, 4);
    }
    return kSuccess;
  }
  if (!params && (!buffer || bufferBytes != 12))
    return kInvalidValue;
  uint64_t x;
  uint32_t n;
  param(0, 0, 8, &x);
  param(1, 8, 4, &n);
  auto *words = reinterpret_cast<uint32_t *>(uintptr_t(x));
  for (uint64_t i = 0; i < threads && i < n; ++i)
    ++words[i];
  return kSuccess;
}

} // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT CUresult cuInit(unsigned) { return kSuccess; }
FAKE_EXPORT CUresult cuDriverGetVersion(int *version) {
  *version = 12080;
  return kSuccess;
}
FAKE_EXPORT CUresult cuGetErrorName(CUresult result, const char **name) {
  switch (result) {
  case kInvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return kSuccess;
  case kOutOfMemory:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return kSuccess;
  case kInvalidPtx:
    *name = "CUDA_ERROR_INVALID_PTX";
    return kSuccess;
  case kNotFound:
    *name = "CUDA_ERROR_NOT_FOUND";
    return kSuccess;
  default:
    return kInvalidValue;
  }
}
FAKE_EXPORT CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
FAKE_EXPORT CUresult cuDeviceGet(int *device, int index) {
  *device = index;
  return index == 0 ? kSuccess : kInvalidValue;
}
FAKE_EXPORT CUresult cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, size_t(length), "cachet fake CUDA device");
  return kSuccess;
}
FAKE_EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 1: // max threads per block
    *value = 1024;
    break;
  case 2: // max block dim x, y, z
  case 3:
    *value = 1024;
    break;
  case 4:
    *value = 64;
    break;
  case 5: // max grid dim x, y, z
    *value = 2147483647;
    break;
  case 6:
  case 7:
    *value = 65535;
    break;
  case 8: // shared memory per block
    *value = 48 * 1024;
    break;
  case 10: // warp size
    *value = 32;
    break;
  case 16: // multiprocessors
    *value = 132;
    break;
  case 38: // L2 bytes
    *value = 50 * 1024 * 1024;
    break;
  case 75: // compute capability
    *value = 9;
    break;
  case 76:
    *value = 0;
    break;
  case 97: // opt-in shared memory per block
    *value = 227 * 1024;
    break;
  default:
    return kInvalidValue;
  }
  return kSuccess;
}
FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = kTotalMemory;
  return kSuccess;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  static int primary;
  *context = &primary;
  return kSuccess;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
FAKE_EXPORT CUresult cuCtxSetCurrent(void *context) {
  return context ? kSuccess : kInvalidValue;
}
FAKE_EXPORT CUresult cuStreamCreate(void **stream, unsigned) {
  static int theStream;
  *stream = &theStream;
  return kSuccess;
}
FAKE_EXPORT CUresult cuStreamDestroy_v2(void *) { return kSuccess; }
FAKE_EXPORT CUresult cuStreamSynchronize(void *) { return kSuccess; }
FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *address, size_t bytes) {
  if (bytes == 0)
    return kInvalidValue;
  if (bytes > kTotalMemory - allocated)
    return kOutOfMemory;
  void *memory = std::malloc(bytes);
  if (!memory)
    return kOutOfMemory;
  std::memset(memory, 0xcd, bytes);
  allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  allocated += bytes;
  *address = reinterpret_cast<uintptr_t>(memory);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr address) {
  auto it = allocations.find(uintptr_t(address));
  if (it == allocations.end())
    return kInvalidValue;
  allocated -= it->second;
  allocations.erase(it);
  std::free(reinterpret_cast<void *>(uintptr_t(address)));
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src,
                                          size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src,
                                          size_t bytes, void *) {
  std::memcpy(dst, pointerTo(src), bytes);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src,
                                          size_t bytes, void *) {
  std::memmove(reinterpret_cast<void *>(uintptr_t(dst)), pointerTo(src), bytes);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemcpy2DAsync_v2(const Memcpy2D *copy, void *) {
  // Host (1) to device (2) or device to host.
  bool toDevice = copy->srcMemoryType == 1 && copy->dstMemoryType == 2;
  bool toHost = copy->srcMemoryType == 2 && copy->dstMemoryType == 1;
  if ((!toDevice && !toHost) || copy->widthInBytes > copy->srcPitch ||
      copy->widthInBytes > copy->dstPitch)
    return kInvalidValue;
  const char *src = toDevice ? static_cast<const char *>(copy->srcHost)
                             : pointerTo(copy->srcDevice);
  char *dst = toDevice ? reinterpret_cast<char *>(uintptr_t(copy->dstDevice))
                       : static_cast<char *>(copy->dstHost);
  for (size_t r = 0; r < copy->height; ++r)
    std::memcpy(dst + r * copy->dstPitch, src + r * copy->srcPitch,
                copy->widthInBytes);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value,
                                     size_t count, void *) {
  std::memset(reinterpret_cast<void *>(uintptr_t(dst)), value, count);
  return kSuccess;
}
FAKE_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value,
                                      size_t count, void *) {
  auto *words = reinterpret_cast<uint32_t *>(uintptr_t(dst));
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return kSuccess;
}
FAKE_EXPORT CUresult cuModuleLoadDataEx(void **module, const void *image,
                                        unsigned numOptions, int *options,
                                        void **values) {
  const char *text = static_cast<const char *>(image);
  if (!std::strstr(text, ".entry ")) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5) // the error log buffer
        std::snprintf(static_cast<char *>(values[i]), 64,
                      "fake ptxas: no .entry in the module");
    return kInvalidPtx;
  }
  *module = new FakeModule{text};
  return kSuccess;
}
FAKE_EXPORT CUresult cuModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return kSuccess;
}
FAKE_EXPORT CUresult cuModuleGetFunction(void **function, void *module,
                                         const char *name) {
  const std::string &text = static_cast<FakeModule *>(module)->text;
  if (text.find(std::string(".entry ") + name + "(") == std::string::npos)
    return kNotFound;
  if (std::strcmp(name, "vadd_f32") == 0)
    *function = &kernels[0];
  else if (std::strcmp(name, "pdl_inc_u32") == 0)
    *function = &kernels[1];
  else if (std::strcmp(name, "probe_read") == 0 ||
           std::strcmp(name, "probe_read_l2") == 0)
    *function = &kernels[2];
  else if (std::strcmp(name, "probe_copy") == 0 ||
           std::strcmp(name, "probe_copy_pdl") == 0)
    *function = &kernels[3];
  else if (std::strcmp(name, "probe_chase") == 0)
    *function = &kernels[4];
  else
    return kNotFound;
  return kSuccess;
}
FAKE_EXPORT CUresult cuFuncSetAttribute(void *, int, int) { return kSuccess; }
FAKE_EXPORT CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                                    unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned, void *,
                                    void **params, void **extra) {
  if ((params == nullptr) == (extra == nullptr))
    return kInvalidValue;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return run(*static_cast<FakeKernel *>(function), grid, block, params, extra);
}
FAKE_EXPORT CUresult cuLaunchKernelEx(const LaunchConfig *config,
                                      void *function, void **params,
                                      void **extra) {
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id != 6 || config->attrs[i].value.value != 1)
      return kInvalidValue;
  if ((params == nullptr) == (extra == nullptr))
    return kInvalidValue;
  return run(*static_cast<FakeKernel *>(function), config->grid, config->block,
             params, extra);
}
FAKE_EXPORT CUresult cuEventCreate(void **event, unsigned) {
  *event = new std::chrono::steady_clock::time_point();
  return kSuccess;
}
FAKE_EXPORT CUresult cuEventDestroy_v2(void *event) {
  delete static_cast<std::chrono::steady_clock::time_point *>(event);
  return kSuccess;
}
FAKE_EXPORT CUresult cuEventRecord(void *event, void *) {
  *static_cast<std::chrono::steady_clock::time_point *>(event) =
      std::chrono::steady_clock::now();
  return kSuccess;
}
FAKE_EXPORT CUresult cuEventSynchronize(void *) { return kSuccess; }
FAKE_EXPORT CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  auto *from = static_cast<std::chrono::steady_clock::time_point *>(start);
  auto *to = static_cast<std::chrono::steady_clock::time_point *>(end);
  *ms = std::chrono::duration<float, std::milli>(*to - *from).count();
  return kSuccess;
}
