// FrequencySketch: how often each node was accessed lately, estimated in little memory
// (TinyLFU's sketch: Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
// Admission Policy", 2017). A count-min sketch of four rows of saturating 8-bit counters
// indexed by XXH3 hashes of the node's address; an increment raises only the rows that hold
// the minimum (conservative update), and after `window` increments every counter is halved,
// so the estimate follows the workload as it changes. An estimate is never below the true
// (decayed) count of a node, only above it by collisions.
//
// Shared by the threads of one cache: counters are relaxed atomics updated with a load and a
// store (not a read-modify-write), so racing increments may be lost. That only lowers
// estimates by the odd count; nothing depends on them being exact.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "dmindex/global_address.h"

namespace dmindex::cache {

class FrequencySketch {
 public:
  static constexpr int kRows = 4;

  // `counters`: counters per row (rounded up to a power of two, at least 64); `window`:
  // increments between two halvings (at least 1).
  FrequencySketch(uint64_t counters, uint64_t window);

  void Increment(GlobalAddress node);
  uint32_t Estimate(GlobalAddress node) const;

  uint64_t counters_per_row() const { return mask_ + 1; }
  uint64_t window() const { return window_; }
  uint64_t halvings() const { return halvings_.load(std::memory_order_relaxed); }

 private:
  void Indices(GlobalAddress node, uint64_t (&idx)[kRows]) const;
  void Halve();

  const uint64_t mask_;
  const uint64_t window_;
  std::unique_ptr<std::atomic<uint8_t>[]> rows_;  // kRows x (mask_ + 1), row after row
  std::atomic<uint64_t> increments_{0};
  std::atomic<uint64_t> halvings_{0};
};

}  // namespace dmindex::cache
