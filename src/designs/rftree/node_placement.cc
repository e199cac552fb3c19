#include "designs/rftree/node_placement.h"

namespace dmindex::designs::rftree {

Result<GlobalAddress> SpreadPlacer::Place(fabric::Endpoint& ep, alloc::NodeAllocator& allocator,
                                          uint8_t level, uint32_t bytes) {
  if (level == 0) return allocator.AllocateRoundRobin(ep, bytes);
  if (bytes != log_.block_bytes())
    return Status::InvalidArgument("search-layer log of " + std::to_string(log_.block_bytes()) +
                                   "-byte blocks asked for " + std::to_string(bytes) + " bytes");
  const auto node = static_cast<uint16_t>(next_node_.fetch_add(1, std::memory_order_relaxed) %
                                          allocator.memory_nodes());
  return log_.Append(ep, allocator, node);
}

void SpreadPlacer::Unplace(alloc::NodeAllocator& allocator, GlobalAddress addr, uint8_t level,
                           uint32_t bytes) {
  if (level == 0) allocator.Free(addr, bytes);
  else garbage_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dmindex::designs::rftree
