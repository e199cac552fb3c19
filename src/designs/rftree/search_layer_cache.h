// RF-tree's search-layer cache (SLC, SPREAD section 3.3.3): one per compute node, shared by
// its threads. A refresh reads the whole search layer - the log's directory and the root
// word in one round trip, then every segment in chunks, all in one unordered batch -
// validates each image on its own and publishes the result as an immutable snapshot
// (slc_snapshot.h) with one pointer swap. Readers never lock: they load the pointer inside
// an epoch guard (common/epoch.h) of this cache's manager, and a replaced snapshot is freed
// once no operation that could have loaded it is running.
//
// Staleness is paid in extra remote READs: a sibling hop from a cached node whose child
// split since, each level a partial hit leaves to read, a miss. The cache counts them and
// asks for a refresh once they reach the threshold (RfTreeOptions::refresh_hops); at most
// one refresh runs per compute node, at most one per refresh_min_us, started by the next
// operation of whichever session sees it due (RfTree::Run). Writers never update the cache:
// their splits show up in the next refresh.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "alloc/append_log.h"
#include "common/epoch.h"
#include "designs/rftree/slc_snapshot.h"
#include "fabric/endpoint.h"

namespace dmindex::designs::rftree {

struct SlcConfig {
  uint64_t budget_bytes = 0;      // a search layer larger than this is not read (counted)
  uint32_t chunk_bytes = 256u << 10;
  bool refresh_auto = true;       // threshold = the snapshot's internal nodes, at least 16
  uint64_t refresh_hops = 0;      // otherwise; 0: never refresh after the first fill
  uint64_t min_interval_us = 0;
  bool scan_batch = false;        // FindLeafRun answers (Sherman's batched leaf READs)
  bool validate = true;
};

template <tree::KeyValueTraits KV>
class SearchLayerCache final : public tree::RoutingCache<KV> {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Hit = typename tree::RoutingCache<KV>::Hit;
  using Snapshot = SlcSnapshot<KV>;

  SearchLayerCache(const tree::NodeLayout<KV>& layout, const alloc::AppendLog& log,
                   GlobalAddress root_word, const SlcConfig& config);
  ~SearchLayerCache() override;

  // --- RoutingCache; callers are inside an EpochGuard of epochs() ---
  bool FindChild(KeyRef key, uint8_t min_level, Hit* hit) override;
  bool FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                   std::vector<GlobalAddress>* leaves) override;
  void Insert(GlobalAddress, const tree::NodeHeader<KV>&, const std::byte*) override {}
  void MovedRight(const Hit& hit, KeyRef key, uint32_t hops) override;
  void Stale(const Hit& hit, KeyRef key) override;
  uint64_t hits() const override { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const override { return misses_.load(std::memory_order_relaxed); }
  // The published snapshot and the replaced ones not freed yet.
  uint64_t bytes() const override;

  EpochManager& epochs() { return epochs_; }

  // Asks for a refresh at the next operation (the tree changed wholesale: a bulk load).
  void RequestRefresh() { want_.store(true, std::memory_order_relaxed); }
  // A refresh is wanted, none is running on this compute node and the rate limit allows one.
  bool RefreshDue() const;
  // Reads the search layer and publishes it, unless a refresh is running already. `retire`
  // (outside any operation) hands the replaced snapshot to the epoch manager.
  Status Refresh(fabric::Endpoint& ep, EpochManager::Participant& retire);

  struct Counters {
    uint64_t refreshes = 0;        // snapshots published
    uint64_t skipped = 0;          // refreshes not done: the search layer exceeds the budget
    uint64_t stale_reads = 0;      // extra remote READs counted toward the threshold
    uint64_t torn_left_out = 0;    // blocks still torn after their second READ
    uint64_t snapshot_nodes = 0;   // internal nodes in the published snapshot
  };
  Counters counters() const;

 private:
  void AddStale(uint64_t n);
  uint64_t Threshold() const;
  Result<std::vector<typename Snapshot::Segment>> ReadSegments(fabric::Endpoint& ep,
                                                               const std::vector<alloc::AppendLog::Segment>& log);

  const tree::NodeLayout<KV> layout_;
  const tree::NodeValidator<KV> validator_;
  const alloc::AppendLog& log_;
  const GlobalAddress root_word_;
  const SlcConfig config_;
  EpochManager epochs_;
  std::atomic<const Snapshot*> current_{nullptr};
  std::atomic<bool> want_{true};        // the first operation fills the cache
  std::atomic<bool> in_flight_{false};
  // When the last refresh began, on runtime::Now()'s clock; kNeverRefreshed before the first.
  // Not 0: that clock counts from boot, so within refresh_min_us of boot a 0 would read as a
  // refresh just done and hold the first one back (the cache stayed empty).
  static constexpr int64_t kNeverRefreshed = INT64_MIN;
  std::atomic<int64_t> last_start_ns_{kNeverRefreshed};
  std::atomic<uint64_t> stale_{0};      // since the last refresh began
  std::atomic<uint64_t> hits_{0}, misses_{0};
  std::atomic<uint64_t> current_bytes_{0};  // the published snapshot's bytes()
  std::atomic<uint64_t> refreshes_{0}, skipped_{0}, stale_total_{0}, torn_left_{0}, nodes_{0};
};

}  // namespace dmindex::designs::rftree
