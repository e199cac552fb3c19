// Zipfian rank generator (Gray et al., "Quickly generating billion-record synthetic
// databases", SIGMOD'94), the algorithm YCSB's ZipfianGenerator uses, plus YCSB's FNV
// scrambling that spreads the hot ranks over the key space.
#pragma once

#include <cstdint>

#include "bench/random.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// zeta(n, theta) = sum_{i=1..n} i^-theta. Exact up to a million terms, Euler-Maclaurin for
// the tail beyond (relative error < 1e-12), so 200 M items cost milliseconds, not seconds.
double Zeta(uint64_t n, double theta);

// theta must lie in [0, 1): the method divides by 1 - theta.
Status ValidateTheta(double theta);

// Ranks in [0, items): rank r has probability proportional to (r+1)^-theta.
// The item count may grow (YCSB's "latest" distribution grows it on every insert); zeta is
// then extended incrementally rather than recomputed.
class ZipfianGenerator {
 public:
  // `zeta_items` must be Zeta(items, theta); pass it when several generators share one n.
  ZipfianGenerator(uint64_t items, double theta, double zeta_items);
  ZipfianGenerator(uint64_t items, double theta)
      : ZipfianGenerator(items, theta, Zeta(items, theta)) {}

  uint64_t Next(Rng& rng) const;
  void Grow(uint64_t items);  // items must not shrink
  uint64_t items() const { return items_; }
  double theta() const { return theta_; }

 private:
  void DeriveConstants();

  uint64_t items_;
  double theta_;
  double zeta_items_;
  double alpha_ = 0, eta_ = 0, half_pow_theta_ = 0;
};

// YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of `value`, made
// non-negative as Java's Math.abs of the signed result.
uint64_t FnvHash64(uint64_t value);

// YCSB's ScrambledZipfianGenerator shape: a zipfian rank hashed into [0, items), so the hot
// items are scattered over the key space instead of clustered at its start.
class ScrambledZipfian {
 public:
  ScrambledZipfian(uint64_t items, double theta, double zeta_items)
      : zipf_(items, theta, zeta_items) {}
  uint64_t Next(Rng& rng) const { return FnvHash64(zipf_.Next(rng)) % zipf_.items(); }

 private:
  ZipfianGenerator zipf_;
};

}  // namespace dmindex::bench
