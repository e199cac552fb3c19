// How Cluster::Open(MemoryServers) (cluster.cc) reaches the UCX fabric without calling it:
// dmindex::ucx (the layer api_ucx, src/api/ucx/) defines dmindex_ucx_component(); a program
// that links dmindex::core alone does not, links no UCX and no OpenSSL, and its
// Open(MemoryServers) answers NotSupported naming the target to link.
#pragma once

#include <memory>

#include "dmindex/cluster.h"
#include "dmindex/status.h"
#include "fabric/fabric.h"

namespace dmindex::internal {

struct UcxComponent {
  // A fabric connected to the memory servers (fabric::ucx::UcxFabric::Create).
  Result<std::shared_ptr<fabric::Fabric>> (*connect)(const MemoryServers& servers);
};

}  // namespace dmindex::internal

// Weak: null where api_ucx is not linked. Whoever links that layer is made to pull it in
// (dmindex_layer's LINK_SYMBOL, CMakeLists.txt), since nothing calls it by a strong reference.
extern "C" const dmindex::internal::UcxComponent* dmindex_ucx_component() __attribute__((weak));
