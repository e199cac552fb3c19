// MappingTable: remote node address -> the local frame caching it (or registering that a
// thread is loading it). A concurrent hash map split into independently latched shards, so
// lookups from many threads touch different cache lines. Lookups happen only on the slow
// path: swizzled pointers bypass the table for cached paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "common/runtime.h"
#include "dmindex/global_address.h"

namespace dmindex::cache {

struct BufferFrame;

class MappingTable {
 public:
  // `expected_entries` sizes the shards so they rarely rehash.
  explicit MappingTable(size_t expected_entries);

  BufferFrame* Lookup(GlobalAddress addr) const;
  // Inserts addr -> frame unless addr is present; returns the frame already there, or null
  // if the insert happened.
  BufferFrame* TryInsert(GlobalAddress addr, BufferFrame* frame);
  // Removes addr only if it still maps to `frame`; true if it did.
  bool Erase(GlobalAddress addr, BufferFrame* frame);
  size_t size() const;

 private:
  struct alignas(64) Shard {
    mutable runtime::SharedMutex mu;
    std::unordered_map<uint64_t, BufferFrame*> map;
  };
  Shard& ShardFor(GlobalAddress addr) const;

  static constexpr size_t kShards = 64;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace dmindex::cache
