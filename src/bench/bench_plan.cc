#include "bench/bench_plan.h"

#include <algorithm>
#include <cmath>

#include "bench/property_file.h"

namespace dmindex::bench {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<std::vector<WorkloadSpec>> ResolveWorkloads(const BenchOptions& o) {
  std::vector<WorkloadSpec> specs;
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
    specs.push_back(*spec);
  }
  for (WorkloadSpec& spec : specs) {
    for (const std::string& p : o.properties) {
      Status s = ApplyPropertyOverride(p, &spec);
      if (!s.ok()) return Status::InvalidArgument("-p: " + s.message());
    }
    if (o.theta) spec.zipfian_theta = *o.theta;
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

uint64_t CacheBytes(const BenchOptions& o, uint64_t keys) {
  if (o.cache_mb) return static_cast<uint64_t>(std::llround(*o.cache_mb * (1 << 20)));
  const double pct = o.cache_pct.value_or(kDefaultCachePct);
  return static_cast<uint64_t>(std::llround(pct / 100.0 * static_cast<double>(keys * kBytesPerRecord)));
}

}  // namespace

std::vector<std::string> DefaultWorkloads() { return {"ycsb-c", "ycsb-a"}; }

Result<BenchPlan> MakeBenchPlan(const BenchOptions& o, const std::vector<std::string>& registered) {
  if (o.threads == 0) return Status::InvalidArgument("--threads must be at least 1");
  if (o.compute_nodes == 0 || o.compute_nodes > o.threads)
    return Status::InvalidArgument("--compute-nodes must be between 1 and --threads");
  if (o.cache_mb && o.cache_pct) return Status::InvalidArgument("give --cache-mb or --cache-pct, not both");
  if (o.ops && o.seconds) return Status::InvalidArgument("give --ops or --duration, not both");
  if (o.ops && *o.ops == 0) return Status::InvalidArgument("--ops must be at least 1");
  if (o.seconds && !(*o.seconds > 0)) return Status::InvalidArgument("--duration must be > 0");
  if (o.node_bytes < 64 || o.node_bytes % 64 != 0)
    return Status::InvalidArgument("--node-size must be a multiple of 64 bytes");
  auto workloads = ResolveWorkloads(o);
  if (!workloads.ok()) return workloads.status();
  auto designs = ResolveDesigns(o, registered);
  if (!designs.ok()) return designs.status();

  BenchPlan plan;
  plan.baseline = o.baseline.empty() ? designs->front().label : o.baseline;
  if (std::none_of(designs->begin(), designs->end(),
                   [&](const DesignChoice& d) { return d.label == plan.baseline; }))
    return Status::InvalidArgument("--baseline '" + plan.baseline + "' is not among the designs run");
  for (const DesignChoice& design : *designs) {
    for (const WorkloadSpec& spec : *workloads) {
      PlannedRun run{design, spec, {}};
      RunConfig& c = run.config;
      c.keys = o.keys.value_or(spec.record_count ? spec.record_count : kDefaultKeys);
      c.warmup_ops = o.warmup_ops;
      c.ops = o.ops.value_or(o.seconds ? 0 : spec.operation_count);
      c.seconds = o.seconds.value_or(kDefaultSeconds);
      c.threads = o.threads;
      c.seed = o.seed;
      c.index.node_bytes = o.node_bytes;
      c.index.compute_nodes = o.compute_nodes;
      c.index.cache_bytes = CacheBytes(o, c.keys);
      plan.runs.push_back(std::move(run));
    }
  }
  return plan;
}

}  // namespace dmindex::bench
