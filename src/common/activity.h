// What a worker thread is doing right now, published for a watchdog (common/watchdog.h): the
// operation and key its driver started, what it waits for (noted by the waits deep in the
// library: backoffs, the RPC slots, the local lock queue), and how many operations it completed.
//
// Cheap enough for every operation: the thread writes its own record with relaxed stores, and
// finds it through a per-thread pointer (runtime::ThreadLocal) that the driver (bench, check) installs; threads
// without one (library users) skip all of it. The watchdog reads the records of other threads at
// any time; a description may mix two instants, which a stall report can afford.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/runtime.h"
#include "dmindex/global_address.h"

namespace dmindex {

class Activity {
 public:
  explicit Activity(std::string label = {}) : label_(std::move(label)) {}
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  // The driver: an operation ("insert", a string literal) on `key` starts and ends.
  void Begin(const char* operation, uint64_t key);
  // As Begin, for a driver that has just read runtime::Now() itself: one clock read per
  // operation fewer.
  void BeginAt(const char* operation, uint64_t key, runtime::Clock::time_point now);
  void End();
  // A wait inside the current operation: `what` (a string literal: "the node lock") at `where`
  // (null if none), and how many steps (retries, backoff rounds) it has taken so far.
  void Wait(const char* what, GlobalAddress where, uint64_t steps);
  void EndWait();

  uint64_t completed() const { return completed_.load(std::memory_order_relaxed); }
  bool busy() const { return operation_.load(std::memory_order_relaxed) != nullptr; }
  // When the current (or, if idle, the last) operation began, on runtime::Now()'s clock, in ns.
  int64_t began_ns() const { return began_ns_.load(std::memory_order_relaxed); }
  const std::string& label() const { return label_; }
  // "insert of key 17 for 61.2 s, waiting for the node lock 1:0x40c0 (1234 steps); 5678
  // operations completed", or "idle; 5678 operations completed".
  std::string Describe() const;

 private:
  const std::string label_;
  std::atomic<const char*> operation_{nullptr};
  std::atomic<uint64_t> key_{0};
  std::atomic<int64_t> began_ns_{0};
  std::atomic<const char*> waiting_for_{nullptr};
  std::atomic<uint64_t> where_{0};
  std::atomic<uint64_t> steps_{0};
  std::atomic<uint64_t> completed_{0};
};

// The record of the calling thread, or nullptr.
Activity* CurrentActivity();

// Installs `a` as the calling thread's record for the scope's lifetime.
class ActivityScope {
 public:
  explicit ActivityScope(Activity* a);
  ~ActivityScope();
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  Activity* previous_;
};

// Notes a wait on the calling thread's record (if any) for the scope's lifetime.
class WaitNote {
 public:
  WaitNote(const char* what, GlobalAddress where = {}) : a_(CurrentActivity()), what_(what), where_(where) {
    if (a_ != nullptr) a_->Wait(what_, where_, 0);
  }
  ~WaitNote() {
    if (a_ != nullptr) a_->EndWait();
  }
  WaitNote(const WaitNote&) = delete;
  WaitNote& operator=(const WaitNote&) = delete;
  void Steps(uint64_t steps) {
    if (a_ != nullptr) a_->Wait(what_, where_, steps);
  }

 private:
  Activity* const a_;
  const char* const what_;
  const GlobalAddress where_;
};

}  // namespace dmindex
