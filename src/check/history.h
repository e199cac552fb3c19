// Histories of index operations, as the correctness checkers consume them.
//
// Every operation is logged with its invocation and response time on one monotonic clock,
// taken just before the call and just after it returns, so the interval surely contains the
// instant at which the operation took effect. Each thread appends to its own log (no
// sharing, no locks on the measured path); logs are merged after the run.
//
// The clock is std::chrono::steady_clock. On Linux (libstdc++) it is CLOCK_MONOTONIC, which
// is system-wide: every process on one machine reads the same clock, so histories recorded
// by several compute processes sharing an index can be merged and checked together
// (MergeHistories). Clocks of different machines are not comparable this way.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/runtime.h"
#include "dmindex/index.h"

namespace dmindex::check {

// Keys and values as the checkers hold them: the public byte strings.
using Key = std::string;
using Value = std::string;

enum class OpKind : uint8_t { kLookup, kInsert, kUpdate, kDelete, kScan, kCompareAndSwap };

// What an operation's Status tells a checker. kUnknown: any error other than NotFound - the
// operation may or may not have taken effect, at any time after its invocation.
enum class Outcome : uint8_t { kOk, kNotFound, kUnknown };

struct Operation {
  OpKind kind = OpKind::kLookup;
  Outcome outcome = Outcome::kOk;
  uint32_t thread = 0;
  uint32_t process = 0;  // the compute process (dmindex check --compute-node) in merged histories
  Key key;           // Scan: the start key
  Value value;       // Insert/Update: the argument; Lookup: the result (if kOk);
                     // CompareAndSwap: the desired value, or the value found if not swapped
  Value expected;    // CompareAndSwap: the value it expected
  bool swapped = false;  // CompareAndSwap (kOk): the value was `expected` and is now `value`
  int64_t invoke_ns = 0;
  int64_t response_ns = 0;
  uint32_t scan_count = 0;              // Scan: requested pairs
  std::vector<KeyValue> scan_result;    // Scan: returned pairs
  // Scan: the range beyond `key` (an iterator's batch continues after its last key and may
  // stop at an upper bound): key excluded, and the exclusive end (none: no bound).
  bool scan_after = false;
  std::optional<Key> scan_end;
  // Scan: a reverse scan (Session::DoScanReverse), descending from scan_end (included when
  // scan_after) down to `key` (included); scan_end none: from the last key.
  bool scan_reverse = false;

  KeyRange scan_range() const { return KeyRange{key, scan_after, scan_end}; }
};

// The value `op` read, if it read one: a Lookup's result, or a CompareAndSwap's comparison
// (the expected value if it swapped, the value it found if not).
inline const Value* ValueRead(const Operation& op) {
  if (op.outcome != Outcome::kOk) return nullptr;
  if (op.kind == OpKind::kLookup) return &op.value;
  if (op.kind == OpKind::kCompareAndSwap) return op.swapped ? &op.expected : &op.value;
  return nullptr;
}
// `op` may have set the key's value to op.value (an Insert or Update not answered NotFound,
// a CompareAndSwap that swapped or whose outcome is unknown).
inline bool MayWriteValue(const Operation& op) {
  if (op.kind == OpKind::kCompareAndSwap) return op.swapped || op.outcome == Outcome::kUnknown;
  return (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate) && op.outcome != Outcome::kNotFound;
}

// Keys and values as reports print them: a u64-format key (8 bytes starting below 0x20) as
// its integer, a byte key as text with escapes; an 8-byte value (the workload's unique
// write ids) in hex, others as text with escapes and their size.
std::string KeyStr(const Key& key);
std::string ValueStr(const Value& value);

// One line, e.g. "T3 Update(17, 0x30000000005) -> NotFound  [12.345 .. 12.901 us]".
// Operations of compute process p > 0 name their thread "Cp.T3". Times are printed relative
// to `origin_ns`.
std::string Describe(const Operation& op, int64_t origin_ns = 0);

// A complete history: the operations of all threads, and the state the index was in when
// they began (keys present, with their values; every other key is absent).
struct History {
  std::vector<Operation> ops;   // ordered by invocation time after Merge
  std::map<Key, Value> initial;
  // The steady_clock reading (ns since its epoch) that the operations' times count from.
  int64_t clock_origin_ns = 0;

  // A history with no operations yet, whose times count from now.
  static History StartingNow(std::map<Key, Value> initial);
};

// Appends `later`'s operations to *into, rebased onto into's clock origin; into's initial
// state stays (`later` must have started after into's initial state held, e.g. a next round).
void AppendHistory(History* into, History later);

// The histories of several processes that ran on one index at the same time, as one: times
// rebased onto the earliest origin, operations ordered by invocation, initial states united
// (processes that did not load the index know no initial keys). InvalidArgument if two
// histories give one key different initial values.
Result<History> MergeHistories(std::vector<History> histories);

// Appends to one thread's log. Not thread-safe: one per thread.
class ThreadLog {
 public:
  ThreadLog(uint32_t thread, uint32_t process, std::chrono::steady_clock::time_point origin)
      : thread_(thread), process_(process), origin_(origin) {}
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               runtime::Now() - origin_).count();
  }
  void Add(Operation op) {
    op.thread = thread_;
    op.process = process_;
    ops_.push_back(std::move(op));
  }
  const std::vector<Operation>& ops() const { return ops_; }

 private:
  uint32_t thread_;
  uint32_t process_;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Operation> ops_;
};

// Owns the per-thread logs of one run; all share one clock origin.
class HistoryRecorder {
 public:
  // `process`: stamped on every operation (see Operation::process).
  explicit HistoryRecorder(uint32_t threads, uint32_t process = 0);
  ThreadLog& log(uint32_t thread) { return *logs_.at(thread); }
  // All operations of all threads, ordered by invocation time, with the given start state.
  History Merge(std::map<Key, Value> initial) const;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<std::unique_ptr<ThreadLog>> logs_;
};

// A Session that forwards to another and logs every call with its timing and result.
class RecordingSession final : public Session {
 public:
  RecordingSession(Session& inner, ThreadLog& log) : inner_(inner), log_(log) { AdoptRules(inner); }

 private:
  Status DoLookup(Slice key, std::string* value) override;
  Status DoInsert(Slice key, Slice value) override;
  Status DoUpdate(Slice key, Slice value) override;
  Status DoDelete(Slice key) override;
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override;
  Status DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) override;
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                          std::string* current) override;
  // Each key is recorded as a Lookup spanning the whole call (it is linearizable within it).
  void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                  std::span<Status> statuses) override;

  Operation Begin(OpKind kind, Slice key, Slice value) const;  // stamps the invocation
  Status Record(Operation op, const Status& s);              // stamps the response
  void Log(Operation op, const Status& s);                   // Record, also for NotOwner
  Session& inner_;
  ThreadLog& log_;
};

}  // namespace dmindex::check
