// The concurrent workload of the correctness harness: many threads issue random lookups,
// upserts, updates, deletes and scans on a small hot key space, every call recorded for the
// checkers. Design-independent: it only needs an Index.
//
// Runs are split into rounds. A round ends when all threads have finished; one thread then
// looks up every key the index may hold (recorded too), which pins down the state the next
// round starts from. Each round's history is checked on its own, which keeps the
// linearizability search small however long a soak run lasts.
//
// Round r works on the hot keys 1 + i * key_stride + (r mod key_stride): each round's keys
// fall between the earlier rounds' keys, which stay in the index. So leaves keep filling and
// splitting while the threads race (in designs that never merge, a fixed key set would stop
// splitting after the first round), and scans must keep returning the older keys.
#pragma once

#include <atomic>
#include <functional>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>

#include "common/runtime.h"
#include "check/checker.h"
#include "check/history.h"
#include "common/activity.h"
#include "common/watchdog.h"
#include "dmindex/index.h"

namespace dmindex::check {

struct WorkloadOptions {
  uint32_t threads = 8;
  uint32_t keys = 128;           // hot keys per round: KeyAt(0) .. KeyAt(keys - 1)
  uint64_t key_stride = 16;      // gaps between a round's keys, filled by later rounds
  uint32_t ops_per_thread = 1500;  // per round
  // Operation mix in percent; the remainder are lookups.
  uint32_t insert_pct = 25;
  uint32_t update_pct = 15;
  uint32_t delete_pct = 15;
  uint32_t scan_pct = 10;
  uint32_t max_scan_count = 24;
  // CompareAndSwap (a Lookup, then a swap of the value it read for a new one) and
  // DeleteRange (recorded as the scans and Deletes it is made of), in percent of the mix.
  uint32_t cas_pct = 0;
  uint32_t delete_range_pct = 0;
  // Session::Write of a WriteBatch of 2-6 Puts and Deletes of hot keys, in percent of the mix:
  // recorded as the Inserts and Deletes it applies, each checked as the same call alone
  // (atomic per write, which is what docs/API.md promises: not per batch).
  uint32_t write_batch_pct = 0;
  // Half of the iterations go backwards (SeekForPrev, then Prev), recorded as reverse scans.
  bool reverse_scans = false;
  uint32_t compute_nodes = 1;    // sessions are spread round-robin over compute nodes
  uint64_t seed = 1;
  // This compute process's number (0-255) when several processes share the index: written
  // values embed it, so they stay unique across processes, and recorded operations carry it.
  uint32_t process = 0;
  // Partitioned designs (DEX): every this many ms during a round, one compute node hosted
  // here gives half of its hot keys to a neighbour (Partitioning::Repartition). 0: never.
  uint32_t repartition_ms = 0;
  // Bytes-format indexes (the key format is the index's, IndexOptions::key_format): keys
  // share a prefix of this many bytes (cut to fit max_key_bytes), followed by the key
  // number in decimal, so keys are prefixes of one another ("p..1" < "p..17" < "p..177");
  // some end in a 0x00 byte and some are padded to max_key_bytes exactly. Values carry the
  // write's unique 8-byte id and a tail of 0 to `max_value_tail` bytes.
  uint32_t key_prefix_bytes = 40;
  uint32_t max_value_tail = 2000;
  // Called once, by thread 0 of the first round halfway through its operations, which waits
  // for it to return: processes that meet there (dmindex check --start-barrier) are all
  // inside their workloads at that instant, so their histories overlap by construction,
  // however the machine schedules them. Null: none.
  std::function<void()> halfway;
};

// Largest WorkloadOptions::threads and ::process: each has 8 bits of every written value.
inline constexpr uint32_t kMaxWorkloadThreads = 255;
inline constexpr uint32_t kMaxWorkloadProcess = 255;

class ConcurrentWorkload {
 public:
  ConcurrentWorkload(Index& index, const WorkloadOptions& options);

  // Bulk loads every other key of the key space, so the first round starts with a mix of
  // present and absent keys. Optional; call before the first round.
  Status Preload();

  // One round (see above). Every value written is unique over the whole run (and across
  // processes of distinct WorkloadOptions::process), so each value read names its write.
  // With other processes writing the same keys the read-back is not quiescent: it is still
  // recorded, but the returned history's initial state is then only this process's view. An
  // operation failing with an error other than NotFound is recorded with an unknown outcome
  // and counted in errors(); the history is still returned. So it is when a lookup of the
  // read-back fails: then the next round has no known start state and ended() is true.
  Result<History> RunRound();
  bool ended() const { return ended_; }

  // The i-th hot key of the current round: its number, and the key (in the index's format).
  uint64_t NumberAt(uint32_t i) const { return 1 + i * options_.key_stride + round_ % options_.key_stride; }
  Key KeyAt(uint32_t i) const { return KeyOf(NumberAt(i)); }
  // Key number n in the index's format; a value carrying write id `id`.
  Key KeyOf(uint64_t n) const;
  Value ValueOf(uint64_t id) const;
  // The state the next round starts from (after Preload: the loaded pairs).
  const std::map<Key, Value>& start_state() const { return state_; }
  uint64_t errors() const { return errors_.load(); }
  uint64_t repartitions() const { return repartitions_.load(); }
  std::string first_error() const;
  // What each thread of the workload is doing (the workers, the read-back, the
  // repartitioner), for a watchdog.
  std::vector<const Activity*> activities() const;

 private:
  void RunThread(uint32_t thread, ThreadLog& log);
  void NoteError(const Status& s, const char* what);
  // Reads up to `count` pairs from `start` through an iterator (random batch size, sometimes
  // an upper bound); its status.
  Status Iterate(Session& session, std::mt19937_64& rng, uint64_t start, size_t count) const;
  // A Lookup of `key`, then CompareAndSwap from the value found to `desired`.
  Status CompareAndSwap(Session& session, const Key& key, const Value& desired) const;
  // Session::Write of a batch of hot keys; its Puts' values are value_base | ++*sequence.
  Status WriteSome(Session& session, std::mt19937_64& rng, uint64_t value_base, uint64_t* sequence) const;
  // The number of a key drawn from the round's hot keys (`start`: any key of the range),
  // preferring keys this process serves: others answer NotOwner and do not count.
  uint64_t DrawKey(std::mt19937_64& rng, bool start) const;
  // Moves one partition boundary (see WorkloadOptions::repartition_ms).
  void RepartitionOnce(std::mt19937_64& rng);

  Index& index_;
  Partitioning* const partitioning_;  // null: every compute node serves every key
  const WorkloadOptions options_;
  const KeyRules rules_;         // the index's key format and limits
  std::map<Key, Value> state_;  // where the next round starts
  uint32_t round_ = 0;
  bool ended_ = false;
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> repartitions_{0};
  mutable runtime::Mutex mu_;
  std::string first_error_;
  std::vector<std::unique_ptr<Activity>> activities_;  // workers, then read-back, repartitioner
};

// How RunRounds runs: a number of rounds, or rounds until a time has passed (soak).
struct RoundsPlan {
  uint32_t rounds = 1;
  double seconds = 0;             // > 0: rounds until this much time has passed; `rounds` ignored
  bool check_each_round = true;   // CheckHistory per round; stop after a round with a violation
  bool keep_history = false;      // collect the whole run's history (AppendHistory)
  // Called after each round (progress reports), with the run's report so far.
  std::function<void(uint32_t round, const CheckReport& so_far)> after_round;
  // Watches the workload's threads; a stall ends the run with an error (after on_stall).
  WatchdogOptions watchdog;
};

struct RoundsResult {
  CheckReport report;  // of the rounds checked
  History history;     // whole run, initial state of the first round; if keep_history
  uint32_t rounds = 0;
};

// Fails only if the workload itself cannot run (e.g. the index cannot open a session);
// operation errors are reported by workload.errors(). Stops after a round whose read-back
// failed (workload.ended()); that round is still checked.
Result<RoundsResult> RunRounds(ConcurrentWorkload& workload, const RoundsPlan& plan);

// Runs `rounds` rounds and checks each round's history with CheckHistory, stopping after the
// first round with a violation.
Result<CheckReport> RunCheckedRounds(ConcurrentWorkload& workload, uint32_t rounds);

}  // namespace dmindex::check
