#include "bench/measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <mutex>

#include "common/runtime.h"
#include "bench/op_executor.h"
#include "common/sync.h"

namespace dmindex::bench {
namespace {

std::map<std::string, uint64_t> Properties(const Index& index) {
  std::map<std::string, uint64_t> p;
  for (const std::string& name : index.PropertyNames())
    if (auto v = index.GetIntProperty(name)) p[name] = *v;
  return p;
}

using Clock = runtime::Clock;

uint64_t ShareOf(uint64_t total, uint32_t threads, uint32_t t) {
  return total / threads + (t < total % threads ? 1 : 0);
}

// What one thread owns; padded so that progress counters do not share cache lines.
struct alignas(64) ThreadSlot {
  std::atomic<uint64_t> done{0};  // measured operations so far, for progress and timeline
  uint64_t inserts = 0;
  LatencyHistogram latency;
  Activity activity;              // what the thread does, for the watchdog
};

// State shared by the threads of one measurement.
class Phase {
 public:
  Phase(Index& index, fabric::Fabric& fabric, const MeasureOptions& options)
      : index_(index), fabric_(fabric), options_(options),
        slots_(std::make_unique<ThreadSlot[]>(options.threads)),
        sync_(options.threads, [this] { OnMeeting(); }) {}

  void ThreadBody(const OpSourceFactory& sources, uint32_t t);
  // Completion order across threads, for MeasureOptions::on_completed.
  void Done(uint32_t t, const Operation& op) {
    if (options_.on_completed) options_.on_completed(t, sequence_.fetch_add(1), op);
  }
  void Fail(const Status& s) {
    std::lock_guard lock(error_mu_);
    if (error_.empty()) error_ = s.ToString();
    stop_.store(true);
  }
  void Stop() { stop_.store(true); }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  bool measuring() const { return measuring_.load(); }
  uint64_t finished() const { return finished_.load(); }
  uint64_t done() const {
    uint64_t n = 0;
    for (uint32_t t = 0; t < options_.threads; ++t) n += slots_[t].done.load(std::memory_order_relaxed);
    return n;
  }
  Clock::time_point start() const { return start_; }
  uint64_t round_trips_at_start() const { return verbs_before_.round_trips; }
  uint64_t rpcs_at_start() const { return verbs_before_.rpcs; }
  const IndexStats& stats_at_start() const { return stats_before_; }
  Measurement Collect(bool interrupted);
  std::vector<const Activity*> activities() const {
    std::vector<const Activity*> all;
    for (uint32_t t = 0; t < options_.threads; ++t) all.push_back(&slots_[t].activity);
    return all;
  }

 private:
  // Runs on the last thread to arrive at each meeting point: snapshots taken there see no
  // operation in flight.
  void OnMeeting();

  Index& index_;
  fabric::Fabric& fabric_;
  const MeasureOptions& options_;
  std::unique_ptr<ThreadSlot[]> slots_;
  Barrier sync_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::atomic<uint64_t> finished_{0};
  std::atomic<uint64_t> sequence_{0};
  int meetings_ = 0;
  Clock::time_point start_, end_;
  fabric::VerbCounts verbs_before_, verbs_after_;
  IndexStats stats_before_, stats_after_;
  std::map<std::string, uint64_t> properties_before_, properties_after_;
  runtime::Mutex error_mu_;
  std::string error_;
};

void Phase::OnMeeting() {
  // Stats and properties are read outside the window of the two verb snapshots: a design
  // may READ counters from the pool for them (XStore's memory servers keep theirs there).
  if (meetings_++ == 0) {
    stats_before_ = index_.Stats();
    properties_before_ = Properties(index_);
    verbs_before_ = fabric_.TotalCounts();
    start_ = runtime::Now();
    if (options_.on_measured_phase) options_.on_measured_phase(true);
    measuring_.store(true);
  } else {
    end_ = runtime::Now();
    if (options_.on_measured_phase) options_.on_measured_phase(false);
    verbs_after_ = fabric_.TotalCounts();
    stats_after_ = index_.Stats();
    properties_after_ = Properties(index_);
  }
}

void Phase::ThreadBody(const OpSourceFactory& sources, uint32_t t) {
  ThreadSlot& slot = slots_[t];
  ActivityScope scope(&slot.activity);
  // `began`: the clock the caller read just before (the measured phase's latency start), so
  // the stall watchdog's record costs no clock read of its own.
  const auto execute = [&slot](OpExecutor& exec, const Operation& op, Clock::time_point began) {
    slot.activity.BeginAt(OpKindName(op.kind), op.key, began);
    Status s = exec.Execute(op);
    slot.activity.End();
    return s;
  };
  std::unique_ptr<OpSource> source = sources(t);
  std::unique_ptr<Session> session;
  if (auto s = index_.OpenSession(t % options_.compute_nodes); s.ok())
    session = std::move(s).value();
  else
    Fail(s.status());
  // Every thread reaches both meeting points, failed or not, so nobody waits forever.
  const RecordCodec& codec = *options_.codec;
  if (session) {
    OpExecutor exec(*session, codec);
    Operation op;
    for (uint64_t i = ShareOf(options_.warmup_ops, options_.threads, t); i > 0 && !stopped() && source->Next(&op); --i) {
      if (Status s = execute(exec, op, runtime::Now()); !s.ok()) Fail(s);
      source->Completed(op);
      slot.inserts += op.kind == OpKind::kInsert;
      Done(t, op);
    }
  }
  sync_.ArriveAndWait();
  if (session) {
    OpExecutor exec(*session, codec);
    const uint64_t quota = options_.ops ? ShareOf(options_.ops, options_.threads, t)
                                        : std::numeric_limits<uint64_t>::max();
    uint64_t done = 0;
    Operation op;
    while (done < quota && !stopped() && source->Next(&op)) {
      const auto t0 = runtime::Now();
      Status s = execute(exec, op, t0);
      const auto t1 = runtime::Now();
      if (!s.ok()) {
        Fail(s);
        break;
      }
      source->Completed(op);
      slot.inserts += op.kind == OpKind::kInsert;
      Done(t, op);
      slot.latency.Record(static_cast<uint64_t>((t1 - t0).count()));
      // Every operation: the timeline's intervals may be short. The line is this thread's
      // own, read by the watcher every few milliseconds, so the store stays cheap.
      slot.done.store(++done, std::memory_order_relaxed);
    }
  }
  finished_.fetch_add(1);
  sync_.ArriveAndWait();
  session.reset();
}

Measurement Phase::Collect(bool interrupted) {
  Measurement m;
  for (uint32_t t = 0; t < options_.threads; ++t) {
    m.ops += slots_[t].done.load();
    m.latency.Merge(slots_[t].latency);
    m.inserts.push_back(slots_[t].inserts);
  }
  m.seconds = std::chrono::duration<double>(end_ - start_).count();
  m.verbs = verbs_after_ - verbs_before_;
  m.stats_before = stats_before_;
  m.stats_after = stats_after_;
  for (const auto& [name, after] : properties_after_) m.property_deltas[name] = after - properties_before_[name];
  m.error = error_;
  m.interrupted = interrupted;
  return m;
}

}  // namespace

Measurement Measure(Index& index, fabric::Fabric& fabric, const OpSourceFactory& sources,
                    const MeasureOptions& options, const std::atomic<bool>& interrupt,
                    Progress& progress) {
  using Seconds = std::chrono::duration<double>;
  Phase phase(index, fabric, options);
  WatchdogOptions watch = options.watchdog;
  if (watch.on_stall) {
    watch.on_stall = [&phase, on_stall = watch.on_stall](const std::string& report) {
      phase.Stop();  // threads that get going again stop at once
      on_stall(report);
    };
  }
  Watchdog watchdog(phase.activities(), std::move(watch));
  std::vector<runtime::Thread> threads;
  for (uint32_t t = 0; t < options.threads; ++t)
    threads.emplace_back(runtime::Placement{t % options.compute_nodes},
                         [&phase, &sources, t] { phase.ThreadBody(sources, t); });
  // This thread watches the clock, Ctrl-C and the progress while the workers run, samples
  // the timeline and starts the scheduled action.
  std::optional<TimelineRecorder> timeline;
  if (options.timeline_s > 0) timeline.emplace(options.timeline_s, options.ops ? 0 : options.seconds);
  runtime::Thread action_thread;
  ActionTimes action_times;
  const auto since_start = [&phase] { return Seconds(runtime::Now() - phase.start()).count(); };
  bool interrupted = false;
  while (phase.finished() < options.threads) {
    auto wake = runtime::Now() + std::chrono::milliseconds(10);
    if (phase.measuring()) {
      const auto at = [&](double s) {
        return phase.start() + std::chrono::duration_cast<Clock::duration>(Seconds(s));
      };
      if (timeline) wake = std::min(wake, at(timeline->next_due_s()));
      if (options.action && !action_thread.joinable()) wake = std::min(wake, at(options.action->at_s));
    }
    runtime::SleepUntil(wake);
    if (interrupt.load() && !interrupted) {
      interrupted = true;
      phase.Stop();
    }
    if (!phase.measuring()) {
      progress.Spin(options.label + " warmup");
      continue;
    }
    const double elapsed = since_start();
    if (timeline && timeline->Due(elapsed)) {
      const fabric::VerbCounts now = fabric.TotalCounts();
      const IndexStats stats = index.Stats();
      timeline->Sample(elapsed, {.ops = phase.done(),
                                 .round_trips = now.round_trips - phase.round_trips_at_start(),
                                 .rpcs = now.rpcs - phase.rpcs_at_start(),
                                 .cache_hits = stats.cache_hits - phase.stats_at_start().cache_hits,
                                 .cache_misses = stats.cache_misses - phase.stats_at_start().cache_misses,
                                 .memory_bytes = stats.cache_bytes});
    }
    if (options.action && !action_thread.joinable() && !phase.stopped() &&
        elapsed >= options.action->at_s) {
      action_thread = runtime::Thread([&] {
        action_times.start_s = since_start();
        Status s = options.action->run();
        action_times.end_s = since_start();
        if (!s.ok()) phase.Fail(s);
      });
    }
    if (options.ops == 0 && elapsed >= options.seconds) phase.Stop();
    const double done = static_cast<double>(phase.done());
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.3f Mops/s", elapsed > 0 ? done / elapsed / 1e6 : 0.0);
    progress.Bar(options.label, options.ops ? done / static_cast<double>(options.ops)
                                            : elapsed / options.seconds, rate);
  }
  for (runtime::Thread& th : threads) th.join();
  const bool action_started = action_thread.joinable();
  if (action_started) action_thread.join();
  progress.Clear();
  Measurement m = phase.Collect(interrupted);
  if (watchdog.stalled() && m.error.empty()) m.error = "the run stalled: " + watchdog.stall_report();
  if (timeline)
    m.timeline = timeline->Finish(m.seconds, {.ops = m.ops,
                                              .round_trips = m.verbs.round_trips,
                                              .rpcs = m.verbs.rpcs,
                                              .cache_hits = m.stats_after.cache_hits - m.stats_before.cache_hits,
                                              .cache_misses = m.stats_after.cache_misses - m.stats_before.cache_misses,
                                              .memory_bytes = m.stats_after.cache_bytes});
  if (action_started) m.action = action_times;
  return m;
}

}  // namespace dmindex::bench
