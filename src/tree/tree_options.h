// Policies of the remote B+-tree core: which of Sherman's techniques are on. A design sets
// its defaults; IndexOptions::knobs override them at run time so benchmarks can ablate each
// technique (no #ifdefs).
//
// The knobs (cache_mb, hocl, handover, combine, two_level, lease_ms, validation) are declared
// once, in the table of tree_options.cc (tree_knobs.h; `dmindex knobs naive`).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "dmindex/index.h"

namespace dmindex::tree {

struct TreeOptions {
  uint32_t node_bytes = 1024;
  double bulk_fill = 0.8;
  uint32_t compute_nodes = 1;
  // 0: no internal-node cache. In a design's defaults any non-zero value means "on, sized by
  // IndexOptions::cache_bytes".
  uint64_t cache_bytes = 0;
  bool hocl = false;
  uint32_t handover_max = 8;
  bool combine = false;
  bool two_level = false;
  bool validate = true;
  // Bulk load places every node at a level <= colocate_level on the memory node of its
  // ancestor at that level (subtrees round robin over memory nodes), so a subtree can be
  // walked inside one memory server (DEX §3, offloading). -1: off. Not a knob: set by designs.
  int colocate_level = -1;
  // Every node and value block of the tree on this memory node (XStore: each memory server
  // keeps the tree of its key range and runs the writes on it, reaching only its own pool).
  // -1: nodes by the allocator or placer, bulk-loaded value blocks spread over the memory
  // nodes. Not a knob: set by designs.
  int home_node = -1;
  // Some published nodes are written without their node lock (DEX: a compute node writes the
  // nodes it owns back from its cache; docs/DEX.md). Then an image that does not validate
  // while nobody holds its lock and nothing changes it may be such a write, stalled: the
  // reader answers Retry instead of Corruption and the design decides (TreeReader::Read).
  // Not a knob: set by designs.
  bool unlocked_writers = false;
  // Nodes end in an 8-byte trailer holding their version (node_layout.h), one entry fewer
  // per node. With trailer_lock, a leaf's trailer is its lock word (RF-tree's inline version
  // lock: the version, low bit set while a writer holds it), which a reader of a torn leaf
  // watches as it watches the lock table's words (TreeReader::Read). Not knobs: set by designs.
  bool node_trailer = false;
  bool trailer_lock = false;
  // The owner tag of the index's catalog entry, written into every chunk its allocators take
  // so that dropping the index frees them (alloc/catalog.h). Not a knob: set by the opener.
  uint64_t chunk_owner = 0;

  // Byte-string keys and values (BytesKV; the u64 format ignores these). Keys are 1 ..
  // max_key_bytes long; values of up to inline_value_bytes live in the leaf. The node must
  // have room for the largest entries (SlottedLayout::MinNodeBytes); larger values are
  // refused with InvalidArgument naming the limit.
  uint32_t max_key_bytes = 255;
  uint32_t inline_value_bytes = 64;
  // Values up to max_value_bytes (at most value_block::MaxValueBytes(), 4 MiB - 24) in both
  // formats: longer than the inline limit (BytesKV: inline_value_bytes; U64BytesKV: 8) they live
  // out of line in value blocks.
  uint32_t max_value_bytes = 1u << 20;
  // Out-of-line values: a reader accepts a value block only if it copied it within this
  // long of starting the READ of the leaf that pointed at it (else it reads again), and a
  // replaced block is reused only twice this long after it was unlinked (value_store.h).
  std::chrono::microseconds value_lease{50000};
  // The lease this tree's locks are held under (knob lease_ms; docs/SYNCHRONIZATION.md
  // "Leases"): a lock whose holder went this long plus a quarter without renewing is taken
  // over and its half-done write finished. 0: no lease (locks as before: a dead holder's lock
  // is never taken over; no redo record).
  std::chrono::milliseconds lease{2000};
  // The last batch of a separator's insertion into a parent with room (record, WRITE parent,
  // clear, unlock) is posted without waiting (NodeLock::WriteAndUnlockPosted): a leaf split
  // waits for two round trips, not three (docs/SYNCHRONIZATION_DETAIL.md, "The separator's
  // batch, unwaited"). Needs the operations of RemoteTree, which reap it. Not a knob: set by
  // designs (sherman).
  bool post_separator = false;
  // Leaf splits choose the shortest separator between the halves (suffix truncation); off:
  // the right half's first key, to measure what truncation buys. Not a knob.
  bool suffix_truncation = true;
};

// Starts from `defaults`, takes node size, fill, compute nodes and cache size from `index`,
// then applies index.knobs. Unknown knobs and bad values are InvalidArgument.
Result<TreeOptions> ResolveTreeOptions(const IndexOptions& index, TreeOptions defaults);

}  // namespace dmindex::tree
