// The memory-server half of XStore (the paper's server, XTree and trainer; docs/XSTORE.md):
// every partition of every XStore index on this memory node, each a tree-core B+-tree in this
// node's pool run through the local fabric (fabric/local_fabric.h) and a Trainer. Writes,
// lookups that fall back, the first leaf of scans that cannot predict it, bulk loads and the
// wait for background training arrive by RPC (wire.h); a partition's state is built from its
// descriptor (pool_format.h) the first time a request names it, so any number of compute
// processes and indexes share one memory server.
//
// The server allocates what it keeps - tree nodes, models, the indexes' descriptors and
// superblocks, its sessions' redo blocks - from one allocator per memory node (value blocks
// from each tree's own): it cuts one chunk at a time however many indexes it serves, which
// matters on small pools (a 64 MiB pool of 32 MiB chunks holds one). A restarted server
// carries on cutting its predecessor's chunk and reuses its redo blocks (server_memory.h).
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>

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
  // What the start found of earlier incarnations' allocations, and reuses (tests).
  Result<ServerMemory::Counts> memory();

 private:
  // The fabric, the node's allocator and the start's recovery, once the node knows its id
  // (under mu_): the start's status.
  Status ReadyLocked();
  // The partition whose descriptor is at `descriptor`, built on first use.
  Result<PartitionServer*> Find(GlobalAddress descriptor);
  // kXStoreStore: a record of an index written into this node's pool.
  Status Store(fabric::RpcRequest request, fabric::RpcReply* reply);

  fabric::MemoryNode& node_;
  runtime::SharedMutex mu_;
  fabric::Fabric* fabric_;  // the trees' (local_, or a test's)
  std::unique_ptr<fabric::LocalFabric> local_;
  std::unique_ptr<alloc::NodeAllocator> allocator_;
  std::unique_ptr<ServerMemory> memory_;  // its chunk journal and redo blocks; set by the start
  std::optional<Result<tree::ServerLockRecovery>> started_;  // set by the start
  std::unordered_map<uint64_t, std::unique_ptr<PartitionServer>> partitions_;
};

// Registers XStore's opcodes on a memory node (the registry's register_memory_side), starts
// the server when the node knows its id, and stops its training threads when the node goes
// away.
Status RegisterXStoreHandlers(fabric::MemoryNode& node);
// The same with the partitions' trees over `trees` (tests: XStoreServer's constructor); the
// server, to ask what it recovered.
Result<std::shared_ptr<XStoreServer>> RegisterXStoreHandlersOver(fabric::MemoryNode& node, fabric::Fabric* trees);

}  // namespace dmindex::designs::xstore
