// The runtime seam: every way dmindex's own code waits, locks, starts a thread or reads the
// clock goes through this file - sleeping, yielding the core, pausing inside a spin, the
// monotonic and wall clocks, mutexes, shared mutexes, condition variables and threads. The
// default implementation is std's (threads, steady_clock, glibc's pthread objects). A
// simulated runtime (a whole cluster in virtual time on a discrete-event simulator, one actor
// per thread) replaces this one place without touching the callers; tests/runtime_seam_test.cc
// checks that no code in src/ outside src/common/ bypasses it.
//
// The lock types meet the standard Lockable / SharedLockable requirements, so std::lock_guard,
// std::unique_lock and std::shared_lock work on them (a guard does not wait by itself: the
// lock it calls does). Waits of other shapes - semaphores, latches, barriers, parking - are
// in common/sync.h, built on these; retry loops use common/retry.h.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

namespace dmindex::runtime {

using Clock = std::chrono::steady_clock;

Clock::time_point Now();
// Wall-clock time, for what must differ across processes and runs (identities, seeds), never
// for measuring.
std::chrono::system_clock::time_point WallNow();
// Gives up the core for at least `d`, or until `t`.
void SleepFor(Clock::duration d);
void SleepUntil(Clock::time_point t);
// Lets another runnable thread have the core now (a descheduled lock holder, on few cores).
void Yield();
// One step of a busy-wait that keeps the core: a CPU pause hint, cheaper than a yield.
void CpuRelax();

class Mutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() { return m_.try_lock(); }
  void unlock() { m_.unlock(); }

 private:
  friend class CondVar;
  std::mutex m_;
};

// Readers and writers. No fairness is promised (std's may prefer readers): a writer that must
// not starve says so with a flag readers check (as DEX's draining compute nodes do).
class SharedMutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() { return m_.try_lock(); }
  void unlock() { m_.unlock(); }
  void lock_shared() { m_.lock_shared(); }
  bool try_lock_shared() { return m_.try_lock_shared(); }
  void unlock_shared() { m_.unlock_shared(); }

 private:
  std::shared_mutex m_;
};

// Waits on a Mutex until a predicate holds; the predicate is checked under the mutex before
// every sleep, so a change made under the mutex (or followed by taking it) is never missed.
class CondVar {
 public:
  template <typename Predicate>
  void Wait(std::unique_lock<Mutex>& lock, Predicate ready) {
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    cv_.wait(inner, std::move(ready));
    inner.release();  // still held, and owned by `lock`
  }
  // As Wait, but gives up at `deadline`; returns ready().
  template <typename Predicate>
  bool WaitUntil(std::unique_lock<Mutex>& lock, Clock::time_point deadline, Predicate ready) {
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    const bool ok = cv_.wait_until(inner, deadline, std::move(ready));
    inner.release();
    return ok;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// A thread of dmindex's own (benchmark clients, check workers, memory-server loops).
class Thread {
 public:
  Thread() = default;
  template <typename Body>
  explicit Thread(Body&& body) : t_(std::forward<Body>(body)) {}
  Thread(Thread&&) = default;
  Thread& operator=(Thread&&) = default;

  bool joinable() const { return t_.joinable(); }
  void join() { t_.join(); }

 private:
  std::thread t_;
};

}  // namespace dmindex::runtime
