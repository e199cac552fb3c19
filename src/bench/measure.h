// The timed part of a run: `threads` threads each open a session, run their share of the
// warmup, meet, run the measured phase (a number of operations, or until told to stop), and
// meet again. Verb counts and index stats are snapshot exactly at the two meeting points,
// so they cover the measured phase and nothing else.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/latency_histogram.h"
#include "bench/op_stream.h"
#include "bench/record_shape.h"
#include "bench/progress.h"
#include "bench/timeline.h"
#include "common/watchdog.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::bench {

// Something done to the index at a given second of the measured phase, on its own thread
// while the workers keep going (a repartitioning). Its failure fails the run.
struct ScheduledAction {
  double at_s = 0;
  std::function<Status()> run;
};
struct ActionTimes {
  double start_s = 0, end_s = 0;  // seconds into the measured phase
};

struct MeasureOptions {
  uint32_t threads = 1;
  uint32_t compute_nodes = 1;  // thread t works on compute node t % compute_nodes
  uint64_t warmup_ops = 0;     // total over all threads
  uint64_t ops = 0;            // total measured operations; 0: run for `seconds`
  double seconds = 1.0;
  double timeline_s = 0;       // > 0: throughput per interval of this many seconds
  std::optional<ScheduledAction> action;
  std::string label;           // shown on the progress bar
  // Called by each thread for each operation it completed (warm-up included), e.g. to
  // record a trace; `sequence` orders them across threads by completion.
  std::function<void(uint32_t thread, uint64_t sequence, const Operation& op)> on_completed;
  // Called when the measured phase begins (true) and ends (false), by the last thread to
  // reach each meeting point, with no operation in flight: a simulation charges compute to
  // the measured operations only, not to the bulk load, warm-up or final check
  // (docs/SIMULATION.md, "Calibration").
  std::function<void(bool measuring)> on_measured_phase;
  // Stops waiting for a stuck run: on_stall gets a report of every thread's operation; the
  // run then ends with an error once the threads return (if they ever do).
  WatchdogOptions watchdog;
  // How the operations' keys and values become bytes (default: the u64 format's integers).
  std::shared_ptr<const RecordCodec> codec =
      std::make_shared<const RecordCodec>(RecordShape{});
};

// Each thread's operations; a source that runs dry ends that thread's part of the phase.
using OpSourceFactory = std::function<std::unique_ptr<OpSource>(uint32_t thread)>;

struct Measurement {
  uint64_t ops = 0;
  double seconds = 0;
  LatencyHistogram latency;
  fabric::VerbCounts verbs;
  IndexStats stats_before, stats_after;
  // Index::GetIntProperty counters (design-specific ones included): after minus before.
  std::map<std::string, uint64_t> property_deltas;
  std::vector<uint64_t> inserts;  // per thread, warmup included: what the final check expects
  std::vector<TimelineInterval> timeline;  // empty unless options.timeline_s > 0
  std::optional<ActionTimes> action;       // when the scheduled action ran, if it did
  std::string error;              // the first failed operation, if any
  bool interrupted = false;
};

Measurement Measure(Index& index, fabric::Fabric& fabric, const OpSourceFactory& sources,
                    const MeasureOptions& options, const std::atomic<bool>& interrupt,
                    Progress& progress);

}  // namespace dmindex::bench
