#include "bench/timeline.h"

#include <algorithm>
#include <cmath>

namespace dmindex::bench {
namespace {

double MeanThroughput(const std::vector<TimelineInterval>& t, size_t from, size_t to) {
  uint64_t ops = 0;
  double seconds = 0;
  for (size_t i = from; i < to; ++i) {
    ops += t[i].ops;
    seconds += t[i].end_s - t[i].start_s;
  }
  return seconds > 0 ? static_cast<double>(ops) / seconds : 0;
}

// The interval [from_s, to_s) between two samples' totals.
TimelineInterval Between(double from_s, double to_s, const TimelineTotals& from, const TimelineTotals& to) {
  const auto since = [](uint64_t now, uint64_t then) { return now > then ? now - then : 0; };
  return {from_s,
          to_s,
          since(to.ops, from.ops),
          since(to.round_trips, from.round_trips),
          since(to.rpcs, from.rpcs),
          to.memory_bytes,
          since(to.cache_hits, from.cache_hits),
          since(to.cache_misses, from.cache_misses)};
}

}  // namespace

void TimelineRecorder::Sample(double at_s, const TimelineTotals& totals) {
  intervals_.push_back(Between(last_s_, at_s, last_, totals));
  last_s_ = at_s;
  last_ = totals;
  // Skip the boundaries missed; at least one, whatever the rounding of at_s / interval_s_.
  next_ = std::max(next_ + 1, static_cast<uint64_t>(std::floor(at_s / interval_s_)) + 1);
}

std::vector<TimelineInterval> TimelineRecorder::Finish(double end_s, const TimelineTotals& totals) const {
  std::vector<TimelineInterval> all = intervals_;
  if (end_s > last_s_ || totals.ops > last_.ops) all.push_back(Between(last_s_, std::max(end_s, last_s_), last_, totals));
  return all;
}

DipAndRecovery SummarizeDip(const std::vector<TimelineInterval>& t, double start_s, double end_s,
                            double fraction) {
  DipAndRecovery d;
  size_t first_during = 0;  // the first interval that did not end before the event started
  while (first_during < t.size() && t[first_during].end_s <= start_s) ++first_during;
  d.before_ops = MeanThroughput(t, 0, first_during);
  size_t recovered = t.size();
  for (size_t i = first_during; i < t.size(); ++i) {
    if (t[i].start_s >= end_s && t[i].throughput_ops() >= fraction * d.before_ops) {
      recovered = i;
      break;
    }
  }
  if (recovered < t.size()) {
    d.recovered_s = t[recovered].end_s;
    d.after_ops = MeanThroughput(t, recovered, t.size());
  }
  for (size_t i = first_during; i < std::max(recovered, first_during + 1) && i < t.size(); ++i) {
    if (i == first_during || t[i].throughput_ops() < d.lowest_ops) {
      d.lowest_ops = t[i].throughput_ops();
      d.lowest_end_s = t[i].end_s;
    }
  }
  return d;
}

}  // namespace dmindex::bench
