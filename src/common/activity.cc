#include "common/activity.h"

#include <cstdio>

#include "common/runtime.h"

namespace dmindex {
namespace {

// The calling thread's record (runtime::ThreadLocal: a simulated thread has its own too).
Activity* Current() { return static_cast<Activity*>(runtime::ThreadLocal(runtime::ThreadSlot::kActivity)); }
void SetCurrent(Activity* a) { runtime::ThreadLocal(runtime::ThreadSlot::kActivity) = a; }

int64_t Ns(runtime::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
int64_t NowNs() { return Ns(runtime::Now()); }

}  // namespace

void Activity::Begin(const char* operation, uint64_t key) { BeginAt(operation, key, runtime::Now()); }

void Activity::BeginAt(const char* operation, uint64_t key, runtime::Clock::time_point now) {
  key_.store(key, std::memory_order_relaxed);
  began_ns_.store(Ns(now), std::memory_order_relaxed);
  operation_.store(operation, std::memory_order_relaxed);
}

void Activity::End() {
  operation_.store(nullptr, std::memory_order_relaxed);
  waiting_for_.store(nullptr, std::memory_order_relaxed);
  completed_.store(completed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Activity::Wait(const char* what, GlobalAddress where, uint64_t steps) {
  where_.store(where.raw(), std::memory_order_relaxed);
  steps_.store(steps, std::memory_order_relaxed);
  waiting_for_.store(what, std::memory_order_relaxed);
}

void Activity::EndWait() { waiting_for_.store(nullptr, std::memory_order_relaxed); }

std::string Activity::Describe() const {
  std::string s;
  const char* op = operation_.load(std::memory_order_relaxed);
  if (op == nullptr) {
    s = "idle";
  } else {
    char since[32];
    std::snprintf(since, sizeof since, " for %.1f s",
                  static_cast<double>(NowNs() - began_ns_.load(std::memory_order_relaxed)) / 1e9);
    s.append(op).append(" of key ").append(std::to_string(key_.load(std::memory_order_relaxed))).append(since);
    if (const char* what = waiting_for_.load(std::memory_order_relaxed)) {
      s.append(", waiting for ").append(what);
      const GlobalAddress where = GlobalAddress::FromRaw(where_.load(std::memory_order_relaxed));
      if (!where.is_null()) s.append(" ").append(where.ToString());
      if (const uint64_t steps = steps_.load(std::memory_order_relaxed); steps > 0)
        s.append(" (").append(std::to_string(steps)).append(" steps)");
    } else {
      s.append(", not waiting in a noted wait (running, or spinning in a loop that notes none)");
    }
  }
  s.append("; ").append(std::to_string(completed())).append(" operations completed");
  return s;
}

Activity* CurrentActivity() { return Current(); }

ActivityScope::ActivityScope(Activity* a) : previous_(Current()) { SetCurrent(a); }

ActivityScope::~ActivityScope() { SetCurrent(previous_); }

}  // namespace dmindex
