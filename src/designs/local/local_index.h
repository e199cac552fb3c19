// The `local` design: the whole index in this process's memory (a LocalTree), no remote
// memory and no verbs. The baseline of DEX Fig. 11: what one compute server achieves
// without disaggregation.
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

// Takes the fabric only for the uniform factory signature; never issues a verb on it.
// Every call creates a fresh, empty tree (there is no catalog to reopen from).
// All logical compute nodes share the one tree (this process is the one machine it models),
// so compare it to the disaggregated designs at compute_nodes = 1, as DEX Fig. 11 does.
Result<std::unique_ptr<Index>> MakeLocalIndex(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
