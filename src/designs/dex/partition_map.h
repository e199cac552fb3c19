// Logical partitioning (DEX §4): compute node i owns the keys [B_i, B_{i+1}) (B_0 = -inf,
// B_n = +inf). A tree node whose fences lie inside one partition is owned by that compute
// node alone: only it reads and writes the node, through its cache and local latches. A node
// whose fences cross a boundary is shared: remote locks, write-through, refresh on staleness.
//
// Immutable: repartitioning installs a new map. The map is also kept in the memory pool
// (partition_store.h) so every process opening the index routes alike; `version` is the
// stored copy's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "designs/dex/dex_keys.h"
#include "dmindex/status.h"

namespace dmindex::designs::dex {

class PartitionMap {
 public:
  static constexpr uint32_t kMaxParts = 64;

  // `boundaries`: parts - 1 ascending keys. With partitioning off, every node is shared.
  PartitionMap(std::vector<Key> boundaries, bool partitioned, uint64_t version = 0);
  static std::vector<Key> EqualWidth(uint32_t parts, Key key_space);

  uint32_t parts() const { return static_cast<uint32_t>(boundaries_.size() + 1); }
  bool partitioned() const { return partitioned_; }
  uint64_t version() const { return version_; }
  const std::vector<Key>& boundaries() const { return boundaries_; }
  // The compute node that handles `key`.
  uint32_t Owner(Key key) const;
  // The one compute node owning all of [low, high) (high exclusive; fences may be the
  // sentinels 0 and 2^64-1), or nothing if the range crosses a boundary.
  std::optional<uint32_t> ExclusiveOwner(Key low, Key high) const;
  bool Owns(uint32_t node, Key low, Key high) const {
    auto o = ExclusiveOwner(low, high);
    return o.has_value() && *o == node;
  }
  // Partition i's keys: [Begin(i), End(i)), half-open; no End: to the end of the key space.
  // Empty when End(i) <= Begin(i).
  Key Begin(uint32_t i) const { return i == 0 ? kMinKey : boundaries_[i - 1]; }
  std::optional<Key> End(uint32_t i) const {
    return i < boundaries_.size() ? std::optional<Key>(boundaries_[i]) : std::nullopt;
  }
  bool Empty(uint32_t i) const { return End(i) && *End(i) <= Begin(i); }
  // "[begin, end)" for messages.
  std::string RangeText(uint32_t i) const;
  // Whether compute node i serves the same keys under both maps.
  bool SameRange(const PartitionMap& other, uint32_t i) const;

 private:
  std::vector<Key> boundaries_;
  bool partitioned_;
  uint64_t version_;
};

}  // namespace dmindex::designs::dex
