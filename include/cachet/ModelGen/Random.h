//===- Random.h - the seeded generator of test weights and inputs -*- C++
//-*-===//
//
// splitmix64, and the generator of a named tensor, shared by cachet-gen's
// weights and inputs (ModelGen) and the random GGUF models (CachetGguf), so
// that the same seed gives the same values on every platform. Plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_MODELGEN_RANDOM_H
#define CACHET_MODELGEN_RANDOM_H

#include <cstdint>
#include <string>

namespace cachet {

/// splitmix64: small, fast and the same on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double uniform() {
    return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0;
  }
  /// Uniform in [lo, hi].
  int between(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  /// Fills `n` bytes at `p`, eight per draw.
  void fillBytes(uint8_t *p, int n) {
    for (int k = 0; k < n; k += 8) {
      uint64_t r = next();
      for (int j = 0; j < 8 && k + j < n; ++j)
        p[k + j] = static_cast<uint8_t>(r >> (8 * j));
    }
  }

private:
  uint64_t state;
};

/// The generator of the tensor called `name`: FNV-1a of the name mixed with
/// the seed, so its values depend on the seed and the name only.
inline Rng rngFor(uint64_t seed, const std::string &name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return Rng(seed * 0x9e3779b97f4a7c15ULL ^ h);
}

} // namespace cachet

#endif // CACHET_MODELGEN_RANDOM_H
