//===- DeviceBackend.cpp - The CUDA and HIP backends ----------------------===//
//
// One backend for both vendors, written against DriverApi. Buffers are
// device allocations addressed by their device address; everything is
// recorded on one stream, so work runs in submission order. Host copies
// wait for the stream (the host memory may be reused on return). Kernel
// timing uses the driver's events; a mark's absolute time is measured from
// an origin event recorded when the backend was created.
//
//===----------------------------------------------------------------------===//

#include "DriverApi.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace cachet::runtime;

namespace {

class DeviceBuffer final : public Buffer {
public:
  DeviceBuffer(uint64_t size, uint64_t address)
      : Buffer(size), address(address) {}
  uint64_t address;
};

class DeviceModule final : public Module {
public:
  DeviceModule(DriverApi &api, void *handle) : api(api), handle(handle) {}
  ~DeviceModule() override { api.unloadModule(handle); }
  DriverApi &api;
  void *handle;
};

class DeviceKernel final : public Kernel {
public:
  DeviceKernel(const CachetKernelInfo &info, void *function, std::string name)
      : Kernel(info), function(function), name(std::move(name)) {}
  void *function;
  std::string name;
};

class DeviceEvent final : public Event {
public:
  DeviceEvent(DriverApi &api, void *handle) : api(api), handle(handle) {}
  ~DeviceEvent() override { api.destroyEvent(handle); }
  DriverApi &api;
  void *handle;
  bool recorded = false;
};

uint64_t addressOf(Buffer &buffer, uint64_t offset) {
  return static_cast<DeviceBuffer &>(buffer).address + offset;
}

class DeviceBackend final : public Backend {
public:
  DeviceBackend(std::string name, std::unique_ptr<DriverApi> api)
      : name(std::move(name)), api(std::move(api)) {}
  ~DeviceBackend() override {
    if (opened && api->makeCurrent().ok())
      api->synchronize();
    origin.reset();
  }

  /// Opens device `index` and reads its limits.
  Status init(int index);

  const CachetDeviceInfo &getDeviceInfo() const override { return info; }
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
  Status eventElapsedNs(Event &start, Event &end, uint64_t *ns) override;
  Status synchronize() override;

private:
  /// Checks a launch's geometry against the device limits.
  Status checkGeometry(const DeviceKernel &kernel, const LaunchConfig &config);
  /// Waits for `start` and `end` and returns the ns between them.
  Status elapsed(DeviceEvent &start, DeviceEvent &end, int64_t &ns);

  std::string name;
  std::unique_ptr<DriverApi> api;
  CachetDeviceInfo info = {};
  std::unique_ptr<DeviceEvent> origin;
  /// Whether the driver calls are usable (open() succeeded).
  bool opened = false;
};

Status DeviceBackend::init(int index) {
  CACHET_RETURN_IF_ERROR(api->open(index));
  opened = true;
  CACHET_RETURN_IF_ERROR(api->queryInfo(info));
  std::strncpy(info.backend, name.c_str(), sizeof(info.backend) - 1);
  void *handle = nullptr;
  CACHET_RETURN_IF_ERROR(api->createEvent(handle));
  origin = std::make_unique<DeviceEvent>(*api, handle);
  return recordEvent(*origin);
}

Status DeviceBackend::allocate(uint64_t bytes, uint32_t flags,
                               std::unique_ptr<Buffer> &result) {
  if (flags & CACHET_BUFFER_HOST_VISIBLE)
    return Status(CACHET_ERROR_UNSUPPORTED,
                  "host-visible buffers are not supported on " + name +
                      "; upload and download instead");
  if (bytes > info.maxAllocationBytes)
    return Status(CACHET_ERROR_OUT_OF_MEMORY,
                  std::to_string(bytes) + " bytes requested, the device has " +
                      std::to_string(info.maxAllocationBytes));
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  uint64_t address = 0;
  CACHET_RETURN_IF_ERROR(api->alloc(bytes, address));
  result = std::make_unique<DeviceBuffer>(bytes, address);
  return Status::success();
}

void DeviceBackend::release(std::unique_ptr<Buffer> buffer) {
  if (!buffer || !api->makeCurrent().ok())
    return;
  // Recorded launches may still use the memory.
  api->synchronize();
  api->free(static_cast<DeviceBuffer &>(*buffer).address);
}

Status DeviceBackend::upload(Buffer &buffer, uint64_t offset, const void *src,
                             uint64_t bytes) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  CACHET_RETURN_IF_ERROR(
      api->copyToDevice(addressOf(buffer, offset), src, bytes));
  return api->synchronize();
}

Status DeviceBackend::download(Buffer &buffer, uint64_t offset, void *dst,
                               uint64_t bytes) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  CACHET_RETURN_IF_ERROR(
      api->copyToHost(dst, addressOf(buffer, offset), bytes));
  return api->synchronize();
}

Status DeviceBackend::upload2D(Buffer &buffer, uint64_t offset,
                               uint64_t dstPitch, const void *src,
                               uint64_t srcPitch, uint64_t rowBytes,
                               uint64_t rows) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  uint64_t dst = addressOf(buffer, offset);
  // Zero the whole region first; the rows then overwrite their part, which
  // leaves bytes [rowBytes, dstPitch) of every row zero.
  if (dstPitch > rowBytes)
    CACHET_RETURN_IF_ERROR(api->fill8(dst, 0, rows * dstPitch));
  if (rowBytes)
    CACHET_RETURN_IF_ERROR(
        api->copy2DToDevice(dst, dstPitch, src, srcPitch, rowBytes, rows));
  return api->synchronize();
}

Status DeviceBackend::download2D(Buffer &buffer, uint64_t offset,
                                 uint64_t srcPitch, void *dst,
                                 uint64_t dstPitch, uint64_t rowBytes,
                                 uint64_t rows) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  if (rowBytes)
    CACHET_RETURN_IF_ERROR(api->copy2DToHost(
        dst, dstPitch, addressOf(buffer, offset), srcPitch, rowBytes, rows));
  return api->synchronize();
}

Status DeviceBackend::copy(Buffer &src, uint64_t srcOffset, Buffer &dst,
                           uint64_t dstOffset, uint64_t bytes) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  return api->copyOnDevice(addressOf(dst, dstOffset), addressOf(src, srcOffset),
                           bytes);
}

Status DeviceBackend::fill(Buffer &buffer, uint64_t offset, uint64_t bytes,
                           uint32_t value) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  return api->fill32(addressOf(buffer, offset), value, bytes / 4);
}

Status DeviceBackend::map(Buffer &, void **) {
  return Status(CACHET_ERROR_INVALID_ARGUMENT,
                "the buffer is not CACHET_BUFFER_HOST_VISIBLE (" + name +
                    " buffers are device memory)");
}

Status DeviceBackend::deviceAddress(Buffer &buffer, uint64_t *address) {
  *address = addressOf(buffer, 0);
  return Status::success();
}

Status DeviceBackend::loadModule(const void *data, size_t bytes,
                                 std::unique_ptr<Module> &result) {
  if (bytes == 0)
    return Status(CACHET_ERROR_INVALID_BINARY, "empty kernel binary");
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  // PTX must be NUL-terminated; a trailing NUL is harmless to binaries.
  std::vector<char> image(static_cast<const char *>(data),
                          static_cast<const char *>(data) + bytes);
  image.push_back('\0');
  void *handle = nullptr;
  CACHET_RETURN_IF_ERROR(api->loadModule(image.data(), image.size(), handle));
  result = std::make_unique<DeviceModule>(*api, handle);
  return Status::success();
}

Status DeviceBackend::getKernel(Module &module, const char *kernelName,
                                std::unique_ptr<Kernel> &result) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  void *function = nullptr;
  CACHET_RETURN_IF_ERROR(api->getFunction(
      static_cast<DeviceModule &>(module).handle, kernelName, function));
  // The parameter list is not reflected: the caller knows the signature.
  CachetKernelInfo kernelInfo = {};
  result = std::make_unique<DeviceKernel>(kernelInfo, function, kernelName);
  return Status::success();
}

Status DeviceBackend::checkGeometry(const DeviceKernel &kernel,
                                    const LaunchConfig &config) {
  const std::string quoted = "kernel '" + kernel.name + "'";
  const uint32_t *block = config.block;
  if (!block[0] || !block[1] || !block[2])
    return Status(CACHET_ERROR_ARGUMENT_MISMATCH,
                  quoted + ": a " + name +
                      " launch needs a block size (use "
                      "cachetLaunchWithBlock or cachetLaunchKernel)");
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  if (threads > info.maxWorkgroupInvocations)
    return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                  quoted + ": " + std::to_string(threads) +
                      " threads per block, the device allows " +
                      std::to_string(info.maxWorkgroupInvocations));
  for (int d = 0; d < 3; ++d) {
    if (block[d] > info.maxWorkgroupSize[d])
      return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                    quoted + ": block dimension " + std::to_string(d) + " is " +
                        std::to_string(block[d]) + ", the device allows " +
                        std::to_string(info.maxWorkgroupSize[d]));
    if (config.grid[d] == 0 || config.grid[d] > info.maxWorkgroupCount[d])
      return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                    quoted + ": grid dimension " + std::to_string(d) + " is " +
                        std::to_string(config.grid[d]) +
                        ", the device allows 1 to " +
                        std::to_string(info.maxWorkgroupCount[d]));
  }
  if (config.sharedBytes > info.maxSharedMemoryBytes)
    return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                  quoted + ": " + std::to_string(config.sharedBytes) +
                      " bytes of dynamic shared memory, the device allows " +
                      std::to_string(info.maxSharedMemoryBytes));
  return Status::success();
}

Status DeviceBackend::launch(Kernel &kernel, const LaunchConfig &config) {
  auto &deviceKernel = static_cast<DeviceKernel &>(kernel);
  CACHET_RETURN_IF_ERROR(checkGeometry(deviceKernel, config));
  LaunchDims dims;
  std::memcpy(dims.grid, config.grid, sizeof(dims.grid));
  std::memcpy(dims.block, config.block, sizeof(dims.block));
  dims.sharedBytes = config.sharedBytes;
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  if (config.params)
    return api->launch(deviceKernel.function, dims, config.params, nullptr, 0,
                       config.flags);

  // The parameter block: one 8-byte device address per binding, then the
  // push-constant bytes (8-byte aligned, as they follow pointers).
  uint64_t pointerBytes = uint64_t(config.numBindings) * 8;
  if (pointerBytes + config.pushBytes > info.maxPushConstantBytes)
    return Status(CACHET_ERROR_LIMIT_EXCEEDED,
                  "kernel '" + deviceKernel.name +
                      "': " + std::to_string(pointerBytes + config.pushBytes) +
                      " bytes of parameters, the limit is " +
                      std::to_string(info.maxPushConstantBytes));
  std::vector<char> block(pointerBytes + config.pushBytes);
  for (uint32_t i = 0; i < config.numBindings; ++i) {
    uint64_t address =
        addressOf(*config.bindings[i].buffer, config.bindings[i].offset);
    std::memcpy(block.data() + 8 * i, &address, 8);
  }
  if (config.pushBytes)
    std::memcpy(block.data() + pointerBytes, config.pushConstants,
                config.pushBytes);
  return api->launch(deviceKernel.function, dims, nullptr, block.data(),
                     block.size(), config.flags);
}

Status DeviceBackend::createEvent(std::unique_ptr<Event> &result) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  void *handle = nullptr;
  CACHET_RETURN_IF_ERROR(api->createEvent(handle));
  result = std::make_unique<DeviceEvent>(*api, handle);
  return Status::success();
}

Status DeviceBackend::recordEvent(Event &event) {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  auto &deviceEvent = static_cast<DeviceEvent &>(event);
  CACHET_RETURN_IF_ERROR(api->recordEvent(deviceEvent.handle));
  deviceEvent.recorded = true;
  return Status::success();
}

Status DeviceBackend::elapsed(DeviceEvent &start, DeviceEvent &end,
                              int64_t &ns) {
  if (!start.recorded || !end.recorded)
    return Status(CACHET_ERROR_INVALID_ARGUMENT,
                  "the mark has not been recorded");
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  float ms = 0.0f;
  CACHET_RETURN_IF_ERROR(api->elapsedMs(start.handle, end.handle, ms));
  ns = static_cast<int64_t>(double(ms) * 1e6);
  return Status::success();
}

Status DeviceBackend::eventTimestampNs(Event &event, uint64_t *ns) {
  int64_t sinceOrigin = 0;
  CACHET_RETURN_IF_ERROR(
      elapsed(*origin, static_cast<DeviceEvent &>(event), sinceOrigin));
  *ns = sinceOrigin > 0 ? uint64_t(sinceOrigin) : 0;
  return Status::success();
}

Status DeviceBackend::eventElapsedNs(Event &start, Event &end, uint64_t *ns) {
  int64_t between = 0;
  CACHET_RETURN_IF_ERROR(elapsed(static_cast<DeviceEvent &>(start),
                                 static_cast<DeviceEvent &>(end), between));
  if (between < 0)
    return Status(CACHET_ERROR_INVALID_ARGUMENT,
                  "the end mark precedes the start mark");
  *ns = uint64_t(between);
  return Status::success();
}

Status DeviceBackend::synchronize() {
  CACHET_RETURN_IF_ERROR(api->makeCurrent());
  return api->synchronize();
}

} // namespace

Status cachet::runtime::driverFailure(int result, const char *resultName,
                                      const char *call) {
  CachetStatus code = CACHET_ERROR_BACKEND;
  switch (result) {
  case 2: // out of memory
    code = CACHET_ERROR_OUT_OF_MEMORY;
    break;
  case 3:   // not initialized
  case 34:  // CUDA's stub library
  case 35:  // insufficient driver
  case 100: // no device
  case 101: // invalid device
    code = CACHET_ERROR_NO_DEVICE;
    break;
  case 200: // invalid image
  case 209: // no binary for this GPU
  case 218: // invalid PTX / kernel file
  case 222: // unsupported PTX version
  case 300: // invalid source
    code = CACHET_ERROR_INVALID_BINARY;
    break;
  case 500: // not found
    code = CACHET_ERROR_NOT_FOUND;
    break;
  case 701: // launch out of resources
    code = CACHET_ERROR_LIMIT_EXCEEDED;
    break;
  default:
    break;
  }
  return Status(code, std::string(call) + ": " +
                          (resultName ? resultName : "driver error") + " (" +
                          std::to_string(result) + ")");
}

Status cachet::runtime::createDeviceBackend(const char *name,
                                            std::unique_ptr<DriverApi> api,
                                            std::unique_ptr<Backend> &result) {
  std::string variable = std::string("CACHET_") + name + "_DEVICE";
  for (char &c : variable)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int index = 0;
  if (const char *value = std::getenv(variable.c_str())) {
    char *end = nullptr;
    long parsed = std::strtol(value, &end, 10);
    if (end == value || *end || parsed < 0 || parsed > 1024)
      return Status(CACHET_ERROR_INVALID_ARGUMENT,
                    variable + "='" + value + "' is not a device index");
    index = static_cast<int>(parsed);
  }
  auto backend = std::make_unique<DeviceBackend>(name, std::move(api));
  CACHET_RETURN_IF_ERROR(backend->init(index));
  result = std::move(backend);
  return Status::success();
}

Status cachet::runtime::createCudaBackend(std::unique_ptr<Backend> &result) {
  return createDeviceBackend("cuda", createCudaApi(), result);
}

Status cachet::runtime::createHipBackend(std::unique_ptr<Backend> &result) {
  return createDeviceBackend("hip", createHipApi(), result);
}
