// Where a new node of the tree goes in the pool. The core asks here for every node it
// creates (splits, root growth, the first root, bulk load) and gives back the nodes it never
// published, so a design can place nodes by level: RF-tree appends internal nodes to a
// log-structured region read back in chunks and spreads leaves node by node over the memory
// servers. Without a placer the compute node's allocator cuts its current chunk.
#pragma once

#include <cstdint>

#include "alloc/node_allocator.h"
#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::tree {

class NodePlacer {
 public:
  virtual ~NodePlacer() = default;
  // A block of `bytes` for a node at `level`, taken through `ep`; `allocator` is the
  // compute node's. Fresh or reused memory: the caller writes the whole node before
  // publishing it.
  virtual Result<GlobalAddress> Place(fabric::Endpoint& ep, alloc::NodeAllocator& allocator,
                                      uint8_t level, uint32_t bytes) = 0;
  // A block Place gave that was never published (a lost race to install a root, a failed
  // bulk load): nobody can hold its address.
  virtual void Unplace(alloc::NodeAllocator& allocator, GlobalAddress addr, uint8_t level,
                       uint32_t bytes) = 0;
};

}  // namespace dmindex::tree
