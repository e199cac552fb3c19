// Compute-side cache of internal nodes (Sherman's index cache). Leaves are never cached:
// they change on every write and would need coherence messages between compute nodes.
// Internal nodes need none: a stale cached node still points to a node whose low fence is
// unchanged (nodes never merge), so at worst the reader lands left of its key and follows
// sibling links (B-link), or sees fences that do not cover its key and restarts; either way it
// drops the stale entry so the next traversal refreshes it.
//
// Nodes are indexed per level by low fence, so a lookup finds the lowest cached level that
// covers a key and jumps straight to it: with level 1 cached, a lookup costs one READ (the
// leaf). Capacity is bounded in bytes; eviction is FIFO. Thread-safe (shared by a compute
// node's sessions).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "common/runtime.h"
#include "tree/internal_node.h"
#include "tree/slotted_internal.h"
#include "tree/routing_cache.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class InternalCache final : public RoutingCache<KV> {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Hit = typename RoutingCache<KV>::Hit;
  static constexpr uint8_t kMaxLevels = 32;

  InternalCache(uint64_t capacity_bytes, const NodeLayout<KV>& layout);

  // Finds the lowest cached node at a level >= min_level (>= 1) whose fences cover `key`.
  bool FindChild(KeyRef key, uint8_t min_level, Hit* hit) override;
  bool FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                   std::vector<GlobalAddress>* leaves) override;
  // Caches a validated internal node image, replacing cached nodes of its level whose
  // ranges overlap it.
  void Insert(GlobalAddress addr, const NodeHeader<KV>& h, const std::byte* image) override;
  // A cached node whose child split or went stale is dropped; the next traversal reads
  // (and caches) the current one.
  void MovedRight(const Hit& hit, KeyRef key, uint32_t) override {
    Invalidate(hit.node, hit.level, key);
  }
  void Stale(const Hit& hit, KeyRef key) override { Invalidate(hit.node, hit.level, key); }
  // Drops the node at `addr` cached at `level` for `key` (found stale).
  void Invalidate(GlobalAddress addr, uint8_t level, KeyRef key);

  uint64_t hits() const override { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const override { return misses_.load(std::memory_order_relaxed); }
  uint64_t bytes() const override;

 private:
  struct Node {
    GlobalAddress addr;
    uint64_t seq;  // insertion number: tells a FIFO item of this node from older ones
    NodeHeader<KV> header;
    std::unique_ptr<std::byte[]> image;
  };
  using LevelMap = std::map<Key, Node, std::less<>>;  // by low fence; ranges disjoint
  struct FifoItem {
    uint8_t level;
    Key low;
    uint64_t seq;
  };
  bool Live(const FifoItem& item) const;
  typename LevelMap::iterator Covering(LevelMap& m, KeyRef key);
  void EvictLocked();
  void Erase(uint8_t level, typename LevelMap::iterator it);

  const uint64_t capacity_bytes_;
  const uint32_t node_bytes_;
  const uint64_t bytes_per_node_;
  const typename KV::InternalCodec codec_;
  mutable runtime::SharedMutex mu_;
  std::array<LevelMap, kMaxLevels> levels_;
  std::deque<FifoItem> fifo_;  // insertion order; items of replaced nodes are skipped
  uint64_t nodes_ = 0;
  uint64_t next_seq_ = 0;
  std::atomic<uint64_t> hits_{0}, misses_{0};
};

}  // namespace dmindex::tree
