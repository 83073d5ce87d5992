// A small deterministic random generator (SplitMix64): the same numbers on every
// platform and library version, unlike std:: distributions.
#pragma once

#include <cstdint>

namespace taso {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
  }
  uint32_t NextU32() { return static_cast<uint32_t>(Next() >> 32); }

 private:
  uint64_t state_;
};

}  // namespace taso
