// Checks of IndexOptions values that more than one layer must apply (the tree's node layout,
// the designs' option checks, the benchmark's flags): one rule and one limit each, here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dmindex/options.h"
#include "dmindex/status.h"

namespace dmindex {

// node_bytes: a multiple of 64 in [min_bytes, kMaxNodeBytes]; `min_bytes` is the design's
// (room for a few entries). The message names the value and the accepted range.
Status CheckNodeBytes(uint32_t node_bytes, uint32_t min_bytes);

// The options every design checks the same way, so bad input gets the same clear
// InvalidArgument from each (the correctness harness asserts it for all designs): node_bytes
// as CheckNodeBytes, bulk_fill in (0, 1], compute_nodes >= 1 and every knob named in
// `known_knobs`. (Keys, bulk-load input and compute node numbers are checked by the public
// Session and Index calls, common/index.cc.)
Status CheckIndexOptions(const IndexOptions& options, uint32_t min_node_bytes,
                         const std::vector<std::string>& known_knobs);

}  // namespace dmindex
