// Throughput over time: the measured phase cut into fixed intervals (`--timeline-ms`), and
// what the timeline says around an event such as a repartitioning (DEX Fig. 10): throughput
// before, the lowest interval, when it came back.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace dmindex::bench {

struct TimelineInterval {
  double start_s = 0, end_s = 0;  // seconds into the measured phase
  uint64_t ops = 0;               // operations completed in [start_s, end_s)
  uint64_t round_trips = 0;       // network round trips in the same interval (cache misses,
                                  // write-backs, offloads: CPU noise does not move them)
  uint64_t rpcs = 0;              // of which RPCs (offloads; XStore's writes and fallbacks)
  uint64_t memory_bytes = 0;      // the index's memory at the interval's end (IndexStats::
                                  // cache_bytes: IndeXY's X, a store's caches, a cache's pages)
  uint64_t cache_hits = 0, cache_misses = 0;  // IndexStats differences over the interval
  double throughput_ops() const { return end_s > start_s ? static_cast<double>(ops) / (end_s - start_s) : 0; }
  double round_trips_per_op() const { return ops ? static_cast<double>(round_trips) / static_cast<double>(ops) : 0; }
  double rpcs_per_op() const { return ops ? static_cast<double>(rpcs) / static_cast<double>(ops) : 0; }
  // None when the index reported no cache lookups in the interval.
  std::optional<double> cache_hit_ratio() const {
    if (cache_hits + cache_misses == 0) return std::nullopt;
    return static_cast<double>(cache_hits) / static_cast<double>(cache_hits + cache_misses);
  }
};

// What a timeline samples at one moment: counts since the measured phase began, and the
// index's memory then (a level, not a count).
struct TimelineTotals {
  uint64_t ops = 0;          // operations completed
  uint64_t round_trips = 0;  // network round trips made
  uint64_t rpcs = 0;         // of which RPCs
  uint64_t cache_hits = 0, cache_misses = 0;
  uint64_t memory_bytes = 0;  // IndexStats::cache_bytes now
};

// Samples the totals at the boundaries k x interval. A sample taken late (the sampler did not
// get the core) closes a longer interval at the time it was taken, so no interval claims
// operations it did not see; the next boundary stays on the grid.
class TimelineRecorder {
 public:
  // `phase_s`: the planned length of the phase (0 if it ends after a number of operations);
  // no boundary is sampled at or after it, the phase's end closes the last interval.
  TimelineRecorder(double interval_s, double phase_s) : interval_s_(interval_s), phase_s_(phase_s) {}

  double next_due_s() const { return interval_s_ * static_cast<double>(next_); }
  bool Due(double elapsed_s) const {
    return elapsed_s >= next_due_s() && (phase_s_ <= 0 || next_due_s() < phase_s_ - 1e-9);
  }
  // The totals at `at_s` seconds into the phase.
  void Sample(double at_s, const TimelineTotals& totals);
  // Every interval; the last one ends at `end_s` with these totals (which may come from a
  // different count than the samples': a counter behind the last sample adds nothing).
  std::vector<TimelineInterval> Finish(double end_s, const TimelineTotals& totals) const;

 private:
  const double interval_s_;
  const double phase_s_;
  uint64_t next_ = 1;  // the next boundary is next_ x interval_s_
  std::vector<TimelineInterval> intervals_;
  double last_s_ = 0;
  TimelineTotals last_;  // at the last sample
};

// Throughput around an event that ran during [start_s, end_s].
struct DipAndRecovery {
  double before_ops = 0;           // mean over the intervals that ended before start_s
  double lowest_ops = 0;           // lowest interval from the one holding start_s until recovery
  double lowest_end_s = 0;         // end of that interval
  std::optional<double> recovered_s;  // end of the first interval after end_s back at
                                      // `fraction` x before_ops
  std::optional<double> after_ops;    // mean from recovery to the end of the phase
};
DipAndRecovery SummarizeDip(const std::vector<TimelineInterval>& timeline, double start_s,
                            double end_s, double fraction = 0.9);

}  // namespace dmindex::bench
