// What one design x workload run measured, and the per-operation figures derived from it.
// Verb counts are differences of Fabric::TotalCounts() snapshots around the measured phase,
// cache hits/misses differences of Index::Stats(); sizes are taken at the end of the run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/repartition_plan.h"
#include "bench/timeline.h"
#include "fabric/verb_stats.h"

namespace dmindex::bench {

// A scheduled repartitioning, as planned and as it went.
struct RepartitionOutcome {
  RepartitionSpec spec;
  RepartitionMove move;
  bool ran = false;             // false: the run ended (or failed) before spec.at_s
  double start_s = 0, end_s = 0;  // seconds into the measured phase
  double reported_s = 0;        // what Partitioning::Repartition said it took
  DipAndRecovery dip;           // from the timeline
};

struct RunResult {
  std::string design;   // as given, knobs included ("sherman:hocl=off")
  std::string workload;
  std::string backend;  // fabric backend name
  std::string records = "u64";  // the record shape (RecordShape::ToString)
  uint32_t threads = 0;
  uint32_t compute_nodes = 0;
  uint64_t cache_per_node_bytes = 0;  // as configured (IndexOptions::cache_bytes)
  uint64_t keys = 0;    // bulk-loaded records
  uint64_t ops = 0;     // operations completed in the measured phase
  double seconds = 0;   // length of the measured phase
  double p50_us = 0, p99_us = 0, p999_us = 0, p9999_us = 0, mean_us = 0;
  fabric::VerbCounts verbs;  // during the measured phase
  uint64_t cache_hits = 0, cache_misses = 0;  // during the measured phase
  uint64_t offloads = 0, offload_fallbacks = 0;  // during the measured phase (DEX §6)
  // Every counter the index names (Index::PropertyNames), as of the end of the measured
  // phase: IndeXY's releases, stalls and Y traffic, the stores' disk bytes, ...
  std::map<std::string, uint64_t> properties;
  // RF-tree's search-layer cache during the measured phase: refreshes, and the remote READs
  // its staleness cost (docs/RFTREE.md).
  uint64_t slc_refreshes = 0, stale_reads = 0;
  // XStore's learned cache during the measured phase (docs/XSTORE.md): lookups, the leaves
  // their predictions read, sibling READs after splits (speculation), lookups that met a leaf
  // split since training, lookups and scan starts the memory server finished (fallbacks);
  // the memory servers' sub-model retrainings and model expansions.
  uint64_t model_lookups = 0, model_leaves_read = 0, speculative_reads = 0, invalidations = 0,
           model_fallbacks = 0, retrains = 0, expansions = 0;
  uint64_t cache_bytes = 0, pool_bytes = 0;   // at the end
  // Keys the design's cache held at the end (IndeXY: X's entries), and the hit ratios
  // caches of that many records would get under the workload's distribution
  // (request_mass.h): an oracle holding the most requested ones (the ceiling for
  // cache_hit_ratio), LRU, and random eviction (no information). None when the design
  // reports no key count, or the workload's popularity moves.
  std::optional<uint64_t> cached_keys;
  std::optional<double> ideal_hit_ratio, lru_hit_ratio, random_hit_ratio;
  uint64_t inserted = 0;  // records inserted during warmup and measurement
  double timeline_interval_s = 0;          // 0: no timeline was asked for
  std::vector<TimelineInterval> timeline;  // throughput over the measured phase
  std::optional<RepartitionOutcome> repartition;
  // --fabric sim: how long (real seconds) simulating the whole run took - bulk load, warm-up,
  // measured phase, check - and how many operations were simulated in it (warm-up included).
  double sim_real_seconds = 0;
  uint64_t sim_ops = 0;

  bool interrupted = false;  // stopped early by Ctrl-C: figures cover what ran
  std::string error;         // an operation failed or returned a wrong answer
  std::string verify_error;  // the final full scan disagreed with the known key set
  bool verified = false;     // the final full scan was checked and matched

  bool ok() const { return error.empty() && verify_error.empty(); }
  double throughput_ops() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double sim_ops_per_real_second() const {
    return sim_real_seconds > 0 ? static_cast<double>(sim_ops) / sim_real_seconds : 0;
  }
  double PerOp(uint64_t total) const {
    return ops ? static_cast<double>(total) / static_cast<double>(ops) : 0;
  }
  // Share of cache lookups that hit; none when the design reported no cache activity.
  std::optional<double> cache_hit_ratio() const {
    const uint64_t lookups = cache_hits + cache_misses;
    if (lookups == 0) return std::nullopt;
    return static_cast<double>(cache_hits) / static_cast<double>(lookups);
  }
};

}  // namespace dmindex::bench
