// The runtime seam: every way dmindex's own code waits, locks, starts a thread or reads the
// clock goes through this file - sleeping, yielding the core, pausing inside a spin, the
// monotonic and wall clocks, mutexes, shared mutexes, condition variables and threads.
// tests/runtime_seam_test.cc checks that no code in src/ outside src/common/ bypasses it.
//
// Two implementations, chosen at run time. The default is std's (threads, steady_clock,
// glibc's pthread objects). While a runtime::Backend is installed (common/runtime_backend.h:
// a simulated cluster in virtual time, src/sim/, installs one for the duration of a run),
// every call goes to it instead. Each call reads one process-wide pointer, relaxed, and takes
// the std branch when it is null: a load and a predicted branch, nothing measurable on the std
// path. Lock, condition-variable and thread objects carry one more pointer, the backend's state
// for them, made the first time they are used under a backend.
//
// The lock types meet the standard Lockable / SharedLockable requirements, so std::lock_guard,
// std::unique_lock and std::shared_lock work on them (a guard does not wait by itself: the
// lock it calls does). Waits of other shapes - semaphores, latches, barriers, parking - are
// in common/sync.h, built on these; retry loops use common/retry.h.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

namespace dmindex::runtime {

using Clock = std::chrono::steady_clock;

class Backend;  // common/runtime_backend.h

// What a backend keeps for one lock, condition variable or thread (a simulated mutex, an actor).
class BackendState {
 public:
  virtual ~BackendState() = default;
};

namespace internal {
// The installed backend, or null for std's. Changed only by ScopedBackend (runtime_backend.h),
// while no other thread of the process uses the runtime.
extern std::atomic<Backend*> g_backend;
inline Backend* Active() { return g_backend.load(std::memory_order_relaxed); }
}  // namespace internal

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

// 64 random bits, for what must differ between threads and processes without being
// reproducible (seeds of per-thread random streams, tokens). Unlike a thread object's address
// or std::random_device, a simulated runtime makes them a function of the simulation's seed,
// so that a simulated run is too.
uint64_t Entropy();

// Per-thread pointers that follow simulated threads too: a thread_local variable does not
// (simulated threads share one OS thread), so src/ outside common/ declares none; a user of
// a slot is listed here.
enum class ThreadSlot : uint8_t { kActivity, kCount };
void*& ThreadLocal(ThreadSlot slot);

class Mutex {
 public:
  void lock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendLock();
    m_.lock();
  }
  bool try_lock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendTryLock();
    return m_.try_lock();
  }
  void unlock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendUnlock();
    m_.unlock();
  }

 private:
  friend class CondVar;
  void BackendLock();
  bool BackendTryLock();
  void BackendUnlock();

  std::mutex m_;
  std::unique_ptr<BackendState> state_;
};

// Readers and writers. No fairness is promised (std's may prefer readers): a writer that must
// not starve says so with a flag readers check (as DEX's draining compute nodes do).
class SharedMutex {
 public:
  void lock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendLock(false);
    m_.lock();
  }
  bool try_lock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendTryLock(false);
    return m_.try_lock();
  }
  void unlock() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendUnlock(false);
    m_.unlock();
  }
  void lock_shared() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendLock(true);
    m_.lock_shared();
  }
  bool try_lock_shared() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendTryLock(true);
    return m_.try_lock_shared();
  }
  void unlock_shared() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendUnlock(true);
    m_.unlock_shared();
  }

 private:
  void BackendLock(bool shared);
  bool BackendTryLock(bool shared);
  void BackendUnlock(bool shared);

  std::shared_mutex m_;
  std::unique_ptr<BackendState> state_;
};

// Waits on a Mutex until a predicate holds; the predicate is checked under the mutex before
// every sleep, so a change made under the mutex (or followed by taking it) is never missed.
class CondVar {
 public:
  template <typename Predicate>
  void Wait(std::unique_lock<Mutex>& lock, Predicate ready) {
    if (internal::Active() != nullptr) [[unlikely]] {
      while (!ready()) BackendWait(*lock.mutex(), nullptr);
      return;
    }
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    cv_.wait(inner, std::move(ready));
    inner.release();  // still held, and owned by `lock`
  }
  // As Wait, but gives up at `deadline`; returns ready().
  template <typename Predicate>
  bool WaitUntil(std::unique_lock<Mutex>& lock, Clock::time_point deadline, Predicate ready) {
    if (internal::Active() != nullptr) [[unlikely]] {
      while (!ready())
        if (!BackendWait(*lock.mutex(), &deadline)) return ready();
      return true;
    }
    std::unique_lock<std::mutex> inner(lock.mutex()->m_, std::adopt_lock);
    const bool ok = cv_.wait_until(inner, deadline, std::move(ready));
    inner.release();
    return ok;
  }
  void NotifyOne() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendNotify(false);
    cv_.notify_one();
  }
  void NotifyAll() {
    if (internal::Active() != nullptr) [[unlikely]] return BackendNotify(true);
    cv_.notify_all();
  }

 private:
  // One sleep on the backend; false if `deadline` (when given) passed first.
  bool BackendWait(Mutex& mutex, const Clock::time_point* deadline);
  void BackendNotify(bool all);

  std::condition_variable cv_;
  std::unique_ptr<BackendState> state_;
};

// Where a new thread runs, for a simulated cluster: on the compute server that hosts logical
// compute node `compute_node` (a benchmark client of that node). The std runtime ignores it.
struct Placement {
  static constexpr uint32_t kCreatorsHost = UINT32_MAX;
  uint32_t compute_node = kCreatorsHost;  // default: wherever the creating thread runs
};

// A thread of dmindex's own (benchmark clients, check workers, memory-server loops).
class Thread {
 public:
  Thread() = default;
  template <typename Body>
    requires std::invocable<Body&>
  explicit Thread(Body&& body) : Thread(Placement{}, std::forward<Body>(body)) {}
  template <typename Body>
    requires std::invocable<Body&>
  Thread(Placement where, Body&& body) {
    if (internal::Active() != nullptr) [[unlikely]]
      BackendStart(std::function<void()>(std::forward<Body>(body)), where);
    else
      t_ = std::thread(std::forward<Body>(body));
  }
  Thread(Thread&&) = default;
  Thread& operator=(Thread&&) = default;

  bool joinable() const { return t_.joinable() || state_ != nullptr; }
  void join() {
    if (state_ != nullptr) [[unlikely]] return BackendJoin();
    t_.join();
  }

 private:
  void BackendStart(std::function<void()> body, Placement where);
  void BackendJoin();

  std::thread t_;
  std::unique_ptr<BackendState> state_;
};

}  // namespace dmindex::runtime
