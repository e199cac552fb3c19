// RetiredNodes: remote blocks of nodes that merges took out of the tree, per compute node,
// waiting to be reused. They are reused only for nodes this compute node creates in its own
// cache (splits in dex_split.cc), never handed to the shared allocator, whose other users
// (the core's remote splits, root growth) publish nodes remotely; dex_merge.cc explains why
// that matters for stale pointers.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/runtime.h"
#include "dmindex/global_address.h"

namespace dmindex::designs::dex {

class RetiredNodes {
 public:
  void Put(GlobalAddress block) {
    std::lock_guard lock(mu_);
    blocks_.push_back(block);
  }
  // A retired block on `memory_node` (subtrees stay on one server), if any.
  bool Take(uint16_t memory_node, GlobalAddress* out) {
    std::lock_guard lock(mu_);
    for (size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].node() != memory_node) continue;
      *out = blocks_[i];
      blocks_[i] = blocks_.back();
      blocks_.pop_back();
      return true;
    }
    return false;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return blocks_.size();
  }

  // Counters for tests and the docs' measurements.
  std::atomic<uint64_t> merges{0};       // pairs of siblings merged (any level)
  std::atomic<uint64_t> shared_merges{0};  // of which under a shared parent (§7's rule)
  std::atomic<uint64_t> root_shrinks{0};  // tree height reductions
  std::atomic<uint64_t> reused{0};       // retired blocks handed to new nodes

 private:
  mutable runtime::Mutex mu_;
  std::vector<GlobalAddress> blocks_;
};

}  // namespace dmindex::designs::dex
