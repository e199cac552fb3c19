// NodeAllocator: compute-side allocation of index nodes from remote memory.
//
// Memory servers hand out large chunks by RPC (rare: a weak server core must not sit on the
// allocation path); compute processes cut them into aligned blocks locally. Freed blocks go
// to a per-size free list and are handed out again. Chunks are not returned one by one:
// blocks freed by one compute node are reused by that compute node. An allocator working
// for an index names the index's owner tag (alloc/catalog.h) in every chunk it takes, so
// that dropping the index gives all of them back at once (MemoryNode::FreeOwnedChunks).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/runtime.h"
#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::alloc {

struct NodeAllocatorOptions {
  uint32_t alignment = 64;  // a cache line: node headers never straddle lines
  uint64_t owner = 0;       // the index's owner tag written into its chunks (0: none)
};

// One per logical compute node; thread-safe.
class NodeAllocator {
 public:
  explicit NodeAllocator(uint16_t memory_nodes, NodeAllocatorOptions options = {});

  // A block of `bytes` (rounded up to the alignment) on some memory node; successive chunks
  // are taken round robin from the nodes. Fresh memory is zero; a reused block holds stale
  // bytes, so callers write a whole node before publishing it. OutOfSpace when all are full.
  Result<GlobalAddress> Allocate(fabric::Endpoint& ep, uint32_t bytes);
  // The same, on one given memory node (DEX places whole subtrees on one server).
  Result<GlobalAddress> AllocateOn(fabric::Endpoint& ep, uint16_t node, uint32_t bytes);
  // The same, each call on the next memory node (RF-tree spreads its leaves node by node;
  // Allocate spreads 32 MB chunks). Full nodes are skipped; OutOfSpace when all are full.
  Result<GlobalAddress> AllocateRoundRobin(fabric::Endpoint& ep, uint32_t bytes);

  // Makes a block available again. It must no longer be reachable by new readers; readers
  // still holding its address must detect reuse by validating what they read (fence keys).
  void Free(GlobalAddress addr, uint32_t bytes);

  // A memory server that cuts its own node's chunks and restarts on a persistent pool
  // (XStore's server, designs/xstore/server_memory.h) carries on cutting its predecessor's
  // chunk instead of leaking its tail. `journal` is called under the allocator's lock after
  // every block cut from a chunk, with where the next one starts, before the block is handed
  // out; Resume makes [next, next + left) on next.node() the chunk being cut.
  using CutJournal = std::function<void(GlobalAddress next)>;
  void SetCutJournal(CutJournal journal);
  void Resume(GlobalAddress next, uint64_t left);

  uint16_t memory_nodes() const { return static_cast<uint16_t>(arenas_.size()); }
  uint64_t pool_bytes() const;    // chunk bytes taken from memory servers
  uint64_t bytes_in_use() const;  // allocated and not freed

 private:
  struct Arena {  // the chunk being cut on one memory node
    GlobalAddress next;
    uint64_t left = 0;
    bool exhausted = false;  // the server said OutOfSpace: stop asking it
  };
  uint32_t RoundUp(uint32_t bytes) const;
  bool TakeFreeLocked(uint32_t size, int node, GlobalAddress* out);  // node -1: any
  // InvalidArgument for a block larger than a chunk (the chunk taken to find out is kept).
  Result<GlobalAddress> CutLocked(fabric::Endpoint& ep, uint16_t node, uint32_t size);
  Status TooLarge(uint32_t size) const;

  const NodeAllocatorOptions options_;
  mutable runtime::Mutex mu_;
  std::vector<Arena> arenas_;  // one per memory node
  uint16_t cursor_ = 0;        // node whose chunk is being cut
  uint16_t spread_ = 0;        // AllocateRoundRobin's next node
  std::unordered_map<uint32_t, std::vector<GlobalAddress>> free_;  // by rounded size
  uint64_t pool_bytes_ = 0;
  uint64_t chunk_bytes_ = 0;  // what the memory servers' chunks hold (0: none taken yet)
  uint64_t in_use_ = 0;
  CutJournal journal_;
};

// The allocators of a memory server's handlers (DEX's offloaded splits, XStore's server),
// one per index they work for (its owner tag), so that what they allocate for an index goes
// back with it when it is dropped; Forget(owner) then discards the index's (its chunks are
// freed: MemoryNode::OnOwnerFreed). Thread-safe; whoever holds a returned allocator keeps it.
class OwnedAllocators {
 public:
  explicit OwnedAllocators(uint16_t memory_nodes) : memory_nodes_(memory_nodes) {}
  std::shared_ptr<NodeAllocator> For(uint64_t owner);
  void Forget(uint64_t owner);

 private:
  const uint16_t memory_nodes_;
  runtime::Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<NodeAllocator>> by_owner_;
};

}  // namespace dmindex::alloc
