// Checks of IndexOptions values that more than one layer must apply (the tree's node layout,
// the designs' option checks, the benchmark's flags): one rule and one limit each, here.
#pragma once

#include <cstdint>

#include "dmindex/options.h"
#include "dmindex/status.h"

namespace dmindex {

// node_bytes: a multiple of 64 in [min_bytes, kMaxNodeBytes]; `min_bytes` is the design's
// (room for a few entries). The message names the value and the accepted range.
Status CheckNodeBytes(uint32_t node_bytes, uint32_t min_bytes);

}  // namespace dmindex
