// Sherman (Wang et al., SIGMOD'22): a B-link tree on disaggregated memory with a compute-side
// cache of internal nodes, hierarchical on-chip locks, command combination and two-level
// versions (unsorted leaves with entry-level write-back). Every technique is a knob of the
// shared tree core (tree/tree_options.h), so benchmarks can switch them off one by one;
// synchronization follows docs/SYNCHRONIZATION.md, not Sherman's torn-read-prone versions.
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "tree/tree_options.h"

namespace dmindex::designs {

// All of Sherman's techniques on; the cache sized by IndexOptions::cache_bytes.
tree::TreeOptions ShermanDefaults();
Result<std::unique_ptr<Index>> MakeSherman(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
