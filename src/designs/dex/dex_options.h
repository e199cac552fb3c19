// DEX's techniques as switches (IndexOptions::knobs), so Fig. 8's ablation runs without
// recompiling. Knobs DEX does not know go to the shared tree core (hocl, combine, handover,
// validation), which rejects unknown ones.
//
//   partition   on/off  logical partitioning (§4); off: every node is shared by all compute
//                       nodes (remote locks, no cached leaves)
//   offload     on/off  opportunistic offloading of subtree traversals (§6)
//   merge       on/off  merge underfull owned nodes after deletes (§7); off: lazy deletion
//   admission   [0,1]   P_A, the chance that a missed leaf is admitted to the cache (§5.4)
//   cache_mb    n       compute-side cache per compute node, MiB (default IndexOptions::cache_bytes)
//   offload_level n     M: subtrees rooted at level M live on one memory server; only misses
//                       at levels <= M are offloaded
//   explore     [0,1]   q, the chance of taking the costlier choice to keep estimates fresh
//   cost_factor x       c in (L+1) x (READ + local search) x c
//   boundaries  k1,k2.. explicit partition boundaries (compute node i owns [k_i, k_{i+1})):
//                       integers in the u64 format, the keys' bytes in the bytes format (no
//                       commas in them; Partitioning::Repartition takes any)
//   key_space   n       without boundaries, u64 format: equal-width partitions of [1, n]
//                       (bytes format: partitions of equal width in the keys' first byte)
//   partitions  n       compute nodes in the whole cluster (default: as the index was created,
//                       or IndexOptions::compute_nodes for a new one)
//   first_node  k       this process hosts compute nodes k .. k + IndexOptions::compute_nodes - 1
//                       (default: the first run of free ones); the others are other processes'
//                       (multi-process DEX, see docs/DEX.md)
//   durability  log/none  log (default): every write to an owned leaf is acknowledged only
//                       once its record is in the compute node's redo log in the pool
//                       (redo_log.h), so a crash of the process loses nothing acknowledged;
//                       none: the paper's behaviour (dirty pages die with the process)
//   log_kb      n       the redo log's ring per compute node, KiB (set when the log is made)
//   writeback_ms n      a background thread writes every dirty page back (and truncates the
//                       log) this often; 0: never (only cooling, close and repartitioning do)
//   lease_ms    n       this process's lease (lease/lease.h) names it in the host words of its
//                       compute nodes; an opener takes over compute nodes whose host's lease
//                       expired (unrenewed for lease_ms + a quarter)
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
  uint64_t cache_bytes = 64ull << 20;
  uint32_t compute_nodes = 1;       // hosted by this process
  uint32_t partitions = 0;          // in the cluster; 0: see the knob
  int64_t first_node = -1;          // the first hosted one; -1: the first free run
  uint32_t offload_level = 2;
  double explore = 0.01;
  double cost_factor = 1.5;
  uint64_t local_search_ns = 200;  // l_s: searching one cached node (stable: set at start)
  KeyFormat key_format = KeyFormat::kU64;
  std::vector<std::string> boundaries;  // partitions - 1 ascending public keys, or empty
  uint64_t key_space = u64::kMaxKey;    // u64 format only
  bool durable = true;              // durability=log
  uint64_t log_bytes = 256ull << 10;  // log_kb (a block of it must fit a memory server's chunk)
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
