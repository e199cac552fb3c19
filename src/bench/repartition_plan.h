// A scheduled logical repartitioning (DEX §4, Fig. 10): at a given second of the measured
// phase, compute node `from` hands a share of its bulk-loaded keys to its neighbour `to`
// through Partitioning::Repartition. With `scale_out`, `to` first gives its whole range to `from`
// (before the warmup), so it joins as a new server that takes over part of a busy one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bench/key_space.h"
#include "dmindex/index.h"

namespace dmindex::bench {

struct RepartitionSpec {
  double at_s = 2.0;    // seconds into the measured phase
  uint32_t from = 0;    // the compute node giving keys away
  uint32_t to = 1;      // its neighbour (from +- 1) receiving them
  double share = 0.5;   // of `from`'s bulk-loaded keys, in (0, 1]
  bool scale_out = false;
};

// Compute node i serves [boundaries[i-1], boundaries[i]) (Partitioning::Repartition's convention).
struct RepartitionMove {
  std::vector<Key> initial;  // before the measured phase (after the scale-out step, if any)
  std::vector<Key> after;    // what Repartition installs at `at_s`
  uint64_t from_keys = 0;    // bulk-loaded keys `from` serves in `initial`
  uint64_t moved_keys = 0;   // of those, the ones `to` serves afterwards
};

// The boundaries as `index` routes them (Partitioning::RouteKey), for `compute_nodes` nodes.
// NotSupported when the design serves every key on every compute node (no logical partitions).
Result<std::vector<Key>> RoutedBoundaries(const Index& index, uint32_t compute_nodes);

// Plans the move over the index's current partitions and, for a scale-out, applies its first
// step (Repartition) now. `loaded` are the bulk-loaded records, sorted.
// Index::partitioning()->Repartition with integer boundaries (as 8-byte keys).
Result<double> RepartitionTo(Index& index, const std::vector<Key>& boundaries);
Result<RepartitionMove> PrepareRepartition(Index& index, const RepartitionSpec& spec,
                                           uint32_t compute_nodes,
                                           std::span<const RecordPair> loaded);

}  // namespace dmindex::bench
