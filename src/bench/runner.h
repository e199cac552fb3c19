// One benchmark run of one design on one workload: a fresh fabric and index, bulk load,
// warmup, measured phase, then the full-scan check. Clusters and indexes come from factories
// the caller passes (the driver uses Index::Open; tests can pass their own).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/progress.h"
#include "bench/record_shape.h"
#include "bench/repartition_plan.h"
#include "bench/run_result.h"
#include "common/watchdog.h"
#include "bench/trace.h"
#include "bench/workload_spec.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::bench {

using ClusterFactory = std::function<Result<std::shared_ptr<Cluster>>()>;
// Index::Open, or a test's own index; the design is options.design.
using IndexFactory = std::function<Result<std::unique_ptr<Index>>(const IndexOptions& options,
                                                                  std::shared_ptr<Cluster> cluster)>;

// A design as the command line names it: "sherman" or "sherman:hocl=off:combine=on".
struct DesignChoice {
  std::string label;  // as given
  std::string name;   // registry name
  std::map<std::string, std::string> knobs;
};
Result<DesignChoice> ParseDesignChoice(std::string_view text);

struct RunConfig {
  uint64_t keys = 200'000;  // bulk-loaded records
  uint64_t warmup_ops = 0;  // total over all threads
  uint64_t ops = 0;         // measured operations in total; 0: run for `seconds`
  double seconds = 2.0;
  uint32_t threads = 2;
  uint64_t seed = 42;
  double timeline_s = 0;    // > 0: throughput per interval of this many seconds
  std::optional<RepartitionSpec> repartition;  // needs a timed run (ops == 0)
  IndexOptions index;       // design and knobs are replaced by the run's
  RecordShape shape;        // keys and values as bytes (the key format with it)
  // Replay this trace instead of generating the workload: its load is bulk loaded, its
  // operations split over the threads by key (trace.h); the first warmup_ops unmeasured.
  std::shared_ptr<const Trace> trace;
  // Every completed operation goes here too (--trace-out).
  std::shared_ptr<TraceRecorder> trace_out;
  WatchdogOptions watchdog;  // of the warm-up and the measured phase (MeasureOptions)
  std::function<void(bool measuring)> on_measured_phase;  // MeasureOptions::on_measured_phase
};

class Runner {
 public:
  Runner(ClusterFactory clusters, IndexFactory indexes, const std::atomic<bool>& interrupt,
         Progress& progress)
      : clusters_(std::move(clusters)), indexes_(std::move(indexes)), interrupt_(interrupt),
        progress_(progress) {}

  // A Status when the run cannot start (no cluster, unknown knob, bulk load refused, a
  // repartitioning the design cannot do);
  // otherwise a result, whose error / verify_error say whether the index behaved.
  Result<RunResult> Run(const DesignChoice& design, const WorkloadSpec& spec,
                        const RunConfig& config);

 private:
  Status InBackground(const std::string& label, std::function<Status()> work);

  ClusterFactory clusters_;
  IndexFactory indexes_;
  const std::atomic<bool>& interrupt_;
  Progress& progress_;
};

}  // namespace dmindex::bench
