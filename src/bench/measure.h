// The timed part of a run: `threads` threads each open a session, run their share of the
// warmup, meet, run the measured phase (a number of operations, or until told to stop), and
// meet again. Verb counts and index stats are snapshot exactly at the two meeting points,
// so they cover the measured phase and nothing else.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bench/latency_histogram.h"
#include "bench/op_stream.h"
#include "bench/progress.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::bench {

struct MeasureOptions {
  uint32_t threads = 1;
  uint32_t compute_nodes = 1;  // thread t works on compute node t % compute_nodes
  uint64_t warmup_ops = 0;     // total over all threads
  uint64_t ops = 0;            // total measured operations; 0: run for `seconds`
  double seconds = 1.0;
  std::string label;           // shown on the progress bar
};

struct Measurement {
  uint64_t ops = 0;
  double seconds = 0;
  LatencyHistogram latency;
  fabric::VerbCounts verbs;
  IndexStats stats_before, stats_after;
  std::vector<uint64_t> inserts;  // per thread, warmup included: what the final check expects
  std::string error;              // the first failed operation, if any
  bool interrupted = false;
};

Measurement Measure(Index& index, fabric::Fabric& fabric, std::shared_ptr<const StreamPlan> plan,
                    const MeasureOptions& options, const std::atomic<bool>& interrupt,
                    Progress& progress);

}  // namespace dmindex::bench
