//===- Gguf.cpp - GGUF files: reading, writing, llama models --------------===//
//
// The layouts follow ggml's GGUF description (docs/gguf.md) and its block
// formats (ggml-common.h, ggml-quants.c's dequantize_row_*).
//
//===----------------------------------------------------------------------===//

#include "cachet/Generate/Gguf.h"
#include "cachet/ModelGen/Blocks.h"
#include "cachet/ModelGen/Random.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <streambuf>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cachet;
using namespace cachet::gguf;

using cachet::Rng;
using cachet::rngFor;

namespace {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

struct TypeTraits {
  GgmlType type;
  const char *name;
  int64_t blockSize;
  uint64_t blockBytes;
};

const TypeTraits typeTable[] = {
    {GgmlType::F32, "f32", 1, 4},         {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 18},     {GgmlType::Q4_1, "q4_1", 32, 20},
    {GgmlType::Q5_0, "q5_0", 32, 22},     {GgmlType::Q5_1, "q5_1", 32, 24},
    {GgmlType::Q8_0, "q8_0", 32, 34},     {GgmlType::Q2_K, "q2_K", 256, 84},
    {GgmlType::Q3_K, "q3_K", 256, 110},   {GgmlType::Q4_K, "q4_K", 256, 144},
    {GgmlType::Q5_K, "q5_K", 256, 176},   {GgmlType::Q6_K, "q6_K", 256, 210},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18}, {GgmlType::BF16, "bf16", 1, 2},
    {GgmlType::TQ1_0, "tq1_0", 256, 54},  {GgmlType::TQ2_0, "tq2_0", 256, 66},
};

const TypeTraits &traits(GgmlType type) {
  for (const TypeTraits &t : typeTable)
    if (t.type == type)
      return t;
  // Every enumerator is in the table.
  return typeTable[0];
}

using cachet::blocks::iq4nlLevels;

/// The concatenation of `parts`: messages built inside loops.
std::string concat(std::initializer_list<std::string> parts) {
  std::string s;
  for (const std::string &part : parts)
    s += part;
  return s;
}

uint16_t loadU16(const uint8_t *p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}

uint32_t loadU32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint64_t loadU64(const uint8_t *p) {
  return static_cast<uint64_t>(loadU32(p)) |
         static_cast<uint64_t>(loadU32(p + 4)) << 32;
}

float loadHalf(const uint8_t *p) { return halfToFloat(loadU16(p)); }

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// A 6-bit scale and min of q4_K / q5_K's 12 packed bytes (ggml's
/// get_scale_min_k4).
void kScaleMin(const uint8_t *packed, int j, int &scale, int &min) {
  if (j < 4) {
    scale = packed[j] & 63;
    min = packed[j + 4] & 63;
  } else {
    scale = (packed[j + 4] & 15) | (packed[j - 4] >> 6) << 4;
    min = (packed[j + 4] >> 4) | (packed[j] >> 6) << 4;
  }
}

/// Decodes one block of a 32-value format.
void dequantizeSmallBlock(GgmlType type, const uint8_t *b, float *y) {
  float d = loadHalf(b);
  switch (type) {
  case GgmlType::Q8_0:
    for (int j = 0; j < 32; ++j)
      y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    return;
  case GgmlType::Q4_0:
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((b[2 + j] & 15) - 8) * d;
      y[j + 16] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
    }
    return;
  case GgmlType::IQ4_NL:
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(iq4nlLevels[b[2 + j] & 15]) * d;
      y[j + 16] = static_cast<float>(iq4nlLevels[b[2 + j] >> 4]) * d;
    }
    return;
  case GgmlType::Q4_1: {
    float m = loadHalf(b + 2);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(b[4 + j] & 15) * d + m;
      y[j + 16] = static_cast<float>(b[4 + j] >> 4) * d + m;
    }
    return;
  }
  case GgmlType::Q5_0: {
    uint32_t qh = loadU32(b + 2);
    for (int j = 0; j < 16; ++j) {
      int lo = (b[6 + j] & 15) | ((qh >> j) & 1) << 4;
      int hi = (b[6 + j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
      y[j] = static_cast<float>(lo - 16) * d;
      y[j + 16] = static_cast<float>(hi - 16) * d;
    }
    return;
  }
  case GgmlType::Q5_1: {
    float m = loadHalf(b + 2);
    uint32_t qh = loadU32(b + 4);
    for (int j = 0; j < 16; ++j) {
      int lo = (b[8 + j] & 15) | ((qh >> j) & 1) << 4;
      int hi = (b[8 + j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
      y[j] = static_cast<float>(lo) * d + m;
      y[j + 16] = static_cast<float>(hi) * d + m;
    }
    return;
  }
  default:
    return;
  }
}

/// The 2-bit field of value `i` (0..255) of a k-quant's 64 packed bytes:
/// 128 values per 32 bytes, 32 values per bit pair.
int twoBits(const uint8_t *qs, int i) {
  return (qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
}

/// Decodes one block of a 256-value format.
void dequantizeSuperBlock(GgmlType type, const uint8_t *b, float *y) {
  switch (type) {
  case GgmlType::Q2_K: {
    // scales[16] (4-bit scale | 4-bit min), qs[64], d, dmin.
    float d = loadHalf(b + 80), dmin = loadHalf(b + 82);
    for (int i = 0; i < 256; ++i) {
      uint8_t sc = b[i / 16];
      float dl = d * static_cast<float>(sc & 15);
      float ml = dmin * static_cast<float>(sc >> 4);
      y[i] = dl * static_cast<float>(twoBits(b + 16, i)) - ml;
    }
    return;
  }
  case GgmlType::Q3_K: {
    // hmask[32], qs[64], 16 6-bit scales in 12 bytes, d.
    float d = loadHalf(b + 108);
    const uint8_t *sc = b + 96;
    for (int i = 0; i < 256; ++i) {
      int j = i / 16;
      int scale = ((j < 8 ? sc[j] & 15 : sc[j - 8] >> 4) |
                   ((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) -
                  32;
      int high = (b[i % 32] >> (i / 32)) & 1;
      int q = twoBits(b + 32, i) - (high ? 0 : 4);
      y[i] = d * static_cast<float>(scale) * static_cast<float>(q);
    }
    return;
  }
  case GgmlType::Q4_K:
  case GgmlType::Q5_K: {
    // d, dmin, 8 6-bit scales and mins in 12 bytes, (q5_K: qh[32],)
    // qs[128]: 64 values per 32 bytes, low nibbles first.
    bool five = type == GgmlType::Q5_K;
    float d = loadHalf(b), dmin = loadHalf(b + 2);
    const uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
    for (int j = 0; j < 8; ++j) {
      int scale, min;
      kScaleMin(b + 4, j, scale, min);
      float dl = d * static_cast<float>(scale);
      float ml = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) {
        int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
        if (five)
          q |= ((qh[l] >> j) & 1) << 4;
        y[32 * j + l] = dl * static_cast<float>(q) - ml;
      }
    }
    return;
  }
  case GgmlType::Q6_K: {
    // ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], d.
    float d = loadHalf(b + 208);
    const uint8_t *ql = b, *qh = b + 128;
    for (int i = 0; i < 256; ++i) {
      int h = i / 128, t = i % 128 / 32, l = i % 32;
      int low = (ql[64 * h + 32 * (t % 2) + l] >> (4 * (t / 2))) & 15;
      int high = (qh[32 * h + l] >> (2 * t)) & 3;
      auto scale = static_cast<int8_t>(b[192 + 8 * h + l / 16 + 2 * t]);
      y[i] = d * static_cast<float>(scale) *
             static_cast<float>((low | high << 4) - 32);
    }
    return;
  }
  case GgmlType::TQ1_0: {
    // qs[48]: five base-3 digits per byte (32 bytes, then 16), qh[4]: four
    // digits per byte; digit n of byte x is ((x * 3^n mod 256) * 3) >> 8.
    float d = loadHalf(b + 52);
    static const int pow3[5] = {1, 3, 9, 27, 81};
    int i = 0;
    auto digits = [&](const uint8_t *bytes, int count, int perByte) {
      for (int n = 0; n < perByte; ++n)
        for (int m = 0; m < count; ++m) {
          auto q = static_cast<uint8_t>(bytes[m] * pow3[n]);
          y[i++] = static_cast<float>(((q * 3) >> 8) - 1) * d;
        }
    };
    digits(b, 32, 5);
    digits(b + 32, 16, 5);
    digits(b + 48, 4, 4);
    return;
  }
  case GgmlType::TQ2_0: {
    float d = loadHalf(b + 64);
    for (int i = 0; i < 256; ++i)
      y[i] = static_cast<float>(twoBits(b, i) - 1) * d;
    return;
  }
  default:
    return;
  }
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Bounds-checked little-endian reads from the mapped file; every failure
/// sets `error` to what was being read and where.
class Cursor {
public:
  Cursor(const uint8_t *data, uint64_t size, const std::string &path,
         std::string &error)
      : data(data), size(size), path(path), error(error) {}

  uint64_t position() const { return pos; }
  uint64_t remaining() const { return size - pos; }

  bool need(uint64_t n, const std::string &what) {
    if (n <= size - pos)
      return true;
    error = path + ": unexpected end of file reading " + what + " at byte " +
            std::to_string(pos) + " (file size " + std::to_string(size) + ")";
    return false;
  }
  bool u8(uint8_t &out, const std::string &what) {
    if (!need(1, what))
      return false;
    out = data[pos++];
    return true;
  }
  bool u16(uint16_t &out, const std::string &what) {
    if (!need(2, what))
      return false;
    out = loadU16(data + pos);
    pos += 2;
    return true;
  }
  bool u32(uint32_t &out, const std::string &what) {
    if (!need(4, what))
      return false;
    out = loadU32(data + pos);
    pos += 4;
    return true;
  }
  bool u64(uint64_t &out, const std::string &what) {
    if (!need(8, what))
      return false;
    out = loadU64(data + pos);
    pos += 8;
    return true;
  }
  bool string(std::string &out, const std::string &what) {
    uint64_t length = 0;
    if (!u64(length, "the length of " + what) || !need(length, what))
      return false;
    out.assign(reinterpret_cast<const char *>(data + pos), length);
    pos += length;
    return true;
  }

private:
  const uint8_t *data;
  uint64_t size;
  uint64_t pos = 0;
  const std::string &path;
  std::string &error;
};

bool isValueType(uint32_t id) { return id <= 12; }

/// The fewest bytes a value of `type` takes in the file.
uint64_t minValueBytes(ValueType type) {
  switch (type) {
  case ValueType::U8:
  case ValueType::I8:
  case ValueType::Bool:
    return 1;
  case ValueType::U16:
  case ValueType::I16:
    return 2;
  case ValueType::U32:
  case ValueType::I32:
  case ValueType::F32:
    return 4;
  case ValueType::Array:
    return 12;
  default:
    return 8;
  }
}

bool readScalar(Cursor &in, ValueType type, Value &out, const std::string &what,
                const std::string &path, std::string &error) {
  out.type = type;
  switch (type) {
  case ValueType::U8:
  case ValueType::Bool: {
    uint8_t v = 0;
    if (!in.u8(v, what))
      return false;
    if (type == ValueType::Bool && v > 1) {
      error = path + ": " + what + " is a bool of value " + std::to_string(v) +
              ", expected 0 or 1";
      return false;
    }
    out.u = v;
    return true;
  }
  case ValueType::I8: {
    uint8_t v = 0;
    if (!in.u8(v, what))
      return false;
    out.i = static_cast<int8_t>(v);
    return true;
  }
  case ValueType::U16: {
    uint16_t v = 0;
    if (!in.u16(v, what))
      return false;
    out.u = v;
    return true;
  }
  case ValueType::I16: {
    uint16_t v = 0;
    if (!in.u16(v, what))
      return false;
    out.i = static_cast<int16_t>(v);
    return true;
  }
  case ValueType::U32: {
    uint32_t v = 0;
    if (!in.u32(v, what))
      return false;
    out.u = v;
    return true;
  }
  case ValueType::I32: {
    uint32_t v = 0;
    if (!in.u32(v, what))
      return false;
    out.i = static_cast<int32_t>(v);
    return true;
  }
  case ValueType::F32: {
    uint32_t v = 0;
    if (!in.u32(v, what))
      return false;
    out.f = bitsToFloat(v);
    return true;
  }
  case ValueType::U64:
    return in.u64(out.u, what);
  case ValueType::I64: {
    uint64_t v = 0;
    if (!in.u64(v, what))
      return false;
    out.i = static_cast<int64_t>(v);
    return true;
  }
  case ValueType::F64: {
    uint64_t v = 0;
    if (!in.u64(v, what))
      return false;
    std::memcpy(&out.f, &v, 8);
    return true;
  }
  case ValueType::String:
    return in.string(out.s, what);
  case ValueType::Array:
    break;
  }
  error = path + ": " + what + " is an array of arrays, which is not supported";
  return false;
}

bool readValue(Cursor &in, uint32_t typeId, Value &out, const std::string &what,
               const std::string &path, std::string &error) {
  if (!isValueType(typeId)) {
    error = path + ": " + what + " has unknown value type " +
            std::to_string(typeId);
    return false;
  }
  auto type = static_cast<ValueType>(typeId);
  if (type != ValueType::Array)
    return readScalar(in, type, out, what, path, error);
  uint32_t elementId = 0;
  uint64_t count = 0;
  if (!in.u32(elementId, "the element type of " + what))
    return false;
  if (!isValueType(elementId)) {
    error = path + ": " + what + " is an array of unknown value type " +
            std::to_string(elementId);
    return false;
  }
  out.type = ValueType::Array;
  out.elementType = static_cast<ValueType>(elementId);
  if (!in.u64(count, "the length of " + what))
    return false;
  if (count > maxArrayElements) {
    error = path + ": " + what + " has " + std::to_string(count) +
            " elements, more than the " + std::to_string(maxArrayElements) +
            " allowed";
    return false;
  }
  if (count > in.remaining() / minValueBytes(out.elementType)) {
    error = path + ": " + what + " has " + std::to_string(count) +
            " elements, more than the " + std::to_string(in.remaining()) +
            " bytes left in the file hold";
    return false;
  }
  out.elements.resize(count);
  for (uint64_t k = 0; k < count; ++k)
    if (!readScalar(in, out.elementType, out.elements[k],
                    "element " + std::to_string(k) + " of " + what, path,
                    error))
      return false;
  return true;
}

std::string shapeString(const std::vector<int64_t> &ne) {
  std::string s = "[";
  for (size_t k = 0; k < ne.size(); ++k)
    s += (k ? ", " : "") + std::to_string(ne[k]);
  return s + "]";
}

/// Reads one tensor info, validating its shape and type; the offset is
/// checked against the file once the data section's start is known.
bool readTensorInfo(Cursor &in, uint64_t index, TensorInfo &info,
                    const std::string &path, std::string &error) {
  std::string what = "tensor info " + std::to_string(index);
  if (!in.string(info.name, "the name of " + what))
    return false;
  if (info.name.empty()) {
    error = path + ": " + what + " has an empty name";
    return false;
  }
  std::string tensor = "tensor '" + escape(info.name) + "'";
  uint32_t dims = 0;
  if (!in.u32(dims, "the number of dimensions of " + tensor))
    return false;
  if (dims > 4) {
    error = path + ": " + tensor + " has " + std::to_string(dims) +
            " dimensions, at most 4 are allowed";
    return false;
  }
  info.ne.resize(dims);
  uint64_t elements = 1;
  for (uint32_t k = 0; k < dims; ++k) {
    uint64_t n = 0;
    if (!in.u64(n, "dimension " + std::to_string(k) + " of " + tensor))
      return false;
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (n != 0 &&
         elements >
             static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n)) {
      error = concat({path, ": ", tensor, " has too many elements (dimension ",
                      std::to_string(k), " is ", std::to_string(n), ")"});
      return false;
    }
    info.ne[k] = static_cast<int64_t>(n);
    elements *= n;
  }
  uint32_t typeId = 0;
  if (!in.u32(typeId, "the type of " + tensor))
    return false;
  if (!typeFromId(typeId, info.type)) {
    error = path + ": " + tensor + " has unknown or unsupported ggml type " +
            std::to_string(typeId);
    return false;
  }
  int64_t block = blockSize(info.type);
  int64_t rowLength = dims ? info.ne[0] : 1;
  if (rowLength % block != 0) {
    error = path + ": " + tensor + " of type " + typeName(info.type) +
            " has rows of " + std::to_string(rowLength) +
            " values, not a multiple of its " + std::to_string(block) +
            "-value blocks";
    return false;
  }
  uint64_t blocks = elements / static_cast<uint64_t>(block);
  if (blocks > std::numeric_limits<uint64_t>::max() / blockBytes(info.type)) {
    error = path + ": " + tensor + " is too large";
    return false;
  }
  info.bytes = blocks * blockBytes(info.type);
  return in.u64(info.offset, "the offset of " + tensor);
}

/// Maps `path` read-only; a regular file only.
bool mapFile(const std::string &path, const uint8_t *&data, uint64_t &size,
             std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return false;
  }
  size = static_cast<uint64_t>(st.st_size);
  data = nullptr;
  if (size > 0) {
    void *p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = path + ": cannot map: " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    data = static_cast<const uint8_t *>(p);
  }
  ::close(fd);
  return true;
}

bool unsignedIn(const Value &v, uint64_t max, uint64_t &out) {
  switch (v.type) {
  case ValueType::U8:
  case ValueType::U16:
  case ValueType::U32:
  case ValueType::U64:
    out = v.u;
    return v.u <= max;
  case ValueType::I8:
  case ValueType::I16:
  case ValueType::I32:
  case ValueType::I64:
    out = static_cast<uint64_t>(v.i);
    return v.i >= 0 && static_cast<uint64_t>(v.i) <= max;
  default:
    return false;
  }
}

bool acceptsInteger(const Value &v) { return v.isInteger(); }
bool acceptsFloat(const Value &v) {
  return v.type == ValueType::F32 || v.type == ValueType::F64;
}
bool acceptsBool(const Value &v) { return v.type == ValueType::Bool; }
bool acceptsString(const Value &v) { return v.type == ValueType::String; }
bool acceptsArray(const Value &v) { return v.type == ValueType::Array; }
bool acceptsStrings(const Value &v) {
  return v.type == ValueType::Array && v.elementType == ValueType::String;
}

std::string valueString(const Value &v) {
  if (v.type == ValueType::I8 || v.type == ValueType::I16 ||
      v.type == ValueType::I32 || v.type == ValueType::I64)
    return std::to_string(v.i);
  return std::to_string(v.u);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

void putU32(std::ostream &os, uint32_t v) {
  char b[4];
  for (int k = 0; k < 4; ++k)
    b[k] = static_cast<char>(v >> (8 * k));
  os.write(b, 4);
}

void putU64(std::ostream &os, uint64_t v) {
  putU32(os, static_cast<uint32_t>(v));
  putU32(os, static_cast<uint32_t>(v >> 32));
}

void putString(std::ostream &os, const std::string &s) {
  putU64(os, s.size());
  os.write(s.data(), static_cast<std::streamsize>(s.size()));
}

void putScalar(std::ostream &os, const Value &v) {
  switch (v.type) {
  case ValueType::U8:
  case ValueType::Bool:
    os.put(static_cast<char>(v.u));
    return;
  case ValueType::I8:
    os.put(static_cast<char>(v.i));
    return;
  case ValueType::U16:
  case ValueType::I16: {
    auto bits = static_cast<uint16_t>(v.type == ValueType::U16 ? v.u : v.i);
    char b[2] = {static_cast<char>(bits), static_cast<char>(bits >> 8)};
    os.write(b, 2);
    return;
  }
  case ValueType::U32:
    putU32(os, static_cast<uint32_t>(v.u));
    return;
  case ValueType::I32:
    putU32(os, static_cast<uint32_t>(v.i));
    return;
  case ValueType::F32: {
    auto f = static_cast<float>(v.f);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    putU32(os, bits);
    return;
  }
  case ValueType::U64:
    putU64(os, v.u);
    return;
  case ValueType::I64:
    putU64(os, static_cast<uint64_t>(v.i));
    return;
  case ValueType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &v.f, 8);
    putU64(os, bits);
    return;
  }
  case ValueType::String:
    putString(os, v.s);
    return;
  case ValueType::Array:
    return;
  }
}

void putZeros(std::ostream &os, uint64_t n) {
  static const char zeros[64] = {};
  for (; n > 0; n -= std::min<uint64_t>(n, 64))
    os.write(zeros, static_cast<std::streamsize>(std::min<uint64_t>(n, 64)));
}

/// Passes every byte on to another stream buffer, counting them.
class CountingBuffer : public std::streambuf {
public:
  explicit CountingBuffer(std::streambuf &target) : target(target) {}
  uint64_t count() const { return written; }

protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof()))
      return traits_type::not_eof(c);
    if (traits_type::eq_int_type(target.sputc(traits_type::to_char_type(c)),
                                 traits_type::eof()))
      return traits_type::eof();
    ++written;
    return c;
  }
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    std::streamsize done = target.sputn(s, n);
    written += static_cast<uint64_t>(done);
    return done;
  }

private:
  std::streambuf &target;
  uint64_t written = 0;
};

uint64_t padTo(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

//===----------------------------------------------------------------------===//
// Random values
//===----------------------------------------------------------------------===//

void storeU16(uint8_t *p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

/// Random values `center + amplitude * u`, u uniform in [-1, 1), in a
/// float format; block formats get random blocks of the same standard
/// deviation (`center` must then be 0).
class RandomTensor {
public:
  RandomTensor(GgmlType type, double center, double amplitude)
      : type(type), center(center), amplitude(amplitude) {}

  /// Writes `elements` values drawn from `rng` to `os`, in chunks.
  bool write(std::ostream &os, Rng rng, int64_t elements) const {
    const uint64_t chunkBlocks = 4096;
    uint64_t blocks = static_cast<uint64_t>(elements / blockSize(type));
    uint64_t bytes = blockBytes(type);
    std::vector<uint8_t> chunk(chunkBlocks * bytes);
    for (uint64_t first = 0; first < blocks; first += chunkBlocks) {
      uint64_t n = std::min(chunkBlocks, blocks - first);
      for (uint64_t k = 0; k < n; ++k)
        fill(rng, chunk.data() + k * bytes);
      os.write(reinterpret_cast<const char *>(chunk.data()),
               static_cast<std::streamsize>(n * bytes));
    }
    return static_cast<bool>(os);
  }

private:
  void fill(Rng &rng, uint8_t *b) const {
    float v = 0;
    if (blockSize(type) == 1)
      v = static_cast<float>(center + amplitude * rng.uniform());
    switch (type) {
    case GgmlType::F32: {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int k = 0; k < 4; ++k)
        b[k] = static_cast<uint8_t>(bits >> (8 * k));
      return;
    }
    case GgmlType::F16:
      storeU16(b, floatToHalf(v));
      return;
    case GgmlType::BF16:
      storeU16(b, floatToBf16(v));
      return;
    default:
      cachet::blocks::randomBlock(typeName(type), rng,
                                  amplitude / std::sqrt(3.0), b);
      return;
    }
  }

  GgmlType type;
  double center;
  double amplitude;
};

//===----------------------------------------------------------------------===//
// Llama
//===----------------------------------------------------------------------===//

struct Preset {
  const char *name;
  LlamaConfig config;
};

LlamaConfig makeConfig(int64_t hidden, int64_t heads, int64_t kvHeads,
                       int64_t headDim, int64_t ffn, int64_t layers,
                       int64_t vocab, int64_t context, double theta) {
  LlamaConfig c;
  c.hidden = hidden;
  c.heads = heads;
  c.kvHeads = kvHeads;
  c.headDim = headDim;
  c.ffn = ffn;
  c.layers = layers;
  c.vocab = vocab;
  c.contextLength = context;
  c.ropeTheta = theta;
  return c;
}

const std::vector<Preset> &presets() {
  static const std::vector<Preset> table = {
      {"tiny", makeConfig(128, 4, 2, 32, 256, 2, 256, 256, 10000)},
      {"small", makeConfig(256, 8, 2, 32, 512, 4, 512, 1024, 10000)},
      {"llama3-8b",
       makeConfig(4096, 32, 8, 128, 14336, 32, 128256, 8192, 500000)},
  };
  return table;
}

/// The tensors of a llama model: name, shape (ggml order), and whether it
/// is a norm.
struct LlamaTensor {
  std::string name;
  std::vector<int64_t> ne;
  bool norm;
};

/// Calls `visit` on each tensor of a llama model of `c`'s shape, in
/// llama.cpp's order, until it returns false; returns whether all passed.
bool visitLlamaTensors(const LlamaConfig &c,
                       const std::function<bool(const LlamaTensor &)> &visit) {
  int64_t q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
  if (!visit({"token_embd.weight", {c.hidden, c.vocab}, false}))
    return false;
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    const LlamaTensor layer[] = {
        {p + "attn_norm.weight", {c.hidden}, true},
        {p + "attn_q.weight", {c.hidden, q}, false},
        {p + "attn_k.weight", {c.hidden, kv}, false},
        {p + "attn_v.weight", {c.hidden, kv}, false},
        {p + "attn_output.weight", {q, c.hidden}, false},
        {p + "ffn_norm.weight", {c.hidden}, true},
        {p + "ffn_gate.weight", {c.hidden, c.ffn}, false},
        {p + "ffn_up.weight", {c.hidden, c.ffn}, false},
        {p + "ffn_down.weight", {c.ffn, c.hidden}, false}};
    for (const LlamaTensor &t : layer)
      if (!visit(t))
        return false;
  }
  if (!visit({"output_norm.weight", {c.hidden}, true}))
    return false;
  return c.tiedOutput || visit({"output.weight", {c.hidden, c.vocab}, false});
}

/// `ne` padded with trailing 1s to 4 dimensions (ggml's view of a shape).
std::vector<int64_t> padShape(std::vector<int64_t> ne) {
  ne.resize(4, 1);
  return ne;
}

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty() || s[0] == '-' || s[0] == '+')
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0)
    return false;
  out = v;
  return true;
}

bool parseDouble(const std::string &s, double &out) {
  if (s.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && *end == '\0' && std::isfinite(out) && out > 0;
}

bool applyOverride(const std::string &item, LlamaConfig &c,
                   std::string &error) {
  size_t eq = item.find('=');
  if (eq == std::string::npos) {
    error = "expected key=value, found '" + item + "'";
    return false;
  }
  std::string key = item.substr(0, eq), value = item.substr(eq + 1);
  struct IntField {
    const char *name;
    int64_t LlamaConfig::*field;
  };
  static const IntField ints[] = {
      {"hidden", &LlamaConfig::hidden},
      {"layers", &LlamaConfig::layers},
      {"heads", &LlamaConfig::heads},
      {"kvHeads", &LlamaConfig::kvHeads},
      {"headDim", &LlamaConfig::headDim},
      {"ffn", &LlamaConfig::ffn},
      {"vocab", &LlamaConfig::vocab},
      {"contextLength", &LlamaConfig::contextLength},
  };
  for (const IntField &f : ints)
    if (key == f.name) {
      if (!parseInt(value, c.*f.field)) {
        error = concat(
            {"'", key, "' must be a positive integer, found '", value, "'"});
        return false;
      }
      return true;
    }
  if (key == "ropeTheta" || key == "eps") {
    if (!parseDouble(value, key == "eps" ? c.eps : c.ropeTheta)) {
      error = "'" + key + "' must be a positive number, found '" + value + "'";
      return false;
    }
    return true;
  }
  if (key == "tiedOutput") {
    if (value != "0" && value != "1") {
      error = "'tiedOutput' must be 0 or 1, found '" + value + "'";
      return false;
    }
    c.tiedOutput = value == "1";
    return true;
  }
  error = "unknown key '" + key +
          "' (expected hidden, layers, heads, kvHeads, headDim, ffn, vocab, "
          "contextLength, ropeTheta, eps or tiedOutput)";
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

const std::vector<GgmlType> &cachet::gguf::allTypes() {
  static const std::vector<GgmlType> types = [] {
    std::vector<GgmlType> list;
    for (const TypeTraits &t : typeTable)
      list.push_back(t.type);
    std::sort(list.begin(), list.end());
    return list;
  }();
  return types;
}

const char *cachet::gguf::typeName(GgmlType type) { return traits(type).name; }

int64_t cachet::gguf::blockSize(GgmlType type) {
  return traits(type).blockSize;
}

uint64_t cachet::gguf::blockBytes(GgmlType type) {
  return traits(type).blockBytes;
}

bool cachet::gguf::parseType(const std::string &name, GgmlType &type) {
  for (const TypeTraits &t : typeTable)
    if (name == t.name) {
      type = t.type;
      return true;
    }
  return false;
}

bool cachet::gguf::typeFromId(uint32_t id, GgmlType &type) {
  for (const TypeTraits &t : typeTable)
    if (static_cast<uint32_t>(t.type) == id) {
      type = t.type;
      return true;
    }
  return false;
}

float cachet::gguf::halfToFloat(uint16_t half) {
  return blocks::halfToFloat(half);
}

uint16_t cachet::gguf::floatToHalf(float value) {
  return blocks::floatToHalf(value);
}

uint16_t cachet::gguf::floatToBf16(float value) {
  return blocks::floatToBf16(value);
}

void cachet::gguf::dequantize(GgmlType type, const uint8_t *src, int64_t count,
                              float *dst) {
  switch (type) {
  case GgmlType::F32:
    for (int64_t k = 0; k < count; ++k)
      dst[k] = bitsToFloat(loadU32(src + 4 * k));
    return;
  case GgmlType::F16:
    for (int64_t k = 0; k < count; ++k)
      dst[k] = halfToFloat(loadU16(src + 2 * k));
    return;
  case GgmlType::BF16:
    for (int64_t k = 0; k < count; ++k)
      dst[k] = bitsToFloat(static_cast<uint32_t>(loadU16(src + 2 * k)) << 16);
    return;
  default:
    break;
  }
  int64_t block = blockSize(type);
  uint64_t bytes = blockBytes(type);
  for (int64_t k = 0; k < count / block; ++k) {
    const uint8_t *b = src + static_cast<uint64_t>(k) * bytes;
    if (block == 32)
      dequantizeSmallBlock(type, b, dst + k * block);
    else
      dequantizeSuperBlock(type, b, dst + k * block);
  }
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

const char *cachet::gguf::valueTypeName(ValueType type) {
  static const char *const names[] = {"u8",  "i8",  "u16",  "i16",    "u32",
                                      "i32", "f32", "bool", "string", "array",
                                      "u64", "i64", "f64"};
  return names[static_cast<uint32_t>(type)];
}

Value Value::ofUnsigned(ValueType type, uint64_t v) {
  Value value;
  value.type = type;
  value.u = v;
  return value;
}

Value Value::ofSigned(ValueType type, int64_t v) {
  Value value;
  value.type = type;
  value.i = v;
  return value;
}

Value Value::ofFloat(ValueType type, double v) {
  Value value;
  value.type = type;
  value.f = type == ValueType::F32 ? static_cast<float>(v) : v;
  return value;
}

Value Value::ofU32(uint32_t v) { return ofUnsigned(ValueType::U32, v); }

Value Value::ofF32(float v) { return ofFloat(ValueType::F32, v); }

Value Value::ofBool(bool v) { return ofUnsigned(ValueType::Bool, v ? 1 : 0); }

Value Value::ofString(std::string v) {
  Value value;
  value.type = ValueType::String;
  value.s = std::move(v);
  return value;
}

Value Value::ofArray(ValueType elementType, std::vector<Value> elements) {
  Value value;
  value.type = ValueType::Array;
  value.elementType = elementType;
  value.elements = std::move(elements);
  return value;
}

Value Value::ofStrings(const std::vector<std::string> &strings) {
  std::vector<Value> elements;
  elements.reserve(strings.size());
  for (const std::string &s : strings)
    elements.push_back(ofString(s));
  return ofArray(ValueType::String, std::move(elements));
}

bool Value::isInteger() const {
  switch (type) {
  case ValueType::U8:
  case ValueType::I8:
  case ValueType::U16:
  case ValueType::I16:
  case ValueType::U32:
  case ValueType::I32:
  case ValueType::U64:
  case ValueType::I64:
    return true;
  default:
    return false;
  }
}

std::string cachet::gguf::escape(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// File
//===----------------------------------------------------------------------===//

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : ne)
    n *= d;
  return n;
}

File::File(File &&other) noexcept { *this = std::move(other); }

File &File::operator=(File &&other) noexcept {
  if (this == &other)
    return *this;
  unmap();
  fileVersion = other.fileVersion;
  fileAlignment = other.fileAlignment;
  fileDataOffset = other.fileDataOffset;
  entries = std::move(other.entries);
  infos = std::move(other.infos);
  keyIndex = std::move(other.keyIndex);
  tensorIndex = std::move(other.tensorIndex);
  mapped = other.mapped;
  mappedSize = other.mappedSize;
  other.mapped = nullptr;
  other.mappedSize = 0;
  return *this;
}

File::~File() { unmap(); }

void File::unmap() {
  if (mapped)
    ::munmap(const_cast<uint8_t *>(mapped), mappedSize);
  mapped = nullptr;
  mappedSize = 0;
}

const Value *File::find(const std::string &key) const {
  auto it = keyIndex.find(key);
  return it == keyIndex.end() ? nullptr : &entries[it->second].value;
}

const TensorInfo *File::findTensor(const std::string &name) const {
  auto it = tensorIndex.find(name);
  return it == tensorIndex.end() ? nullptr : &infos[it->second];
}

const uint8_t *File::data(const TensorInfo &tensor) const {
  return mapped + fileDataOffset + tensor.offset;
}

const Value *File::lookUp(const std::string &key, const char *expected,
                          bool (*accepts)(const Value &),
                          std::string &error) const {
  const Value *v = find(key);
  if (!v) {
    error = "missing metadata key '" + key + "'";
    return nullptr;
  }
  if (!accepts(*v)) {
    std::string found = valueTypeName(v->type);
    if (v->type == ValueType::Array)
      found += std::string(" of ") + valueTypeName(v->elementType);
    error = "metadata key '" + key + "' is " + found + ", expected " + expected;
    return nullptr;
  }
  return v;
}

bool File::getU64(const std::string &key, uint64_t &out,
                  std::string &error) const {
  return getU64Max(key, std::numeric_limits<uint64_t>::max(), "u64", out,
                   error);
}

bool File::getU32(const std::string &key, uint32_t &out,
                  std::string &error) const {
  uint64_t v = 0;
  if (!getU64Max(key, std::numeric_limits<uint32_t>::max(), "u32", v, error))
    return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool File::getU64Max(const std::string &key, uint64_t max, const char *name,
                     uint64_t &out, std::string &error) const {
  const Value *v = lookUp(key, "an integer", acceptsInteger, error);
  if (!v)
    return false;
  if (!unsignedIn(*v, max, out)) {
    error = "metadata key '" + key + "' = " + valueString(*v) +
            " does not fit in " + name;
    return false;
  }
  return true;
}

bool File::getI64(const std::string &key, int64_t &out,
                  std::string &error) const {
  const Value *v = lookUp(key, "an integer", acceptsInteger, error);
  if (!v)
    return false;
  bool isSigned = v->type == ValueType::I8 || v->type == ValueType::I16 ||
                  v->type == ValueType::I32 || v->type == ValueType::I64;
  if (!isSigned &&
      v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    error = "metadata key '" + key + "' = " + valueString(*v) +
            " does not fit in i64";
    return false;
  }
  out = isSigned ? v->i : static_cast<int64_t>(v->u);
  return true;
}

bool File::getF64(const std::string &key, double &out,
                  std::string &error) const {
  const Value *v = lookUp(key, "f32 or f64", acceptsFloat, error);
  if (!v)
    return false;
  out = v->f;
  return true;
}

bool File::getF32(const std::string &key, float &out,
                  std::string &error) const {
  double v;
  if (!getF64(key, v, error))
    return false;
  out = static_cast<float>(v);
  return true;
}

bool File::getBool(const std::string &key, bool &out,
                   std::string &error) const {
  const Value *v = lookUp(key, "bool", acceptsBool, error);
  if (!v)
    return false;
  out = v->u != 0;
  return true;
}

bool File::getString(const std::string &key, std::string &out,
                     std::string &error) const {
  const Value *v = lookUp(key, "string", acceptsString, error);
  if (!v)
    return false;
  out = v->s;
  return true;
}

bool File::getArray(const std::string &key, const Value *&out,
                    std::string &error) const {
  out = lookUp(key, "array", acceptsArray, error);
  return out != nullptr;
}

bool File::getStrings(const std::string &key, std::vector<std::string> &out,
                      std::string &error) const {
  const Value *v = lookUp(key, "array of string", acceptsStrings, error);
  if (!v)
    return false;
  out.clear();
  for (const Value &e : v->elements)
    out.push_back(e.s);
  return true;
}

bool cachet::gguf::read(const std::string &path, File &out,
                        std::string &error) {
  File file;
  if (!mapFile(path, file.mapped, file.mappedSize, error))
    return false;
  Cursor in(file.mapped, file.mappedSize, path, error);

  // Header.
  uint8_t magic[4];
  for (uint8_t &m : magic)
    if (!in.u8(m, "the magic"))
      return false;
  if (std::memcmp(magic, "GGUF", 4) != 0) {
    std::string found;
    for (uint8_t m : magic)
      found += m >= 0x20 && m < 0x7f ? static_cast<char>(m) : '?';
    error = path + ": not a GGUF file (magic '" + found + "')";
    return false;
  }
  uint64_t tensorCount = 0, kvCount = 0;
  if (!in.u32(file.fileVersion, "the version"))
    return false;
  if (file.fileVersion != 2 && file.fileVersion != 3) {
    error = path + ": unsupported GGUF version " +
            std::to_string(file.fileVersion) + " (versions 2 and 3 are read)";
    return false;
  }
  if (!in.u64(tensorCount, "the tensor count") ||
      !in.u64(kvCount, "the metadata count"))
    return false;
  // Each entry takes at least a key length and a type (12 bytes), each
  // tensor info a name length, a rank, a type and an offset (24).
  if (kvCount > in.remaining() / 12 || tensorCount > in.remaining() / 24) {
    error = path + ": " + std::to_string(kvCount) + " metadata entries and " +
            std::to_string(tensorCount) + " tensors do not fit in the file (" +
            std::to_string(file.mappedSize) + " bytes)";
    return false;
  }

  // Metadata.
  file.entries.resize(kvCount);
  for (uint64_t k = 0; k < kvCount; ++k) {
    KeyValue &entry = file.entries[k];
    std::string what = "metadata entry " + std::to_string(k);
    if (!in.string(entry.key, "the key of " + what))
      return false;
    if (entry.key.empty() || entry.key.size() > maxKeyBytes) {
      error = concat({path, ": ", what, " has a key of ",
                      std::to_string(entry.key.size()),
                      " bytes, expected 1 to ", std::to_string(maxKeyBytes)});
      return false;
    }
    if (!file.keyIndex.emplace(entry.key, k).second) {
      error = path + ": duplicate metadata key '" + escape(entry.key) + "'";
      return false;
    }
    uint32_t typeId = 0;
    std::string key = "metadata key '" + escape(entry.key) + "'";
    if (!in.u32(typeId, "the type of " + key) ||
        !readValue(in, typeId, entry.value, key, path, error))
      return false;
  }
  if (const Value *alignment = file.find("general.alignment")) {
    if (alignment->type != ValueType::U32) {
      error = path + ": general.alignment is " +
              valueTypeName(alignment->type) + ", expected u32";
      return false;
    }
    if (alignment->u == 0 || (alignment->u & (alignment->u - 1)) != 0) {
      error = path + ": general.alignment " + std::to_string(alignment->u) +
              " is not a power of two";
      return false;
    }
    file.fileAlignment = alignment->u;
  }

  // Tensor infos.
  file.infos.resize(tensorCount);
  for (uint64_t k = 0; k < tensorCount; ++k) {
    TensorInfo &info = file.infos[k];
    if (!readTensorInfo(in, k, info, path, error))
      return false;
    if (!file.tensorIndex.emplace(info.name, k).second) {
      error = path + ": duplicate tensor name '" + escape(info.name) + "'";
      return false;
    }
  }

  // Data: every tensor aligned, inside the file, none overlapping.
  file.fileDataOffset = padTo(in.position(), file.fileAlignment);
  uint64_t dataSize = file.mappedSize > file.fileDataOffset
                          ? file.mappedSize - file.fileDataOffset
                          : 0;
  std::vector<const TensorInfo *> byOffset;
  for (const TensorInfo &info : file.infos) {
    std::string tensor = "tensor '" + escape(info.name) + "'";
    if (info.offset % file.fileAlignment != 0) {
      error = concat({path, ": ", tensor, " has offset ",
                      std::to_string(info.offset),
                      ", not a multiple of the alignment ",
                      std::to_string(file.fileAlignment)});
      return false;
    }
    if (info.offset > dataSize || info.bytes > dataSize - info.offset) {
      error = concat({path, ": ", tensor, " (", std::to_string(info.bytes),
                      " bytes at offset ", std::to_string(info.offset),
                      ") extends past the end of the file (",
                      std::to_string(dataSize), " bytes of data from byte ",
                      std::to_string(file.fileDataOffset), ")"});
      return false;
    }
    byOffset.push_back(&info);
  }
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const TensorInfo *a, const TensorInfo *b) {
                     return a->offset < b->offset;
                   });
  for (size_t k = 1; k < byOffset.size(); ++k) {
    const TensorInfo &a = *byOffset[k - 1], &b = *byOffset[k];
    if (a.offset + a.bytes > b.offset && a.bytes > 0 && b.bytes > 0) {
      error = path + ": tensors '" + escape(a.name) + "' and '" +
              escape(b.name) + "' overlap (offsets " +
              std::to_string(a.offset) + " and " + std::to_string(b.offset) +
              ")";
      return false;
    }
  }
  out = std::move(file);
  return true;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

bool Writer::setAlignment(uint32_t value, std::string &error) {
  if (value == 0 || (value & (value - 1)) != 0) {
    error = "alignment " + std::to_string(value) + " is not a power of two";
    return false;
  }
  alignment = value;
  for (KeyValue &entry : entries)
    if (entry.key == "general.alignment") {
      entry.value = Value::ofU32(value);
      return true;
    }
  entries.push_back({"general.alignment", Value::ofU32(value)});
  return true;
}

bool Writer::addMetadata(const std::string &key, Value value,
                         std::string &error) {
  if (key.empty()) {
    error = "empty metadata key";
    return false;
  }
  if (key == "general.alignment") {
    error = "general.alignment is set with setAlignment";
    return false;
  }
  for (const KeyValue &entry : entries)
    if (entry.key == key) {
      error = "duplicate metadata key '" + key + "'";
      return false;
    }
  if (static_cast<uint32_t>(value.type) > 12) {
    error = "metadata key '" + key + "' has an unknown value type";
    return false;
  }
  if (value.type == ValueType::Array) {
    if (static_cast<uint32_t>(value.elementType) > 12 ||
        value.elementType == ValueType::Array) {
      error = "metadata key '" + key +
              "' is an array of arrays or of an "
              "unknown type";
      return false;
    }
    for (const Value &e : value.elements)
      if (e.type != value.elementType) {
        error = "metadata key '" + key + "' is an array of " +
                valueTypeName(value.elementType) + " with an element of " +
                valueTypeName(e.type);
        return false;
      }
  }
  entries.push_back({key, std::move(value)});
  return true;
}

bool Writer::checkTensor(const std::string &name,
                         const std::vector<int64_t> &ne, GgmlType type,
                         TensorInfo &info, std::string &error) const {
  if (name.empty()) {
    error = "empty tensor name";
    return false;
  }
  for (const Tensor &t : tensors)
    if (t.info.name == name) {
      error = "duplicate tensor name '" + name + "'";
      return false;
    }
  if (ne.empty() || ne.size() > 4) {
    error = "tensor '" + name + "' has " + std::to_string(ne.size()) +
            " dimensions, expected 1 to 4";
    return false;
  }
  uint64_t elements = 1;
  for (int64_t d : ne) {
    if (d <= 0 ||
        elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                       static_cast<uint64_t>(d)) {
      error = "tensor '" + name + "' has a bad shape " + shapeString(ne);
      return false;
    }
    elements *= static_cast<uint64_t>(d);
  }
  if (ne[0] % blockSize(type) != 0) {
    error = "tensor '" + name + "' of type " + typeName(type) +
            " has rows of " + std::to_string(ne[0]) +
            " values, not a multiple of its " +
            std::to_string(blockSize(type)) + "-value blocks";
    return false;
  }
  info.name = name;
  info.ne = ne;
  info.type = type;
  info.bytes =
      elements / static_cast<uint64_t>(blockSize(type)) * blockBytes(type);
  return true;
}

bool Writer::addTensor(const std::string &name, const std::vector<int64_t> &ne,
                       GgmlType type, std::vector<uint8_t> bytes,
                       std::string &error) {
  Tensor t;
  if (!checkTensor(name, ne, type, t.info, error))
    return false;
  if (bytes.size() != t.info.bytes) {
    error = "tensor '" + name + "' has " + std::to_string(bytes.size()) +
            " bytes of data, expected " + std::to_string(t.info.bytes);
    return false;
  }
  t.bytes = std::move(bytes);
  tensors.push_back(std::move(t));
  return true;
}

bool Writer::addTensor(const std::string &name, const std::vector<int64_t> &ne,
                       GgmlType type, TensorWriter writeBytes,
                       std::string &error) {
  Tensor t;
  if (!checkTensor(name, ne, type, t.info, error))
    return false;
  t.writeBytes = std::move(writeBytes);
  tensors.push_back(std::move(t));
  return true;
}

bool Writer::writeTo(std::ostream &target, std::string &error) const {
  // Everything goes through `os`, which counts the bytes: offsets and
  // padding need no seekable stream (a pipe will do).
  CountingBuffer counter(*target.rdbuf());
  std::ostream os(&counter);
  os.write("GGUF", 4);
  putU32(os, 3);
  putU64(os, tensors.size());
  putU64(os, entries.size());
  for (const KeyValue &entry : entries) {
    putString(os, entry.key);
    putU32(os, static_cast<uint32_t>(entry.value.type));
    const Value &v = entry.value;
    if (v.type != ValueType::Array) {
      putScalar(os, v);
      continue;
    }
    putU32(os, static_cast<uint32_t>(v.elementType));
    putU64(os, v.elements.size());
    for (const Value &e : v.elements)
      putScalar(os, e);
  }
  uint64_t offset = 0;
  for (const Tensor &t : tensors) {
    putString(os, t.info.name);
    putU32(os, static_cast<uint32_t>(t.info.ne.size()));
    for (int64_t d : t.info.ne)
      putU64(os, static_cast<uint64_t>(d));
    putU32(os, static_cast<uint32_t>(t.info.type));
    putU64(os, offset);
    offset += padTo(t.info.bytes, alignment);
  }
  putZeros(os, padTo(counter.count(), alignment) - counter.count());
  for (const Tensor &t : tensors) {
    uint64_t start = counter.count();
    if (t.writeBytes) {
      std::string cause;
      if (!t.writeBytes(os, cause)) {
        error = "tensor '" + escape(t.info.name) + "': " + cause;
        return false;
      }
    } else {
      os.write(reinterpret_cast<const char *>(t.bytes.data()),
               static_cast<std::streamsize>(t.bytes.size()));
    }
    if (!os)
      break;
    if (counter.count() - start != t.info.bytes) {
      error = "tensor '" + escape(t.info.name) +
              "': " + std::to_string(counter.count() - start) +
              " bytes written, expected " + std::to_string(t.info.bytes);
      return false;
    }
    putZeros(os, padTo(t.info.bytes, alignment) - t.info.bytes);
  }
  if (!os || !target.flush()) {
    error = std::string("write error: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool Writer::write(const std::string &path, std::string &error) const {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) {
    error = path + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  std::string cause;
  bool ok = writeTo(os, cause);
  os.close();
  if (ok && !os)
    cause = std::string("write error: ") + std::strerror(errno);
  if (!ok || !os) {
    error = path + ": " + cause;
    // Only a partial file is removed, never a device written to.
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      std::remove(path.c_str());
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Llama
//===----------------------------------------------------------------------===//

bool cachet::gguf::checkLlamaConfig(const LlamaConfig &c, std::string &error) {
  const std::pair<const char *, int64_t> sizes[] = {
      {"hidden", c.hidden},   {"layers", c.layers},
      {"heads", c.heads},     {"kvHeads", c.kvHeads},
      {"headDim", c.headDim}, {"ffn", c.ffn},
      {"vocab", c.vocab},     {"contextLength", c.contextLength}};
  for (const auto &[name, value] : sizes)
    if (value <= 0 || value > std::numeric_limits<uint32_t>::max()) {
      error = std::string(name) + " is " + std::to_string(value) +
              ", expected 1 to " +
              std::to_string(std::numeric_limits<uint32_t>::max());
      return false;
    }
  if (c.heads % c.kvHeads != 0) {
    error = "heads (" + std::to_string(c.heads) +
            ") is not a multiple of kvHeads (" + std::to_string(c.kvHeads) +
            ")";
    return false;
  }
  if (c.headDim % 2 != 0) {
    error = "headDim (" + std::to_string(c.headDim) + ") is odd";
    return false;
  }
  if (!(c.ropeTheta > 0) || !(c.eps > 0)) {
    error = "ropeTheta and eps must be positive";
    return false;
  }
  return true;
}

bool cachet::gguf::readLlamaConfig(const File &file, LlamaConfig &config,
                                   std::string &error) {
  std::string arch;
  if (!file.getString("general.architecture", arch, error))
    return false;
  if (arch != "llama") {
    error = "general.architecture is '" + escape(arch) + "', expected 'llama'";
    return false;
  }
  LlamaConfig c;
  const std::pair<const char *, int64_t *> required[] = {
      {"llama.embedding_length", &c.hidden},
      {"llama.block_count", &c.layers},
      {"llama.attention.head_count", &c.heads},
      {"llama.feed_forward_length", &c.ffn},
      {"llama.context_length", &c.contextLength}};
  for (const auto &[key, field] : required) {
    uint32_t v = 0;
    if (!file.getU32(key, v, error))
      return false;
    *field = v;
  }
  auto optional = [&](const char *key, int64_t &field) {
    uint32_t v = 0;
    if (!file.find(key))
      return true;
    if (!file.getU32(key, v, error))
      return false;
    field = v;
    return true;
  };
  c.kvHeads = c.heads;
  if (!optional("llama.attention.head_count_kv", c.kvHeads))
    return false;
  int64_t keyLength = 0, ropeDims = 0, vocabSize = 0;
  if (!optional("llama.attention.key_length", keyLength) ||
      !optional("llama.rope.dimension_count", ropeDims) ||
      !optional("llama.vocab_size", vocabSize))
    return false;
  c.headDim = keyLength     ? keyLength
              : ropeDims    ? ropeDims
              : c.heads > 0 ? c.hidden / c.heads
                            : 0;
  if (file.find("llama.rope.freq_base") &&
      !file.getF64("llama.rope.freq_base", c.ropeTheta, error))
    return false;
  if (file.find("llama.attention.layer_norm_rms_epsilon") &&
      !file.getF64("llama.attention.layer_norm_rms_epsilon", c.eps, error))
    return false;
  const TensorInfo *embedding = file.findTensor("token_embd.weight");
  if (const Value *tokens = file.find("tokenizer.ggml.tokens")) {
    if (tokens->type != ValueType::Array) {
      error = "metadata key 'tokenizer.ggml.tokens' is not an array";
      return false;
    }
    c.vocab = static_cast<int64_t>(tokens->elements.size());
  } else if (vocabSize) {
    c.vocab = vocabSize;
  } else if (embedding && embedding->ne.size() == 2) {
    c.vocab = embedding->ne[1];
  }
  c.tiedOutput = file.findTensor("output.weight") == nullptr;
  if (!checkLlamaConfig(c, error))
    return false;

  bool ok = visitLlamaTensors(c, [&](const LlamaTensor &t) {
    const TensorInfo *info = file.findTensor(t.name);
    if (!info) {
      error = "missing tensor '" + t.name + "' (expected shape " +
              shapeString(t.ne) + ")";
      return false;
    }
    if (padShape(info->ne) != padShape(t.ne)) {
      error = "tensor '" + t.name + "' has shape " + shapeString(info->ne) +
              ", expected " + shapeString(t.ne);
      return false;
    }
    if (t.norm && info->type != GgmlType::F32 && info->type != GgmlType::F16 &&
        info->type != GgmlType::BF16) {
      error = "tensor '" + t.name + "' has type " + typeName(info->type) +
              ", expected f32, f16 or bf16";
      return false;
    }
    return true;
  });
  if (!ok)
    return false;
  config = c;
  return true;
}

bool cachet::gguf::parseLlamaSpec(const std::string &spec, LlamaConfig &config,
                                  std::string &error) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    items.push_back(spec.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  LlamaConfig c = presets().front().config;
  size_t first = 0;
  if (items[0].find('=') == std::string::npos) {
    bool found = false;
    for (const Preset &p : presets())
      if (items[0] == p.name) {
        c = p.config;
        found = true;
      }
    if (!found) {
      error = "unknown preset '" + items[0] +
              "' (expected tiny, small or llama3-8b)";
      return false;
    }
    first = 1;
  }
  for (size_t k = first; k < items.size(); ++k)
    if (!applyOverride(items[k], c, error))
      return false;
  if (!checkLlamaConfig(c, error))
    return false;
  config = c;
  return true;
}

GgmlType cachet::gguf::defaultEmbeddingType(GgmlType weightType) {
  if (weightType == GgmlType::F32 || weightType == GgmlType::BF16)
    return weightType;
  return GgmlType::F16;
}

std::map<std::string, GgmlType>
cachet::gguf::randomTensorTypes(const LlamaConfig &config,
                                const RandomOptions &options) {
  std::map<std::string, GgmlType> types;
  visitLlamaTensors(config, [&](const LlamaTensor &t) {
    GgmlType type = t.norm                          ? GgmlType::F32
                    : t.name == "token_embd.weight" ? options.embeddingType
                                                    : options.weightType;
    if (!t.norm && t.name != "token_embd.weight")
      for (const auto &[pattern, patternType] : options.tensorTypes)
        if (t.name.find(pattern) != std::string::npos)
          type = patternType;
    types[t.name] = type;
    return true;
  });
  return types;
}

std::map<std::string, GgmlType> cachet::gguf::tensorTypes(const File &file) {
  std::map<std::string, GgmlType> types;
  for (const TensorInfo &t : file.tensors())
    types[t.name] = t.type;
  return types;
}

bool cachet::gguf::writeRandomLlama(const LlamaConfig &config,
                                    const RandomOptions &options,
                                    const std::string &path,
                                    std::string &error) {
  if (!checkLlamaConfig(config, error))
    return false;
  GgmlType embd = options.embeddingType;
  if (embd != GgmlType::F32 && embd != GgmlType::F16 &&
      embd != GgmlType::BF16) {
    error = std::string("the embedding type must be f32, f16 or bf16, not ") +
            typeName(embd);
    return false;
  }
  Writer w;
  auto u32 = [](int64_t v) { return Value::ofU32(static_cast<uint32_t>(v)); };
  const std::pair<const char *, Value> metadata[] = {
      {"general.architecture", Value::ofString("llama")},
      {"general.name", Value::ofString(options.name)},
      {"llama.context_length", u32(config.contextLength)},
      {"llama.embedding_length", u32(config.hidden)},
      {"llama.block_count", u32(config.layers)},
      {"llama.feed_forward_length", u32(config.ffn)},
      {"llama.rope.dimension_count", u32(config.headDim)},
      {"llama.attention.head_count", u32(config.heads)},
      {"llama.attention.head_count_kv", u32(config.kvHeads)},
      {"llama.attention.key_length", u32(config.headDim)},
      {"llama.attention.value_length", u32(config.headDim)},
      {"llama.rope.freq_base",
       Value::ofF32(static_cast<float>(config.ropeTheta))},
      {"llama.attention.layer_norm_rms_epsilon",
       Value::ofF32(static_cast<float>(config.eps))},
      {"llama.vocab_size", u32(config.vocab)},
  };
  if (!w.setAlignment(options.alignment, error))
    return false;
  for (const auto &[key, value] : metadata)
    if (!w.addMetadata(key, value, error))
      return false;
  std::vector<Value> tokens;
  tokens.reserve(static_cast<size_t>(config.vocab));
  for (int64_t t = 0; t < config.vocab; ++t)
    tokens.push_back(Value::ofString("<t" + std::to_string(t) + ">"));
  if (!w.addMetadata("tokenizer.ggml.tokens",
                     Value::ofArray(ValueType::String, std::move(tokens)),
                     error))
    return false;

  std::map<std::string, GgmlType> types = randomTensorTypes(config, options);
  bool ok = visitLlamaTensors(config, [&](const LlamaTensor &t) {
    GgmlType type = types.at(t.name);
    // Norms 1 + 0.1 u, embeddings 0.5 u, projections of standard deviation
    // 1/sqrt(fan_in) (uniform: amplitude sqrt(3) times that).
    RandomTensor values =
        t.norm ? RandomTensor(type, 1.0, 0.1)
        : t.name == "token_embd.weight"
            ? RandomTensor(type, 0.0, 0.5)
            : RandomTensor(type, 0.0,
                           std::sqrt(3.0 / static_cast<double>(t.ne[0])));
    Rng rng = rngFor(options.seed, t.name);
    int64_t elements = t.ne[0] * (t.ne.size() > 1 ? t.ne[1] : 1);
    return w.addTensor(
        t.name, t.ne, type,
        [values, rng, elements](std::ostream &os, std::string &cause) {
          if (values.write(os, rng, elements))
            return true;
          cause = std::string("write error: ") + std::strerror(errno);
          return false;
        },
        error);
  });
  if (!ok)
    return false;
  return w.write(path, error);
}
