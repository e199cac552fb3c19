#include "cache/frequency_sketch.h"

#include <algorithm>
#include <bit>

// Header-only use of the packaged xxHash (libxxhash-dev), as tree/node_check.cc does.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::cache {

FrequencySketch::FrequencySketch(uint64_t counters, uint64_t window)
    : mask_(std::bit_ceil(std::max<uint64_t>(counters, 64)) - 1),
      window_(std::max<uint64_t>(window, 1)),
      rows_(new std::atomic<uint8_t>[kRows * (mask_ + 1)]) {
  for (uint64_t i = 0; i < kRows * (mask_ + 1); ++i) rows_[i].store(0, std::memory_order_relaxed);
}

void FrequencySketch::Indices(GlobalAddress node, uint64_t (&idx)[kRows]) const {
  // Node addresses are aligned and clustered: one XXH3 of the address, split by double
  // hashing (h1 + i x h2, h2 odd) into one column per row.
  const uint64_t raw = node.raw();
  const XXH128_hash_t h = XXH3_128bits(&raw, sizeof raw);
  const uint64_t h2 = h.high64 | 1;
  for (int i = 0; i < kRows; ++i)
    idx[i] = static_cast<uint64_t>(i) * (mask_ + 1) + ((h.low64 + static_cast<uint64_t>(i) * h2) & mask_);
}

void FrequencySketch::Increment(GlobalAddress node) {
  uint64_t idx[kRows];
  Indices(node, idx);
  uint8_t v[kRows];
  uint8_t least = UINT8_MAX;
  for (int i = 0; i < kRows; ++i) {
    v[i] = rows_[idx[i]].load(std::memory_order_relaxed);
    least = std::min(least, v[i]);
  }
  if (least < UINT8_MAX) {
    // Conservative update: only the counters at the minimum grow; the others already
    // overcount by collisions.
    for (int i = 0; i < kRows; ++i)
      if (v[i] == least) rows_[idx[i]].store(static_cast<uint8_t>(least + 1), std::memory_order_relaxed);
  }
  // The thread that completes a window halves the sketch; increments racing with it may be lost.
  if ((increments_.fetch_add(1, std::memory_order_relaxed) + 1) % window_ == 0) Halve();
}

uint32_t FrequencySketch::Estimate(GlobalAddress node) const {
  uint64_t idx[kRows];
  Indices(node, idx);
  uint32_t least = UINT8_MAX;
  for (int i = 0; i < kRows; ++i) least = std::min<uint32_t>(least, rows_[idx[i]].load(std::memory_order_relaxed));
  return least;
}

void FrequencySketch::Halve() {
  for (uint64_t i = 0; i < kRows * (mask_ + 1); ++i)
    rows_[i].store(static_cast<uint8_t>(rows_[i].load(std::memory_order_relaxed) / 2), std::memory_order_relaxed);
  halvings_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dmindex::cache
