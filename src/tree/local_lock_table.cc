#include "tree/local_lock_table.h"

#include <thread>

#include "tree/lock_table.h"

namespace dmindex::tree {

LocalLockTable::LocalLockTable(uint16_t memory_nodes, uint32_t handover_max)
    : memory_nodes_(memory_nodes),
      handover_max_(handover_max),
      slots_(new Slot[size_t{memory_nodes} * kLockWordsPerMemoryNode]) {}

LocalLockTable::Slot& LocalLockTable::SlotFor(GlobalAddress lock_word) const {
  uint64_t index = (lock_word.offset() - fabric::kLockTableOffset) / 8;
  const size_t node = lock_word.node() % memory_nodes_;
  return slots_[node * kLockWordsPerMemoryNode +
                index % kLockWordsPerMemoryNode];
}

bool LocalLockTable::Acquire(GlobalAddress lock_word) {
  Slot& s = SlotFor(lock_word);
  const uint32_t ticket = s.next_ticket.fetch_add(1, std::memory_order_relaxed);
  // Waiters on one compute node wait in ticket order (the wait queue): a few yields (the
  // owner is usually a round trip from done), then block until the next release, so that
  // queued threads leave the cores to the owner and to threads with other work.
  for (int spin = 0;; ++spin) {
    uint32_t serving = s.now_serving.load(std::memory_order_acquire);
    if (serving == ticket) break;
    if (spin < 8)
      std::this_thread::yield();
    else
      s.now_serving.wait(serving, std::memory_order_acquire);
  }
  return s.global_held;
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
  s.now_serving.fetch_add(1, std::memory_order_release);
  if (s.next_ticket.load(std::memory_order_relaxed) != s.now_serving.load(std::memory_order_relaxed))
    s.now_serving.notify_all();  // someone queued: wake the blocked ones (next in line runs)
}

}  // namespace dmindex::tree
