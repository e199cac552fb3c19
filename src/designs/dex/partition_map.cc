#include "designs/dex/partition_map.h"

#include <algorithm>

namespace dmindex::designs::dex {

PartitionMap::PartitionMap(std::vector<Key> boundaries, bool partitioned, uint64_t version)
    : boundaries_(std::move(boundaries)), partitioned_(partitioned), version_(version) {}

std::vector<Key> PartitionMap::EqualWidth(uint32_t parts, Key key_space) {
  std::vector<Key> b;
  const Key width = std::max<Key>(1, key_space / parts);
  for (uint32_t i = 1; i < parts; ++i) b.push_back(std::min<Key>(kMaxKey, kMinKey + width * i));
  for (size_t i = 1; i < b.size(); ++i) b[i] = std::max(b[i], b[i - 1] + 1);
  return b;
}

uint32_t PartitionMap::Owner(Key key) const {
  return static_cast<uint32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(), key) -
                               boundaries_.begin());
}

std::optional<uint32_t> PartitionMap::ExclusiveOwner(Key low, Key high) const {
  if (!partitioned_) return std::nullopt;
  const uint32_t owner = Owner(low);
  // Partition `owner` ends at boundaries_[owner] (exclusive), or +inf for the last one.
  if (owner < boundaries_.size() && high > boundaries_[owner]) return std::nullopt;
  return owner;
}

bool PartitionMap::SameRange(const PartitionMap& other, uint32_t i) const {
  return Begin(i) == other.Begin(i) && End(i) == other.End(i);
}

std::string PartitionMap::RangeText(uint32_t i) const {
  std::string s;  // appended piece by piece: "[" + std::to_string(...) trips GCC 12's -Wrestrict
  s.append("[").append(std::to_string(Begin(i))).append(", ");
  return s.append(End(i) ? std::to_string(*End(i)) : "end").append(")");
}

}  // namespace dmindex::designs::dex
