// NodeLock: the version lock of optimistic lock coupling with the obsolete flag of Leis et al.,
// "The ART of practical synchronization" (DaMoN'16): one 64-bit word, bit 0 obsolete (the
// node was unlinked and must not be used), bit 1 locked, the rest a version bumped by every
// unlock. Readers remember the word, read, and validate that it did not move.
//
// Node contents are std::atomic fields read and written with relaxed ordering; the fences here
// give them seqlock ordering (Boehm, MSPC'12), so optimistic reads are well-defined C++ and
// ThreadSanitizer-clean (as designs/local/opt_lock.h, which has no obsolete state).
//
// Foreground operations never wait while holding a lock: Upgrade fails instead and the
// operation restarts. Only background work (releasing a subtree, common/epoch.h's retirement
// aside) waits for locks, always top-down, so no cycle of waiters can form.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/retry.h"

namespace dmindex::art {

class NodeLock {
 public:
  static constexpr uint64_t kObsolete = 1;
  static constexpr uint64_t kLocked = 2;

  // Waits while a writer holds the lock; false if the node is obsolete (restart).
  bool ReadLock(uint64_t* version) const {
    uint64_t v = word_.load(std::memory_order_acquire);
    if (v & kLocked) {
      Backoff backoff(backoff::kLatchHeld, "an ART node latch");
      while ((v = word_.load(std::memory_order_acquire)) & kLocked) backoff.Pause();
    }
    *version = v;
    return (v & kObsolete) == 0;
  }

  // True if nobody locked the node since ReadLock returned `version`.
  bool Validate(uint64_t version) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return word_.load(std::memory_order_relaxed) == version;
  }

  // Turns a validated read into exclusive ownership; false (never waits) if it changed.
  bool Upgrade(uint64_t version) {
    if (!word_.compare_exchange_strong(version, version + kLocked, std::memory_order_acquire)) return false;
    std::atomic_thread_fence(std::memory_order_release);
    return true;
  }

  // Waits for the lock (background work only); false if the node is or became obsolete.
  bool Lock() {
    Backoff backoff(backoff::kLatchHeld, "an ART node latch");
    for (;;) {
      uint64_t v = word_.load(std::memory_order_relaxed);
      if (v & kObsolete) return false;
      if (!(v & kLocked) && Upgrade(v)) return true;
      backoff.Pause();
    }
  }

  // Releases after a change: the version moves on, optimistic readers restart.
  void Unlock() { word_.fetch_add(kLocked, std::memory_order_release); }
  // Releases without a change: readers that validated `version` before stay valid.
  void Abandon(uint64_t version) { word_.store(version, std::memory_order_release); }
  // Releases and marks the node unlinked.
  void UnlockObsolete() { word_.fetch_add(kLocked + kObsolete, std::memory_order_release); }

  bool locked() const { return word_.load(std::memory_order_relaxed) & kLocked; }
  bool obsolete() const { return word_.load(std::memory_order_relaxed) & kObsolete; }

 private:
  std::atomic<uint64_t> word_{4};  // version 1, unlocked
};

}  // namespace dmindex::art
