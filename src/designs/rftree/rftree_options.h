// RF-tree's options: the tree core's (tree/tree_options.h; cache_mb sizes the search-layer
// cache, hocl/combine apply with lock=table) plus its own knobs:
//
//   slc             on/off: the search-layer cache (off: every traversal starts at the root)
//   slc_chunk_kb    size of each READ of the search-layer log when the cache refreshes, KiB
//                   (all of them go in one unordered batch: one round trip)
//   refresh_hops    when the cache refreshes: after this many extra remote READs its
//                   staleness cost the compute node's operations (sibling hops from a cached
//                   node, levels read below a partial hit, misses); `auto`: as many as the
//                   snapshot has internal nodes (at least 16), where the wasted READs have
//                   cost about as many bytes as one refresh; `off`: filled once, never again
//   refresh_min_us  at least this long between two refreshes of one compute node
//   lock            inline: the lock word is the leaf's last 8 bytes, holding its version
//                   (RF-tree's version lock); table: the core's lock table (Sherman's, with
//                   hocl/combine as knobs)
//   unlock          lock=inline: `after` writes the leaf, then the lock word, in one in-order
//                   batch (correct on this fabric); `with_node` is the paper's single WRITE
//                   of leaf and lock word, which pieces landing in any order break (trap T1,
//                   docs/RFTREE.md) - only to show the test catches it
//   scan_batch      on: scans READ the leaves a cached level-1 node lists in one batch
//                   (Sherman's); off (the paper's): leaf by leaf along sibling links
#pragma once

#include <cstdint>
#include <string>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "tree/tree_options.h"

namespace dmindex::designs::rftree {

enum class LockMode { kInline, kTable };
enum class UnlockMode { kAfterNode, kWithNode };

struct RfTreeOptions {
  tree::TreeOptions tree;          // tree.cache_bytes: the search-layer cache's budget
  bool slc = true;
  uint32_t slc_chunk_bytes = 256u << 10;
  bool refresh_auto = true;        // refresh_hops=auto
  uint64_t refresh_hops = 0;       // when !refresh_auto; 0: never refresh after the first fill
  uint64_t refresh_min_us = 0;
  LockMode lock = LockMode::kInline;
  UnlockMode unlock = UnlockMode::kAfterNode;
  bool scan_batch = false;

  std::string ToString() const;
};

// RF-tree's defaults, then IndexOptions (node size, cache size, compute nodes, knobs).
// InvalidArgument for an unknown knob, a bad value or a combination that cannot work.
Result<RfTreeOptions> ResolveRfTreeOptions(const IndexOptions& index);
// RF-tree's knobs with their defaults, for `dmindex knobs` and docs/RFTREE.md.
std::vector<KnobDoc> RfTreeKnobDocs();

}  // namespace dmindex::designs::rftree
