// HOCL's local lock table (Sherman §2.1): one per compute node, one local lock per global
// lock word. A thread takes the local lock before the global one, so threads of one compute
// node queue locally (FIFO tickets: fairness) instead of hammering the memory node with CAS
// retries, and a releasing thread can hand the global lock directly to the next local waiter
// (saving that waiter's CAS round trip). Hand-overs in a row are bounded so other compute
// nodes get their turn.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/sync.h"

#include "dmindex/global_address.h"

namespace dmindex::tree {

class LocalLockTable {
 public:
  LocalLockTable(uint16_t memory_nodes, uint32_t handover_max);

  // Blocks until the calling thread owns the local lock of `lock_word`. Returns true if the
  // previous owner handed the global lock over (it is already held; no CAS needed).
  bool Acquire(GlobalAddress lock_word);
  // Takes the local lock of `lock_word` only if nobody owns it or waits for it: never blocks
  // (for a thread that still holds another lock). True: it is ours, and *handed_over says
  // whether the global lock came with it, as Acquire's result.
  bool TryAcquire(GlobalAddress lock_word, bool* handed_over);
  // Asked by the owner before it releases: should it keep the global lock and hand it to a
  // waiting local thread? True only if someone waits and the hand-over bound allows it.
  bool ShouldHandOver(GlobalAddress lock_word) const;
  // Threads queued behind the current owner of `lock_word`.
  uint32_t Waiting(GlobalAddress lock_word) const;
  // Releases the local lock. `handed_over` says whether the global lock stays held for the
  // next local owner (the caller released it remotely otherwise).
  void Release(GlobalAddress lock_word, bool handed_over);

  uint64_t handovers() const { return handovers_total_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint32_t> next_ticket{0};
    std::atomic<uint32_t> now_serving{0};
    // Written by the owner only; the next owner reads them after its acquire.
    uint32_t handovers_in_row = 0;
    bool global_held = false;
  };
  Slot& SlotFor(GlobalAddress lock_word) const;
  ParkingLot& LotFor(const Slot& s) const;

  // Blocked waiters sleep in a parking lot chosen by their slot; slots share the lots, and a
  // wake-up for another slot only costs a re-check.
  static constexpr size_t kParkingLots = 64;

  const uint16_t memory_nodes_;
  const uint32_t handover_max_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<ParkingLot[]> lots_;
  std::atomic<uint64_t> handovers_total_{0};
};

}  // namespace dmindex::tree
