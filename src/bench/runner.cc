#include "bench/runner.h"

#include <algorithm>

#include <chrono>
#include <mutex>

#include "api/cluster_access.h"
#include "bench/measure.h"
#include "common/runtime.h"
#include "bench/op_stream.h"
#include "bench/request_mass.h"
#include "bench/tree_check.h"

namespace dmindex::bench {

Result<DesignChoice> ParseDesignChoice(std::string_view text) {
  DesignChoice choice;
  choice.label = std::string(text);
  size_t colon = text.find(':');
  choice.name = std::string(text.substr(0, colon));
  if (choice.name.empty()) return Status::InvalidArgument("design '" + choice.label + "' has no name");
  while (colon != std::string_view::npos) {
    text.remove_prefix(colon + 1);
    colon = text.find(':');
    std::string_view knob = text.substr(0, colon);
    size_t eq = knob.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == knob.size())
      return Status::InvalidArgument("design '" + choice.label + "': knob '" + std::string(knob) +
                                     "' is not name=value");
    choice.knobs[std::string(knob.substr(0, eq))] = std::string(knob.substr(eq + 1));
  }
  return choice;
}

Status Runner::InBackground(const std::string& label, std::function<Status()> work) {
  // Bulk load and check are single long calls: they run on their own thread so that this one
  // can keep a spinner going.
  runtime::Mutex mu;
  runtime::CondVar cv;
  bool finished = false;
  Status result;
  runtime::Thread worker([&] {
    Status s = work();
    {
      std::lock_guard lock(mu);
      result = std::move(s);
      finished = true;
    }
    cv.NotifyAll();
  });
  std::unique_lock lock(mu);
  while (!cv.WaitUntil(lock, runtime::Now() + std::chrono::milliseconds(50), [&] { return finished; })) {
    lock.unlock();
    progress_.Spin(label);
    lock.lock();
  }
  lock.unlock();
  worker.join();
  progress_.Clear();
  return result;
}

Result<RunResult> Runner::Run(const DesignChoice& design, const WorkloadSpec& spec,
                              const RunConfig& config) {
  // YCSB sizes its zipfian key range by the operations it will run (their expected inserts).
  // A load phase inserts the run's records into an empty index, all of them measured.
  const bool load_phase = spec.load_phase && !config.trace && config.keys > 0;
  const uint64_t expected_ops = load_phase       ? config.keys
                                : config.ops > 0 ? config.ops + config.warmup_ops
                                                 : spec.operation_count;
  WorkloadSpec shifted = spec;
  if (spec.shift_phases > 1 && spec.shift_ops == 0) {
    // The phases split the measured operations (the warm-up runs in the first one).
    if (config.ops == 0)
      return Status::InvalidArgument(spec.name + ": a shifting working set splits the run's operations "
                                     "into its phases: give --ops (or the property shiftops)");
    shifted.shift_ops = std::max<uint64_t>(1, config.ops / spec.shift_phases);
  }
  // YCSB's keys name records by their number (RecordCodec): the plan's integer key of record
  // r is r + 1, and the codec names it as YCSB's insertorder says.
  if (config.shape.format == KeyFormat::kBytes && config.shape.style == KeyStyle::kYcsb)
    shifted.insert_order = InsertOrder::kSequential;
  auto plan = StreamPlan::Make(shifted, config.trace || load_phase ? 0 : config.keys, config.threads,
                               config.seed, expected_ops);
  if (!plan.ok() && !config.trace) return plan.status();
  auto cluster = clusters_();
  if (!cluster.ok()) return cluster.status();
  IndexOptions options = config.index;
  options.design = design.name;
  options.knobs = design.knobs;
  options.key_format = config.shape.format;
  if (config.shape.format == KeyFormat::kBytes) options.max_key_bytes = config.shape.MaxKeyBytes();
  options.max_value_bytes = std::max(options.max_value_bytes, config.shape.MaxValueBytes());
  auto codec = std::make_shared<const RecordCodec>(config.shape, config.trace ? config.trace->key_names : nullptr);
  if (config.trace_out) config.trace_out->UseCodec(codec);
  if (config.repartition && !codec->integers())
    return Status::NotSupported("--repartition-at plans its boundaries in integer keys: it takes the "
                                "u64 key format only");
  auto index = indexes_(options, *cluster);
  if (!index.ok()) return index.status();
  const std::string label = design.label + " " + spec.name;
  const std::vector<RecordPair> loaded = config.trace ? config.trace->load : (*plan)->LoadRecords();
  Status load = InBackground(label + " bulk load of " + std::to_string(loaded.size()) + " keys", [&] {
    std::vector<KeyValue> pairs(loaded.size());
    for (size_t i = 0; i < loaded.size(); ++i) {
      codec->EncodeKey(loaded[i].key, &pairs[i].key);
      codec->EncodeValue(pairs[i].key, loaded[i].value, &pairs[i].value);
    }
    // Byte keys sort otherwise than their integers (YCSB's "user..." names).
    if (!codec->integers())
      std::sort(pairs.begin(), pairs.end(), [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
    return (*index)->BulkLoad(pairs);
  });
  if (Status s = load; !s.ok())
    return Status::Aborted(label + ": bulk load failed: " + s.ToString());
  // A repartitioning is planned (and a scale-out's first step taken) before the warmup, so
  // a design that cannot do it fails now and the warmup refills the caches it dropped.
  std::optional<RepartitionOutcome> repartition;
  if (config.repartition) {
    auto move = PrepareRepartition(**index, *config.repartition, options.compute_nodes, loaded);
    if (!move.ok()) {
      const std::string why = label + ": --repartition-at: " + move.status().message();
      return move.status().code() == Status::Code::kNotSupported ? Status::NotSupported(why)
                                                                 : Status::InvalidArgument(why);
    }
    repartition.emplace();
    repartition->spec = *config.repartition;
    repartition->move = std::move(move).value();
  }

  RunResult r;
  r.design = design.label;
  r.workload = spec.name;
  r.backend = (*cluster)->backend();
  r.records = config.shape.ToString();
  r.threads = config.threads;
  r.compute_nodes = options.compute_nodes;
  r.cache_per_node_bytes = options.cache_bytes;
  r.keys = loaded.size();
  r.timeline_interval_s = config.timeline_s;
  if (interrupt_.load()) {
    r.interrupted = true;
    return r;
  }
  MeasureOptions mo;
  mo.threads = config.threads;
  mo.compute_nodes = std::max<uint32_t>(1, options.compute_nodes);
  mo.warmup_ops = load_phase ? 0 : config.warmup_ops;
  mo.ops = load_phase ? config.keys : config.ops;
  mo.seconds = config.seconds;
  mo.timeline_s = config.timeline_s;
  mo.label = label;
  mo.watchdog = config.watchdog;
  mo.codec = codec;
  mo.on_measured_phase = config.on_measured_phase;
  if (repartition) {
    mo.action = ScheduledAction{repartition->spec.at_s, [&]() -> Status {
      auto took = RepartitionTo(**index, repartition->move.after);
      if (!took.ok()) return Status::Aborted("repartitioning failed: " + took.status().ToString());
      repartition->reported_s = *took;
      return Status::Ok();
    }};
  }
  OpSourceFactory sources;
  if (config.trace) {
    // A trace runs to its end: no operation count or time limit.
    mo.ops = 0;
    mo.seconds = 1e12;
    auto parts = std::make_shared<std::vector<std::shared_ptr<const std::vector<Operation>>>>();
    for (auto& part : SplitByKey(config.trace->ops, config.threads))
      parts->push_back(std::make_shared<const std::vector<Operation>>(std::move(part)));
    sources = [parts](uint32_t t) -> std::unique_ptr<OpSource> { return std::make_unique<TraceOps>((*parts)[t]); };
  } else {
    sources = [p = *plan](uint32_t t) -> std::unique_ptr<OpSource> { return std::make_unique<GeneratedOps>(p, t); };
  }
  if (config.trace_out)
    mo.on_completed = [out = config.trace_out](uint32_t t, uint64_t seq, const Operation& op) { out->Record(t, seq, op); };
  Measurement m = Measure(**index, FabricOf(**cluster), sources, mo, interrupt_, progress_);
  r.timeline = std::move(m.timeline);
  if (repartition && m.action) {
    repartition->ran = true;
    repartition->start_s = m.action->start_s;
    repartition->end_s = m.action->end_s;
    repartition->dip = SummarizeDip(r.timeline, m.action->start_s, m.action->end_s);
  }
  r.repartition = std::move(repartition);

  r.ops = m.ops;
  r.seconds = m.seconds;
  r.p50_us = m.latency.PercentileUs(0.50);
  r.p99_us = m.latency.PercentileUs(0.99);
  r.p999_us = m.latency.PercentileUs(0.999);
  r.p9999_us = m.latency.PercentileUs(0.9999);
  r.mean_us = m.latency.MeanUs();
  r.verbs = m.verbs;
  r.cache_hits = m.stats_after.cache_hits - m.stats_before.cache_hits;
  r.cache_misses = m.stats_after.cache_misses - m.stats_before.cache_misses;
  r.offloads = m.property_deltas["dmindex.dex.offloads"];
  r.offload_fallbacks = m.property_deltas["dmindex.dex.offload-fallbacks"];
  r.slc_refreshes = m.property_deltas["dmindex.rftree.refreshes"];
  r.stale_reads = m.property_deltas["dmindex.rftree.stale-reads"];
  r.model_lookups = m.property_deltas["dmindex.xstore.lookups"];
  r.model_leaves_read = m.property_deltas["dmindex.xstore.leaves-read"];
  r.speculative_reads = m.property_deltas["dmindex.xstore.speculative-reads"];
  r.invalidations = m.property_deltas["dmindex.xstore.invalidations"];
  r.model_fallbacks = m.property_deltas["dmindex.xstore.fallbacks"];
  r.retrains = m.property_deltas["dmindex.xstore.retrains"];
  r.expansions = m.property_deltas["dmindex.xstore.expansions"];
  r.cache_bytes = m.stats_after.cache_bytes;
  for (const std::string& name : (*index)->PropertyNames())
    if (auto v = (*index)->GetIntProperty(name)) r.properties[name] = *v;
  if (auto x = r.properties.find("dmindex.indexy.x-entries"); x != r.properties.end()) {
    r.cached_keys = x->second;
    if (auto refs = config.trace ? std::nullopt : CacheHitReferences(**plan, x->second)) {
      r.ideal_hit_ratio = refs->oracle;
      r.lru_hit_ratio = refs->lru;
      r.random_hit_ratio = refs->random;
    }
  }
  r.pool_bytes = m.stats_after.pool_bytes;
  for (uint64_t n : m.inserts) r.inserted += n;
  r.interrupted = m.interrupted;
  r.error = m.error;
  if (!r.error.empty()) return r;  // the key set is unknown after a failed write: no check

  Status verdict = InBackground(label + " checking the tree", [&]() -> Status {
    auto session = (*index)->OpenSession(0);
    if (!session.ok()) return Status::Corruption("no session for the check: " + session.status().ToString());
    if (config.trace) return CheckFullScan(**session, *codec, config.trace->final_keys);
    return CheckFullScan(**session, *codec, (*plan)->ExpectedKeys((*plan)->inserts().issued((*plan)->loaded())));
  });
  r.verified = verdict.ok();
  if (!verdict.ok()) r.verify_error = verdict.message();
  if (Status closed = (*index)->Close(); !closed.ok()) r.error = "closing the index: " + closed.ToString();
  return r;
}

}  // namespace dmindex::bench
