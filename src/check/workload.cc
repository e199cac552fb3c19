#include "check/workload.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "common/sync.h"
#include "dmindex/write_batch.h"

namespace dmindex::check {

ConcurrentWorkload::ConcurrentWorkload(Index& index, const WorkloadOptions& options)
    : index_(index), partitioning_(index.partitioning()), options_(options), rules_(index.rules()) {
  for (uint32_t t = 0; t < options.threads; ++t)
    activities_.push_back(std::make_unique<Activity>("thread " + std::to_string(t)));
  activities_.push_back(std::make_unique<Activity>("read-back"));
  activities_.push_back(std::make_unique<Activity>("repartitioner"));
}

std::vector<const Activity*> ConcurrentWorkload::activities() const {
  std::vector<const Activity*> all;
  for (const auto& a : activities_) all.push_back(a.get());
  return all;
}

std::string ConcurrentWorkload::first_error() const {
  std::lock_guard<runtime::Mutex> guard(mu_);
  return first_error_;
}

void ConcurrentWorkload::NoteError(const Status& s, const char* what) {
  if (errors_.fetch_add(1) > 0) return;
  std::lock_guard<runtime::Mutex> guard(mu_);
  first_error_ = std::string(what) + ": " + s.ToString();
}

Key ConcurrentWorkload::KeyOf(uint64_t n) const {
  if (rules_.format == KeyFormat::kU64) return U64Key(n).str();
  const std::string digits = std::to_string(n);
  const size_t room = rules_.max_key_bytes > digits.size() + 1 ? rules_.max_key_bytes - digits.size() - 1 : 0;
  Key key;
  for (size_t i = 0; i < std::min<size_t>(options_.key_prefix_bytes, room); ++i)
    key.push_back(static_cast<char>("prefix-\x01\xfe"[i % 9]));
  key += digits;
  if (n % 5 == 1) key.push_back('\0');  // "..1" and "..1\0": a key and its extension by a zero byte
  if (n % 5 == 3) {                      // the longest keys, filled with bytes of every kind
    for (uint64_t x = n * 0x9E3779B97F4A7C15ull; key.size() < rules_.max_key_bytes; x = x * 6364136223846793005ull + 1)
      key.push_back(static_cast<char>(x >> 56));
  }
  return key;
}

Value ConcurrentWorkload::ValueOf(uint64_t id) const {
  Value v = U64Key(id).str();
  if (rules_.format == KeyFormat::kU64) return v;
  // Tails of several sizes, some beyond any inline limit; bytes derived from the id, so a
  // value torn from two writes does not pass for either.
  static constexpr uint32_t kTails[] = {0, 0, 3, 24, 100, 300, 2000};
  const uint64_t mixed = id * 0x9E3779B97F4A7C15ull;
  size_t tail = std::min<size_t>(kTails[(mixed >> 40) % std::size(kTails)], options_.max_value_tail);
  tail = std::min<size_t>(tail, rules_.max_value_bytes > 8 ? rules_.max_value_bytes - 8 : 0);
  for (uint64_t x = mixed | 1; v.size() < 8 + tail; x = x * 6364136223846793005ull + 1442695040888963407ull)
    v.push_back(static_cast<char>(x >> 57));
  return v;
}

Status ConcurrentWorkload::Preload() {
  std::vector<KeyValue> pairs;
  for (uint32_t i = 0; i < options_.keys; i += 2) pairs.push_back({KeyAt(i), ValueOf(1 + i)});
  std::sort(pairs.begin(), pairs.end(), [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
  DMX_RETURN_IF_ERROR(index_.BulkLoad(pairs));
  for (const KeyValue& kv : pairs) state_[kv.key] = kv.value;
  return Status::Ok();
}

void ConcurrentWorkload::RunThread(uint32_t thread, ThreadLog& log) {
  auto opened = index_.OpenSession(thread % options_.compute_nodes);
  if (!opened.ok()) return NoteError(opened.status(), "OpenSession");
  RecordingSession session(**opened, log);
  std::mt19937_64 rng(options_.seed * 1'000'003 + round_ * 1'009 + thread);
  // Unique values: process (8 bits), round (16 bits, wrapping after 65535 rounds: far apart
  // in time, and rounds are checked one by one) and thread (8 bits) in the high bits, a
  // per-thread sequence number below. Preloaded values (round bits 0) never collide.
  const uint64_t value_base = uint64_t{options_.process} << 56 |
                              ((uint64_t{round_} % 0xffff) + 1) << 40 | (uint64_t{thread} + 1) << 32;
  uint64_t sequence = 0;
  std::vector<KeyValue> scanned;
  Activity& activity = *activities_[thread];
  ActivityScope scope(&activity);
  for (uint32_t i = 0; i < options_.ops_per_thread; ++i) {
    if (options_.halfway && thread == 0 && round_ == 0 && i == options_.ops_per_thread / 2) options_.halfway();
    const uint64_t number = DrawKey(rng, false);
    const Key key = KeyOf(number);
    uint32_t dice = static_cast<uint32_t>(rng() % 100);
    Status s;
    if (dice < options_.insert_pct) {
      activity.Begin("insert", number);
      s = session.Insert(key, ValueOf(value_base | ++sequence));
    } else if ((dice -= options_.insert_pct) < options_.update_pct) {
      activity.Begin("update", number);
      s = session.Update(key, ValueOf(value_base | ++sequence));
    } else if ((dice -= options_.update_pct) < options_.delete_pct) {
      activity.Begin("delete", number);
      s = session.Delete(key);
    } else if ((dice -= options_.delete_pct) < options_.cas_pct) {
      activity.Begin("compare-and-swap", number);
      s = CompareAndSwap(session, key, ValueOf(value_base | ++sequence));
    } else if ((dice -= options_.cas_pct) < options_.delete_range_pct) {
      activity.Begin("delete-range", number);
      s = session.DeleteRange(key, KeyOf(number + 1 + rng() % (4 * options_.key_stride)));
    } else if ((dice -= options_.delete_range_pct) < options_.write_batch_pct) {
      activity.Begin("write-batch", number);
      s = WriteSome(session, rng, value_base, &sequence);
    } else if ((dice -= options_.write_batch_pct) < options_.scan_pct) {
      const uint64_t start = DrawKey(rng, true);
      const size_t count = 1 + rng() % options_.max_scan_count;
      activity.Begin("scan", start);
      // Half the scans go through an iterator, in batches that each continue after the last
      // key of the one before, some with an upper bound.
      s = rng() % 2 == 0 ? session.Scan(KeyOf(start), count, &scanned) : Iterate(session, rng, start, count);
    } else if (rng() % 4 == 0) {
      std::vector<Key> keys(1 + rng() % 8);
      for (Key& k : keys) k = KeyOf(DrawKey(rng, false));
      const std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<Value> values;
      activity.Begin("multiget", number);
      for (const Status& each : session.MultiGet(slices, &values))
        if (!each.ok() && !each.IsNotFound()) s = each;
    } else {
      Value v;
      activity.Begin("lookup", number);
      s = session.Lookup(key, &v);
    }
    activity.End();
    if (!s.ok() && !s.IsNotFound() && !s.IsNotOwner()) NoteError(s, "operation");
  }
}

Status ConcurrentWorkload::Iterate(Session& session, std::mt19937_64& rng, uint64_t start,
                                   size_t count) const {
  ReadOptions ro;
  ro.readahead = 1 + rng() % count;
  if (rng() % 2 == 0) ro.upper_bound = KeyOf(start + 1 + rng() % (count * options_.key_stride));
  Iterator it = session.NewIterator(ro);
  size_t n = 0;
  if (options_.reverse_scans && rng() % 2 == 0) {
    // Backwards from `start`, in batches that each continue below the last key of the one
    // before (a reverse scan each); sometimes with a lower bound.
    if (rng() % 2 == 0 && start > count * options_.key_stride) ro.lower_bound = KeyOf(start - count * options_.key_stride);
    ro.upper_bound.reset();
    it = session.NewIterator(ro);
    for (it.SeekForPrev(KeyOf(start)); it.Valid() && n < count; it.Prev()) ++n;
    return it.status();
  }
  for (it.Seek(KeyOf(start)); it.Valid() && n < count; it.Next()) ++n;
  return it.status();
}

Status ConcurrentWorkload::WriteSome(Session& session, std::mt19937_64& rng, uint64_t value_base,
                                     uint64_t* sequence) const {
  WriteBatch batch;
  const size_t writes = 2 + rng() % 5;
  for (size_t i = 0; i < writes; ++i) {
    const Key key = KeyOf(DrawKey(rng, false));
    if (rng() % 4 == 0) batch.Delete(key);
    else batch.Put(key, ValueOf(value_base | ++*sequence));
  }
  return session.Write(batch);
}

Status ConcurrentWorkload::CompareAndSwap(Session& session, const Key& key, const Value& desired) const {
  Value expected;
  Status s = session.Lookup(key, &expected);
  if (s.IsNotFound()) expected = desired;  // a value no key holds: the swap finds NotFound or another value
  else if (!s.ok()) return s;
  bool swapped = false;
  std::string current;
  return session.CompareAndSwap(key, expected, desired, &swapped, &current);
}

uint64_t ConcurrentWorkload::DrawKey(std::mt19937_64& rng, bool start) const {
  uint64_t number = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    // A scan starts anywhere in the key space, also between keys and before the first one.
    number = start ? 1 + rng() % (NumberAt(options_.keys - 1) + options_.key_stride)
                   : NumberAt(static_cast<uint32_t>(rng() % options_.keys));
    if (partitioning_ == nullptr || partitioning_->RouteKey(KeyOf(number)).hosted) break;
  }
  return number;
}

void ConcurrentWorkload::RepartitionOnce(std::mt19937_64& rng) {
  if (partitioning_ == nullptr) return;
  std::vector<Route> parts;
  for (Key k = KeyOf(0);;) {  // below every key the workload uses
    parts.push_back(partitioning_->RouteKey(k));
    if (!parts.back().end) break;
    k = *parts.back().end;
  }
  if (parts.size() < 2) return;
  for (size_t j = 0; j < parts.size(); ++j)
    if (parts[j].compute_node != j) return;  // an empty partition: leave such maps alone
  const size_t c = rng() % parts.size();
  if (!parts[c].hosted) return;
  std::vector<Key> hot;
  for (uint32_t i = 0; i < options_.keys; ++i)
    if (parts[c].Contains(KeyAt(i))) hot.push_back(KeyAt(i));
  if (hot.size() < 2) return;
  // Boundary j separates partitions j and j + 1; give the upper or lower half away.
  std::vector<Key> boundaries;
  for (size_t j = 1; j < parts.size(); ++j) boundaries.push_back(parts[j].begin);
  const bool give_up = c + 1 < parts.size() && (c == 0 || rng() % 2 == 0);
  if (give_up) boundaries[c] = hot[hot.size() / 2];
  else boundaries[c - 1] = hot[hot.size() / 2];
  auto moved = partitioning_->Repartition(boundaries);
  if (moved.ok()) repartitions_.fetch_add(1);
  // NotOwner: our view was stale and the move would take keys from another process.
  else if (!moved.status().IsNotOwner()) NoteError(moved.status(), "Repartition");
}

Result<History> ConcurrentWorkload::RunRound() {
  if (options_.threads == 0 || options_.threads > kMaxWorkloadThreads ||
      options_.process > kMaxWorkloadProcess)
    return Status::InvalidArgument("workload: threads must be in [1, " +
                                   std::to_string(kMaxWorkloadThreads) + "] and process <= " +
                                   std::to_string(kMaxWorkloadProcess));
  HistoryRecorder recorder(options_.threads, options_.process);
  {
    Latch start(options_.threads);
    std::vector<runtime::Thread> threads;
    std::atomic<uint32_t> running{options_.threads};
    for (uint32_t t = 0; t < options_.threads; ++t)
      threads.emplace_back(runtime::Placement{t % options_.compute_nodes}, [&, t] {
        start.ArriveAndWait();  // all threads begin together, for maximal overlap
        RunThread(t, recorder.log(t));
        running.fetch_sub(1);
      });
    // The repartitioner naps in short slices so that it notices the round's end at once,
    // however long its interval (a round must not outlast its operations).
    runtime::Thread repartitioner;
    if (options_.repartition_ms > 0)
      repartitioner = runtime::Thread([&] {
        std::mt19937_64 rng(options_.seed * 7'919 + round_);
        const auto interval = std::chrono::milliseconds(options_.repartition_ms);
        for (auto next = runtime::Now() + interval; running.load() > 0;) {
          runtime::SleepFor(std::min<runtime::Clock::duration>(std::chrono::milliseconds(5),
                                                               next - runtime::Now()));
          if (runtime::Now() < next || running.load() == 0) continue;
          Activity& activity = *activities_[options_.threads + 1];
          ActivityScope scope(&activity);
          activity.Begin("repartition", 0);
          RepartitionOnce(rng);
          activity.End();
          next = runtime::Now() + interval;
        }
      });
    for (runtime::Thread& t : threads) t.join();
    if (repartitioner.joinable()) repartitioner.join();
  }
  // The quiescent read-back: recorded as thread 0's last operations, so the checkers verify
  // it like any other read, and it fixes the start state of the next round.
  // Keys not in the start state and not hot in this round are absent and stay so.
  std::map<Key, Value> initial = std::move(state_);
  state_.clear();
  std::vector<Key> may_hold;
  for (const auto& [key, value] : initial) may_hold.push_back(key);
  for (uint32_t i = 0; i < options_.keys; ++i) may_hold.push_back(KeyAt(i));
  auto opened = index_.OpenSession(0);
  if (!opened.ok()) return opened.status();
  RecordingSession reader(**opened, recorder.log(0));
  Activity& activity = *activities_[options_.threads];
  ActivityScope scope(&activity);
  for (const Key& key : may_hold) {
    Value v;
    activity.Begin("lookup", 0);
    Status s = reader.Lookup(key, &v);
    activity.End();
    if (s.ok()) {
      state_[key] = v;
    } else if (!s.IsNotFound() && !s.IsNotOwner()) {  // NotOwner: another process reads it back
      // The round's history is still checked: a violation in it says more than the error
      // (a design without validation fails this way after reading a torn node).
      NoteError(s, "read-back");
      ended_ = true;
      break;
    }
  }
  ++round_;
  return recorder.Merge(std::move(initial));
}

Result<RoundsResult> RunRounds(ConcurrentWorkload& workload, const RoundsPlan& plan) {
  // Elapsed seconds compared as doubles: a deadline computed as a time_point would overflow
  // for huge plan.seconds and end the soak before its first round.
  const auto start = runtime::Now();
  RoundsResult result;
  if (plan.keep_history) result.history = History::StartingNow(workload.start_state());
  auto more = [&] {
    if (!result.report.ok() || workload.ended()) return false;
    return plan.seconds > 0 ? std::chrono::duration<double>(runtime::Now() - start).count() < plan.seconds
                            : result.rounds < plan.rounds;
  };
  Watchdog watchdog(workload.activities(), plan.watchdog);
  while (more()) {
    auto history = workload.RunRound();
    if (watchdog.stalled()) return Status::Aborted("the run stalled: " + watchdog.stall_report());
    if (!history.ok()) return history.status();
    ++result.rounds;
    if (plan.check_each_round) result.report.Append(CheckHistory(*history));
    if (plan.keep_history) AppendHistory(&result.history, std::move(history).value());
    if (plan.after_round) plan.after_round(result.rounds, result.report);
  }
  return result;
}

Result<CheckReport> RunCheckedRounds(ConcurrentWorkload& workload, uint32_t rounds) {
  RoundsPlan plan;
  plan.rounds = rounds;
  auto result = RunRounds(workload, plan);
  if (!result.ok()) return result.status();
  return std::move(result->report);
}

}  // namespace dmindex::check
