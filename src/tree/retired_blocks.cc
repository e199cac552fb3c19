#include "tree/retired_blocks.h"

#include <mutex>

namespace dmindex::tree {

void RetiredBlocks::Retire(GlobalAddress addr, uint32_t bytes) {
  const auto now = runtime::Now();
  std::lock_guard lock(mu_);
  items_.push_back({addr, bytes, now});
  bytes_ += bytes;
}

void RetiredBlocks::Reclaim(alloc::NodeAllocator& allocator) {
  const auto now = runtime::Now();
  std::lock_guard lock(mu_);
  while (!items_.empty() && now - items_.front().retired >= grace_) {
    allocator.Free(items_.front().addr, items_.front().bytes);
    bytes_ -= items_.front().bytes;
    items_.pop_front();
  }
}

uint64_t RetiredBlocks::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace dmindex::tree
