// How much of a workload's requests its most requested records receive: the hit ratio an
// oracle cache holding exactly the k most popular records would get, beside what an LRU and a
// random-eviction cache of k records would get. It is the ceiling for a
// cache of k keys (IndeXY's X, docs/results/indexy.md "Fig. 8"): a measured hit ratio is judged
// against it, not against the theta, because how popular the top records are depends on
// which records the zipfian ranks name (ZipfianRanks) as much as on the theta.
#pragma once

#include <cstdint>
#include <optional>

#include "bench/op_stream.h"

namespace dmindex::bench {

// The share of the requests (the records chosen by reads, updates, read-modify-writes and
// scan starts; with readunit U, each of the U records a read touches counts as one request)
// that the `k` most requested loaded records receive, from the distribution itself, not
// from a run. A shifting working set rotates the distribution at each phase: the share is
// that of an oracle that knows each phase's records. nullopt where the popularity moves
// with the inserts (latest, exponential, sequential) or with more loaded records than
// kTopRecordsShareMaxRecords (the per-record table would not fit).
//
// YCSB's scrambled zipfian (ZipfianRanks::kYcsb) draws ranks over 10^10 items: the first
// 16 x the key range's ranks are added exactly, the rest (individually tiny, and spread by
// the hash) evenly over the key range; requests beyond the loaded records, which YCSB
// redraws, are left out.
std::optional<double> TopRecordsShare(const StreamPlan& plan, uint64_t k);

// What caches of k records that admit every missed record would hit, under the same
// distribution (requests independent of each other), for a measured hit ratio to be placed
// between "no information" and "the best possible": evicting a random record (the same as
// FIFO under independent requests) and evicting the least recently used one, both by the
// characteristic-time approximation (Che et al. 2002 for LRU; the analogous one for random
// eviction, Gelenbe 1973 / Fricker et al. 2012), accurate to about a percent at these sizes.
struct CacheReferences {
  double oracle = 0;  // TopRecordsShare
  double lru = 0;
  double random = 0;
};
std::optional<CacheReferences> CacheHitReferences(const StreamPlan& plan, uint64_t k);

inline constexpr uint64_t kTopRecordsShareMaxRecords = uint64_t{1} << 24;

}  // namespace dmindex::bench
