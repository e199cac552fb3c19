#include "tree/local_lock_table.h"

#include "common/retry.h"
#include "tree/lock_table.h"

namespace dmindex::tree {

LocalLockTable::LocalLockTable(uint16_t memory_nodes, uint32_t handover_max)
    : memory_nodes_(memory_nodes),
      handover_max_(handover_max),
      slots_(new Slot[size_t{memory_nodes} * kLockWordsPerMemoryNode]),
      lots_(new ParkingLot[kParkingLots]) {}

LocalLockTable::Slot& LocalLockTable::SlotFor(GlobalAddress lock_word) const {
  uint64_t index = (lock_word.offset() - fabric::kLockTableOffset) / 8;
  const size_t node = lock_word.node() % memory_nodes_;
  return slots_[node * kLockWordsPerMemoryNode +
                index % kLockWordsPerMemoryNode];
}

ParkingLot& LocalLockTable::LotFor(const Slot& s) const {
  return lots_[static_cast<size_t>(&s - slots_.get()) % kParkingLots];
}

bool LocalLockTable::Acquire(GlobalAddress lock_word) {
  Slot& s = SlotFor(lock_word);
  // seq_cst here and in Release: see Release.
  const uint32_t ticket = s.next_ticket.fetch_add(1, std::memory_order_seq_cst);
  // Waiters on one compute node wait in ticket order (the wait queue): a few yields (the
  // owner is usually a round trip from done), then block until the next release, so that
  // queued threads leave the cores to the owner and to threads with other work.
  const auto my_turn = [&] { return s.now_serving.load(std::memory_order_seq_cst) == ticket; };
  Backoff backoff(backoff::kRestart, "the local queue of lock word", lock_word);
  for (int step = 0; step < 8 && !my_turn(); ++step) backoff.Pause();
  if (!my_turn()) {
    WaitNote note("the local queue of lock word", lock_word);
    LotFor(s).Park(my_turn);
  }
  return s.global_held;
}

bool LocalLockTable::TryAcquire(GlobalAddress lock_word, bool* handed_over) {
  Slot& s = SlotFor(lock_word);
  // next_ticket == now_serving: no owner, no waiter. Taking ticket `serving` then is taking
  // the turn being served; a release in between moved now_serving only after next_ticket
  // had passed `serving`, so the exchange fails.
  uint32_t serving = s.now_serving.load(std::memory_order_seq_cst);
  if (!s.next_ticket.compare_exchange_strong(serving, serving + 1, std::memory_order_seq_cst)) return false;
  *handed_over = s.global_held;
  return true;
}

uint32_t LocalLockTable::Waiting(GlobalAddress lock_word) const {
  const Slot& s = SlotFor(lock_word);
  uint32_t queued = s.next_ticket.load(std::memory_order_relaxed) -
                    s.now_serving.load(std::memory_order_relaxed);
  return queued > 0 ? queued - 1 : 0;
}

bool LocalLockTable::ShouldHandOver(GlobalAddress lock_word) const {
  return Waiting(lock_word) > 0 && SlotFor(lock_word).handovers_in_row < handover_max_;
}

void LocalLockTable::Release(GlobalAddress lock_word, bool handed_over) {
  Slot& s = SlotFor(lock_word);
  if (handed_over) {
    ++s.handovers_in_row;
    handovers_total_.fetch_add(1, std::memory_order_relaxed);
  } else {
    s.handovers_in_row = 0;
  }
  s.global_held = handed_over;
  // Wake only if someone queued behind us. Both counters are seq_cst in both threads, so the
  // two cannot miss each other: either this load sees a waiter's ticket (and wakes it), or the
  // waiter took its ticket later and its first check of now_serving sees this increment.
  const uint32_t serving = s.now_serving.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (s.next_ticket.load(std::memory_order_seq_cst) != serving) LotFor(s).Wake();
}

}  // namespace dmindex::tree
