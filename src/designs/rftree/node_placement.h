// Where RF-tree puts its nodes (SPREAD section 3.2): internal nodes are appended to the
// search-layer log (alloc/append_log.h), each on the next memory node in turn, so the search
// layer can be read back in a few large READs; leaves go to the memory nodes round robin,
// node by node, so that load spreads evenly however the keys are ordered.
#pragma once

#include <atomic>
#include <cstdint>

#include "alloc/append_log.h"
#include "tree/node_placer.h"

namespace dmindex::designs::rftree {

class SpreadPlacer final : public tree::NodePlacer {
 public:
  explicit SpreadPlacer(alloc::AppendLog& log) : log_(log) {}

  Result<GlobalAddress> Place(fabric::Endpoint& ep, alloc::NodeAllocator& allocator, uint8_t level,
                              uint32_t bytes) override;
  // An internal node that was never published (a lost root-growth race) stays in the log
  // as garbage: the log never reuses a block, so no address changes meaning. A refresh reads
  // it (it validates) but no walk reaches it: the cache only follows pointers from the root.
  void Unplace(alloc::NodeAllocator& allocator, GlobalAddress addr, uint8_t level,
               uint32_t bytes) override;

  uint64_t garbage_blocks() const { return garbage_.load(std::memory_order_relaxed); }

 private:
  alloc::AppendLog& log_;
  std::atomic<uint32_t> next_node_{0};
  std::atomic<uint64_t> garbage_{0};
};

}  // namespace dmindex::designs::rftree
