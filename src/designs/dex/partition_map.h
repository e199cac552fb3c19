// Logical partitioning (DEX §4): compute node i owns the keys [B_i, B_{i+1}) (B_0 = -inf,
// B_n = +inf). A tree node whose fences lie inside one partition is owned by that compute
// node alone: only it reads and writes the node, through its cache and local latches. A node
// whose fences cross a boundary is shared: remote locks, write-through, refresh on staleness.
//
// Immutable: repartitioning installs a new map. The map is also kept in the memory pool
// (partition_store.h, as byte strings) so every process opening the index routes alike;
// `version` is the stored copy's. Keys are a format's (dex_keys.h): u64 integers, or byte
// strings, where the empty string is -inf as a low fence and +inf as a high one
// (tree/key_traits.h: Keys::Below).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "designs/dex/dex_keys.h"

namespace dmindex::designs::dex {

template <typename Keys>
class PartitionMap {
 public:
  using Key = typename Keys::Key;
  using KeyRef = typename Keys::KeyRef;
  static constexpr uint32_t kMaxParts = 64;

  // `boundaries`: parts - 1 ascending keys. With partitioning off, every node is shared.
  PartitionMap(std::vector<Key> boundaries, bool partitioned, uint64_t version = 0)
      : boundaries_(std::move(boundaries)), partitioned_(partitioned), version_(version) {}

  uint32_t parts() const { return static_cast<uint32_t>(boundaries_.size() + 1); }
  bool partitioned() const { return partitioned_; }
  uint64_t version() const { return version_; }
  const std::vector<Key>& boundaries() const { return boundaries_; }
  // The compute node that handles `key`.
  uint32_t Owner(KeyRef key) const {
    return static_cast<uint32_t>(
        std::upper_bound(boundaries_.begin(), boundaries_.end(), key,
                         [](KeyRef k, const Key& b) { return k < b; }) - boundaries_.begin());
  }
  // The one compute node owning all of [low, high) (high exclusive; the fences may be the
  // format's -inf and +inf), or nothing if the range crosses a boundary.
  std::optional<uint32_t> ExclusiveOwner(KeyRef low, const Key& high) const {
    if (!partitioned_) return std::nullopt;
    const uint32_t owner = Owner(low);
    // Partition `owner` ends at boundaries_[owner] (exclusive), or +inf for the last one.
    if (owner < boundaries_.size() && Keys::Below(boundaries_[owner], high)) return std::nullopt;
    return owner;
  }
  bool Owns(uint32_t node, KeyRef low, const Key& high) const {
    auto o = ExclusiveOwner(low, high);
    return o.has_value() && *o == node;
  }
  // Partition i's keys: [Begin(i), End(i)), half-open; no End: to the end of the key space.
  // Empty when End(i) <= Begin(i).
  Key Begin(uint32_t i) const { return i == 0 ? tree::PublicKeys<Keys>::Lowest() : boundaries_[i - 1]; }
  std::optional<Key> End(uint32_t i) const {
    return i < boundaries_.size() ? std::optional<Key>(boundaries_[i]) : std::nullopt;
  }
  bool Empty(uint32_t i) const { return End(i) && !(Begin(i) < *End(i)); }
  // "[begin, end)" for messages.
  std::string RangeText(uint32_t i) const {
    std::string s;  // appended piece by piece: "[" + ... trips GCC 12's -Wrestrict
    s.append("[").append(tree::PublicKeys<Keys>::Text(Begin(i))).append(", ");
    return s.append(End(i) ? tree::PublicKeys<Keys>::Text(*End(i)) : "end").append(")");
  }
  // Whether compute node i serves the same keys under both maps.
  bool SameRange(const PartitionMap& other, uint32_t i) const {
    return Begin(i) == other.Begin(i) && End(i) == other.End(i);
  }

 private:
  std::vector<Key> boundaries_;
  bool partitioned_;
  uint64_t version_;
};

}  // namespace dmindex::designs::dex
