// DEX's options: its techniques as switches, so Fig. 8's ablation runs without recompiling,
// and the tree core's policies for shared nodes. The knobs are declared once, in the table of
// dex_options.cc (`dmindex knobs dex`; docs/DEX.md includes it and explains partitions,
// first_node and durability).
#pragma once

#include <cstdint>
#include <vector>

#include <string>

#include "common/knob_table.h"
#include "common/u64.h"
#include "dmindex/index.h"
#include "tree/tree_options.h"

namespace dmindex::designs::dex {

struct DexOptions {
  bool partition = true;
  bool offload = true;
  bool merge = true;
  double leaf_admission = 0.1;
  bool frequency = true;            // policy=lfu: TinyLFU admission, frequency-sampled cooling
  uint64_t cache_bytes = 64ull << 20;
  uint32_t compute_nodes = 1;       // hosted by this process
  uint32_t partitions = 0;          // in the cluster; 0: see the knob
  int64_t first_node = -1;          // the first hosted one; -1: the first free run
  uint32_t offload_level = 2;
  double explore = 0.01;
  // c of the paper's rule (§6.1), which stands for the cost of using the compute-side cache
  // (free page provisioning). Ours measures it (l_o is timed around the whole Load) or never
  // pays it (a leaf the frequency policy keeps out is READ into a private page), so c = 1
  // compares the two measured costs (docs/DEX.md, "How the pieces fit").
  double cost_factor = 1.0;
  uint64_t local_search_ns = 200;  // l_s: searching one cached node (stable: set at start)
  KeyFormat key_format = KeyFormat::kU64;
  std::vector<std::string> boundaries;  // partitions - 1 ascending public keys, or empty
  uint64_t key_space = u64::kMaxKey;    // u64 format only
  bool durable = true;              // durability=log
  uint64_t log_bytes = 0;           // log_kb; 0: the cache's size (a block of it must fit a memory server's chunk)
  uint64_t writeback_ms = 1000;
  uint64_t lease_ms = 2000;
  tree::TreeOptions tree;           // the core's policies for shared (remote) nodes
};

Result<DexOptions> ResolveDexOptions(const IndexOptions& index);
// DEX's knobs with their defaults, for `dmindex knobs` and docs/DEX.md.
std::vector<KnobDoc> DexKnobDocs();
// The boundaries of a new index of `parts` compute nodes (public keys): the knob's, or equal
// widths (integers up to key_space in the u64 format, first bytes in the bytes format).
std::vector<std::string> InitialBoundaries(const DexOptions& o, uint32_t parts);

}  // namespace dmindex::designs::dex
