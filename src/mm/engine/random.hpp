// Small, fast, seedable generator for the engine's own choices (bucket seeds,
// iteration starts, tie breaks). Not for anything security related.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "mm/engine/stable_hash.hpp"

namespace mm {

// xoshiro256** seeded through SplitMix64, satisfying UniformRandomBitGenerator.
class rng {
 public:
  using result_type = std::uint64_t;

  explicit rng(std::uint64_t seed = 0x9e3779b97f4a7c15ull) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      s = mix64(seed);
    }
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) { return reduce_range((*this)(), n); }

  // Uniform double in [0, 1).
  double unit() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  // A standard normal draw. Box-Muller on this generator keeps the stream
  // the same whatever the standard library, unlike std::normal_distribution.
  double normal() {
    const double u1 = std::max(unit(), 1e-300), u2 = unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * pi * u2);
  }

 private:
  static constexpr double pi = 3.14159265358979323846;
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace mm
