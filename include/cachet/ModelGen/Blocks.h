//===- Blocks.h - ggml block formats and half floats for test data -*- C++
//-*-===//
//
// What the writers of test weights share (ModelGen's packed weight
// arguments, the random GGUF models of CachetGguf): IEEE half and bfloat16
// conversions, the ggml block formats cachet's dialect has a type for, and
// seeded random blocks of a chosen standard deviation. Plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_MODELGEN_BLOCKS_H
#define CACHET_MODELGEN_BLOCKS_H

#include "cachet/ModelGen/Random.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cachet {
namespace blocks {

/// IEEE half to float, exactly.
float halfToFloat(uint16_t half);

/// Float to IEEE half, rounded to nearest even.
uint16_t floatToHalf(float value);

/// Float to bfloat16, rounded to nearest even (NaN stays NaN).
uint16_t floatToBf16(float value);

/// iq4_nl's code book (ggml's kvalues_iq4nl).
extern const int8_t iq4nlLevels[16];

/// A ggml block format with a `!cachet.<name>` type.
struct Format {
  /// ggml's name, which is also the dialect's type mnemonic.
  const char *name;
  /// Values per block.
  int values;
  /// Bytes per block.
  int bytes;
};

/// Every block format of the dialect: q8_0, q4_0, q4_1, q5_0, q5_1,
/// iq4_nl, the k-quants q2_K .. q6_K and the ternary tq1_0, tq2_0.
const std::vector<Format> &formats();

/// The format called `name`, or null.
const Format *findFormat(const std::string &name);

/// The names of formats(), joined by ", ".
std::string formatList();

/// Fills one block of `format` (a name of formats()) at `block` with random
/// quants from `rng` whose decoded values have a standard deviation near
/// `sigma` and a mean near 0. Returns false for an unknown format.
bool randomBlock(const std::string &format, Rng &rng, double sigma,
                 uint8_t *block);

} // namespace blocks
} // namespace cachet

#endif // CACHET_MODELGEN_BLOCKS_H
