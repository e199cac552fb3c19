// From what the user asked for (flags of `dmindex bench`) to the list of runs: which designs
// with which knobs, which workloads (named, or YCSB property files), and each run's knobs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/runner.h"
#include "bench/workload_spec.h"

namespace dmindex::bench {

inline constexpr uint64_t kDefaultKeys = 200'000;
inline constexpr double kDefaultSeconds = 2.0;
inline constexpr double kDefaultCachePct = 10.0;
inline constexpr double kDefaultRepartitionTimelineMs = 100;
inline constexpr uint64_t kDefaultWarmupOps = 20'000;
inline constexpr uint32_t kDefaultThreads = 2;

// What the command line may ask for; MakeBenchPlan also checks that keys and caches fit in
// the machine's memory.
struct BenchLimits {
  static constexpr uint64_t kMaxKeys = 1'000'000'000'000;
  static constexpr uint64_t kMaxOps = 1'000'000'000'000;
  static constexpr double kMaxSeconds = 7 * 24 * 3600;
  static constexpr uint32_t kMaxThreads = 1024;
  static constexpr double kMaxCacheMb = 1 << 24;
};
std::vector<std::string> DefaultWorkloads();    // ycsb-c, ycsb-a

struct BenchOptions {
  std::vector<std::string> designs;         // "name[:knob=value...]"; empty: every registered one
  std::vector<std::string> workloads;       // built-in names
  std::vector<std::string> workload_files;  // YCSB property files (-P)
  std::vector<std::string> properties;      // key=value applied to every workload (-p)
  std::optional<double> theta;              // overrides every workload's zipfian theta
  std::optional<uint64_t> keys;             // else a file's recordcount, else kDefaultKeys
  std::optional<uint64_t> ops;              // else --duration, else a file's operationcount
  std::optional<double> seconds;            // else kDefaultSeconds
  std::optional<uint64_t> warmup_ops;       // else kDefaultWarmupOps, or none for a file's operationcount
  std::optional<uint32_t> threads;          // else a -P file's threadcount (YCSB's default 1), else kDefaultThreads
  uint32_t compute_nodes = 1;
  // --memory-limit: the memory of designs that hold an index larger than memory (indexy,
  // rocksdb, lmdb, btree-disk: `memory_limited`, from the registry), given to them as their
  // knob limit_mb unless the design names one itself.
  std::optional<uint64_t> memory_limit;
  std::vector<std::string> memory_limited;
  std::optional<double> cache_mb;           // per compute node
  std::optional<double> cache_pct;          // of keys x record bytes; default kDefaultCachePct
  uint32_t node_bytes = 1024;
  // Keys and values as bytes (record_shape.h). u64: 8-byte integer keys and values, the
  // default of the named workloads (the papers' figures are of 8-byte keys, and so are the
  // results in docs/ they reproduce; node_bytes too stays the papers' 1024). bytes, the default
  // of -P files and --trace: YCSB's records - "user..." keys as YCSB names them (a trace's
  // verbatim) and YCSB records of fieldcount x fieldlength serialized as the YCSB binding
  // does - or binary keys of key_bytes and raw values of value_bytes. u64 with --trace: user<N>
  // is integer N + 1 (trace.h).
  std::optional<std::string> key_format;
  std::optional<std::string> key_style;     // binary | ycsb
  std::optional<uint32_t> key_bytes;
  std::optional<uint32_t> value_bytes;
  std::optional<std::string> value_dist;    // constant | uniform | zipfian
  // Which keys the records get (key_space.h): hashed or ordered (YCSB's insertorder), or
  // sequential, noised-linear, lognormal; overrides every workload's insertorder.
  std::optional<std::string> key_dist;
  uint64_t seed = 42;
  std::string baseline;                     // a design label; empty: the first design
  std::optional<double> timeline_ms;        // throughput per interval; default 100 ms with a repartitioning
  // A scheduled repartitioning (repartition_plan.h); the other fields need repartition_at.
  std::optional<double> repartition_at;     // seconds into the measured phase
  std::optional<uint32_t> repartition_from;  // default 0
  std::optional<uint32_t> repartition_to;    // default: from's right neighbour (left for the last)
  std::optional<double> repartition_share;   // default 0.5
  bool scale_out = false;
  // --trace / --trace-load: replay a YCSB BasicDB stream instead of a workload (trace.h).
  std::string trace, trace_load;
  bool trace_out = false;  // --trace-out: record the run (one run only)
};

struct PlannedRun {
  DesignChoice design;
  WorkloadSpec workload;
  RunConfig config;
};

struct BenchPlan {
  std::vector<PlannedRun> runs;  // design-major: every workload of design 1, then design 2...
  std::string baseline;
  // Properties of the workloads that dmindex cannot honour, unknown ones, YCSB quirks applied:
  // one line each, for the driver to print.
  std::vector<std::string> warnings;
};

// `registered` are the designs that exist (designs::DesignNames()). Errors name the flag.
Result<BenchPlan> MakeBenchPlan(const BenchOptions& options, const std::vector<std::string>& registered);

}  // namespace dmindex::bench
