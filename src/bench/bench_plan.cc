#include "bench/bench_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "bench/property_file.h"
#include "bench/trace.h"
#include "common/option_checks.h"

namespace dmindex::bench {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<std::vector<WorkloadSpec>> ResolveWorkloads(const BenchOptions& o) {
  std::vector<WorkloadSpec> specs;
  if (!o.trace.empty()) {
    if (!o.workloads.empty() || !o.workload_files.empty() || !o.properties.empty())
      return Status::InvalidArgument("--trace replays a stream: it takes no --workload, -P or -p");
    WorkloadSpec spec;  // only names the run: the trace says what to do
    spec.name = std::filesystem::path(o.trace).filename().string();
    spec.proportion[0] = 1;
    spec.ycsb_records = true;  // its keys are YCSB's "user<N>"
    return std::vector<WorkloadSpec>{spec};
  }
  if (!o.trace_load.empty()) return Status::InvalidArgument("--trace-load goes with --trace");
  std::vector<std::string> names = o.workloads;
  if (names.empty() && o.workload_files.empty()) names = DefaultWorkloads();
  for (const std::string& name : names) {
    auto spec = NamedWorkload(name);
    if (!spec.ok()) return Status::InvalidArgument("--workload: " + spec.status().message());
    specs.push_back(*spec);
  }
  for (const std::string& path : o.workload_files) {
    auto spec = LoadWorkloadFile(path);
    if (!spec.ok()) return Status::InvalidArgument("-P: " + spec.status().message());
    spec->ycsb_records = true;
    specs.push_back(*spec);
  }
  for (WorkloadSpec& spec : specs) {
    for (const std::string& p : o.properties) {
      Status s = ApplyPropertyOverride(p, &spec);
      if (!s.ok()) return Status::InvalidArgument("-p: " + s.message());
    }
    if (o.theta) spec.zipfian_theta = *o.theta;
    if (o.key_dist && !ParseKeyDistribution(*o.key_dist, &spec.insert_order))
      return Status::InvalidArgument("--key-dist " + *o.key_dist +
                                     ": expected hashed, ordered, sequential, noised-linear or lognormal");
    if (Status s = spec.Validate(); !s.ok()) return s;
  }
  return specs;
}

Result<std::vector<DesignChoice>> ResolveDesigns(const BenchOptions& o,
                                                 const std::vector<std::string>& registered) {
  std::vector<std::string> texts = o.designs.empty() ? registered : o.designs;
  if (texts.empty()) return Status::NotSupported("no index design is registered in this build");
  std::vector<DesignChoice> designs;
  for (const std::string& text : texts) {
    auto d = ParseDesignChoice(text);
    if (!d.ok()) return Status::InvalidArgument("--design: " + d.status().message());
    if (std::find(registered.begin(), registered.end(), d->name) == registered.end())
      return Status::InvalidArgument("--design: unknown design '" + d->name + "' (known: " +
                                     Join(registered) + ")");
    for (const DesignChoice& seen : designs)
      if (seen.label == d->label) return Status::InvalidArgument("--design: '" + d->label + "' given twice");
    designs.push_back(*d);
  }
  return designs;
}

uint64_t CacheBytes(const BenchOptions& o, uint64_t keys, const RecordShape& shape) {
  if (o.cache_mb) return static_cast<uint64_t>(std::llround(*o.cache_mb * (1 << 20)));
  const double pct = o.cache_pct.value_or(kDefaultCachePct);
  return static_cast<uint64_t>(std::llround(pct / 100.0 * static_cast<double>(keys) * shape.MeanRecordBytes()));
}

// The key format of a run: the flag, else YCSB's records for -P files and traces.
KeyFormat FormatFor(const BenchOptions& o, const WorkloadSpec& spec) {
  return o.key_format.value_or(spec.ycsb_records ? "bytes" : "u64") == "bytes" ? KeyFormat::kBytes : KeyFormat::kU64;
}

// The values of a bytes-format run: --value-bytes (raw), else the file's YCSB record shape.
Status ValuesFor(const BenchOptions& o, const WorkloadSpec& spec, RecordShape* shape) {
  if (o.value_bytes) {
    shape->fields = 1;
    shape->field_bytes = *o.value_bytes;
  } else if (spec.ycsb_records || spec.field_count > 0 || spec.field_length > 0) {
    // YCSB's record, its defaults for what is not given: 10 fields of 100 bytes.
    shape->ycsb_fields = true;
    shape->fields = spec.field_count > 0 ? spec.field_count : 10;
    shape->field_bytes = spec.field_length > 0 ? spec.field_length : 100;
    shape->min_field_bytes = spec.min_field_length.value_or(1);
    shape->field_prefix = spec.field_name_prefix.value_or("field");
  }
  const std::string dist = o.value_dist.value_or(spec.field_length_distribution.value_or("constant"));
  auto lengths = ParseFieldLengths(dist);
  if (!lengths.ok()) return Status::InvalidArgument("--value-dist: " + lengths.status().message());
  shape->field_lengths = *lengths;
  return Status::Ok();
}

// The record shape of a run: the flags, else the workload file's YCSB records, else u64.
Result<RecordShape> ShapeFor(const BenchOptions& o, const WorkloadSpec& spec, const Trace* trace) {
  RecordShape shape;
  shape.order = trace ? InsertOrder::kOrdered : spec.insert_order;  // a trace's u64 keys: user<N>
  shape.zero_padding = spec.zero_padding;
  if (FormatFor(o, spec) == KeyFormat::kU64) {
    if (o.key_style || o.key_bytes || o.value_bytes || o.value_dist)
      return Status::InvalidArgument(std::string("--key-style, --key-bytes, --value-bytes and --value-dist shape a "
                                                 "bytes-format run: ") +
                                     (o.key_format ? "--key-format u64 has 8-byte keys and values"
                                                   : "give --key-format bytes (" + spec.name +
                                                         "'s keys and values are 8-byte integers by default)"));
    return shape;
  }
  shape.format = KeyFormat::kBytes;
  if (trace) {
    if (o.key_style || o.key_bytes)
      return Status::InvalidArgument("--trace replays its keys verbatim: it takes no --key-style or --key-bytes "
                                     "(--key-format u64 maps user<N> to the integer N + 1)");
    shape.style = KeyStyle::kTrace;
    shape.key_bytes = trace->longest_key;
  } else {
    const std::string style = o.key_style.value_or(spec.ycsb_records ? "ycsb" : "binary");
    shape.style = style == "ycsb" ? KeyStyle::kYcsb : KeyStyle::kBinary;
    if (shape.style == KeyStyle::kYcsb && spec.insert_order != InsertOrder::kHashed &&
        spec.insert_order != InsertOrder::kOrdered)
      return Status::InvalidArgument(std::string("--key-dist ") + InsertOrderName(spec.insert_order) +
                                     ": YCSB's user<n> keys are hashed or ordered (use --key-style binary)");
    shape.key_bytes = o.key_bytes.value_or(shape.style == KeyStyle::kBinary ? 16 : 0);
  }
  DMX_RETURN_IF_ERROR(ValuesFor(o, spec, &shape));
  if (Status s = shape.Validate(); !s.ok()) return s;
  return shape;
}

// What a run holds in this process's memory: the bulk-load records and the final check's key
// list (24 bytes a key), the tree itself when the fabric is in-process (about 20 bytes a key
// at 80% fill), and every compute node's cache. A run that cannot fit is refused up front
// instead of dying of std::bad_alloc half-way.
Status CheckFitsInMemory(const RunConfig& c, const std::string& workload) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return Status::Ok();  // unknown: let the run try
  const double ram = static_cast<double>(pages) * static_cast<double>(page);
  const double keys = static_cast<double>(c.keys) * 44;
  const double caches = static_cast<double>(c.index.cache_bytes) * c.index.compute_nodes;
  if (keys + caches <= ram) return Status::Ok();
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %llu keys and %.1f MB of cache on each of %u compute node(s) need about "
                "%.1f GiB of memory; this machine has %.1f GiB (lower --keys or --cache-mb/--cache-pct)",
                workload.c_str(), static_cast<unsigned long long>(c.keys),
                static_cast<double>(c.index.cache_bytes) / (1 << 20), c.index.compute_nodes,
                (keys + caches) / (1 << 30), ram / (1 << 30));
  return Status::InvalidArgument(line);
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The scheduled repartitioning, checked against the cluster it will run on; the run's length
// is checked per run (a -P file may set it).
Result<std::optional<RepartitionSpec>> ResolveRepartition(const BenchOptions& o) {
  if (!o.repartition_at) {
    const char* orphan = o.repartition_from    ? "--repartition-from"
                         : o.repartition_to    ? "--repartition-to"
                         : o.repartition_share ? "--repartition-share"
                         : o.scale_out         ? "--scale-out"
                                               : nullptr;
    if (orphan) return Status::InvalidArgument(std::string(orphan) + " needs --repartition-at");
    return std::optional<RepartitionSpec>();
  }
  const uint32_t n = o.compute_nodes;
  if (n < 2)
    return Status::InvalidArgument("--repartition-at moves keys between compute nodes: it needs "
                                   "--compute-nodes 2 or more");
  if (!(*o.repartition_at > 0)) return Status::InvalidArgument("--repartition-at must be > 0 seconds");
  RepartitionSpec spec;
  spec.at_s = *o.repartition_at;
  spec.from = o.repartition_from.value_or(0);
  if (spec.from >= n)
    return Status::InvalidArgument("--repartition-from " + std::to_string(spec.from) +
                                   ": compute nodes are numbered 0.." + std::to_string(n - 1));
  spec.to = o.repartition_to.value_or(spec.from + 1 < n ? spec.from + 1 : spec.from - 1);
  if (spec.to >= n || (spec.to != spec.from + 1 && spec.to + 1 != spec.from))
    return Status::InvalidArgument(
        "--repartition-to " + std::to_string(spec.to) + " must be a neighbour of --repartition-from " +
        std::to_string(spec.from) + " below " + std::to_string(n) +
        " (compute node i serves the i-th key range; moving one boundary hands keys to a neighbour)");
  spec.share = o.repartition_share.value_or(0.5);
  if (!(spec.share > 0 && spec.share <= 1))
    return Status::InvalidArgument("--repartition-share must be in (0, 1]");
  spec.scale_out = o.scale_out;
  return std::optional<RepartitionSpec>(spec);
}

}  // namespace

std::vector<std::string> DefaultWorkloads() { return {"ycsb-c", "ycsb-a"}; }

Result<BenchPlan> MakeBenchPlan(const BenchOptions& o, const std::vector<std::string>& registered) {
  if (o.threads && *o.threads == 0) return Status::InvalidArgument("--threads must be at least 1");
  if (o.compute_nodes == 0 || o.compute_nodes > o.threads.value_or(kDefaultThreads))
    return Status::InvalidArgument("--compute-nodes must be between 1 and --threads");
  if (o.cache_mb && o.cache_pct) return Status::InvalidArgument("give --cache-mb or --cache-pct, not both");
  if (o.ops && o.seconds) return Status::InvalidArgument("give --ops or --duration, not both");
  if (o.ops && *o.ops == 0) return Status::InvalidArgument("--ops must be at least 1");
  if (o.seconds && !(*o.seconds > 0)) return Status::InvalidArgument("--duration must be > 0");
  if (Status s = CheckNodeBytes(o.node_bytes, 64); !s.ok())
    return Status::InvalidArgument("--node-size: " + s.message());
  if (o.timeline_ms && !(*o.timeline_ms >= 1))
    return Status::InvalidArgument("--timeline-ms must be at least 1");
  auto repartition = ResolveRepartition(o);
  if (!repartition.ok()) return repartition.status();
  const double timeline_ms =
      o.timeline_ms.value_or(*repartition ? kDefaultRepartitionTimelineMs : 0);
  auto workloads = ResolveWorkloads(o);
  if (!workloads.ok()) return workloads.status();
  auto designs = ResolveDesigns(o, registered);
  if (!designs.ok()) return designs.status();
  std::shared_ptr<const Trace> trace;
  if (!o.trace.empty()) {
    if (o.keys || o.ops || o.seconds)
      return Status::InvalidArgument("--trace runs its stream to the end on the keys of --trace-load: "
                                     "it takes no --keys, --ops or --duration");
    auto t = ReadTrace(o.trace, o.trace_load, o.key_format == "u64");
    if (!t.ok()) return Status::InvalidArgument("--trace: " + t.status().message());
    trace = std::make_shared<const Trace>(std::move(t).value());
  }
  if (o.trace_out && designs->size() * workloads->size() != 1)
    return Status::InvalidArgument("--trace-out records one run: give one design and one workload");

  BenchPlan plan;
  plan.baseline = o.baseline.empty() ? designs->front().label : o.baseline;
  if (std::none_of(designs->begin(), designs->end(),
                   [&](const DesignChoice& d) { return d.label == plan.baseline; }))
    return Status::InvalidArgument("--baseline '" + plan.baseline + "' is not among the designs run");
  for (const WorkloadSpec& spec : *workloads)
    plan.warnings.insert(plan.warnings.end(), spec.warnings.begin(), spec.warnings.end());
  for (DesignChoice& design : *designs) {
    if (o.memory_limit && !design.knobs.count("limit_mb") &&
        std::find(o.memory_limited.begin(), o.memory_limited.end(), design.name) != o.memory_limited.end())
      design.knobs["limit_mb"] = Number(static_cast<double>(*o.memory_limit) / (1 << 20));
  }
  for (const DesignChoice& design : *designs) {
    for (const WorkloadSpec& spec : *workloads) {
      PlannedRun run{design, spec, {}};
      RunConfig& c = run.config;
      c.keys = trace ? trace->load.size() : o.keys.value_or(spec.record_count ? spec.record_count : kDefaultKeys);
      if (c.keys == 0 && spec.NeedsExistingRecords() && !trace)
        return Status::InvalidArgument("--keys 0: workload '" + spec.name +
                                       "' reads existing records, so it needs at least one key");
      c.ops = o.ops.value_or(o.seconds ? 0 : spec.operation_count);
      // A file's operationcount is the whole run phase, as in YCSB: no default warm-up.
      const bool sized_by_file = !o.ops && !o.seconds && spec.operation_count > 0;
      c.warmup_ops = o.warmup_ops.value_or(sized_by_file || trace ? 0 : kDefaultWarmupOps);
      c.trace = trace;
      c.seconds = o.seconds.value_or(kDefaultSeconds);
      c.threads = o.threads.value_or(spec.thread_count ? spec.thread_count : kDefaultThreads);
      if (o.compute_nodes > c.threads)
        return Status::InvalidArgument(spec.name + ": --compute-nodes " + std::to_string(o.compute_nodes) +
                                       " exceeds its " + std::to_string(c.threads) + " threads (threadcount)");
      c.seed = o.seed;
      c.index.node_bytes = o.node_bytes;
      c.index.compute_nodes = o.compute_nodes;
      auto shape = ShapeFor(o, spec, trace.get());
      if (!shape.ok()) return shape.status();
      c.shape = *shape;
      c.index.cache_bytes = CacheBytes(o, c.keys, c.shape);
      if (Status s = CheckFitsInMemory(c, spec.name); !s.ok()) return s;
      c.timeline_s = timeline_ms / 1000;
      c.repartition = *repartition;
      if (c.repartition && c.ops != 0)
        return Status::InvalidArgument("--repartition-at needs a timed run (--duration), not a "
                                       "number of operations (" + spec.name + ")");
      if (c.repartition && c.repartition->at_s >= c.seconds)
        return Status::InvalidArgument("--repartition-at " + Number(c.repartition->at_s) +
                                       " s is not within the " + Number(c.seconds) +
                                       " s measured per run (--duration)");
      plan.runs.push_back(std::move(run));
    }
  }
  return plan;
}

}  // namespace dmindex::bench
