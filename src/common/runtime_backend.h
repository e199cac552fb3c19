// Another implementation of the runtime seam (common/runtime.h), installed for a while: a
// simulated cluster in virtual time (src/sim/) installs one for the duration of a simulated
// run, so the index code runs unchanged on simulated threads, locks and clocks.
//
// Only the code that runs a simulation touches this header; everything else keeps calling
// runtime::Now, runtime::Mutex and the rest, which forward here while a backend is installed.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "common/runtime.h"

namespace dmindex::runtime {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Clock::time_point Now() = 0;
  virtual std::chrono::system_clock::time_point WallNow() = 0;
  virtual void SleepUntil(Clock::time_point t) = 0;
  virtual void SleepFor(Clock::duration d) = 0;
  virtual void Yield() = 0;
  virtual void CpuRelax() = 0;
  virtual void*& ThreadLocal(ThreadSlot slot) = 0;
  virtual uint64_t Entropy() = 0;

  // `state` is the object's slot: null until the backend first sees the object, which then
  // makes its state there. Shared mutexes use the *Shared calls only with shared = true.
  virtual void Lock(std::unique_ptr<BackendState>& state) = 0;
  virtual bool TryLock(std::unique_ptr<BackendState>& state) = 0;
  virtual void Unlock(std::unique_ptr<BackendState>& state) = 0;
  virtual void LockRw(std::unique_ptr<BackendState>& state, bool shared) = 0;
  virtual bool TryLockRw(std::unique_ptr<BackendState>& state, bool shared) = 0;
  virtual void UnlockRw(std::unique_ptr<BackendState>& state, bool shared) = 0;
  // Releases the mutex, sleeps until notified (or until *deadline, if given), takes it again.
  // False if the deadline passed. May also return early (a spurious wakeup): callers loop.
  virtual bool Wait(std::unique_ptr<BackendState>& cv, std::unique_ptr<BackendState>& mutex,
                    const Clock::time_point* deadline) = 0;
  virtual void Notify(std::unique_ptr<BackendState>& cv, bool all) = 0;

  virtual std::unique_ptr<BackendState> StartThread(std::function<void()> body, Placement where) = 0;
  virtual void JoinThread(BackendState& thread) = 0;
};

// Installs `backend` for the scope's lifetime. Only while no other thread of the process uses
// the runtime (no std threads running), and never nested.
class ScopedBackend {
 public:
  explicit ScopedBackend(Backend& backend);
  ~ScopedBackend();
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;
};

// The installed backend, or null (std's runtime).
inline Backend* ActiveBackend() { return internal::Active(); }

}  // namespace dmindex::runtime
