// A small, fast, portable random source for workload generation.
//
// Operation streams must be bit-identical for every design (and every build) that runs with
// the same seed, so we avoid std::*_distribution (whose algorithms are implementation-
// defined) and derive doubles and bounded integers from raw 64-bit draws ourselves.
#pragma once

#include <cstdint>

namespace dmindex::bench {

// SplitMix64 finaliser: a bijection on 64-bit words with good avalanche; used to derive
// independent per-thread seeds from (seed, thread id).
inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// xoshiro256** (Blackman & Vigna): fast, 256-bit state, passes BigCrush.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& s : s_) s = seed = Mix64(seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1), 53 bits of precision.
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) for n > 0 (Lemire's multiply-shift; bias below 2^-64 * n).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace dmindex::bench
