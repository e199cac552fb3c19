// HybridLatch: the per-frame latch of the compute-side cache (LeanStore's hybrid latch).
// One 64-bit word holds an exclusive bit, a count of shared holders and a version that
// every exclusive release bumps. Optimistic readers take no lock: they remember the version,
// read, and validate that it did not change. Shared holders block writers but not
// optimistic readers; exclusive holders block everyone and invalidate optimistic readers.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/retry.h"

namespace dmindex::cache {

class HybridLatch {
 public:
  static constexpr uint64_t kExclusive = 1;
  static constexpr uint64_t kSharedUnit = 2;
  static constexpr uint64_t kSharedMask = 0xFFFE;  // 15 bits of shared holders
  static constexpr uint64_t kVersionUnit = uint64_t{1} << 16;

  // The version to validate against later, or false if a writer holds the latch now.
  // Shared holders are ignored: they do not change the data.
  bool TryOptimistic(uint64_t* version) const {
    const uint64_t w = word_.load(std::memory_order_acquire);
    if (w & kExclusive) return false;
    *version = w & ~kSharedMask;
    return true;
  }
  // True iff no writer held the latch since `version` was taken.
  bool Validate(uint64_t version) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return (word_.load(std::memory_order_relaxed) & ~kSharedMask) == version;
  }

  bool TryLockExclusive() {
    uint64_t w = word_.load(std::memory_order_relaxed);
    if (w & (kExclusive | kSharedMask)) return false;
    return LockFrom(w);
  }
  // Exclusive access only if nobody wrote since `version` (an optimistic read upgrades).
  bool TryUpgrade(uint64_t version) { return LockFrom(version); }
  // Waits spin, then yield (backoff::kLatchHeld): on a machine with few cores the holder may
  // be waiting for ours.
  void LockExclusive() {
    if (TryLockExclusive()) return;
    Backoff backoff(backoff::kLatchHeld, "a cache frame's latch");
    while (!TryLockExclusive()) backoff.Pause();
  }
  // Bumps the version; returns it, so the releaser can keep reading optimistically.
  uint64_t UnlockExclusive() {
    const uint64_t next = (word_.load(std::memory_order_relaxed) & ~kExclusive) + kVersionUnit;
    word_.store(next, std::memory_order_release);
    return next & ~kSharedMask;
  }

  bool TryLockShared() {
    uint64_t w = word_.load(std::memory_order_relaxed);
    if ((w & kExclusive) || (w & kSharedMask) == kSharedMask) return false;
    return word_.compare_exchange_strong(w, w + kSharedUnit, std::memory_order_acquire);
  }
  void LockShared() {
    if (TryLockShared()) return;
    Backoff backoff(backoff::kLatchHeld, "a cache frame's latch");
    while (!TryLockShared()) backoff.Pause();
  }
  void UnlockShared() { word_.fetch_sub(kSharedUnit, std::memory_order_release); }

  bool IsLockedExclusive() const { return word_.load(std::memory_order_relaxed) & kExclusive; }
  uint64_t raw() const { return word_.load(std::memory_order_acquire); }

 private:
  bool LockFrom(uint64_t expected) {
    if (expected & (kExclusive | kSharedMask)) return false;
    if (!word_.compare_exchange_strong(expected, expected | kExclusive, std::memory_order_acquire))
      return false;
    // Order the data writes that follow after the lock bit (seqlock writer side).
    std::atomic_thread_fence(std::memory_order_release);
    return true;
  }

  std::atomic<uint64_t> word_{0};
};

}  // namespace dmindex::cache
