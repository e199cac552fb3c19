// The memory-server half of XStore (the paper's server, XTree and trainer; docs/XSTORE.md):
// every partition of every XStore index on this memory node, each a tree-core B+-tree in this
// node's pool run through the local fabric (fabric/local_fabric.h) and a Trainer. Writes,
// lookups that fall back, the first leaf of scans that cannot predict it, bulk loads and the
// wait for background training arrive by RPC (wire.h); a partition's state is built from its
// descriptor (pool_format.h) the first time a request names it, so any number of compute
// processes and indexes share one memory server.
//
// The server allocates what it keeps for an index - tree nodes, models, the index's
// descriptors and superblock, its sessions' redo blocks - from an allocator of that index on
// this node, whose chunks carry the index's owner tag (alloc/catalog.h): dropping the index
// frees them with the rest of its chunks (MemoryNode::FreeOwnedChunks), after the server
// forgot the index (Forget). A partition's index is the owner of the chunk holding its
// descriptor (MemoryNode::OwnerOf); a stored record's, the one its request names. Value
// blocks come from each tree's own allocator, under the same tag. A restarted server carries
// on cutting its predecessor's chunks and reuses its redo blocks (server_memory.h).
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "alloc/node_allocator.h"
#include "common/runtime.h"
#include "designs/xstore/server_memory.h"
#include "fabric/local_fabric.h"
#include "fabric/memory_node.h"
#include "tree/server_locks.h"

namespace dmindex::designs::xstore {

// One partition's tree and trainer (one per key format behind it).
class PartitionServer {
 public:
  virtual ~PartitionServer() = default;
  virtual Status Serve(fabric::RpcOpcode op, std::span<const std::byte> request, fabric::RpcReply* reply) = 0;
  virtual void Stop() = 0;
};

// What the server keeps for one index on its node: the allocator of the index's chunks and
// what a restart must find of them. Its partitions hold it.
struct IndexMemory {
  std::unique_ptr<alloc::NodeAllocator> allocator;
  std::unique_ptr<ServerMemory> memory;
};

class XStoreServer {
 public:
  // `trees`: the fabric the partitions' trees run over; null: the node's LocalFabric. Tests
  // give the in-process fabric that holds `node`, whose scripted verbs then reach the
  // server's writes (RegisterXStoreHandlersOver).
  explicit XStoreServer(fabric::MemoryNode& node, fabric::Fabric* trees = nullptr) : node_(node), fabric_(trees) {}
  ~XStoreServer() { Stop(); }

  Status Serve(fabric::RpcOpcode op, fabric::RpcRequest request, fabric::RpcReply* reply);
  // Stops every partition's background training (the memory node is going away).
  void Stop();
  // Once the node knows its id, before it serves anyone (MemoryNode::OnIdKnown): frees the
  // lock words an earlier incarnation of the server left held, finishing their writes
  // (tree/server_locks.h). If that fails, every request is answered with the failure.
  void Start();
  // What Start freed (tests).
  Result<tree::ServerLockRecovery> recovered();
  // What the start found of earlier incarnations' allocations, and reuses, over the indexes
  // the server keeps memory for (tests).
  Result<ServerMemory::Counts> memory();
  // Index `owner` is being dropped (MemoryNode::OnOwnerFreed, before its chunks are freed):
  // waits for the requests under way, stops and forgets the index's partitions and memory.
  // Requests that name it from then on are NotFound; none touches its chunks again.
  void Forget(uint64_t owner);

 private:
  // The fabric and the start's recovery (then the memory of every index an earlier
  // incarnation kept some for), once the node knows its id (under mu_): the start's status.
  Status ReadyLocked();
  // Index `owner`'s memory on this node, opened on first use (under mu_, after the start).
  Result<std::shared_ptr<IndexMemory>> MemoryOfLocked(fabric::Endpoint& ep, uint64_t owner);
  // The partition whose descriptor is at `descriptor`, built on first use.
  Result<PartitionServer*> Find(GlobalAddress descriptor);
  // kXStoreStore: a record of an index written into this node's pool.
  Status Store(fabric::RpcRequest request, fabric::RpcReply* reply);

  fabric::MemoryNode& node_;
  // Requests hold it shared while they run, Forget exclusively: no request is under way on a
  // dropped index's chunks when they are freed. Taken before mu_.
  runtime::SharedMutex serving_;
  runtime::SharedMutex mu_;
  fabric::Fabric* fabric_;  // the trees' (local_, or a test's)
  std::unique_ptr<fabric::LocalFabric> local_;
  std::optional<Result<tree::ServerLockRecovery>> started_;  // set by the start
  std::unordered_map<uint64_t, std::shared_ptr<IndexMemory>> memories_;  // by owner tag
  std::unordered_set<uint64_t> dropped_;  // owner tags forgotten (never used again: catalog.h)
  struct Partition {
    std::unique_ptr<PartitionServer> server;
    uint64_t owner = 0;  // its index's
  };
  std::unordered_map<uint64_t, Partition> partitions_;  // by descriptor
};

// Registers XStore's opcodes on a memory node (the registry's register_memory_side), starts
// the server when the node knows its id, and stops its training threads when the node goes
// away.
Status RegisterXStoreHandlers(fabric::MemoryNode& node);
// The same with the partitions' trees over `trees` (tests: XStoreServer's constructor); the
// server, to ask what it recovered.
Result<std::shared_ptr<XStoreServer>> RegisterXStoreHandlersOver(fabric::MemoryNode& node, fabric::Fabric* trees);

}  // namespace dmindex::designs::xstore
