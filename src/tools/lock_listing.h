// `dmindex indexes --locks`: the leases of memory node 0's lease table and every node lock
// held in the pool's lock tables, with the lease each names and how long ago (by the holder's
// wall clock, as it wrote it) that lease was last renewed.
#pragma once

#include <ostream>

#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::tools {

Status ListLocks(fabric::Endpoint& ep, uint16_t memory_nodes, std::ostream& out);

}  // namespace dmindex::tools
