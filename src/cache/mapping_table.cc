#include "cache/mapping_table.h"

#include <functional>
#include <mutex>

namespace dmindex::cache {

MappingTable::MappingTable(size_t expected_entries) : shards_(new Shard[kShards]) {
  for (size_t i = 0; i < kShards; ++i) shards_[i].map.reserve(expected_entries / kShards + 1);
}

MappingTable::Shard& MappingTable::ShardFor(GlobalAddress addr) const {
  // The top bits of the Fibonacci hash are the well-mixed ones.
  return shards_[std::hash<GlobalAddress>{}(addr) >> 58];
}
static_assert(64 == (size_t{1} << 6), "ShardFor takes the top 6 hash bits");

BufferFrame* MappingTable::Lookup(GlobalAddress addr) const {
  Shard& s = ShardFor(addr);
  std::shared_lock lock(s.mu);
  auto it = s.map.find(addr.raw());
  return it == s.map.end() ? nullptr : it->second;
}

BufferFrame* MappingTable::TryInsert(GlobalAddress addr, BufferFrame* frame) {
  Shard& s = ShardFor(addr);
  std::unique_lock lock(s.mu);
  auto [it, inserted] = s.map.try_emplace(addr.raw(), frame);
  return inserted ? nullptr : it->second;
}

bool MappingTable::Erase(GlobalAddress addr, BufferFrame* frame) {
  Shard& s = ShardFor(addr);
  std::unique_lock lock(s.mu);
  auto it = s.map.find(addr.raw());
  if (it == s.map.end() || it->second != frame) return false;
  s.map.erase(it);
  return true;
}

size_t MappingTable::size() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::shared_lock lock(shards_[i].mu);
    n += shards_[i].map.size();
  }
  return n;
}

}  // namespace dmindex::cache
