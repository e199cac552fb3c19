// LocalFabric: the fabric of code running inside one memory node (local_endpoint.h), for
// layers that take a Fabric rather than an Endpoint: XStore's memory server runs the tree core
// (tree::RemoteTree) on its own pool through it, as a compute node runs it over the network.
// Every endpoint it opens is a LocalEndpoint of that node; memory_nodes() covers the node's
// id, so addresses into its pool are in range (others are NotSupported by the endpoint).
#pragma once

#include "fabric/fabric.h"
#include "fabric/local_endpoint.h"

namespace dmindex::fabric {

class LocalFabric final : public Fabric {
 public:
  // `node` must know its id (MemoryNode::id) and outlive the fabric.
  explicit LocalFabric(MemoryNode& node) : node_(node) {}

  uint16_t memory_nodes() const override { return static_cast<uint16_t>(node_.id().value_or(0) + 1); }
  const char* backend_name() const override { return "local"; }
  MemoryNode& node() const { return node_; }

 protected:
  Result<std::unique_ptr<Endpoint>> DoConnect() override {
    if (!node_.id()) return Status::InvalidArgument("local fabric: the memory node has no id yet");
    return std::unique_ptr<Endpoint>(new LocalEndpoint(node_));
  }

 private:
  MemoryNode& node_;
};

}  // namespace dmindex::fabric
