// RF-tree's options: the tree core's (tree/tree_options.h; cache_mb sizes the search-layer
// cache, hocl/combine apply with lock=table) plus its own. The knobs are declared once, in the
// table of rftree_options.cc (`dmindex knobs rftree`; docs/RFTREE.md, where refresh_hops and
// unlock=with_node - trap T1 - are explained).
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
  bool scan_batch = true;  // the paper reads leaf by leaf; a user wants the round trips saved
};

// RF-tree's defaults, then IndexOptions (node size, cache size, compute nodes, knobs).
// InvalidArgument for an unknown knob, a bad value or a combination that cannot work.
Result<RfTreeOptions> ResolveRfTreeOptions(const IndexOptions& index);
// RF-tree's knobs with their defaults, for `dmindex knobs` and docs/RFTREE.md.
std::vector<KnobDoc> RfTreeKnobDocs();

}  // namespace dmindex::designs::rftree
