// What dmindex's own layers (the tools, the benchmark, tests) need of a Cluster beyond the
// public header: the fabric it is connected through, and a Cluster over a fabric they made.
#pragma once

#include <memory>

#include "dmindex/cluster.h"
#include "fabric/fabric.h"

namespace dmindex {
namespace internal {

struct ClusterAccess {
  static std::shared_ptr<Cluster> Over(std::shared_ptr<fabric::Fabric> fabric);
  static fabric::Fabric& FabricOf(const Cluster& cluster);
};

}  // namespace internal

// A Cluster connected through `fabric` (an in-process, UCX or simulated fabric).
inline std::shared_ptr<Cluster> ClusterOver(std::shared_ptr<fabric::Fabric> fabric) {
  return internal::ClusterAccess::Over(std::move(fabric));
}
inline fabric::Fabric& FabricOf(const Cluster& cluster) { return internal::ClusterAccess::FabricOf(cluster); }

}  // namespace dmindex
