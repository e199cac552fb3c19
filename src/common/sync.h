// Blocking waits of dmindex: a counting semaphore, a latch, a barrier and a parking lot, each a
// mutex and a condition variable whose waiters test their condition under the mutex.
//
// Why not <semaphore>, <latch>, <barrier> and std::atomic<T>::wait: on this toolchain (GCC 12.2,
// Debian 12) libstdc++ builds all four on one futex-based waiting scheme (bits/atomic_wait.h),
// and its wakeups are not correct:
//  * std::counting_semaphore::acquire reads the counter once, tries to decrement it 16 times,
//    then sleeps until the counter differs from the value read *before* the tries; release
//    wakes sleepers only when the counter goes up from 0. A waiter that read 1, lost the slot to
//    another acquirer and saw it released again before it slept, sleeps with the counter at 1,
//    and no later release wakes it unless the counter passes through 0 again (GCC PR 98033,
//    unfixed in 12.2). That is the hang of issue 9 (MemoryNode::Serve asleep, counter 1); the
//    test fabric_rpc_slots_test forces that schedule.
//  * std::atomic<T>::wait / notify_* and std::latch / std::barrier (which wait through the
//    same scheme) skip the futex wake unless a waiter count, kept in a table shared by all
//    atomics, is non-zero. Waiter (count++, then load the value) and notifier (store the value,
//    then load the count) form a store-buffering pattern; it is only correct if both stores are
//    sequentially consistent, and the callers' stores (a release fetch_add in the local lock
//    table, the library's own release in count_down) are not. It works on x86 because every
//    read-modify-write there is a full fence: correct by an argument about one CPU, not by the
//    C++ memory model, which is not good enough for a wait that hangs a run when it is wrong.
// A mutex and a condition variable are correct by the model: the state changes under the mutex
// (or, for ParkingLot, the changer takes the mutex after its change), and a waiter checks it
// under the mutex before each sleep, so no change can fall between the check and the sleep.
// std::mutex, std::shared_mutex, std::condition_variable (glibc's pthread objects, behind
// common/runtime.h's Mutex, SharedMutex and CondVar), std::thread::
// join and std::future (its own single-word futex protocol) are not affected and stay in use.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include "common/runtime.h"

namespace dmindex {

class Semaphore {
 public:
  explicit Semaphore(uint32_t count) : count_(count) {}
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  void Acquire();
  bool TryAcquire();
  void Release();

 private:
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  uint32_t count_;
};

// One-shot: Wait returns once CountDown was called `count` times.
class Latch {
 public:
  explicit Latch(uint32_t count) : count_(count) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  void CountDown();
  void Wait();
  void ArriveAndWait() {
    CountDown();
    Wait();
  }

 private:
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  uint32_t count_;
};

// Reusable: the last of `parties` threads to arrive runs `on_completion` (while the others
// still wait, so it sees no thread past the barrier) and releases everyone.
class Barrier {
 public:
  explicit Barrier(uint32_t parties, std::function<void()> on_completion = {})
      : parties_(parties), waiting_(parties), on_completion_(std::move(on_completion)) {}
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;

  void ArriveAndWait();

 private:
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  const uint32_t parties_;
  uint32_t waiting_;
  uint64_t generation_ = 0;
  std::function<void()> on_completion_;
};

// Waiting for a condition on atomics that other threads change without taking a lock (the
// now-serving counter of a ticket lock). Park(ready) blocks until ready() holds. A changer makes
// its change with a sequentially consistent store or read-modify-write, then, if a waiter may
// exist (it learns that from another seq_cst load, e.g. of the ticket counter), calls Wake().
// Correct because Wake takes the mutex after the change: a waiter that checked ready() before
// the change is already asleep in cv.wait (or still holds the mutex, so Wake waits for it to
// fall asleep) and is notified; one that checks after the mutex was released sees the change.
class ParkingLot {
 public:
  template <typename Ready>
  void Park(Ready ready) {
    std::unique_lock lock(mu_);
    cv_.Wait(lock, ready);
  }
  void Wake();

 private:
  runtime::Mutex mu_;
  runtime::CondVar cv_;
};

}  // namespace dmindex
