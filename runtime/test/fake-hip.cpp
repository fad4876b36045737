//===- fake-hip.cpp - A host-memory stand-in for libamdhip64, for tests ---===//
//
// The HIP entry points that libcachet_runtime's HIP backend resolves,
// implemented on the host, so that the backend's use of them (argument
// order, copy kinds, pitched uploads with zeroed gaps, events, error
// mapping, the mgpu* memory paths) is tested where there is no AMD GPU:
//
//   CACHET_HIP_LIBRARY=build/lib/libcachet-fake-hip.so \
//     cachet-runtime-test --backend=hip
//
// "Device memory" is host memory; work runs when it is submitted. No module
// loads (there is no code object to run). It says nothing about a real HIP
// runtime's behaviour; test/Runtime/hip.test does, on a GPU.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {

using hipError_t = int;

enum : hipError_t {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kInvalidImage = 200,
  kInvalidDevice = 101,
};

const uint64_t kTotalMemory = 1ull << 30;

std::map<uintptr_t, size_t> allocations;
uint64_t allocated = 0;
int current = -1;

using TimePoint = std::chrono::steady_clock::time_point;

} // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT hipError_t hipInit(unsigned) { return kSuccess; }
FAKE_EXPORT const char *hipGetErrorName(hipError_t result) {
  switch (result) {
  case kInvalidValue:
    return "hipErrorInvalidValue";
  case kOutOfMemory:
    return "hipErrorOutOfMemory";
  case kInvalidImage:
    return "hipErrorInvalidImage";
  case kInvalidDevice:
    return "hipErrorInvalidDevice";
  default:
    return "hipErrorUnknown";
  }
}
FAKE_EXPORT hipError_t hipGetDeviceCount(int *count) {
  *count = 1;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipSetDevice(int device) {
  if (device != 0)
    return kInvalidDevice;
  current = device;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipDeviceGetName(char *name, int length, int) {
  std::snprintf(name, size_t(length), "cachet fake HIP device");
  return kSuccess;
}
FAKE_EXPORT hipError_t hipDeviceGetAttribute(int *value, int attribute,
                                             int device) {
  if (device != 0)
    return kInvalidDevice;
  switch (attribute) {
  case 19: // L2 bytes
    *value = 4 * 1024 * 1024;
    break;
  case 23: // compute capability
    *value = 9;
    break;
  case 61:
    *value = 4;
    break;
  case 26: // max block dim x, y, z
  case 27:
  case 28:
    *value = 1024;
    break;
  case 29: // max grid dim x, y, z
  case 30:
  case 31:
    *value = 2147483647;
    break;
  case 56: // max threads per block
    *value = 1024;
    break;
  case 63: // compute units
    *value = 304;
    break;
  case 74: // shared memory per block
    *value = 64 * 1024;
    break;
  case 87: // wavefront size
    *value = 64;
    break;
  default:
    return kInvalidValue;
  }
  return kSuccess;
}
FAKE_EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, int) {
  *bytes = kTotalMemory;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipStreamCreateWithFlags(void **stream, unsigned) {
  if (current != 0)
    return kInvalidDevice;
  static int theStream;
  *stream = &theStream;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipStreamDestroy(void *) { return kSuccess; }
FAKE_EXPORT hipError_t hipStreamSynchronize(void *) { return kSuccess; }
FAKE_EXPORT hipError_t hipMalloc(void **ptr, size_t bytes) {
  if (bytes > kTotalMemory - allocated)
    return kOutOfMemory;
  void *memory = std::malloc(bytes ? bytes : 1);
  if (!memory)
    return kOutOfMemory;
  std::memset(memory, 0xcd, bytes);
  allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  allocated += bytes;
  *ptr = memory;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipFree(void *ptr) {
  auto it = allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations.end())
    return kInvalidValue;
  allocated -= it->second;
  allocations.erase(it);
  std::free(ptr);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemcpyHtoDAsync(void *dst, void *src, size_t bytes,
                                          void *) {
  std::memcpy(dst, src, bytes);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes,
                                          void *) {
  std::memcpy(dst, src, bytes);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes,
                                          void *) {
  std::memmove(dst, src, bytes);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemcpy2DAsync(void *dst, size_t dstPitch,
                                        const void *src, size_t srcPitch,
                                        size_t width, size_t height, int kind,
                                        void *) {
  // Host to device (1) or device to host (2).
  if ((kind != 1 && kind != 2) || width > dstPitch || width > srcPitch)
    return kInvalidValue;
  for (size_t r = 0; r < height; ++r)
    std::memcpy(static_cast<char *>(dst) + r * dstPitch,
                static_cast<const char *>(src) + r * srcPitch, width);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemsetD8Async(void *dst, unsigned char value,
                                        size_t count, void *) {
  std::memset(dst, value, count);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipMemsetD32Async(void *dst, int value, size_t count,
                                         void *) {
  auto *words = static_cast<int32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return kSuccess;
}
FAKE_EXPORT hipError_t hipModuleLoadData(void **, const void *) {
  return kInvalidImage;
}
FAKE_EXPORT hipError_t hipModuleUnload(void *) { return kInvalidValue; }
FAKE_EXPORT hipError_t hipModuleGetFunction(void **, void *, const char *) {
  return kInvalidValue;
}
FAKE_EXPORT hipError_t hipModuleLaunchKernel(void *, unsigned, unsigned,
                                             unsigned, unsigned, unsigned,
                                             unsigned, unsigned, void *,
                                             void **, void **) {
  return kInvalidValue;
}
FAKE_EXPORT hipError_t hipEventCreate(void **event) {
  *event = new TimePoint();
  return kSuccess;
}
FAKE_EXPORT hipError_t hipEventDestroy(void *event) {
  delete static_cast<TimePoint *>(event);
  return kSuccess;
}
FAKE_EXPORT hipError_t hipEventRecord(void *event, void *) {
  *static_cast<TimePoint *>(event) = std::chrono::steady_clock::now();
  return kSuccess;
}
FAKE_EXPORT hipError_t hipEventSynchronize(void *) { return kSuccess; }
FAKE_EXPORT hipError_t hipEventElapsedTime(float *ms, void *start, void *end) {
  *ms = std::chrono::duration<float, std::milli>(
            *static_cast<TimePoint *>(end) - *static_cast<TimePoint *>(start))
            .count();
  return kSuccess;
}
