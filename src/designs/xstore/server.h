// The memory-server half of XStore (the paper's server, XTree and trainer; docs/XSTORE.md):
// every partition of every XStore index on this memory node, each a tree-core B+-tree in this
// node's pool run through the local fabric (fabric/local_fabric.h) and a Trainer. Writes,
// lookups that fall back, the first leaf of scans that cannot predict it, bulk loads and the
// wait for background training arrive by RPC (wire.h); a partition's state is built from its
// descriptor (pool_format.h) the first time a request names it, so any number of compute
// processes and indexes share one memory server.
//
// The server allocates what it keeps - tree nodes, models, the indexes' descriptors and
// superblocks - from one allocator per memory node (value blocks from each tree's own): it
// cuts one chunk at a time however many indexes it serves, which matters on small pools (a
// 64 MiB pool of 32 MiB chunks holds one).
#pragma once

#include <memory>
#include <unordered_map>

#include "alloc/node_allocator.h"
#include "common/runtime.h"
#include "fabric/local_fabric.h"
#include "fabric/memory_node.h"

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
  explicit XStoreServer(fabric::MemoryNode& node) : node_(node) {}
  ~XStoreServer() { Stop(); }

  Status Serve(fabric::RpcOpcode op, fabric::RpcRequest request, fabric::RpcReply* reply);
  // Stops every partition's background training (the memory node is going away).
  void Stop();

 private:
  // The local fabric and the node's allocator, made once the node knows its id (under mu_).
  Status ReadyLocked();
  // The partition whose descriptor is at `descriptor`, built on first use.
  Result<PartitionServer*> Find(GlobalAddress descriptor);
  // kXStoreStore: a record of an index written into this node's pool.
  Status Store(fabric::RpcRequest request, fabric::RpcReply* reply);

  fabric::MemoryNode& node_;
  runtime::SharedMutex mu_;
  std::unique_ptr<fabric::LocalFabric> fabric_;
  std::unique_ptr<alloc::NodeAllocator> allocator_;
  std::unordered_map<uint64_t, std::unique_ptr<PartitionServer>> partitions_;
};

// Registers XStore's opcodes on a memory node (the registry's register_memory_side), and
// stops its training threads when the node goes away.
Status RegisterXStoreHandlers(fabric::MemoryNode& node);

}  // namespace dmindex::designs::xstore
