// LocalEndpoint: an endpoint inside a memory node, for code that runs in a memory-side RPC
// handler. It gives that code the same interface compute nodes use, so the tree core (reader,
// writer, splits, allocation) runs unchanged next to the memory it works on: DEX's offloaded
// operations, XStore's server-side writes.
//
// Verbs on this node's pool are carried out in place (MemoryNode::Execute: word-wise copies,
// and CAS/FAA as atomic instructions on the pool word, atomic with remote verbs). A verb or
// RPC for another memory node is NotSupported: a memory server reaches only its own memory,
// and the handler must give that part of the work back to the compute node. An RPC to this
// node is dispatched directly: the handler already holds one of the node's bounded RPC threads
// and must not wait for another (with one thread it would wait for itself).
#pragma once

#include "fabric/endpoint.h"
#include "fabric/memory_node.h"

namespace dmindex::fabric {

class LocalEndpoint final : public Endpoint {
 public:
  // `node` must have its id (MemoryNode::id): addresses name nodes by id.
  explicit LocalEndpoint(MemoryNode& node) : node_(node) {}

  MemoryNode& node() const { return node_; }

 protected:
  Status DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) override;
  Status DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) override;

 private:
  Status Local(uint16_t node, const char* what) const;

  MemoryNode& node_;
};

}  // namespace dmindex::fabric
