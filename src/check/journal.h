// Per-operation journals of processes that may be killed at any instant (dmindex soak).
//
// A history file (history_file.h) is written when a run ends, so a process killed with
// SIGKILL leaves none. A journal is written as the run goes: one line when an operation is
// invoked (before the call) and one when it returns, each with one write(2) to a file opened
// O_APPEND, so both are in the page cache (and survive the process) before the next call.
// Reading the journals of a run back gives its history: an operation with an invocation line
// and no response line was in flight when its process died, and is recorded with an unknown
// outcome (it may take effect at any time after its invocation, or never), exactly as the
// checkers treat an operation that failed with Unavailable.
//
// Times are steady_clock readings in nanoseconds since the clock's epoch (CLOCK_MONOTONIC,
// shared by every process of the machine: history.h), so journals of processes that ran
// together, and instants their parent recorded (a memory server's kill), compare directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/history.h"
#include "dmindex/status.h"

namespace dmindex::check {

// The steady clock in nanoseconds since its epoch, as journals record it.
int64_t JournalNow();

// Appends to one journal file. One per thread: not thread-safe.
class OpJournal {
 public:
  static Result<std::unique_ptr<OpJournal>> Create(const std::string& path);
  ~OpJournal();
  OpJournal(const OpJournal&) = delete;
  OpJournal& operator=(const OpJournal&) = delete;

  // Records the invocation of `op` (kind, key, value to write) now; returns its number.
  Result<uint64_t> Invoke(OpKind kind, const Key& key, const Value& value);
  // Records the response of operation `id`: its outcome, the value a lookup read, now.
  Status Respond(uint64_t id, Outcome outcome, const Value& value = {});
  // Records that operation `id` was not performed at all (NotOwner: another process serves
  // the key): the reader drops it.
  Status Refused(uint64_t id);

 private:
  OpJournal(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  Status Append(const std::string& line);
  int fd_;
  std::string path_;
  uint64_t next_id_ = 0;
};

// One journal read back: its operations (point operations only), with times in journal
// clock nanoseconds; `pending` counts those with no response (recorded as kUnknown).
struct JournalOps {
  std::vector<Operation> ops;
  uint64_t pending = 0;
  uint64_t unknown = 0;   // responded with an error whose effect is unknown (Unavailable...)
  // The most responses in a row that were unknown outcomes: a thread has one operation in
  // flight, so a kill accounts for a few; hundreds are a storm of failures (the soak's check).
  uint64_t longest_unknown_run = 0;
};

// Reads `path`; every operation gets `process` and `thread`. A last line cut short (the
// process died inside its write) is ignored; anything else malformed is InvalidArgument.
Result<JournalOps> ReadJournal(const std::string& path, uint32_t process, uint32_t thread);

}  // namespace dmindex::check
