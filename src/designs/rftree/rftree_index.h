// The `rftree` design (docs/RFTREE.md): RF-tree on the shared tree core, by name.
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeRfTree(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
