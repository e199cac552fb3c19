// A watchdog over a set of worker threads (their Activity records): when none of them completes
// an operation for `stall_after` while at least one is inside an operation, it calls on_stall
// with a report of what each thread is doing, once. Times when every thread is idle (between
// the rounds of a check, a bench's meeting points) do not count.
//
// dmindex bench and check stop the process from on_stall (a stuck thread cannot be joined);
// tests pass a callback that records the report and unblocks their stuck index.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/activity.h"
#include "common/runtime.h"

namespace dmindex {

struct WatchdogOptions {
  std::chrono::milliseconds stall_after{0};  // 0: no watchdog
  std::function<void(const std::string& report)> on_stall;
};

// What the commands do on a stall: the report on stderr, then exit code kStalledExitCode
// without unwinding (threads are stuck in waits that will not end).
inline constexpr int kStalledExitCode = 3;
[[noreturn]] void ExitWithStallReport(const std::string& command, const std::string& report);

class Watchdog {
 public:
  // `threads` must outlive the watchdog. Does nothing if options.stall_after is 0.
  Watchdog(std::vector<const Activity*> threads, WatchdogOptions options);
  ~Watchdog();  // stops watching
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool stalled() const;
  // What on_stall received, once stalled.
  std::string stall_report() const;
  // The state of every thread now: one line each.
  std::string Report() const;

 private:
  void Watch();

  const std::vector<const Activity*> threads_;
  const WatchdogOptions options_;
  mutable runtime::Mutex mu_;
  runtime::CondVar cv_;
  bool stopping_ = false;
  bool stalled_ = false;
  std::string stall_report_;
  runtime::Thread thread_;
};

}  // namespace dmindex
