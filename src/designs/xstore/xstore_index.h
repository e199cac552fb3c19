// XStore (Wei et al., OSDI'20; docs/XSTORE.md) as a dmindex::Index: a learned cache on the
// compute nodes, one-READ lookups, writes on the memory servers, background retraining.
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs::xstore {

// Opens (or creates) the index options.name; both key formats.
Result<std::unique_ptr<Index>> MakeXStore(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs::xstore
