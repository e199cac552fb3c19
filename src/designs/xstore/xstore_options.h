// XStore's options (docs/XSTORE.md): the memory server's tree (XTree) and the compute side's
// learned cache (XCache), with IndexOptions::knobs (`--design xstore:knob=value`):
//
//   leaf_slots      u64 format: entries per leaf (default 16, the paper's); a leaf is then
//                   64 + 24 * leaf_slots bytes, and internal nodes (server-side only) the same.
//                   The bytes format sizes its slotted nodes by IndexOptions::node_bytes.
//   partitions      key-range partitions, partition p on memory node p (default: one per
//                   memory node, §5.5); boundaries are the bulk load's quantiles, or an even
//                   split of the key space when the first write comes before any bulk load
//   keys_per_model  keys per sub-model when a model set is trained (default 200, §5.1)
//   top_segments    pieces of the top model's piecewise-linear CDF, through quantiles of the
//                   keys (default 16; 1: one line, closest to the paper's; learned/top_model.h)
//   expand_at       a new model set with twice the sub-models is trained in the background
//                   when the keys per sub-model exceed this (default 200, §7.5); off: never
//   retrain         on: a leaf split queues the retraining of the sub-models covering the
//                   leaf on the memory server's background threads; off: models stay as
//                   trained at the bulk load (or the first split), clients stay correct
//   train_threads   background training threads per partition (default 1; the paper uses up
//                   to 2 on a 24-core server, dmindex's memory servers have one or two cores)
//   speculate       sibling links a lookup follows from a leaf that split since training
//                   before it falls back to the server (default 1, §5.3.2; off: 0)
//   slot_read       on: a lookup reads the leaf header and only the predicted slot range of
//                   each predicted leaf (the server keeps leaves sorted); off: whole leaves.
//                   u64 format only (slotted leaves keep records apart from their slots)
//   max_read_leaves a lookup whose prediction spans more leaves asks the server instead
//                   (keys the model cannot tell apart, e.g. byte keys that agree on the 8
//                   bytes after their common prefix; default 8)
//   prefetch        on: a compute node fetches a partition's whole model set the first time it
//                   uses it; off: each sub-model when a lookup first needs it
//   validation      the tree core's knob: off accepts leaf images unchecked (only to show
//                   the checks are needed)
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
  uint32_t keys_per_model = 200;
  uint32_t top_segments = 16;
  uint32_t expand_at = 200;  // 0: off
  bool retrain = true;
  uint32_t train_threads = 1;
  uint32_t speculate = 1;
  bool slot_read = false;
  uint32_t max_read_leaves = 8;
  bool prefetch = true;

  std::string ToString() const;
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
