#include "designs/dex/offload.h"

namespace dmindex::designs::dex {

OffloadPolicy::OffloadPolicy(bool enabled, uint32_t max_level, double explore, double cost_factor,
                             uint64_t local_search_ns)
    : enabled_(enabled), max_level_(max_level), explore_(explore), cost_factor_(cost_factor),
      local_search_ns_(static_cast<double>(local_search_ns)) {}

void OffloadPolicy::Record(std::atomic<double>& avg, uint64_t ns) {
  constexpr double kAlpha = 2.0 / 51.0;
  const double old = avg.load(std::memory_order_relaxed);
  // First sample seeds the average. Racy updates lose a sample now and then: fine for an
  // estimate.
  avg.store(old == 0.0 ? double(ns) : old + kAlpha * (double(ns) - old), std::memory_order_relaxed);
}

bool OffloadPolicy::Decide(uint32_t level, std::mt19937_64& rng) const {
  if (!enabled_.load(std::memory_order_relaxed) || level > max_level_) return false;
  const double lp = offload_ns_.load(std::memory_order_relaxed);
  const double lo = read_ns_.load(std::memory_order_relaxed);
  // Without samples of one side, try it.
  bool offload;
  if (lp == 0.0) offload = true;
  else if (lo == 0.0) offload = false;
  else offload = lp < (level + 1) * (lo + local_search_ns_) * cost_factor_;
  const bool explore = std::uniform_real_distribution<double>(0, 1)(rng) < explore_;
  return explore ? !offload : offload;
}

}  // namespace dmindex::designs::dex
