// VersionLock: the one optimistic version lock of dmindex's in-memory structures - the local
// B+-tree's nodes (designs/local), the ART's nodes (art/, IndeXY's X) and the compute-side
// cache's frames (cache/, LeanStore's hybrid latch). Optimistic lock coupling as in Leis et
// al., "The ART of practical synchronization" (DaMoN'16), with LeanStore's shared mode.
//
// One 64-bit word:
//   bit 0       exclusive: a writer holds the lock
//   bits 1-15   shared holders (they block writers, not optimistic readers); only the cache
//               takes the lock shared
//   bits 16-62  the version, bumped by every exclusive release that changed something
//   bit 63      obsolete: the node left its structure (set by UnlockObsolete, never cleared);
//               a reader who meets it restarts from the root
// Optimistic readers take no lock: they remember the version (the word without the shared
// bits), read, and Validate that it did not move - a seqlock.
//
// What is protected is std::atomic words accessed with relaxed ordering, so concurrent
// optimistic reads are well-defined C++ (and ThreadSanitizer-clean); the fences below give
// them the seqlock ordering (Boehm, "Can seqlocks get along with programming language memory
// models?", MSPC'12). On x86 all of it compiles to plain moves, one CAS per lock.
//
// Foreground operations never wait while holding a lock: Upgrade and the Try* calls fail
// instead and the operation restarts. Waiting (Lock, LockLive, LockShared, ReadLock's wait for
// a writer) yields after a few spins: on few cores the holder may need ours.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/retry.h"

namespace dmindex {

class VersionLock {
 public:
  static constexpr uint64_t kExclusive = 1;
  static constexpr uint64_t kSharedUnit = 2;
  static constexpr uint64_t kSharedMask = 0xFFFE;
  static constexpr uint64_t kVersionUnit = uint64_t{1} << 16;
  static constexpr uint64_t kObsolete = uint64_t{1} << 63;
  static bool IsObsolete(uint64_t version) { return (version & kObsolete) != 0; }

  // --- optimistic reads

  // Waits while a writer holds the lock and returns the version to validate against later
  // (IsObsolete tells whether the node left its structure).
  uint64_t ReadLock() const {
    const uint64_t w = word_.load(std::memory_order_acquire);
    return (w & kExclusive) ? WaitForWriter() : w & ~kSharedMask;
  }
  // ReadLock for structures whose readers restart at an obsolete node: false if it is.
  bool ReadLockLive(uint64_t* version) const {
    *version = ReadLock();
    return !IsObsolete(*version);
  }
  // ReadLock without the wait: false if a writer holds the lock now.
  bool TryOptimistic(uint64_t* version) const {
    const uint64_t w = word_.load(std::memory_order_acquire);
    if (w & kExclusive) return false;
    *version = w & ~kSharedMask;
    return true;
  }
  // True if no writer changed anything since `version` was read: everything read in between
  // is one consistent snapshot.
  bool Validate(uint64_t version) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return (word_.load(std::memory_order_relaxed) & ~kSharedMask) == version;
  }

  // --- exclusive

  // Turns a validated read into exclusive ownership; false (never waits) if the node changed
  // meanwhile or is held shared. (A holder of an obsolete node's lock may only release it.)
  bool Upgrade(uint64_t version) {
    if (version & (kExclusive | kSharedMask)) return false;
    if (!word_.compare_exchange_strong(version, version | kExclusive, std::memory_order_acquire)) return false;
    // Orders the exclusive bit before the data stores that follow (seqlock writer side).
    std::atomic_thread_fence(std::memory_order_release);
    return true;
  }
  bool TryLock() { return Upgrade(word_.load(std::memory_order_relaxed)); }
  // Waits for exclusive ownership (a node nobody else can reach yet, background work, or a
  // waiting writer).
  void Lock() {
    if (TryLock()) return;
    Backoff backoff(backoff::kLatchHeld, "an in-memory node's version lock");
    while (!TryLock()) backoff.Pause();
  }
  // Lock, unless the node is or becomes obsolete (then false, not locked). *version (if
  // given): the version before, for Abandon.
  bool LockLive(uint64_t* version = nullptr) {
    Backoff backoff(backoff::kLatchHeld, "an in-memory node's version lock");
    for (;;) {
      const uint64_t w = word_.load(std::memory_order_relaxed);
      if (IsObsolete(w)) return false;
      if (Upgrade(w)) {
        if (version != nullptr) *version = w;
        return true;
      }
      backoff.Pause();
    }
  }
  // Releases after a change: the version moves on and optimistic readers restart. Returns
  // the new version, so the releaser can go on reading optimistically. (A plain store: while
  // the lock is exclusive no other thread writes the word.)
  uint64_t Unlock() {
    const uint64_t next = (word_.load(std::memory_order_relaxed) & ~kExclusive) + kVersionUnit;
    word_.store(next, std::memory_order_release);
    return next;
  }
  // Releases without a change: readers that read `version` (the word before the lock) stay valid.
  void Abandon(uint64_t version) { word_.store(version, std::memory_order_release); }
  // Releases and marks the node as having left its structure.
  void UnlockObsolete() {
    const uint64_t next = ((word_.load(std::memory_order_relaxed) & ~kExclusive) + kVersionUnit) | kObsolete;
    word_.store(next, std::memory_order_release);
  }

  // --- shared (blocks writers, not optimistic readers)

  bool TryLockShared() {
    uint64_t w = word_.load(std::memory_order_relaxed);
    if ((w & kExclusive) || (w & kSharedMask) == kSharedMask) return false;
    return word_.compare_exchange_strong(w, w + kSharedUnit, std::memory_order_acquire);
  }
  void LockShared() {
    if (TryLockShared()) return;
    Backoff backoff(backoff::kLatchHeld, "an in-memory node's version lock");
    while (!TryLockShared()) backoff.Pause();
  }
  void UnlockShared() { word_.fetch_sub(kSharedUnit, std::memory_order_release); }

  bool locked() const { return word_.load(std::memory_order_relaxed) & kExclusive; }
  bool obsolete() const { return IsObsolete(word_.load(std::memory_order_acquire)); }

 private:
  // Out of line: the wait is rare, and inlining it would keep ReadLock out of its callers.
  [[gnu::noinline]] uint64_t WaitForWriter() const {
    Backoff backoff(backoff::kLatchHeld, "an in-memory node's version lock");
    uint64_t w;
    while ((w = word_.load(std::memory_order_acquire)) & kExclusive) backoff.Pause();
    return w & ~kSharedMask;
  }

  std::atomic<uint64_t> word_{0};
};

}  // namespace dmindex
