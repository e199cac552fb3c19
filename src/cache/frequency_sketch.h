// FrequencySketch: how often each node was accessed lately, estimated in little memory
// (TinyLFU's sketch: Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
// Admission Policy", 2017). A count-min sketch of four rows of saturating 8-bit counters
// indexed by an XXH3 hash of the node's address; an increment raises only the rows that hold
// the minimum (conservative update), and after `window` increments every counter is halved,
// so the estimate follows the workload as it changes. An estimate is never below the true
// (decayed) count of a node, only above it by collisions.
//
// Blocked, as Caffeine's sketch is: a node's four counters lie in one 64-byte block (the
// hash picks the block, then one counter in each of its four 16-byte quarters, a quarter
// per row), so an increment or an estimate touches one cache line instead of four. The
// sketch has 16 bytes a cache frame and the pages stream through the core's caches, so its
// lines are rarely cached: an increment's misses were 11% of a cached DEX lookup's time
// (docs/results/dex-hit-path.md). Rows of two nodes in different blocks never collide; in
// one block (1 in blocks) each row collides with probability 1/16, all four with 1/16^4.
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
  static constexpr uint32_t kBlockCounters = 64;  // one cache line: row i's are [16 i, 16 i + 16)

  // `counters`: counters per row (rounded up to a power of two, at least 64: the rows share
  // counters / 16 blocks); `window`: increments between two halvings (at least 1).
  FrequencySketch(uint64_t counters, uint64_t window);

  struct Block;
  // Where a node's counters are: its block and the counter of each row in it.
  struct Counters {
    Block* block = nullptr;
    uint8_t index[kRows] = {};
  };
  // Locates `node`'s counters and asks for their cache line, so a caller with work to do
  // before it counts (a leaf to search) does not wait for it in Increment.
  Counters Locate(GlobalAddress node) const;
  void Increment(const Counters& at);
  void Increment(GlobalAddress node) { Increment(Locate(node)); }
  uint32_t Estimate(GlobalAddress node) const { return Estimate(Find(node)); }
  uint32_t Estimate(const Counters& at) const;

  uint64_t counters_per_row() const { return (block_mask_ + 1) * kPerQuarter; }
  uint64_t window() const { return window_; }
  uint64_t halvings() const { return halvings_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kPerQuarter = 16;  // a row's counters in one block
  Counters Find(GlobalAddress node) const;  // Locate without the prefetch
  void Halve();

  const uint64_t block_mask_;
  const uint64_t window_;
  std::unique_ptr<Block[]> blocks_;
  std::atomic<uint64_t> increments_{0};
  std::atomic<uint64_t> halvings_{0};
};

struct alignas(64) FrequencySketch::Block {
  static_assert(kRows * kPerQuarter == kBlockCounters, "a block holds one quarter per row");
  std::atomic<uint8_t> counters[kBlockCounters];
};

}  // namespace dmindex::cache
