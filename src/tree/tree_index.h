// dmindex::Index over a RemoteTree (u64 key format: U64BytesKV; bytes: BytesKV; values are byte
// strings in both), found in (or created in) the pool's catalog under IndexOptions::name.
// Designs that are this tree with different policies (sherman, naive) are one call to
// OpenTreeIndex with their default TreeOptions.
#pragma once

#include <memory>
#include <string>

#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "tree/tree_options.h"

namespace dmindex::tree {

// `defaults`: the design's techniques; IndexOptions::knobs may override them.
Result<std::unique_ptr<Index>> OpenTreeIndex(fabric::Fabric& fabric, const std::string& design,
                                             const IndexOptions& options,
                                             const TreeOptions& defaults);

}  // namespace dmindex::tree
