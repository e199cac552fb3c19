#include "common/watchdog.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "common/runtime.h"

namespace dmindex {

void ExitWithStallReport(const std::string& command, const std::string& report) {
  std::fprintf(stderr, "%s: STALLED: %s", command.c_str(), report.c_str());
  std::fflush(stderr);
  std::_Exit(kStalledExitCode);
}

Watchdog::Watchdog(std::vector<const Activity*> threads, WatchdogOptions options)
    : threads_(std::move(threads)), options_(std::move(options)) {
  if (options_.stall_after.count() > 0) thread_ = runtime::Thread([this] { Watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

bool Watchdog::stalled() const {
  std::lock_guard lock(mu_);
  return stalled_;
}

std::string Watchdog::stall_report() const {
  std::lock_guard lock(mu_);
  return stall_report_;
}

std::string Watchdog::Report() const {
  char head[96];
  std::snprintf(head, sizeof head, "no operation completed for %.1f s; what each thread is doing:\n",
                static_cast<double>(options_.stall_after.count()) / 1000);
  std::string r = head;
  for (size_t i = 0; i < threads_.size(); ++i) {
    const Activity& a = *threads_[i];
    r.append("  ").append(a.label().empty() ? "thread " + std::to_string(i) : a.label());
    r.append(": ").append(a.Describe()).append("\n");
  }
  return r;
}

void Watchdog::Watch() {
  // Checked ten times per stall period (at most once a second): a stall is reported at most
  // 10 % late.
  const auto poll = std::min<std::chrono::milliseconds>(options_.stall_after / 10, std::chrono::seconds(1));
  uint64_t last_completed = ~uint64_t{0};
  auto last_progress = runtime::Now();
  std::unique_lock lock(mu_);
  while (!cv_.WaitUntil(lock, runtime::Now() + std::max(poll, std::chrono::milliseconds(1)),
                        [this] { return stopping_; })) {
    uint64_t completed = 0;
    bool busy = false;
    int64_t busy_since_ns = INT64_MAX;  // the earliest begin among the operations under way
    for (const Activity* a : threads_) {
      completed += a->completed();
      if (a->busy()) {
        busy = true;
        busy_since_ns = std::min(busy_since_ns, a->began_ns());
      }
    }
    const auto now = runtime::Now();
    if (completed != last_completed || !busy) {
      last_completed = completed;
      last_progress = now;
      continue;
    }
    // The stretch without a completion while busy began at the later of the poll that saw the
    // last completion (or idleness) and the begin of the oldest operation under way: both are
    // no earlier than the true start, so a watchdog thread that was itself descheduled between
    // polls reports late, never early (measuring from the last poll alone counted time before
    // the operation began when the poll came late).
    const auto busy_since = runtime::Clock::time_point(std::chrono::nanoseconds(busy_since_ns));
    if (now - std::max(last_progress, busy_since) < options_.stall_after) continue;
    stalled_ = true;
    stall_report_ = Report();
    const std::string report = stall_report_;
    lock.unlock();
    if (options_.on_stall) options_.on_stall(report);
    return;
  }
}

}  // namespace dmindex
