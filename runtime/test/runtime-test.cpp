//===- runtime-test.cpp - Integration test of libcachet_runtime -----------===//
//
// Runs small SPIR-V kernels (assembled from shaders/*.spvasm at build time)
// on the default Vulkan device, or embedded PTX kernels on CUDA
// (device-test.cpp), and checks every result against the CPU. Prints one
// PASS/FAIL line per check and exits non-zero on any failure.
//
//   cachet-runtime-test [--backend=B] [--force-staging]
//                        all checks; "SKIPPED" and exit 0 when there is no
//                        device of backend B (vulkan, cuda, hip; default
//                        vulkan)
//   cachet-runtime-test --fake-discrete=rebar|cached [--force-staging]
//                        all Vulkan checks on the default device presented
//                        as a discrete GPU with resizable BAR or host-cached
//                        device memory (vulkan-interpose.cpp), and which
//                        memory types buffers take there
//   cachet-runtime-test [--backend=B] --probe
//                        exit 0 iff a device exists; prints it and its
//                        cooperative matrices (an empty B lets the runtime
//                        read $CACHET_BACKEND)
//   cachet-runtime-test --coop-module=FILE.spv
//   cachet-runtime-test --coop-bf16-module=FILE.spv
//                        the cooperative-matrix module of
//                        test/Runtime/Inputs/coop-matmul.mlir (f16) or
//                        coop-matmul-bf16.mlir: run and checked where the
//                        Vulkan device has VK_KHR_cooperative_matrix (and
//                        VK_KHR_shader_bfloat16's), rejected elsewhere
//   cachet-runtime-test [--backend=B] --expect-no-device
//                        checks the no-device errors of B (also "auto")
//   cachet-runtime-test --dump-ptx=vadd|pdl
//                        prints an embedded PTX module (for ptxas)
//
// CACHET_TEST_SHADER_DIR overrides where the .spv files are.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace cachet_test;

namespace {

std::vector<char> readShader(const char *name) {
  const char *dir = std::getenv("CACHET_TEST_SHADER_DIR");
  std::string path =
      std::string(dir ? dir : CACHET_TEST_SHADER_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (bytes.empty())
    check(false, "read " + path);
  return bytes;
}

uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

struct Fixture {
  CachetRuntime rt = nullptr;
  CachetDeviceInfo info = {};
  CachetModule vaddModule = nullptr, copyModule = nullptr;
  CachetKernel vadd = nullptr, copy = nullptr, add = nullptr;
};

void testDeviceInfo(Fixture &f) {
  const CachetDeviceInfo &info = f.info;
  std::printf("device: %s (%s), maxBindingBytes %" PRIu64
              ", subgroup %u, unified %d, timestamps %d, bda %d\n",
              info.name, info.backend, info.maxBindingBytes, info.subgroupSize,
              info.unifiedMemory, info.timestamps, info.bufferDeviceAddress);
  check(std::strcmp(info.backend, "vulkan") == 0 && info.name[0] &&
            info.maxBindingBytes > 0 && info.maxAllocationBytes > 0 &&
            info.bindingOffsetAlignment > 0 && info.maxPushConstantBytes >= 128,
        "device info");
}

void testModules(Fixture &f) {
  std::vector<char> vaddSpv = readShader("vadd.spv");
  std::vector<char> copySpv = readShader("copy.spv");
  if (!ok(cachetModuleLoad(f.rt, vaddSpv.data(), vaddSpv.size(), &f.vaddModule),
          "load vadd") ||
      !ok(cachetModuleLoad(f.rt, copySpv.data(), copySpv.size(), &f.copyModule),
          "load copy") ||
      !ok(cachetKernelGet(f.rt, f.vaddModule, "vadd", &f.vadd), "get vadd") ||
      !ok(cachetKernelGet(f.rt, f.copyModule, "copy_u32", &f.copy),
          "get copy_u32") ||
      !ok(cachetKernelGet(f.rt, f.copyModule, "add_u32", &f.add),
          "get add_u32"))
    return;
  CachetKernelInfo info;
  ok(cachetKernelGetInfo(f.vadd, &info), "vadd info");
  check(info.numBindings == 3 && info.pushConstantBytes == 4 &&
            info.workgroupSize[0] == 64 && info.workgroupSize[1] == 1,
        "reflect vadd",
        std::to_string(info.numBindings) + " bindings, " +
            std::to_string(info.pushConstantBytes) + " push bytes, wg " +
            std::to_string(info.workgroupSize[0]));
  ok(cachetKernelGetInfo(f.add, &info), "add info");
  check(info.numBindings == 2 && info.pushConstantBytes == 8,
        "reflect add_u32");
  CachetKernel again = nullptr;
  ok(cachetKernelGet(f.rt, f.copyModule, "copy_u32", &again), "get again");
  check(again == f.copy, "kernel cached per (module, entry point)");
}

void testVectorAdd(Fixture &f) {
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n), c(n), expected(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - 0.25f * i;
  }
  CachetBuffer da, db, dc;
  if (!ok(cachetBufferAlloc(f.rt, n * 4, &da), "alloc a") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &db), "alloc b") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &dc), "alloc c"))
    return;
  ok(cachetBufferUpload(f.rt, da, 0, a.data(), n * 4), "upload a");
  ok(cachetBufferUpload(f.rt, db, 0, b.data(), n * 4), "upload b");
  const uint32_t grid[3] = {ceilDiv(n, 64), 1, 1};
  // c = a + b, then a = c + b, then c = a + b: results stay on the device
  // between launches.
  CachetBinding abc[3] = {{da, 0, 0}, {db, 0, 0}, {dc, 0, 0}};
  CachetBinding cba[3] = {{dc, 0, 0}, {db, 0, 0}, {da, 0, 0}};
  ok(cachetLaunch(f.rt, f.vadd, grid, abc, 3, &n, 4), "launch vadd 1");
  ok(cachetLaunch(f.rt, f.vadd, grid, cba, 3, &n, 4), "launch vadd 2");
  ok(cachetLaunch(f.rt, f.vadd, grid, abc, 3, &n, 4), "launch vadd 3");
  ok(cachetBufferDownload(f.rt, dc, 0, c.data(), n * 4), "download c");
  for (uint32_t i = 0; i < n; ++i)
    expected[i] = ((a[i] + b[i]) + b[i]) + b[i];
  check(std::memcmp(c.data(), expected.data(), n * 4) == 0,
        "vadd x3 matches the CPU (" + std::to_string(n) + " floats)");

  // Partial download at an offset.
  float middle[10];
  ok(cachetBufferDownload(f.rt, dc, 400, middle, sizeof(middle)),
     "download at offset");
  check(std::memcmp(middle, expected.data() + 100, sizeof(middle)) == 0,
        "download at offset");

  cachetBufferFree(f.rt, da);
  cachetBufferFree(f.rt, db);
  cachetBufferFree(f.rt, dc);
}

void testCopyAndFill(Fixture &f) {
  const uint32_t n = 4099;
  std::vector<uint32_t> src(n), dst(n);
  for (uint32_t i = 0; i < n; ++i)
    src[i] = i * 2654435761u;
  CachetBuffer ds, dd;
  if (!ok(cachetBufferAlloc(f.rt, n * 4, &ds), "alloc src") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &dd), "alloc dst"))
    return;
  ok(cachetBufferUpload(f.rt, ds, 0, src.data(), n * 4), "upload src");
  ok(cachetBufferFill(f.rt, dd, 0, n * 4, 0xdeadbeefu), "fill dst");
  ok(cachetBufferDownload(f.rt, dd, 0, dst.data(), n * 4), "download fill");
  bool filled = true;
  for (uint32_t v : dst)
    filled &= v == 0xdeadbeefu;
  check(filled, "fill writes every word");

  const uint32_t grid[3] = {ceilDiv(n, 64), 1, 1};
  CachetBinding args[2] = {{ds, 0, 0}, {dd, 0, 0}};
  const uint32_t push[2] = {n, 7};
  ok(cachetLaunch(f.rt, f.add, grid, args, 2, push, 8), "launch add_u32");
  ok(cachetBufferDownload(f.rt, dd, 0, dst.data(), n * 4), "download add");
  bool good = true;
  for (uint32_t i = 0; i < n; ++i)
    good &= dst[i] == src[i] + 7;
  check(good, "add_u32 (second entry point of one module) matches the CPU");

  // A device copy: the last quarter of src, 16 bytes into another buffer.
  CachetBuffer half;
  if (ok(cachetBufferAlloc(f.rt, n * 4, &half), "alloc half")) {
    const uint32_t quarter = n / 4;
    ok(cachetBufferCopy(f.rt, ds, (n - quarter) * 4, half, 16, quarter * 4),
       "copy on the device");
    std::vector<uint32_t> copied(quarter);
    ok(cachetBufferDownload(f.rt, half, 16, copied.data(), quarter * 4),
       "download copy");
    check(std::equal(copied.begin(), copied.end(), src.end() - quarter),
          "cachetBufferCopy copies on the device");
    expectError(cachetBufferCopy(f.rt, ds, 0, ds, 8, 64),
                CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferCopy", "overlap",
                "overlapping copy is rejected");
    cachetBufferFree(f.rt, half);
  }

  // A fill recorded between launches is ordered with them.
  ok(cachetBufferFill(f.rt, dd, 0, n * 4, 0), "fill between launches");
  ok(cachetLaunch(f.rt, f.copy, grid, args, 2, push, 8), "launch copy_u32");
  ok(cachetBufferDownload(f.rt, dd, 0, dst.data(), n * 4), "download copy");
  check(dst == src, "copy_u32 after a fill matches the source");
  cachetBufferFree(f.rt, ds);
  cachetBufferFree(f.rt, dd);
}

/// Thousands of launches without a synchronize: the command buffer is
/// submitted on its own and descriptor pools grow and are reused.
void testManyLaunches(Fixture &f) {
  const uint32_t n = 256, launches = 5000;
  std::vector<uint32_t> src(n), dst(n);
  for (uint32_t i = 0; i < n; ++i)
    src[i] = i * 3;
  CachetBuffer a, b;
  if (!ok(cachetBufferAlloc(f.rt, n * 4, &a), "alloc") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &b), "alloc"))
    return;
  ok(cachetBufferUpload(f.rt, a, 0, src.data(), n * 4), "upload");
  const uint32_t grid[3] = {n / 64, 1, 1};
  const uint32_t push[2] = {n, 1};
  CachetBinding ab[2] = {{a, 0, 0}, {b, 0, 0}};
  CachetBinding ba[2] = {{b, 0, 0}, {a, 0, 0}};
  bool launched = true;
  // What recording a launch costs the host (binding its buffers, the
  // dispatch, the barrier), timed over the first 2000, which stay in one
  // command buffer (no submission), not a check.
  const uint32_t timed = 2000;
  auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < launches; ++i) {
    launched &= cachetLaunch(f.rt, f.add, grid, i % 2 ? ba : ab, 2, push, 8) ==
                CACHET_SUCCESS;
    if (i + 1 == timed)
      std::printf("host time to record a launch: %.2f us (%u launches)\n",
                  std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - start)
                          .count() /
                      timed,
                  timed);
  }
  ok(cachetBufferDownload(f.rt, a, 0, dst.data(), n * 4), "download");
  bool good = launched;
  for (uint32_t i = 0; i < n; ++i)
    good &= dst[i] == src[i] + launches;
  check(good, std::to_string(launches) + " chained launches add up");
  cachetBufferFree(f.rt, a);
  cachetBufferFree(f.rt, b);
}

void testPitched(Fixture &f) {
  const uint64_t rows = 37, rowBytes = 100, pitch = 128, srcPitch = 112;
  CachetBuffer buf;
  if (!ok(cachetBufferAllocPitched(f.rt, rowBytes, rows, pitch, &buf),
          "alloc pitched"))
    return;
  uint64_t size = 0, gotPitch = 0;
  cachetBufferGetSize(buf, &size);
  cachetBufferGetPitch(buf, &gotPitch);
  check(size == rows * pitch && gotPitch == pitch, "pitched size and pitch");
  // Dirty the whole buffer first so that zeroed gaps are the upload's doing.
  std::vector<uint8_t> junk(size, 0xab);
  ok(cachetBufferUpload(f.rt, buf, 0, junk.data(), size), "dirty buffer");
  std::vector<uint8_t> src(rows * srcPitch);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i % 251 + 1);
  ok(cachetBufferUpload2D(f.rt, buf, 0, 0, src.data(), srcPitch, rowBytes,
                          rows),
     "upload 2D");
  std::vector<uint8_t> raw(size);
  ok(cachetBufferDownload(f.rt, buf, 0, raw.data(), size), "download raw");
  size_t bad = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < pitch; ++c) {
      uint8_t want = c < rowBytes ? src[r * srcPitch + c] : 0;
      bad += raw[r * pitch + c] != want;
    }
  check(bad == 0, "pitched upload: rows copied, gaps zeroed, byte by byte",
        std::to_string(bad) + " bad bytes");

  std::vector<uint8_t> back(rows * rowBytes, 0);
  ok(cachetBufferDownload2D(f.rt, buf, 0, 0, back.data(), 0, rowBytes, rows),
     "download 2D");
  bad = 0;
  for (uint64_t r = 0; r < rows; ++r)
    bad += std::memcmp(&back[r * rowBytes], &src[r * srcPitch], rowBytes) != 0;
  check(bad == 0, "pitched 2D round trip");

  // An explicit pitch at an offset into a plain buffer.
  CachetBuffer plain;
  if (ok(cachetBufferAlloc(f.rt, 4096, &plain), "alloc plain")) {
    std::vector<uint8_t> dirty(4096, 0xcd);
    ok(cachetBufferUpload(f.rt, plain, 0, dirty.data(), 4096), "dirty plain");
    ok(cachetBufferUpload2D(f.rt, plain, 256, 80, src.data(), srcPitch, 60, 5),
       "upload 2D at offset");
    std::vector<uint8_t> all(4096);
    ok(cachetBufferDownload(f.rt, plain, 0, all.data(), 4096), "download all");
    bad = 0;
    for (uint64_t i = 0; i < 4096; ++i) {
      uint8_t want = 0xcd;
      if (i >= 256 && i < 256 + 5 * 80) {
        uint64_t r = (i - 256) / 80, c = (i - 256) % 80;
        want = c < 60 ? src[r * srcPitch + c] : 0;
      }
      bad += all[i] != want;
    }
    check(bad == 0, "2D upload at an offset touches only its rows");
    expectError(cachetBufferUpload2D(f.rt, plain, 0, 0, src.data(), 0, 60, 5),
                CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferUpload2D", "pitch",
                "2D upload without a pitch is rejected");
    expectError(cachetBufferUpload2D(f.rt, plain, 0, 50, src.data(), 0, 60, 5),
                CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferUpload2D",
                "wider than the pitch", "row wider than pitch is rejected");
    expectError(
        cachetBufferUpload2D(f.rt, plain, 0, 128, src.data(), 0, 60, 33),
        CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferUpload2D", "outside",
        "2D upload past the end is rejected");
    cachetBufferFree(f.rt, plain);
  }
  expectError(cachetBufferAllocPitched(f.rt, 100, 4, 64, &plain),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferAllocPitched",
              "below the row size", "pitch below row size is rejected");
  cachetBufferFree(f.rt, buf);
}

void testArena(Fixture &f) {
  const uint64_t capacity = 1 << 20;
  CachetArena arena;
  if (!ok(cachetArenaCreate(f.rt, capacity, &arena), "arena create"))
    return;
  uint64_t firstPeak = 0;
  bool good = true;
  for (uint32_t layer = 0; layer < 4; ++layer) {
    ok(cachetArenaReset(f.rt, arena), "arena reset");
    const uint32_t n = 1000 + layer;
    CachetBuffer in, out, spare;
    if (!ok(cachetArenaAlloc(f.rt, arena, n * 4, &in), "arena alloc in") ||
        !ok(cachetArenaAlloc(f.rt, arena, 4 * 1024 + 4, &spare),
            "arena alloc spare") ||
        !ok(cachetArenaAlloc(f.rt, arena, n * 4, &out), "arena alloc out"))
      return;
    std::vector<uint32_t> src(n), dst(n);
    for (uint32_t i = 0; i < n; ++i)
      src[i] = i ^ (layer << 20);
    ok(cachetBufferUpload(f.rt, in, 0, src.data(), n * 4), "arena upload");
    ok(cachetBufferFill(f.rt, spare, 0, 4 * 1024 + 4, 0x5a5a5a5a),
       "arena fill spare");
    const uint32_t grid[3] = {ceilDiv(n, 64), 1, 1};
    CachetBinding args[2] = {{in, 0, 0}, {out, 0, 0}};
    const uint32_t push[2] = {n, layer};
    ok(cachetLaunch(f.rt, f.add, grid, args, 2, push, 8), "arena launch");
    ok(cachetBufferDownload(f.rt, out, 0, dst.data(), n * 4), "arena download");
    for (uint32_t i = 0; i < n; ++i)
      good &= dst[i] == src[i] + layer;
    uint64_t used = 0, peak = 0;
    cachetArenaGetUsage(arena, &used, &peak, nullptr);
    if (layer == 0)
      firstPeak = peak;
    good &= used >= 2 * n * 4 + 4 * 1024 + 4 && peak <= firstPeak + 64;
    if (f.info.bufferDeviceAddress) {
      uint64_t inAddr = 0, outAddr = 0;
      cachetBufferDeviceAddress(f.rt, in, &inAddr);
      cachetBufferDeviceAddress(f.rt, out, &outAddr);
      good &= outAddr > inAddr &&
              (outAddr - inAddr) % f.info.bindingOffsetAlignment == 0;
    }
  }
  check(good, "arena reused across 4 layers: results match, peak stays put");
  CachetBuffer view;
  ok(cachetArenaAlloc(f.rt, arena, 16, &view), "arena alloc view");
  expectError(cachetBufferFree(f.rt, view), CACHET_ERROR_INVALID_ARGUMENT,
              "cachetBufferFree", "arena", "arena buffers are not freed alone");
  expectError(cachetArenaAlloc(f.rt, arena, capacity, &view),
              CACHET_ERROR_OUT_OF_MEMORY, "cachetArenaAlloc", "bytes left",
              "full arena reports out of memory");
  ok(cachetArenaReset(f.rt, arena), "arena reset");
  check(cachetArenaAlloc(f.rt, arena, capacity, &view) == CACHET_SUCCESS,
        "after reset the whole arena is free");
  ok(cachetArenaDestroy(f.rt, arena), "arena release");
}

void testTimestamps(Fixture &f) {
  if (!f.info.timestamps) {
    std::printf("SKIP timestamps: the device has none\n");
    return;
  }
  const uint32_t n = 1 << 18;
  CachetBuffer a, b, c;
  CachetEvent e0, e1, e2, never;
  if (!ok(cachetBufferAlloc(f.rt, n * 4, &a), "alloc") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &b), "alloc") ||
      !ok(cachetBufferAlloc(f.rt, n * 4, &c), "alloc") ||
      !ok(cachetEventCreate(f.rt, &e0), "event") ||
      !ok(cachetEventCreate(f.rt, &e1), "event") ||
      !ok(cachetEventCreate(f.rt, &e2), "event") ||
      !ok(cachetEventCreate(f.rt, &never), "event"))
    return;
  const uint32_t grid[3] = {n / 64, 1, 1};
  CachetBinding args[3] = {{a, 0, 0}, {b, 0, 0}, {c, 0, 0}};
  ok(cachetEventRecord(f.rt, e0), "record e0");
  for (int i = 0; i < 4; ++i)
    ok(cachetLaunch(f.rt, f.vadd, grid, args, 3, &n, 4), "launch");
  ok(cachetEventRecord(f.rt, e1), "record e1");
  for (int i = 0; i < 4; ++i)
    ok(cachetLaunch(f.rt, f.vadd, grid, args, 3, &n, 4), "launch");
  ok(cachetEventRecord(f.rt, e2), "record e2");
  uint64_t t0 = 0, t1 = 0, t2 = 0, d01 = 0, d02 = 0;
  ok(cachetEventTimestampNs(f.rt, e0, &t0), "timestamp e0");
  ok(cachetEventTimestampNs(f.rt, e1, &t1), "timestamp e1");
  ok(cachetEventTimestampNs(f.rt, e2, &t2), "timestamp e2");
  ok(cachetEventElapsedNs(f.rt, e0, e1, &d01), "elapsed e0-e1");
  ok(cachetEventElapsedNs(f.rt, e0, e2, &d02), "elapsed e0-e2");
  check(t0 <= t1 && t1 <= t2 && t2 > t0, "timestamps are monotonic",
        std::to_string(t1 - t0) + " ns, " + std::to_string(t2 - t1) + " ns");
  check(d01 == t1 - t0 && d02 == t2 - t0 && d02 >= d01 && d02 > 0,
        "elapsed times are non-negative and add up");
  expectError(cachetEventElapsedNs(f.rt, e2, e0, &d01),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetEventElapsedNs", "precedes",
              "reversed marks are rejected");
  expectError(cachetEventTimestampNs(f.rt, never, &t0),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetEventTimestampNs",
              "never recorded", "unrecorded mark is rejected");
  // Re-recording a mark moves it.
  ok(cachetEventRecord(f.rt, e0), "re-record e0");
  ok(cachetEventTimestampNs(f.rt, e0, &t0), "timestamp e0 again");
  check(t0 >= t2, "a re-recorded mark is later");
  for (CachetEvent e : {e0, e1, e2, never})
    cachetEventDestroy(f.rt, e);
  for (CachetBuffer buf : {a, b, c})
    cachetBufferFree(f.rt, buf);
}

/// Reads data past maxStorageBufferRange of `big` through its device
/// address (a physical pointer in the push constants) into `small`.
void testDeviceAddress(Fixture &f, CachetBuffer big, CachetBuffer small) {
  uint64_t addrBig = 0, addrSmall = 0;
  ok(cachetBufferDeviceAddress(f.rt, big, &addrBig), "device address");
  ok(cachetBufferDeviceAddress(f.rt, small, &addrSmall), "device address");
  check(addrBig && addrSmall && addrBig != addrSmall,
        "device addresses are distinct and non-zero");
  std::vector<char> spv = readShader("address.spv");
  CachetModule module;
  CachetKernel kernel;
  if (!ok(cachetModuleLoad(f.rt, spv.data(), spv.size(), &module),
          "load address.spv") ||
      !ok(cachetKernelGet(f.rt, module, "copy_from_address", &kernel),
          "get copy_from_address"))
    return;
  CachetKernelInfo info;
  cachetKernelGetInfo(kernel, &info);
  check(info.numBindings == 1 && info.pushConstantBytes == 12,
        "reflect a push constant holding a device address");
  const uint32_t n = 64;
  const uint64_t offset = f.info.maxBindingBytes + (8ull << 20);
  std::vector<uint32_t> src(n), dst(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    src[i] = 0xadd00000u + i;
  ok(cachetBufferUpload(f.rt, big, offset, src.data(), n * 4),
     "upload past the binding range");
  struct {
    uint64_t address;
    uint32_t n;
    uint32_t pad;
  } push = {addrBig + offset, n, 0};
  const uint32_t grid[3] = {1, 1, 1};
  CachetBinding out = {small, 0, 0};
  ok(cachetLaunch(f.rt, kernel, grid, &out, 1, &push, sizeof(push)),
     "launch copy_from_address");
  ok(cachetBufferDownload(f.rt, small, 0, dst.data(), n * 4), "download");
  check(dst == src, "bytes past maxStorageBufferRange read by device address");
  cachetModuleUnload(f.rt, module);
}

/// Allocates `bytes` in `large` and 256 bytes in `small` for the test
/// `what`; false, after saying why, when the device has too little memory
/// (more than it allows or a quarter of its memory) or an allocation fails.
bool allocLargeAndSmall(Fixture &f, uint64_t bytes, const char *what,
                        CachetBuffer &large, CachetBuffer &small) {
  if (bytes > f.info.maxAllocationBytes ||
      bytes > f.info.deviceMemoryBytes / 4) {
    std::printf("SKIP %s: %" PRIu64 " bytes is too much here\n", what, bytes);
    return false;
  }
  return ok(cachetBufferAlloc(f.rt, bytes, &large),
            std::string("alloc ") + what) &&
         ok(cachetBufferAlloc(f.rt, 256, &small), "alloc small");
}

void testLargeBuffer(Fixture &f) {
  const uint64_t maxBinding = f.info.maxBindingBytes;
  CachetBuffer big, small;
  if (!allocLargeAndSmall(f, maxBinding + (64ull << 20), "large buffer", big,
                          small))
    return;
  const uint32_t n = 64;
  std::vector<uint32_t> src(n), dst(n);
  for (uint32_t i = 0; i < n; ++i)
    src[i] = 0xc0de0000u + i;
  ok(cachetBufferUpload(f.rt, small, 0, src.data(), n * 4), "upload small");
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t push[2] = {n, 0};
  CachetBinding whole[2] = {{small, 0, 0}, {big, 0, 0}};
  expectError(cachetLaunch(f.rt, f.copy, grid, whole, 2, push, 8),
              CACHET_ERROR_LIMIT_EXCEEDED, "cachetLaunch",
              "maxStorageBufferRange",
              "binding a buffer above maxStorageBufferRange is reported");
  // The part past the binding range, bound at an offset.
  const uint64_t offset = maxBinding + (1ull << 20);
  CachetBinding piece[2] = {{small, 0, 0}, {big, offset, n * 4}};
  ok(cachetLaunch(f.rt, f.copy, grid, piece, 2, push, 8),
     "launch on a piece past the binding range");
  ok(cachetBufferDownload(f.rt, big, offset, dst.data(), n * 4),
     "download piece");
  check(dst == src, "a buffer above maxStorageBufferRange is bound in pieces");
  CachetBinding misaligned[2] = {{small, 0, 0}, {big, 2, 64}};
  if (f.info.bindingOffsetAlignment > 2)
    expectError(cachetLaunch(f.rt, f.copy, grid, misaligned, 2, push, 8),
                CACHET_ERROR_INVALID_ARGUMENT, "cachetLaunch",
                "minStorageBufferOffsetAlignment",
                "misaligned binding offset is rejected");
  if (f.info.bufferDeviceAddress)
    testDeviceAddress(f, big, small);
  cachetBufferFree(f.rt, big);
  cachetBufferFree(f.rt, small);
}

/// The pseudo-random byte at `i` of test pattern `seed`: not periodic, so
/// that a chunk landing at the wrong place shows.
uint8_t patternByte(uint64_t i, uint64_t seed) {
  uint64_t x = (i + seed) * 0x9e3779b97f4a7c15ull;
  return static_cast<uint8_t>((x ^ (x >> 29)) >> 56);
}

/// Transfers over more than two staging chunks (64 MiB each) both ways, at
/// offsets and sizes that are not chunk-aligned, 1D and 2D with padding
/// across chunk boundaries, checked byte by byte; and a launch right after
/// an upload, which must see its last chunk.
void testLargeTransfers(Fixture &f) {
  const uint64_t chunk = 64ull << 20, size = 2 * chunk + (6ull << 20);
  CachetBuffer buf, small;
  if (!allocLargeAndSmall(f, size, "large transfers", buf, small))
    return;
  const uint64_t offset = 4099, bytes = size - offset - 4001;
  std::vector<uint8_t> src(bytes), all(size);
  for (uint64_t i = 0; i < bytes; ++i)
    src[i] = patternByte(i, 1);
  ok(cachetBufferFill(f.rt, buf, 0, size, 0xa5a5a5a5u), "fill large buffer");
  ok(cachetBufferUpload(f.rt, buf, offset, src.data(), bytes),
     "upload over 3 chunks");

  // copy_u32 of 64 words near the end, recorded while the upload's last
  // chunk may still be in flight.
  const uint32_t n = 64;
  const uint64_t tail = (size - 8192) / f.info.bindingOffsetAlignment *
                        f.info.bindingOffsetAlignment;
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t push[2] = {n, 0};
  CachetBinding args[2] = {{buf, tail, n * 4}, {small, 0, 0}};
  std::vector<uint8_t> words(n * 4);
  ok(cachetLaunch(f.rt, f.copy, grid, args, 2, push, 8), "launch on the tail");
  ok(cachetBufferDownload(f.rt, small, 0, words.data(), n * 4),
     "download tail copy");
  check(std::equal(words.begin(), words.end(), src.begin() + (tail - offset)),
        "a launch after an upload sees its last chunk");

  ok(cachetBufferDownload(f.rt, buf, 0, all.data(), size), "download all");
  uint64_t bad = 0;
  for (uint64_t i = 0; i < size; ++i) {
    bool inside = i >= offset && i - offset < bytes;
    bad += all[i] != (inside ? src[i - offset] : 0xa5);
  }
  check(bad == 0, "upload over 3 chunks at an odd offset, byte by byte",
        std::to_string(bad) + " bad bytes");
  const uint64_t readOffset = 777777, readBytes = 2 * chunk + 12345;
  std::vector<uint8_t> part(readBytes);
  ok(cachetBufferDownload(f.rt, buf, readOffset, part.data(), readBytes),
     "download over 3 chunks");
  check(std::equal(part.begin(), part.end(), all.begin() + readOffset),
        "download over 3 chunks at an odd offset");

  // Rows of 3000 bytes every 4100 (not dividing a chunk: rows and gaps
  // straddle chunk boundaries) from a host pitch of 3001.
  const uint64_t rowBytes = 3000, pitch = 4100, srcPitch = 3001;
  const uint64_t offset2D = 123, rows = (size - offset2D) / pitch;
  std::vector<uint8_t> image(rows * srcPitch);
  for (uint64_t i = 0; i < image.size(); ++i)
    image[i] = patternByte(i, 2);
  ok(cachetBufferUpload2D(f.rt, buf, offset2D, pitch, image.data(), srcPitch,
                          rowBytes, rows),
     "upload 2D over 3 chunks");
  std::vector<uint8_t> after(size);
  ok(cachetBufferDownload(f.rt, buf, 0, after.data(), size), "download all");
  bad = 0;
  for (uint64_t i = 0; i < size; ++i) {
    uint8_t want = all[i];
    if (i >= offset2D && i - offset2D < rows * pitch) {
      uint64_t r = (i - offset2D) / pitch, c = (i - offset2D) % pitch;
      want = c < rowBytes ? image[r * srcPitch + c] : 0;
    }
    bad += after[i] != want;
  }
  check(bad == 0,
        "upload 2D over 3 chunks: rows copied, gaps zeroed, the rest kept",
        std::to_string(bad) + " bad bytes");
  const uint64_t dstPitch = rowBytes + 7;
  std::vector<uint8_t> rowsBack(rows * dstPitch, 0x5a);
  ok(cachetBufferDownload2D(f.rt, buf, offset2D, pitch, rowsBack.data(),
                            dstPitch, rowBytes, rows),
     "download 2D over 3 chunks");
  bad = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < dstPitch; ++c)
      bad += rowsBack[r * dstPitch + c] !=
             (c < rowBytes ? image[r * srcPitch + c] : 0x5a);
  check(bad == 0, "download 2D over 3 chunks: rows only",
        std::to_string(bad) + " bad bytes");
  cachetBufferFree(f.rt, buf);
  cachetBufferFree(f.rt, small);
}

/// Host transfers allocate no device memory after the first: on a fresh
/// runtime, a buffer and one upload and download allocate the buffer and,
/// through staging, a pair of staging buffers; 16 more round trips of other
/// sizes and offsets allocate nothing. Where device memory is unified (and
/// staging is not forced), the host maps it: only the buffer is allocated.
void testStagingReuse(const Fixture &f, uint32_t flags) {
  CachetRuntime rt = nullptr;
  if (!ok(cachetRuntimeCreate("vulkan", flags, &rt), "second runtime"))
    return;
  const uint64_t bytes = 3ull << 20;
  std::vector<uint8_t> src(bytes), dst(bytes);
  uint64_t start = vulkanMemoryAllocations();
  CachetBuffer buf;
  if (!ok(cachetBufferAlloc(rt, bytes, &buf), "alloc")) {
    cachetRuntimeDestroy(rt);
    return;
  }
  ok(cachetBufferUpload(rt, buf, 0, src.data(), bytes), "first upload");
  ok(cachetBufferDownload(rt, buf, 0, dst.data(), bytes), "first download");
  uint64_t first = vulkanMemoryAllocations() - start;
  bool good = true;
  for (uint64_t i = 0; i < 16; ++i) {
    uint64_t offset = i * 13, size = bytes - offset - i * 4099;
    for (uint64_t j = 0; j < size; ++j)
      src[j] = patternByte(j, i);
    ok(cachetBufferUpload(rt, buf, offset, src.data(), size), "upload");
    ok(cachetBufferDownload(rt, buf, offset, dst.data(), size), "download");
    good &= std::equal(src.begin(), src.begin() + size, dst.begin());
  }
  uint64_t more = vulkanMemoryAllocations() - start - first;
  bool forced = flags & CACHET_RUNTIME_FORCE_STAGING;
  bool expected = forced                 ? first == 3
                  : f.info.unifiedMemory ? first == 1
                                         : first == 1 || first == 3;
  check(good && expected && more == 0,
        "16 round trips reuse the staging buffers",
        std::to_string(first) + " allocations at the first, " +
            std::to_string(more) + " after");
  cachetBufferFree(rt, buf);
  ok(cachetRuntimeDestroy(rt), "destroy second runtime");
}

/// Which memory types buffers take on a faked discrete GPU. Resizable BAR:
/// device buffers take device-local memory the host cannot see (type 1) and
/// their transfers go through two staging buffers of host-cached memory
/// (type 3), not through VRAM behind the BAR (type 4), which
/// CACHET_BUFFER_HOST_VISIBLE buffers still take. Host-cached device memory:
/// device buffers take it (type 2) and the host maps them, no staging.
void testDiscreteMemoryTypes(FakeMemory layout) {
  CachetRuntime rt = nullptr;
  if (!ok(cachetRuntimeCreate("vulkan", 0, &rt), "runtime on the fake GPU"))
    return;
  const int types = 5;
  uint64_t before[types];
  for (int t = 0; t < types; ++t)
    before[t] = vulkanMemoryAllocations(t);
  const uint64_t bytes = 1 << 20;
  std::vector<uint8_t> src(bytes), dst(bytes);
  for (uint64_t i = 0; i < bytes; ++i)
    src[i] = patternByte(i, 3);
  CachetBuffer device, host;
  void *mapped = nullptr;
  if (!ok(cachetBufferAlloc(rt, bytes, &device), "alloc device buffer") ||
      !ok(cachetBufferAllocEx(rt, 4096, CACHET_BUFFER_HOST_VISIBLE, &host),
          "alloc host-visible buffer") ||
      !ok(cachetBufferMap(rt, host, &mapped), "map host-visible buffer")) {
    cachetRuntimeDestroy(rt);
    return;
  }
  ok(cachetBufferUpload(rt, device, 0, src.data(), bytes), "upload");
  ok(cachetBufferDownload(rt, device, 0, dst.data(), bytes), "download");
  bool good = src == dst;
  // A page written through the mapping, copied into the device buffer.
  std::vector<uint8_t> page(4096);
  for (uint64_t i = 0; i < page.size(); ++i)
    page[i] = patternByte(i, 4);
  std::memcpy(mapped, page.data(), page.size());
  ok(cachetBufferCopy(rt, host, 0, device, 0, page.size()),
     "copy on the device");
  ok(cachetBufferDownload(rt, device, 0, dst.data(), page.size()),
     "download copy");
  good &= std::equal(page.begin(), page.end(), dst.begin());
  const uint64_t bar[types] = {0, 1, 0, 2, 1}, cached[types] = {0, 0, 2, 0, 0};
  const uint64_t *expected = layout == FakeMemory::ResizableBar ? bar : cached;
  std::string counts;
  for (int t = 0; t < types; ++t) {
    uint64_t count = vulkanMemoryAllocations(t) - before[t];
    good &= count == expected[t];
    counts += (t ? " " : "") + std::to_string(count);
  }
  check(good,
        std::string("memory types on a discrete GPU with ") +
            (layout == FakeMemory::ResizableBar ? "resizable BAR"
                                                : "host-cached device memory"),
        "allocations of types 0-4: " + counts);
  cachetBufferFree(rt, device);
  cachetBufferFree(rt, host);
  ok(cachetRuntimeDestroy(rt), "destroy the fake GPU's runtime");
}

void testErrors(Fixture &f) {
  CachetModule module = nullptr;
  const uint32_t garbage[8] = {0x12345678, 1, 2, 3, 4, 5, 6, 7};
  expectError(cachetModuleLoad(f.rt, garbage, sizeof(garbage), &module),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad", "magic",
              "garbage blob is rejected");
  check(module == nullptr, "no module from a bad blob");
  std::vector<char> spv = readShader("vadd.spv");
  expectError(cachetModuleLoad(f.rt, spv.data(), spv.size() - 2, &module),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad",
              "not a multiple of 4", "odd-sized blob is rejected");
  std::vector<char> broken = spv;
  // Make the first instruction claim more words than the blob has.
  uint32_t word;
  std::memcpy(&word, &broken[20], 4);
  word = (word & 0xffffu) | (0xfff0u << 16);
  std::memcpy(&broken[20], &word, 4);
  expectError(cachetModuleLoad(f.rt, broken.data(), broken.size(), &module),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad", "past the end",
              "truncated instruction stream is rejected");
  expectError(cachetModuleLoad(f.rt, spv.data(), 20, &module),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad", "no entry point",
              "header-only blob is rejected");

#ifdef CACHET_RUNTIME_HAVE_SPIRV_TOOLS
  std::vector<char> invalid = readShader("invalid.spv");
  expectError(cachetModuleLoad(f.rt, invalid.data(), invalid.size(), &module),
              CACHET_ERROR_INVALID_BINARY, "cachetModuleLoad",
              "SPIR-V validation failed",
              "well-formed but invalid SPIR-V is rejected by the validator");
#endif

  CachetKernel kernel = nullptr;
  expectError(cachetKernelGet(f.rt, f.vaddModule, "vmul", &kernel),
              CACHET_ERROR_NOT_FOUND, "cachetKernelGet", "'vadd'",
              "unknown entry point is reported with the known ones");

  CachetBuffer a, b;
  if (!ok(cachetBufferAlloc(f.rt, 256, &a), "alloc") ||
      !ok(cachetBufferAlloc(f.rt, 256, &b), "alloc"))
    return;
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t n = 64;
  CachetBinding two[2] = {{a, 0, 0}, {b, 0, 0}};
  expectError(cachetLaunch(f.rt, f.vadd, grid, two, 2, &n, 4),
              CACHET_ERROR_ARGUMENT_MISMATCH, "cachetLaunch",
              "takes 3 buffer arguments, got 2",
              "wrong argument count is reported");
  CachetBinding three[3] = {{a, 0, 0}, {b, 0, 0}, {a, 0, 0}};
  expectError(cachetLaunch(f.rt, f.vadd, grid, three, 3, nullptr, 0),
              CACHET_ERROR_ARGUMENT_MISMATCH, "cachetLaunch",
              "4 bytes of push constants", "missing push constants reported");
  CachetBinding outside[3] = {{a, 0, 0}, {b, 128, 512}, {a, 0, 0}};
  expectError(cachetLaunch(f.rt, f.vadd, grid, outside, 3, &n, 4),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetLaunch", "binding 1",
              "binding past the buffer's end is rejected");
  const uint32_t wrongBlock[3] = {32, 1, 1}, rightBlock[3] = {64, 1, 1};
  expectError(
      cachetLaunchWithBlock(f.rt, f.vadd, grid, wrongBlock, three, 3, &n, 4),
      CACHET_ERROR_ARGUMENT_MISMATCH, "cachetLaunchWithBlock",
      "block size (32, 1, 1) differs",
      "block size other than the shader's is reported");
  ok(cachetLaunchWithBlock(f.rt, f.vadd, grid, rightBlock, three, 3, &n, 4),
     "launch with the shader's block size");
  const uint32_t hugeGrid[3] = {UINT32_MAX, 1, 1};
  if (f.info.maxWorkgroupCount[0] < UINT32_MAX)
    expectError(cachetLaunch(f.rt, f.vadd, hugeGrid, three, 3, &n, 4),
                CACHET_ERROR_LIMIT_EXCEEDED, "cachetLaunch",
                "maxComputeWorkGroupCount", "oversized grid is rejected");

  CachetBuffer huge = nullptr;
  expectError(cachetBufferAlloc(f.rt, 1ull << 50, &huge),
              CACHET_ERROR_OUT_OF_MEMORY, "cachetBufferAlloc", "bytes",
              "absurd allocation reports out of memory");
  check(huge == nullptr, "no buffer from a failed allocation");
  expectError(cachetBufferAlloc(f.rt, 0, &huge), CACHET_ERROR_INVALID_ARGUMENT,
              "cachetBufferAlloc", "zero-byte", "zero-byte allocation");
  char host[64];
  expectError(cachetBufferUpload(f.rt, a, 200, host, 64),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferUpload", "outside",
              "upload past the end is rejected");
  expectError(cachetBufferDownload(f.rt, a, UINT64_MAX, host, 2),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetBufferDownload", "outside",
              "download at an overflowing offset is rejected");
  void *mapped = nullptr;
  expectError(cachetBufferMap(f.rt, a, &mapped), CACHET_ERROR_INVALID_ARGUMENT,
              "cachetBufferMap", "HOST_VISIBLE", "mapping a device buffer");
  expectError(cachetSynchronize(nullptr), CACHET_ERROR_INVALID_ARGUMENT,
              "cachetSynchronize", "null runtime", "null runtime is rejected");
  CachetRuntime other = nullptr;
  expectError(cachetRuntimeCreate("metal", 0, &other),
              CACHET_ERROR_INVALID_ARGUMENT, "cachetRuntimeCreate",
              "unknown backend 'metal'", "unknown backend is rejected");

  // The runtime still works after all of that.
  std::vector<float> x(64, 1.5f), y(64, 2.0f), z(64, 0.0f);
  ok(cachetBufferUpload(f.rt, a, 0, x.data(), 256), "upload after errors");
  ok(cachetBufferUpload(f.rt, b, 0, y.data(), 256), "upload after errors");
  CachetBuffer c;
  ok(cachetBufferAlloc(f.rt, 256, &c), "alloc after errors");
  CachetBinding abc[3] = {{a, 0, 0}, {b, 0, 0}, {c, 0, 0}};
  ok(cachetLaunch(f.rt, f.vadd, grid, abc, 3, &n, 4), "launch after errors");
  ok(cachetBufferDownload(f.rt, c, 0, z.data(), 256), "download after errors");
  check(z == std::vector<float>(64, 3.5f), "the runtime works after errors");
  for (CachetBuffer buf : {a, b, c})
    cachetBufferFree(f.rt, buf);
}

/// Loads many corrupted copies of a valid module: every one is either
/// rejected with a message or loads and builds; none may crash.
void testCorruptModules(Fixture &f, const char *shader, const char *entry,
                        uint32_t count, uint32_t seed) {
  std::vector<char> spv = readShader(shader);
  size_t words = spv.size() / 4;
  uint32_t state = seed, rejected = 0, accepted = 0;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  bool messages = true;
  for (uint32_t i = 0; i < count && words > 5; ++i) {
    std::vector<char> copy = spv;
    for (uint32_t m = 0, n = 1 + next() % 3; m < n; ++m) {
      size_t word = 5 + next() % (words - 5);
      uint32_t value;
      std::memcpy(&value, &copy[word * 4], 4);
      value ^= 1u << (next() % 32);
      std::memcpy(&copy[word * 4], &value, 4);
    }
    CachetModule module = nullptr;
    CachetKernel kernel = nullptr;
    CachetStatus status =
        cachetModuleLoad(f.rt, copy.data(), copy.size(), &module);
    if (status == CACHET_SUCCESS)
      status = cachetKernelGet(f.rt, module, entry, &kernel);
    if (status == CACHET_SUCCESS) {
      ++accepted;
    } else {
      ++rejected;
      messages &= std::strlen(cachetGetLastError()) > 0;
    }
    cachetModuleUnload(f.rt, module);
  }
  check(messages && rejected > 0,
        std::to_string(count) + " corrupted copies of " + shader +
            ": each rejected with a message or loaded, no crash",
        std::to_string(rejected) + " rejected, " + std::to_string(accepted) +
            " loaded");
}

void testMgpu(FakeMemory layout, bool unified) {
  std::vector<char> spv = readShader("double.spv");
  void *module = mgpuModuleLoad(spv.data(), spv.size());
  void *function =
      module ? mgpuModuleGetFunction(module, "double_f32") : nullptr;
  check(module && function, "mgpuModuleLoad / mgpuModuleGetFunction");
  if (!function)
    return;
  void *stream = mgpuStreamCreate();
  const size_t n = 64, bytes = n * sizeof(float);
  std::vector<float> host(n), out(n, 0.0f);
  for (size_t i = 0; i < n; ++i)
    host[i] = 0.75f * i - 3.0f;
  float *src = static_cast<float *>(mgpuMemAlloc(bytes, stream, false));
  float *dst = static_cast<float *>(mgpuMemAlloc(bytes, stream, false));
  check(src && dst, "mgpuMemAlloc");
  if (!src || !dst)
    return;
  // mgpuMemAlloc memory of a discrete GPU with resizable BAR lies behind
  // the PCIe BAR: copies into and out of it go through staging and a
  // device-side copy, not the host mapping. Unified memory (lavapipe) and
  // host-cached device memory are copied on the host. A real discrete GPU
  // may have either: its count is reported, not checked.
  bool faked = fakeDiscreteGpuActive();
  bool known = faked || unified;
  uint64_t expected = faked && layout == FakeMemory::ResizableBar ? 1 : 0;
  uint64_t copies = vulkanBufferCopies();
  mgpuMemcpy(src, host.data(), bytes, stream);
  uint64_t uploadCopies = vulkanBufferCopies() - copies;
  check(!known || uploadCopies == expected,
        !known     ? "mgpuMemcpy into mgpu memory of a discrete GPU"
        : expected ? "mgpuMemcpy into BAR memory copies through staging"
                   : "mgpuMemcpy into host-cached or unified memory copies "
                     "on the host",
        std::to_string(uploadCopies) + " device-side copies");
  copies = vulkanBufferCopies();
  std::vector<float> back(n, 0.0f);
  mgpuMemcpy(back.data(), src, bytes, stream);
  uint64_t downloadCopies = vulkanBufferCopies() - copies;
  check(back == host && (!known || downloadCopies == expected),
        "mgpuMemcpy out of mgpu memory round-trips",
        std::to_string(downloadCopies) + " device-side copies");
  mgpuMemset32(dst, 0, n, stream);
  void *event = mgpuEventCreate();
  size_t size0 = bytes, size1 = bytes;
  void *params[4] = {&src, &size0, &dst, &size1};
  mgpuLaunchKernel(function, n / 4, 1, 1, 4, 1, 1, 0, stream, params, nullptr,
                   4);
  mgpuEventRecord(event, stream);
  mgpuEventSynchronize(event);
  mgpuMemcpy(out.data(), dst, bytes, stream);
  bool good = true;
  for (size_t i = 0; i < n; ++i)
    good &= out[i] == 2.0f * host[i];
  check(good, "mgpuLaunchKernel on mgpuMemAlloc memory matches the CPU");

  // Host memory as kernel arguments (upstream's Vulkan runner convention).
  std::vector<float> hostOut(n, -1.0f);
  float *hostIn = host.data(), *hostDst = hostOut.data();
  void *hostParams[4] = {&hostIn, &size0, &hostDst, &size1};
  mgpuLaunchKernel(function, n / 4, 1, 1, 4, 1, 1, 0, stream, hostParams,
                   nullptr, 4);
  mgpuStreamSynchronize(stream);
  good = true;
  for (size_t i = 0; i < n; ++i)
    good &= hostOut[i] == 2.0f * host[i];
  check(good, "mgpuLaunchKernel on host memory matches the CPU");

  // A pointer into an allocation binds at that offset.
  float *srcTail = src + 16;
  size_t tailBytes = (n - 16) * sizeof(float);
  void *tailParams[4] = {&srcTail, &tailBytes, &dst, &tailBytes};
  mgpuLaunchKernel(function, (n - 16) / 4, 1, 1, 4, 1, 1, 0, stream, tailParams,
                   nullptr, 4);
  mgpuMemcpy(out.data(), dst, bytes, stream);
  good = true;
  for (size_t i = 0; i + 16 < n; ++i)
    good &= out[i] == 2.0f * host[i + 16];
  check(good, "mgpuLaunchKernel on an interior pointer binds at its offset");

  mgpuMemset32(dst, 0x3f800000u, n, stream);
  mgpuMemcpy(out.data(), dst, bytes, stream);
  check(out == std::vector<float>(n, 1.0f), "mgpuMemset32");

  // Errors are reported, not fatal.
  cachetMgpuTakeError(nullptr, 0);
  check(mgpuModuleGetFunction(module, "nope") == nullptr,
        "mgpuModuleGetFunction of an unknown name returns null");
  const uint32_t bad[4] = {0, 1, 2, 3};
  check(mgpuModuleLoad(const_cast<uint32_t *>(bad), sizeof(bad)) == nullptr,
        "mgpuModuleLoad of a bad blob returns null");
  // The first failure is kept, with its status, until it is taken.
  char first[256];
  CachetStatus firstStatus = cachetMgpuTakeError(first, sizeof(first));
  check(firstStatus == CACHET_ERROR_NOT_FOUND &&
            std::strncmp(first,
                         "mgpuModuleGetFunction: cachetKernelGet: ", 40) == 0 &&
            cachetMgpuTakeError(first, sizeof(first)) == CACHET_SUCCESS &&
            first[0] == '\0',
        "cachetMgpuTakeError returns the first mgpu failure once",
        std::string(cachetStatusString(firstStatus)) + " \"" + first + "\"");
  char ptx[] = ".version 7.0\n.target sm_52\n";
  check(mgpuModuleLoadJIT(ptx, 3) == nullptr,
        "mgpuModuleLoadJIT (PTX) on Vulkan returns null");
  mgpuLaunchKernel(function, n / 4, 1, 1, 8, 1, 1, 0, stream, params, nullptr,
                   4);
  mgpuLaunchKernel(function, n / 4, 1, 1, 4, 1, 1, 0, stream, params, nullptr,
                   3);

  // The bridge to the C API: the same runtime, its buffers, 2D uploads and
  // event timing.
  CachetRuntime shared = nullptr;
  CachetBuffer backing = nullptr;
  uint64_t backingOffset = 1;
  check(cachetMgpuGetRuntime(&shared) == CACHET_SUCCESS && shared &&
            cachetMgpuLookup(src + 8, &backing, &backingOffset) ==
                CACHET_SUCCESS &&
            backing && backingOffset == 32,
        "cachetMgpuGetRuntime / cachetMgpuLookup");
  check(cachetMgpuLookup(host.data(), &backing, &backingOffset) ==
            CACHET_ERROR_NOT_FOUND,
        "cachetMgpuLookup of host memory is not found");
  std::vector<uint8_t> rowsIn(4 * 12, 0x77), padded(4 * 16, 0x99);
  for (size_t i = 0; i < rowsIn.size(); ++i)
    rowsIn[i] = static_cast<uint8_t>(i + 1);
  mgpuMemset32(dst, 0xffffffffu, n, stream);
  check(cachetMgpuMemcpy2D(dst, 16, rowsIn.data(), 12, 10, 4) == CACHET_SUCCESS,
        "cachetMgpuMemcpy2D into mgpu memory");
  mgpuMemcpy(padded.data(), dst, padded.size(), stream);
  good = true;
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 16; ++c)
      good &= padded[r * 16 + c] == (c < 10 ? rowsIn[r * 12 + c] : 0);
  check(good, "cachetMgpuMemcpy2D copies rows and zeroes the gaps");
  // Resident constants: uploaded by the first call only.
  std::vector<uint8_t> constant(24), readBack(24, 0);
  for (size_t i = 0; i < constant.size(); ++i)
    constant[i] = static_cast<uint8_t>(3 * i + 1);
  void *slot = nullptr;
  void *resident = cachetMgpuResident(&slot, constant.data(), constant.size());
  mgpuMemcpy(readBack.data(), resident, readBack.size(), stream);
  check(resident && slot == resident && readBack == constant,
        "cachetMgpuResident uploads into its slot");
  constant[0] = 0xee;
  void *again = cachetMgpuResident(&slot, constant.data(), constant.size());
  mgpuMemcpy(readBack.data(), again, readBack.size(), stream);
  check(again == resident && readBack[0] == 1,
        "cachetMgpuResident returns the slot's copy without uploading again");
  cachetMgpuTakeError(nullptr, 0);
  check(cachetMgpuResident(nullptr, constant.data(), 4) == nullptr &&
            cachetMgpuTakeError(nullptr, 0) == CACHET_ERROR_INVALID_ARGUMENT,
        "cachetMgpuResident without a slot is an error");

  // Resident arguments: a bound host buffer's device copy is what
  // cachetMgpuArgument returns, and ending it neither copies back nor frees;
  // an unbound one is uploaded, copied back when written, and freed.
  std::vector<uint8_t> state(32, 7), plain(32, 9);
  void *bound = nullptr;
  check(cachetMgpuBindResident(state.data(), state.size(), &bound) ==
                CACHET_SUCCESS &&
            bound,
        "cachetMgpuBindResident");
  check(cachetMgpuArgument(state.data(), state.size()) == bound,
        "cachetMgpuArgument returns the resident copy");
  mgpuMemset32(bound, 0x01010101u, state.size() / 4, stream);
  cachetMgpuArgumentEnd(state.data(), bound, state.size(), 1);
  check(state[0] == 7, "ending a resident argument copies nothing back");
  check(cachetMgpuSyncResident(state.data()) == CACHET_SUCCESS &&
            state[0] == 1 && state[31] == 1,
        "cachetMgpuSyncResident reads the device copy back");
  void *copy = cachetMgpuArgument(plain.data(), plain.size());
  check(copy && copy != plain.data(), "an unbound argument gets a new copy");
  mgpuMemset32(copy, 0x02020202u, plain.size() / 4, stream);
  cachetMgpuArgumentEnd(plain.data(), copy, plain.size(), 1);
  check(plain[0] == 2 && plain[31] == 2,
        "an unbound written argument is copied back");
  cachetMgpuTakeError(nullptr, 0);
  check(cachetMgpuBindResident(state.data(), state.size(), &bound) ==
                CACHET_ERROR_INVALID_ARGUMENT &&
            cachetMgpuTakeError(nullptr, 0) == CACHET_ERROR_INVALID_ARGUMENT,
        "binding a resident buffer twice is an error");
  check(cachetMgpuUnbindResident(state.data()) == CACHET_SUCCESS,
        "cachetMgpuUnbindResident");
  check(cachetMgpuUnbindResident(state.data()) == CACHET_ERROR_NOT_FOUND &&
            cachetMgpuSyncResident(state.data()) == CACHET_ERROR_NOT_FOUND &&
            cachetMgpuTakeError(nullptr, 0) == CACHET_ERROR_NOT_FOUND,
        "an unbound buffer is not resident");
  void *later = mgpuEventCreate();
  mgpuLaunchKernel(function, n / 4, 1, 1, 4, 1, 1, 0, stream, params, nullptr,
                   4);
  mgpuEventRecord(later, stream);
  uint64_t elapsed = 0;
  check(cachetMgpuEventElapsedNs(event, later, &elapsed) == CACHET_SUCCESS,
        "cachetMgpuEventElapsedNs", std::to_string(elapsed) + " ns");
  mgpuEventDestroy(later);

  // A kernel span marks its start before the first launch and its end at
  // the first call after the last launch that is not a launch: nothing is
  // queued between launches.
  uint64_t marks = vulkanTimestampWrites(), spanNs = 0;
  check(cachetMgpuKernelSpanBegin() == CACHET_SUCCESS,
        "cachetMgpuKernelSpanBegin");
  for (int i = 0; i < 3; ++i)
    mgpuLaunchKernel(function, n / 4, 1, 1, 4, 1, 1, 0, stream, params, nullptr,
                     4);
  uint64_t between = vulkanTimestampWrites() - marks;
  mgpuMemcpy(out.data(), dst, bytes, stream);
  uint64_t after = vulkanTimestampWrites() - marks;
  bool spanRead = cachetMgpuKernelSpanNs(&spanNs) == CACHET_SUCCESS;
  check(spanRead && between == 1 && after == 2 && spanNs > 0,
        "kernel span: one mark before 3 launches, the end mark at the copy",
        std::to_string(between) + " then " + std::to_string(after) +
            " marks, " + std::to_string(spanNs) + " ns");
  uint64_t launches = 0;
  check(cachetMgpuKernelSpanLaunches(&launches) == CACHET_SUCCESS &&
            launches == 3,
        "cachetMgpuKernelSpanLaunches: the span's 3 launches",
        std::to_string(launches));
  check(cachetMgpuKernelSpanLaunches(nullptr) == CACHET_ERROR_INVALID_ARGUMENT,
        "cachetMgpuKernelSpanLaunches(nullptr) is rejected");

  mgpuEventDestroy(event);
  mgpuMemFree(src, stream);
  mgpuMemFree(dst, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  check(true, "mgpu calls with bad arguments returned");
}

/// The f16 bits of a small integer (|v| < 2048, exact in f16).
uint16_t halfOf(int v) {
  if (v == 0)
    return 0;
  uint32_t a = static_cast<uint32_t>(std::abs(v));
  int exponent = 0;
  while ((a >> (exponent + 1)) != 0)
    ++exponent;
  uint32_t mantissa = (a << (10 - exponent)) & 0x3ff;
  return static_cast<uint16_t>((v < 0 ? 0x8000u : 0u) |
                               ((exponent + 15u) << 10) | mantissa);
}

/// The bf16 bits of a small integer (exact in bf16 where |v| < 256).
uint16_t bf16Of(int v) {
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

/// Runs coop_matmul (c = a * b, 16x16 f16 or bf16 to f32, one subgroup of
/// 32) and compares with the CPU; the products are small integers, exact in
/// f32.
void testCoopMatmul(CachetRuntime rt, CachetModule module, bool bf16) {
  CachetKernel kernel = nullptr;
  CachetKernelInfo info;
  if (!ok(cachetKernelGet(rt, module, "coop_matmul", &kernel),
          "get coop_matmul") ||
      !ok(cachetKernelGetInfo(kernel, &info), "coop_matmul info"))
    return;
  check(info.numBindings == 3 && info.pushConstantBytes == 4 &&
            info.workgroupSize[0] == 32,
        "reflect coop_matmul",
        std::to_string(info.numBindings) + " bindings, " +
            std::to_string(info.pushConstantBytes) + " push bytes, wg " +
            std::to_string(info.workgroupSize[0]));
  const uint32_t n = 16;
  std::vector<uint16_t> a(n * n), b(n * n);
  std::vector<float> c(n * n), expected(n * n, 0.0f);
  auto aValue = [](uint32_t i) { return static_cast<int>(i % 7) - 3; };
  auto bValue = [](uint32_t i) { return static_cast<int>(i * 5 % 9) - 4; };
  for (uint32_t i = 0; i < n * n; ++i) {
    a[i] = bf16 ? bf16Of(aValue(i)) : halfOf(aValue(i));
    b[i] = bf16 ? bf16Of(bValue(i)) : halfOf(bValue(i));
  }
  for (uint32_t row = 0; row < n; ++row)
    for (uint32_t col = 0; col < n; ++col)
      for (uint32_t k = 0; k < n; ++k)
        expected[row * n + col] +=
            static_cast<float>(aValue(row * n + k) * bValue(k * n + col));
  CachetBuffer da, db, dc;
  if (!ok(cachetBufferAlloc(rt, n * n * 2, &da), "alloc a") ||
      !ok(cachetBufferAlloc(rt, n * n * 2, &db), "alloc b") ||
      !ok(cachetBufferAlloc(rt, n * n * 4, &dc), "alloc c"))
    return;
  ok(cachetBufferUpload(rt, da, 0, a.data(), n * n * 2), "upload a");
  ok(cachetBufferUpload(rt, db, 0, b.data(), n * n * 2), "upload b");
  const uint32_t grid[3] = {1, 1, 1};
  CachetBinding args[3] = {{da, 0, 0}, {db, 0, 0}, {dc, 0, 0}};
  ok(cachetLaunch(rt, kernel, grid, args, 3, &n, 4), "launch coop_matmul");
  ok(cachetBufferDownload(rt, dc, 0, c.data(), n * n * 4), "download c");
  check(c == expected, std::string("16x16x16 ") + (bf16 ? "bf16" : "f16") +
                           " -> f32 cooperative-matrix product matches the "
                           "CPU");
  cachetBufferFree(rt, da);
  cachetBufferFree(rt, db);
  cachetBufferFree(rt, dc);
}

/// Loads the cooperative-matrix module at `path` (of f16, or of bf16 with
/// `bf16`): where the Vulkan device has VK_KHR_cooperative_matrix
/// (16x16x16 f16 -> f32, or bf16 -> f32 through VK_KHR_shader_bfloat16, in
/// 32-lane subgroups) it runs it; elsewhere it loads, but getting its kernel
/// must fail with CACHET_ERROR_UNSUPPORTED and say why instead of reaching
/// the driver.
int runCoopModule(const std::string &path, bool bf16) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  CachetRuntime rt = nullptr;
  CachetStatus status = cachetRuntimeCreate("vulkan", 0, &rt);
  if (status == CACHET_ERROR_NO_DEVICE) {
    std::printf("SKIPPED: no Vulkan device (%s)\n", cachetGetLastError());
    return 0;
  }
  if (bytes.empty()) {
    check(false, "read " + path);
    return 1;
  }
  CachetDeviceInfo info;
  CachetCooperativeMatrixInfo coop;
  if (!ok(status, "cachetRuntimeCreate") ||
      !ok(cachetGetDeviceInfo(rt, &info), "device info") ||
      !ok(cachetGetCooperativeMatrixInfo(rt, &coop), "coop matrix info"))
    return 1;
  std::printf("device: %s, subgroup %u, cooperative matrix: %s\n", info.name,
              info.subgroupSize, coop.enabled ? coop.shapes : "off");
  CachetModule module = nullptr;
  status = cachetModuleLoad(rt, bytes.data(), bytes.size(), &module);
  if (!coop.enabled) {
    // It loads (compiled code may hold it beside a fallback it launches
    // instead); its kernels are refused before they reach the driver.
    check(status == CACHET_SUCCESS,
          "a cooperative-matrix module loads without "
          "VK_KHR_cooperative_matrix",
          std::string(cachetStatusString(status)) + " " + cachetGetLastError());
    if (status == CACHET_SUCCESS) {
      CachetKernel kernel = nullptr;
      expectError(cachetKernelGet(rt, module, "coop_matmul", &kernel),
                  CACHET_ERROR_UNSUPPORTED, "cachetKernelGet",
                  "VK_KHR_cooperative_matrix",
                  "its kernel is refused without VK_KHR_cooperative_matrix");
      ok(cachetModuleUnload(rt, module), "unload it");
    }
  } else if (ok(status, "load the cooperative-matrix module")) {
    std::string shapes = std::string(",") + coop.shapes + ",";
    std::string shape = bf16 ? "16x16x16:bf16->f32" : "16x16x16:f16->f32";
    bool listed = shapes.find("," + shape + ",") != std::string::npos;
    if (info.subgroupSize == 32 && listed) {
      testCoopMatmul(rt, module, bf16);
    } else if (bf16 && shapes.find(":bf16->") == std::string::npos) {
      // No bf16 cooperative matrices: refused before the driver sees it.
      CachetKernel kernel = nullptr;
      expectError(cachetKernelGet(rt, module, "coop_matmul", &kernel),
                  CACHET_ERROR_UNSUPPORTED, "cachetKernelGet",
                  "VK_KHR_shader_bfloat16",
                  "its kernel is refused without bf16 cooperative matrices");
    } else {
      std::printf("coop_matmul not run: it needs %s in 32-lane subgroups\n",
                  shape.c_str());
    }
  }
  ok(cachetRuntimeDestroy(rt), "cachetRuntimeDestroy");
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

/// Whether to skip the corrupted-module tests (--skip-corrupt-modules):
/// NVIDIA's Vulkan driver 580.159.04 crashes inside its SPIR-V compiler on one
/// of the mutated modules that pass the runtime's validation.
bool skipCorruptModules = false;

int runAll(uint32_t flags, FakeMemory fake) {
  Fixture f;
  fakeDiscreteGpu(fake);
  CachetStatus status = cachetRuntimeCreate("vulkan", flags, &f.rt);
  if (status == CACHET_ERROR_NO_DEVICE) {
    std::printf("SKIPPED: no Vulkan device (%s)\n", cachetGetLastError());
    return 0;
  }
  if (!ok(status, "cachetRuntimeCreate") ||
      !ok(cachetGetDeviceInfo(f.rt, &f.info), "cachetGetDeviceInfo"))
    return 1;
  if (fake != FakeMemory::None && !fakeDiscreteGpuActive()) {
    std::printf("SKIPPED: the first memory type of '%s' is not host visible; "
                "no discrete GPU can be faked over it\n",
                f.info.name);
    cachetRuntimeDestroy(f.rt);
    return 0;
  }
  testDeviceInfo(f);
  testModules(f);
  if (f.vadd && f.copy && f.add) {
    testVectorAdd(f);
    testCopyAndFill(f);
    testManyLaunches(f);
    testPitched(f);
    testArena(f);
    testTimestamps(f);
    testLargeBuffer(f);
    testLargeTransfers(f);
    testStagingReuse(f, flags);
    testErrors(f);
    if (!skipCorruptModules) {
      testCorruptModules(f, "vadd.spv", "vadd", 300, 12345);
      testCorruptModules(f, "copy.spv", "add_u32", 200, 7);
    }
  }
  if (fake != FakeMemory::None)
    testDiscreteMemoryTypes(fake);
  if (!(flags & CACHET_RUNTIME_FORCE_STAGING))
    testMgpu(fake, f.info.unifiedMemory != 0);
  check(cachetCHeaderCheck() == 0, "runtime.h compiles as C");
  ok(cachetRuntimeDestroy(f.rt), "cachetRuntimeDestroy");
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  // Keep PASS lines and the runtime's stderr reports in order.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::string mode, backend = "vulkan", fake;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--backend=", 0) == 0)
      backend = arg.substr(10);
    else if (arg.rfind("--dump-ptx=", 0) == 0)
      return dumpPtx(arg.substr(11).c_str());
    else if (arg.rfind("--fake-discrete=", 0) == 0)
      fake = arg.substr(16);
    else if (arg == "--skip-corrupt-modules")
      skipCorruptModules = true;
    else if (mode.empty())
      mode = arg;
    else
      mode = "?";
  }
  bool device = backend == "cuda" || backend == "hip";
  // The mgpu* functions use the backend under test.
  if (device || backend == "auto")
    cachetMgpuSetBackend(backend.c_str());
  if (mode == "--probe") {
    CachetRuntime rt = nullptr;
    CachetDeviceInfo info;
    // An empty --backend= passes NULL: $CACHET_BACKEND, else Vulkan.
    if (cachetRuntimeCreate(backend.empty() ? nullptr : backend.c_str(), 0,
                            &rt) != CACHET_SUCCESS ||
        cachetGetDeviceInfo(rt, &info) != CACHET_SUCCESS) {
      std::printf("no device: %s\n", cachetGetLastError());
      return 1;
    }
    CachetCooperativeMatrixInfo coop = {};
    cachetGetCooperativeMatrixInfo(rt, &coop);
    std::printf("device: %s (%s), subgroup %u, cooperative matrix: %s\n",
                info.name, info.backend, info.subgroupSize,
                coop.enabled ? coop.shapes : "off");
    cachetRuntimeDestroy(rt);
    return 0;
  }
  if (mode.rfind("--coop-module=", 0) == 0 && backend == "vulkan")
    return runCoopModule(mode.substr(14), /*bf16=*/false);
  if (mode.rfind("--coop-bf16-module=", 0) == 0 && backend == "vulkan")
    return runCoopModule(mode.substr(19), /*bf16=*/true);
  if (mode == "--expect-no-device")
    return expectNoDevice(backend.c_str());
  if (device && mode.empty())
    return runDeviceTests(backend.c_str());
  if (backend != "vulkan" ||
      (!mode.empty() && mode != "--force-staging" &&
       mode != "--no-push-descriptors") ||
      (!fake.empty() && fake != "rebar" && fake != "cached")) {
    std::fprintf(stderr, "unknown option %s (backend %s, fake %s)\n",
                 mode.c_str(), backend.c_str(), fake.c_str());
    return 2;
  }
  FakeMemory layout = fake.empty()      ? FakeMemory::None
                      : fake == "rebar" ? FakeMemory::ResizableBar
                                        : FakeMemory::CachedDeviceLocal;
  return runAll(mode.empty() ? 0
                : mode == "--force-staging"
                    ? CACHET_RUNTIME_FORCE_STAGING
                    : CACHET_RUNTIME_NO_PUSH_DESCRIPTORS,
                layout);
}
