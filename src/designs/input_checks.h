// Option checks every design applies the same way, so bad input gets the same clear
// InvalidArgument from each of them (the correctness harness asserts it for all designs).
// Keys, bulk-load input and compute node numbers are checked by the public Session and
// Index calls (src/common/index.cc), once for every design.
#pragma once

#include <string>
#include <vector>

#include "dmindex/options.h"
#include "dmindex/status.h"

namespace dmindex::designs {

// node_bytes within [min_node_bytes, 1 MiB], bulk_fill in (0, 1], compute_nodes >= 1 and
// every knob named in `known_knobs`.
Status CheckIndexOptions(const IndexOptions& options, uint32_t min_node_bytes,
                         const std::vector<std::string>& known_knobs);

}  // namespace dmindex::designs
