// Argument checks every design applies the same way, so bad input gets the same clear
// InvalidArgument from each of them (the correctness harness asserts it for all designs).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::designs {

// InvalidArgument for the reserved keys 0 and 2^64-1.
Status CheckKey(Key key);

// Sorted strictly ascending, valid keys.
Status CheckBulkInput(std::span<const KeyValue> sorted);

// node_bytes within [min_node_bytes, 1 MiB], bulk_fill in (0, 1], compute_nodes >= 1 and
// every knob named in `known_knobs`.
Status CheckIndexOptions(const IndexOptions& options, uint32_t min_node_bytes,
                         const std::vector<std::string>& known_knobs);

// InvalidArgument unless compute_node < options.compute_nodes.
Status CheckComputeNode(const IndexOptions& options, uint32_t compute_node);

}  // namespace dmindex::designs
