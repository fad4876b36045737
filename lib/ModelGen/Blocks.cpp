//===- Blocks.cpp - ggml block formats and half floats for test data ------===//
//
// The block layouts follow ggml's ggml-common.h (read, not copied).
//
//===----------------------------------------------------------------------===//

#include "cachet/ModelGen/Blocks.h"

#include <cmath>
#include <cstring>

using namespace cachet;
using namespace cachet::blocks;

namespace {

enum class Kind {
  Q8_0,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  IQ4_NL,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
  TQ1_0,
  TQ2_0,
};

struct Entry {
  Format format;
  Kind kind;
};

const Entry table[] = {
    {{"q8_0", 32, 34}, Kind::Q8_0},    {{"q4_0", 32, 18}, Kind::Q4_0},
    {{"q4_1", 32, 20}, Kind::Q4_1},    {{"q5_0", 32, 22}, Kind::Q5_0},
    {{"q5_1", 32, 24}, Kind::Q5_1},    {{"iq4_nl", 32, 18}, Kind::IQ4_NL},
    {{"q2_K", 256, 84}, Kind::Q2_K},   {{"q3_K", 256, 110}, Kind::Q3_K},
    {{"q4_K", 256, 144}, Kind::Q4_K},  {{"q5_K", 256, 176}, Kind::Q5_K},
    {{"q6_K", 256, 210}, Kind::Q6_K},  {{"tq1_0", 256, 54}, Kind::TQ1_0},
    {{"tq2_0", 256, 66}, Kind::TQ2_0},
};

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void storeU16(uint8_t *p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

/// A block scale near `sigma / rms` (random factor in [0.8, 1.2)), as the
/// f16 it is stored as.
uint16_t blockScale(Rng &rng, double sigma, double rms) {
  return floatToHalf(
      static_cast<float>(sigma * (1.0 + 0.2 * rng.uniform()) / rms));
}

/// As blockScale, of random sign, for the formats whose levels are not
/// symmetric about 0 (q8_0's -128, q4_0's -8...): their values' mean is then
/// 0. ggml's own quantizers write scales of either sign.
uint16_t signedBlockScale(Rng &rng, double sigma, double rms) {
  uint16_t d = blockScale(rng, sigma, rms);
  return rng.next() & 1 ? d ^ 0x8000 : d;
}

/// Fills one block of a block format with random quants whose decoded
/// values have a standard deviation near `sigma` and a mean near 0.
void fillBlock(Kind type, Rng &rng, double sigma, uint8_t *b) {
  switch (type) {
  case Kind::Q8_0:
    // Uniform int8: E[q^2] = (256^2 - 1) / 12 + 1/4.
    storeU16(b, signedBlockScale(rng, sigma, std::sqrt(5461.5)));
    rng.fillBytes(b + 2, 32);
    return;
  case Kind::Q4_0:
    storeU16(b, signedBlockScale(rng, sigma, std::sqrt(21.5)));
    rng.fillBytes(b + 2, 16);
    return;
  case Kind::IQ4_NL: {
    double sum = 0;
    for (int8_t level : iq4nlLevels)
      sum += level * level;
    storeU16(b, signedBlockScale(rng, sigma, std::sqrt(sum / 16)));
    rng.fillBytes(b + 2, 16);
    return;
  }
  case Kind::Q5_0:
    storeU16(b, signedBlockScale(rng, sigma, std::sqrt(85.5)));
    rng.fillBytes(b + 2, 20);
    return;
  case Kind::Q4_1:
  case Kind::Q5_1: {
    // x = d q + m with m = -d (levels - 1) / 2: centred.
    bool five = type == Kind::Q5_1;
    double levels = five ? 32 : 16;
    uint16_t d = blockScale(rng, sigma, std::sqrt((levels * levels - 1) / 12));
    storeU16(b, d);
    storeU16(b + 2, floatToHalf(static_cast<float>(-halfToFloat(d) *
                                                   (levels - 1) / 2)));
    rng.fillBytes(b + 4, five ? 20 : 16);
    return;
  }
  case Kind::Q2_K: {
    // Scales s in [8, 15], mins round(0.75 s) with dmin = 2 d: centred.
    double sum = 0;
    for (int j = 0; j < 16; ++j) {
      int s = rng.between(8, 15);
      b[j] = static_cast<uint8_t>(s | static_cast<int>(0.75 * s + 0.5) << 4);
      sum += s * s;
    }
    rng.fillBytes(b + 16, 64);
    uint16_t d = blockScale(rng, sigma, std::sqrt(1.25 * sum / 16));
    storeU16(b + 80, d);
    storeU16(b + 82, floatToHalf(2 * halfToFloat(d)));
    return;
  }
  case Kind::Q3_K: {
    // 6-bit scales 32 +- [8, 31]; levels -4..3: E[l^2] = 5.5.
    rng.fillBytes(b, 96);
    std::memset(b + 96, 0, 12);
    double sum = 0;
    for (int j = 0; j < 16; ++j) {
      int s = rng.between(8, 31) * (rng.next() & 1 ? 1 : -1);
      int sc = 32 + s;
      b[96 + j % 8] |= static_cast<uint8_t>((sc & 15) << (j < 8 ? 0 : 4));
      b[104 + j % 4] |= static_cast<uint8_t>((sc >> 4) << (2 * (j / 4)));
      sum += s * s;
    }
    storeU16(b + 108, blockScale(rng, sigma, std::sqrt(5.5 * sum / 16)));
    return;
  }
  case Kind::Q4_K:
  case Kind::Q5_K: {
    // Scales in [32, 63], mins round(scale * center / step) with dmin =
    // step d: centred (center 7.5 or 15.5, step 8 or 16).
    bool five = type == Kind::Q5_K;
    double center = five ? 15.5 : 7.5, step = five ? 16 : 8;
    uint8_t *packed = b + 4;
    std::memset(packed, 0, 12);
    double sum = 0;
    for (int j = 0; j < 8; ++j) {
      int scale = rng.between(32, 63);
      int min = static_cast<int>(scale * center / step + 0.5);
      if (j < 4) {
        packed[j] |= static_cast<uint8_t>(scale);
        packed[j + 4] |= static_cast<uint8_t>(min);
      } else {
        packed[j + 4] = static_cast<uint8_t>((scale & 15) | (min & 15) << 4);
        packed[j - 4] |= static_cast<uint8_t>((scale >> 4) << 6);
        packed[j] |= static_cast<uint8_t>((min >> 4) << 6);
      }
      sum += scale * scale;
    }
    double variance = five ? 85.25 : 21.25;
    uint16_t d = blockScale(rng, sigma, std::sqrt(variance * sum / 8));
    storeU16(b, d);
    storeU16(b + 2, floatToHalf(static_cast<float>(step) * halfToFloat(d)));
    rng.fillBytes(b + 16, five ? 160 : 128);
    return;
  }
  case Kind::Q6_K: {
    // int8 scales +-[32, 63]; levels -32..31: E[l^2] = 341.5.
    rng.fillBytes(b, 192);
    double sum = 0;
    for (int j = 0; j < 16; ++j) {
      int s = rng.between(32, 63) * (rng.next() & 1 ? 1 : -1);
      b[192 + j] = static_cast<uint8_t>(static_cast<int8_t>(s));
      sum += s * s;
    }
    storeU16(b + 208, blockScale(rng, sigma, std::sqrt(341.5 * sum / 16)));
    return;
  }
  case Kind::TQ1_0:
    // Every byte is five (or four) valid base-3 digits.
    rng.fillBytes(b, 52);
    storeU16(b + 52, blockScale(rng, sigma, std::sqrt(2.0 / 3)));
    return;
  case Kind::TQ2_0:
    // 2-bit fields in {0, 1, 2} (ternary: 3 never occurs).
    for (int k = 0; k < 64; ++k) {
      int byte = 0;
      for (int f = 0; f < 4; ++f)
        byte |= rng.between(0, 2) << (2 * f);
      b[k] = static_cast<uint8_t>(byte);
    }
    storeU16(b + 64, blockScale(rng, sigma, std::sqrt(2.0 / 3)));
    return;
  }
}

} // namespace

const int8_t cachet::blocks::iq4nlLevels[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

float cachet::blocks::halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exp = (half >> 10) & 31, mant = half & 1023;
  if (exp == 31)
    return bitsToFloat(sign | 0x7f800000 | mant << 13);
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float v = static_cast<float>(mant) * 0x1.0p-24f;
    return sign ? -v : v;
  }
  return bitsToFloat(sign | (exp + 112) << 23 | mant << 13);
}

uint16_t cachet::blocks::floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t biased = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (biased == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  int32_t exp = static_cast<int32_t>(biased) - 127 + 15;
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000;
    int shift = 14 - exp;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1)))
      ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = static_cast<uint32_t>(exp) << 10 | mant >> 13;
  uint32_t rem = mant & 0x1fff;
  // A carry out of the mantissa bumps the exponent, up to infinity.
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t cachet::blocks::floatToBf16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

const std::vector<Format> &cachet::blocks::formats() {
  static const std::vector<Format> list = [] {
    std::vector<Format> l;
    for (const Entry &e : table)
      l.push_back(e.format);
    return l;
  }();
  return list;
}

const Format *cachet::blocks::findFormat(const std::string &name) {
  for (const Entry &e : table)
    if (name == e.format.name)
      return &e.format;
  return nullptr;
}

std::string cachet::blocks::formatList() {
  std::string s;
  for (const Entry &e : table)
    s += (s.empty() ? "" : ", ") + std::string(e.format.name);
  return s;
}

bool cachet::blocks::randomBlock(const std::string &format, Rng &rng,
                                 double sigma, uint8_t *block) {
  for (const Entry &e : table)
    if (format == e.format.name) {
      fillBlock(e.kind, rng, sigma, block);
      return true;
    }
  return false;
}
