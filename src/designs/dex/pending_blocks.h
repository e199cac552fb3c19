// Value blocks that DEX's cached writes unlinked from a leaf whose image in the pool may still
// name them. An owned leaf changes in its owner's cache and reaches the pool only when it is
// written back (docs/DEX.md, "What may reach the pool"), so after an update or delete of an
// out-of-line value the old block is no longer referenced by the cached leaf but still by the
// pool's older image of it - which a process taking over after a crash, or the offload
// handler after an eviction, would read. Such a block is kept here, by the leaf's address,
// until a write-back of that leaf has landed (NodePages::WriteBack), and only then retired
// into the core's lease-based reuse (tree/retired_blocks.h: reused 2 x value_lease later).
//
// Every write-back of a leaf happens under a latch that excludes the leaf's writers, and a
// writer adds its block under the leaf's exclusive latch, together with its change to the
// page: so every block taken for a write-back belongs to a change that write-back carries.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/runtime.h"
#include "dmindex/global_address.h"
#include "tree/value_block.h"

namespace dmindex::designs::dex {

class PendingBlocks {
 public:
  void Add(GlobalAddress leaf, const tree::ValueBlockRef& block) {
    if (block.is_null()) return;
    std::lock_guard lock(mu_);
    blocks_.emplace(leaf.raw(), block);
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  // Moves the blocks waiting for `leaf` to *out (the caller has just written the leaf back,
  // or overwritten it with a dead image).
  void TakeFor(GlobalAddress leaf, std::vector<tree::ValueBlockRef>* out) {
    // Without out-of-line values nothing is ever added: no lock on the write-back path.
    if (count_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(mu_);
    auto [begin, end] = blocks_.equal_range(leaf.raw());
    for (auto it = begin; it != end; ++it) out->push_back(it->second);
    count_.fetch_sub(static_cast<size_t>(std::distance(begin, end)), std::memory_order_relaxed);
    blocks_.erase(begin, end);
  }
  size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<size_t> count_{0};
  runtime::Mutex mu_;
  std::unordered_multimap<uint64_t, tree::ValueBlockRef> blocks_;
};

}  // namespace dmindex::designs::dex
