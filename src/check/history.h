// Histories of index operations, as the correctness checkers consume them.
//
// Every operation is logged with its invocation and response time on one monotonic clock,
// taken just before the call and just after it returns, so the interval surely contains the
// instant at which the operation took effect. Each thread appends to its own log (no
// sharing, no locks on the measured path); logs are merged after the run.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dmindex/index.h"

namespace dmindex::check {

enum class OpKind : uint8_t { kLookup, kInsert, kUpdate, kDelete, kScan };

// What an operation's Status tells a checker. kUnknown: any error other than NotFound - the
// operation may or may not have taken effect, at any time after its invocation.
enum class Outcome : uint8_t { kOk, kNotFound, kUnknown };

struct Operation {
  OpKind kind = OpKind::kLookup;
  Outcome outcome = Outcome::kOk;
  uint32_t thread = 0;
  Key key = 0;       // Scan: the start key
  Value value = 0;   // Insert/Update: the argument; Lookup: the result (if kOk)
  int64_t invoke_ns = 0;
  int64_t response_ns = 0;
  uint32_t scan_count = 0;              // Scan: requested pairs
  std::vector<KeyValue> scan_result;    // Scan: returned pairs
};

// Values print in hex: the workload puts the writer's round and thread in the high bits.
std::string HexValue(Value v);

// One line, e.g. "T3 Update(17, 0x30000000005) -> NotFound  [12.345 .. 12.901 us]".
// Times are printed relative to `origin_ns`.
std::string Describe(const Operation& op, int64_t origin_ns = 0);

// A complete history: the operations of all threads, and the state the index was in when
// they began (keys present, with their values; every other key is absent).
struct History {
  std::vector<Operation> ops;   // ordered by invocation time after Merge
  std::map<Key, Value> initial;
};

// Appends to one thread's log. Not thread-safe: one per thread.
class ThreadLog {
 public:
  ThreadLog(uint32_t thread, std::chrono::steady_clock::time_point origin)
      : thread_(thread), origin_(origin) {}
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - origin_).count();
  }
  void Add(Operation op) {
    op.thread = thread_;
    ops_.push_back(std::move(op));
  }
  const std::vector<Operation>& ops() const { return ops_; }

 private:
  uint32_t thread_;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Operation> ops_;
};

// Owns the per-thread logs of one run; all share one clock origin.
class HistoryRecorder {
 public:
  explicit HistoryRecorder(uint32_t threads);
  ThreadLog& log(uint32_t thread) { return *logs_.at(thread); }
  // All operations of all threads, ordered by invocation time, with the given start state.
  History Merge(std::map<Key, Value> initial) const;

 private:
  std::vector<std::unique_ptr<ThreadLog>> logs_;
};

// A Session that forwards to another and logs every call with its timing and result.
class RecordingSession final : public Session {
 public:
  RecordingSession(Session& inner, ThreadLog& log) : inner_(inner), log_(log) {}
  Status Lookup(Key key, Value* value) override;
  Status Insert(Key key, Value value) override;
  Status Update(Key key, Value value) override;
  Status Delete(Key key) override;
  Status Scan(Key start, size_t count, std::vector<KeyValue>* out) override;

 private:
  Operation Begin(OpKind kind, Key key, Value value) const;  // stamps the invocation
  Status Record(Operation op, const Status& s);              // stamps the response
  Session& inner_;
  ThreadLog& log_;
};

}  // namespace dmindex::check
