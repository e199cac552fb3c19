// OptLock: the version lock of optimistic lock coupling (Leis et al., "The ART of practical
// synchronization", DaMoN'16; LeanStore; DEX's compute-side tree). One 64-bit word: odd while
// a writer holds it, bumped by two on every release. Readers take no lock: they remember the
// version, read, and validate that the version did not move (a seqlock).
//
// The node contents the lock protects are std::atomic words accessed with relaxed ordering,
// so concurrent optimistic reads are well-defined C++ (and ThreadSanitizer-clean); the fences
// below give them the seqlock ordering (Boehm, "Can seqlocks get along with programming
// language memory models?", MSPC'12). On x86 all of it compiles to plain moves.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/retry.h"

namespace dmindex::designs::local {

class OptLock {
 public:
  // Set (with the version moved on) when a node leaves the tree: only trees whose nodes can
  // leave (the tiered one, tiered_tree.h) see it; a reader that finds it restarts from the root.
  static constexpr uint64_t kObsolete = uint64_t{1} << 63;
  static bool IsObsolete(uint64_t version) { return (version & kObsolete) != 0; }

  // Waits while a writer holds the lock (yielding: on few cores the holder needs the CPU)
  // and returns the version to validate against later.
  uint64_t ReadLock() const {
    const uint64_t v = word_.load(std::memory_order_acquire);
    return (v & 1) ? WaitForWriter() : v;
  }

  // True if no writer touched the node since ReadLock returned `version`, i.e. everything
  // read in between is one consistent snapshot.
  bool Validate(uint64_t version) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return word_.load(std::memory_order_relaxed) == version;
  }

  // Turns a validated read into exclusive ownership; false if the node changed meanwhile
  // (the caller restarts). Never waits, so a thread holding locks never blocks on another.
  bool Upgrade(uint64_t version) {
    if (!word_.compare_exchange_strong(version, version + 1, std::memory_order_acquire))
      return false;
    // Orders the odd version before the data stores that follow (seqlock writer side).
    std::atomic_thread_fence(std::memory_order_release);
    return true;
  }

  // Exclusive ownership for a node nobody else can reach yet or a waiting writer.
  void Lock() {
    Backoff backoff(backoff::kLatchHeld, "a node latch of the local tree");
    for (;;) {
      uint64_t v = word_.load(std::memory_order_relaxed);
      if (!(v & 1) && Upgrade(v)) return;
      backoff.Pause();
    }
  }

  // Waits for the lock like Lock(); false (not locked) if the node left the tree. *version:
  // the version before, for Abandon.
  bool LockLive(uint64_t* version) {
    Backoff backoff(backoff::kLatchHeld, "a node latch of the local tree");
    for (;;) {
      uint64_t v = word_.load(std::memory_order_relaxed);
      if (IsObsolete(v)) return false;
      if (!(v & 1) && Upgrade(v)) {
        *version = v;
        return true;
      }
      backoff.Pause();
    }
  }

  void Unlock() { word_.fetch_add(1, std::memory_order_release); }
  // Releases without a change: readers that validated `version` before stay valid.
  void Abandon(uint64_t version) { word_.store(version, std::memory_order_release); }
  // Releases and marks the node as having left the tree (the holder unlinked it).
  void UnlockObsolete() {
    word_.store((word_.load(std::memory_order_relaxed) + 1) | kObsolete, std::memory_order_release);
  }
  bool obsolete() const { return IsObsolete(word_.load(std::memory_order_acquire)); }

 private:
  // Out of line: the wait is rare, and inlining it would keep ReadLock out of the callers.
  [[gnu::noinline]] uint64_t WaitForWriter() const {
    Backoff backoff(backoff::kLatchHeld, "a node latch of the local tree");
    uint64_t v;
    while ((v = word_.load(std::memory_order_acquire)) & 1) backoff.Pause();
    return v;
  }

  std::atomic<uint64_t> word_{0};
};

}  // namespace dmindex::designs::local
