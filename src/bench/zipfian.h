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
// then extended incrementally rather than recomputed, and eta keeps the item count the
// generator was made with - exactly what YCSB's ZipfianGenerator.nextLong(itemcount) does.
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
  const uint64_t eta_items_;  // the item count at construction (see above)
  double zeta_items_;
  double alpha_ = 0, eta_ = 0, half_pow_theta_ = 0;
};

// YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of `value`, made
// non-negative as Java's Math.abs of the signed result.
uint64_t FnvHash64(uint64_t value);

}  // namespace dmindex::bench
