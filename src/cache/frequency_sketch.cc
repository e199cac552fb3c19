#include "cache/frequency_sketch.h"

#include <algorithm>
#include <bit>

// Header-only use of the packaged xxHash (libxxhash-dev), as tree/node_check.cc does.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::cache {

FrequencySketch::FrequencySketch(uint64_t counters, uint64_t window)
    : block_mask_(std::bit_ceil(std::max<uint64_t>(counters, 64)) / kPerQuarter - 1),
      window_(std::max<uint64_t>(window, 1)),
      blocks_(new Block[block_mask_ + 1]) {
  for (uint64_t b = 0; b <= block_mask_; ++b)
    for (auto& c : blocks_[b].counters) c.store(0, std::memory_order_relaxed);
}

FrequencySketch::Counters FrequencySketch::Find(GlobalAddress node) const {
  // Node addresses are aligned and clustered: one XXH3 of the address; its low bits pick the
  // block, four nibbles of its high half the counter of each row's quarter.
  const uint64_t raw = node.raw();
  const uint64_t h = XXH3_64bits(&raw, sizeof raw);
  Counters at;
  at.block = &blocks_[h & block_mask_];
  for (uint32_t i = 0; i < kRows; ++i)
    at.index[i] = static_cast<uint8_t>(i * kPerQuarter + ((h >> (32 + 4 * i)) & (kPerQuarter - 1)));
  return at;
}

FrequencySketch::Counters FrequencySketch::Locate(GlobalAddress node) const {
  const Counters at = Find(node);
  __builtin_prefetch(at.block, 1);
  return at;
}

void FrequencySketch::Increment(const Counters& at) {
  std::atomic<uint8_t>* c = at.block->counters;
  uint8_t v[kRows];
  uint8_t least = UINT8_MAX;
  for (int i = 0; i < kRows; ++i) {
    v[i] = c[at.index[i]].load(std::memory_order_relaxed);
    least = std::min(least, v[i]);
  }
  if (least < UINT8_MAX) {
    // Conservative update: only the counters at the minimum grow; the others already
    // overcount by collisions.
    for (int i = 0; i < kRows; ++i)
      if (v[i] == least) c[at.index[i]].store(static_cast<uint8_t>(least + 1), std::memory_order_relaxed);
  }
  // The thread that completes a window halves the sketch; increments racing with it may be lost.
  if ((increments_.fetch_add(1, std::memory_order_relaxed) + 1) % window_ == 0) Halve();
}

uint32_t FrequencySketch::Estimate(const Counters& at) const {
  uint32_t least = UINT8_MAX;
  for (int i = 0; i < kRows; ++i)
    least = std::min<uint32_t>(least, at.block->counters[at.index[i]].load(std::memory_order_relaxed));
  return least;
}

void FrequencySketch::Halve() {
  for (uint64_t b = 0; b <= block_mask_; ++b)
    for (auto& c : blocks_[b].counters)
      c.store(static_cast<uint8_t>(c.load(std::memory_order_relaxed) / 2), std::memory_order_relaxed);
  halvings_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dmindex::cache
