#include "bench/zipfian.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace dmindex::bench {
namespace {

constexpr uint64_t kExactTerms = 1'000'000;

// sum_{i=from+1..to} i^-theta
double ExactSum(uint64_t from, uint64_t to, double theta) {
  double sum = 0;
  for (uint64_t i = from + 1; i <= to; ++i) sum += std::pow(static_cast<double>(i), -theta);
  return sum;
}

// sum_{i=a+1..b} i^-theta for large a by Euler-Maclaurin: integral plus endpoint and first
// derivative corrections. With a >= 1e6 the next term is below 1e-24.
double TailSum(uint64_t a_int, uint64_t b_int, double theta) {
  const double a = static_cast<double>(a_int), b = static_cast<double>(b_int);
  auto f = [theta](double x) { return std::pow(x, -theta); };
  auto df = [theta](double x) { return -theta * std::pow(x, -theta - 1); };
  const double integral = theta == 1.0 ? std::log(b / a)
                                       : (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  const double sum_a_to_b = integral + (f(a) + f(b)) / 2 + (df(b) - df(a)) / 12;
  return sum_a_to_b - f(a);
}

// sum_{i=from+1..to} i^-theta, exact for the first kExactTerms indices.
double PartialZeta(uint64_t from, uint64_t to, double theta) {
  if (to <= from) return 0;
  if (to <= kExactTerms) return ExactSum(from, to, theta);
  const uint64_t split = std::max(from, kExactTerms);
  return ExactSum(from, split, theta) + TailSum(split, to, theta);
}

}  // namespace

double Zeta(uint64_t n, double theta) { return PartialZeta(0, n, theta); }

Status ValidateTheta(double theta) {
  if (!(theta >= 0.0 && theta < 1.0))
    return Status::InvalidArgument("zipfian theta must be in [0, 1), got " + std::to_string(theta));
  return Status::Ok();
}

ZipfianGenerator::ZipfianGenerator(uint64_t items, double theta, double zeta_items)
    : items_(items), theta_(theta), eta_items_(items), zeta_items_(zeta_items) {
  DeriveConstants();
}

void ZipfianGenerator::DeriveConstants() {
  alpha_ = 1.0 / (1.0 - theta_);
  half_pow_theta_ = std::pow(0.5, theta_);
  const double zeta2 = 1.0 + half_pow_theta_;
  // With two or fewer items the first two branches of Next() cover every draw.
  eta_ = items_ <= 2 ? 0.0
                     : (1.0 - std::pow(2.0 / static_cast<double>(eta_items_), 1.0 - theta_)) /
                           (1.0 - zeta2 / zeta_items_);
}

void ZipfianGenerator::Grow(uint64_t items) {
  if (items <= items_) return;
  zeta_items_ += PartialZeta(items_, items, theta_);
  items_ = items;
  DeriveConstants();
}

uint64_t ZipfianGenerator::Next(Rng& rng) const {
  if (items_ <= 1) return 0;
  const double u = rng.NextDouble();
  const double uz = u * zeta_items_;
  if (uz < 1.0) return 0;
  if (uz < 1.0 + half_pow_theta_) return 1;
  const double r = static_cast<double>(items_) * std::pow(eta_ * u - eta_ + 1.0, alpha_);
  return std::min(static_cast<uint64_t>(r), items_ - 1);
}

uint64_t FnvHash64(uint64_t value) {
  constexpr uint64_t kOffsetBasis = 0xCBF29CE484222325ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t hash = kOffsetBasis;
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xff;
    hash *= kPrime;
    value >>= 8;
  }
  // Java's Math.abs on the signed value (Long.MIN_VALUE stays as is, as in Java).
  return static_cast<int64_t>(hash) < 0 ? ~hash + 1 : hash;
}

}  // namespace dmindex::bench
