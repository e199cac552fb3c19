// Value blocks a compute node's writers unlinked from their leaves, waiting out a grace
// period before the allocator hands them out again (value_store.h says why the period makes
// reuse safe for readers that are still reading them: they give up first).
#pragma once

#include <cstdint>
#include <deque>

#include "alloc/node_allocator.h"
#include "common/runtime.h"
#include "dmindex/global_address.h"

namespace dmindex::tree {

class RetiredBlocks {
 public:
  explicit RetiredBlocks(runtime::Clock::duration grace) : grace_(grace) {}

  // `addr` (an allocation of `bytes`) is no longer referenced by any leaf, as of now.
  void Retire(GlobalAddress addr, uint32_t bytes);
  // Frees every block retired at least the grace period ago.
  void Reclaim(alloc::NodeAllocator& allocator);
  // Bytes waiting.
  uint64_t bytes() const;

 private:
  struct Item {
    GlobalAddress addr;
    uint32_t bytes;
    runtime::Clock::time_point retired;
  };
  const runtime::Clock::duration grace_;
  mutable runtime::Mutex mu_;
  std::deque<Item> items_;  // in retirement order
  uint64_t bytes_ = 0;
};

}  // namespace dmindex::tree
