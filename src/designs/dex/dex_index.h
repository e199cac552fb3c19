// The "dex" design: dmindex::Index over a DexTree (dex_tree.h).
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeDex(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
