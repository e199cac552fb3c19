// What the DEX tests share: a small in-process pool of two memory nodes (faults optional)
// and index options with 512-byte nodes and a 1 MB cache per compute node.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "designs/registry.h"
#include "dmindex/index.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex::testing {

inline std::unique_ptr<fabric::InProcFabric> DexTestFabric(fabric::FaultOptions faults = {},
                                                           uint64_t chunk_bytes = 1 << 20,
                                                           uint64_t pool_bytes = 256ull << 20) {
  fabric::InProcOptions o;
  o.memory_nodes = 2;
  o.pool_bytes = pool_bytes;
  o.node.chunk_bytes = chunk_bytes;
  o.faults = faults;
  o.prepare_node = designs::RegisterMemoryNodeHandlers;  // DEX's offload handler
  return std::move(fabric::InProcFabric::Create(o)).value();
}

inline IndexOptions DexTestOptions(std::string name, uint32_t compute_nodes,
                                   std::map<std::string, std::string> knobs = {}) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.name = std::move(name);
  o.node_bytes = 512;
  o.compute_nodes = compute_nodes;
  o.cache_bytes = 1 << 20;
  o.knobs = std::move(knobs);
  return o;
}

}  // namespace dmindex::testing
