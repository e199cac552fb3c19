#include <algorithm>
#include <bit>

#include "designs/dex/offload.h"

namespace dmindex::designs::dex {

namespace {
constexpr uint64_t kSlotsPerFrame = 4;
constexpr uint64_t kMinSlots = 1024;
constexpr uint64_t kMaxSlots = uint64_t{1} << 24;  // 16 MB for caches of over 4 M frames
}  // namespace

MissCounts::MissCounts(uint64_t frames)
    : counts_(std::bit_ceil(std::clamp(frames * kSlotsPerFrame, kMinSlots, kMaxSlots))), mask_(counts_.size() - 1) {}

size_t MissCounts::Slot(GlobalAddress node) const {
  // Node addresses are node-size aligned and clustered: mix all their bits (splitmix64's finalizer).
  uint64_t x = node.raw();
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<size_t>((x ^ (x >> 31)) & mask_);
}

void MissCounts::Count(GlobalAddress node) {
  std::atomic<uint8_t>& c = counts_[Slot(node)];
  const uint8_t n = c.load(std::memory_order_relaxed);
  if (n < UINT8_MAX) c.store(static_cast<uint8_t>(n + 1), std::memory_order_relaxed);  // racy: an estimate
  // The thread that completes a window halves the table; counts racing with it may be lost.
  if ((counted_.fetch_add(1, std::memory_order_relaxed) + 1) % counts_.size() == 0) Halve();
}

uint32_t MissCounts::Of(GlobalAddress node) const { return counts_[Slot(node)].load(std::memory_order_relaxed); }

void MissCounts::Halve() {
  for (auto& c : counts_) c.store(static_cast<uint8_t>(c.load(std::memory_order_relaxed) / 2), std::memory_order_relaxed);
}

OffloadPolicy::OffloadPolicy(bool enabled, uint32_t max_level, double explore, double cost_factor,
                             uint64_t local_search_ns, uint64_t frames, bool frequency)
    : enabled_(enabled), frequency_(frequency), max_level_(max_level), explore_(explore), cost_factor_(cost_factor),
      local_search_ns_(static_cast<double>(local_search_ns)), misses_(frames) {}

void OffloadPolicy::Record(std::atomic<double>& avg, uint64_t ns) {
  constexpr double kAlpha = 2.0 / 51.0;
  const double old = avg.load(std::memory_order_relaxed);
  // First sample seeds the average. Racy updates lose a sample now and then: fine for an
  // estimate.
  avg.store(old == 0.0 ? double(ns) : old + kAlpha * (double(ns) - old), std::memory_order_relaxed);
}

bool OffloadPolicy::Hot(uint32_t level, GlobalAddress node) const {
  if (frequency_ && level == 0) return false;  // the cache's sketch judges leaves
  const uint32_t n = misses_.Of(node);
  if (n < 2) return false;
  const double lp = offload_ns_.load(std::memory_order_relaxed);
  const double lo = read_ns_.load(std::memory_order_relaxed);
  if (lo == 0.0) return false;  // no READ measured yet (the first miss of all reads one)
  const double read_path = (level + 1) * (lo + local_search_ns_) * cost_factor_;
  const double per_miss = lp == 0.0 ? lo + local_search_ns_ : std::min(lp, lo + local_search_ns_);
  return n * per_miss >= read_path;
}

bool OffloadPolicy::Decide(uint32_t level, GlobalAddress node, std::mt19937_64& rng) const {
  if (!enabled_.load(std::memory_order_relaxed) || level > max_level_) return false;
  if (Hot(level, node)) return false;
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
