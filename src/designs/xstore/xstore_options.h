// XStore's options (docs/XSTORE.md): the memory server's tree (XTree) and the compute side's
// learned cache (XCache). The knobs (`--design xstore:knob=value`) are declared once, in the
// table of xstore_options.cc (`dmindex knobs xstore`).
#pragma once

#include <cstdint>
#include <string>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "tree/tree_options.h"

namespace dmindex::designs::xstore {

struct XStoreOptions {
  tree::TreeOptions tree;  // node_bytes: the leaves' (and the server's internal nodes')
  KeyFormat format = KeyFormat::kU64;
  uint32_t leaf_slots = 16;
  uint32_t partitions = 0;  // 0: one per memory node
  uint32_t keys_per_model = 32;
  uint32_t top_segments = 16;
  uint32_t expand_at = 48;  // 0: off
  bool retrain = true;
  uint32_t train_threads = 1;
  uint32_t speculate = 1;
  bool slot_read = false;
  uint32_t max_read_leaves = 8;
  bool prefetch = true;
};

// The leaf (and node) size of the u64 format for `slots` entries.
uint32_t U64LeafBytes(uint32_t slots);

// XStore's defaults, then IndexOptions and its knobs. InvalidArgument for an unknown knob, a
// bad value or one that does not apply (the core's lock and cache knobs: XStore's writes run
// on the memory server and its clients cache models, not nodes).
Result<XStoreOptions> ResolveXStoreOptions(const IndexOptions& index, uint16_t memory_nodes);
// XStore's knobs with their defaults, for `dmindex knobs` and docs/XSTORE.md.
std::vector<KnobDoc> XStoreKnobDocs();

}  // namespace dmindex::designs::xstore
