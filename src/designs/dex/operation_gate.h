// OperationGate: a compute node's operations against the rare maintenance that needs none of
// them in flight - a repartitioning draining the node, a checkpoint's barrier, Close's flush.
//
// It replaced a shared mutex whose every shared lock and unlock was an atomic
// read-modify-write on one cache line all of the node's threads shared (and ~50 instructions
// of pthread_rwlock per operation, docs/results/dex-hit-path.md). Here an operation writes
// only its own worker's slot, a line no other thread writes:
//
//   operation (Pass)                     maintenance (Closed)
//   slot.inside = true       (seq_cst)   closed = true             (seq_cst)
//   if closed: inside = false, wait      wait while any slot.inside (seq_cst loads)
//   ... the operation ...                ... the maintenance ...
//   slot.inside = false      (release)   closed = false            (release)
//
// Both first steps are sequentially consistent, so of an operation and a maintenance that
// start together at least one sees the other's store (Dekker): either the operation sees
// `closed` and backs out before touching anything, or the maintenance sees its slot inside
// and waits for it to leave. A maintenance that saw a slot leave (release, then its acquire
// load) sees everything that operation did; an operation that read `closed` false after a
// maintenance reopened the gate sees everything the maintenance did. Maintenances of one
// gate take turns (`turn_`), so `closed` has one writer at a time.
//
// An operation that finds the gate closed waits for it to open, within kDexDraining
// (DexTree::Enter); new operations holding back is also what keeps a stream of them from
// starving the maintenance. Slots are registered for their worker's lifetime; a slot is
// inside only between an operation's Pass and its end, never while it registers or leaves.
#pragma once

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "common/retry.h"
#include "common/runtime.h"

namespace dmindex::designs::dex {

class OperationGate {
 public:
  // One worker's mark (a session's view of one compute node): its own cache line.
  struct alignas(64) Slot {
    std::atomic<bool> inside{false};
  };

  // An operation's passage through an open gate; leaves on destruction. Empty if the gate
  // was closed (the caller waits and tries again).
  class Pass {
   public:
    Pass() = default;
    Pass(Pass&& o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
    Pass& operator=(Pass&& o) noexcept {
      if (this != &o) {
        Leave();
        slot_ = std::exchange(o.slot_, nullptr);
      }
      return *this;
    }
    ~Pass() { Leave(); }
    bool entered() const { return slot_ != nullptr; }

   private:
    friend class OperationGate;
    explicit Pass(Slot* s) : slot_(s) {}
    void Leave() {
      if (slot_ != nullptr) std::exchange(slot_, nullptr)->inside.store(false, std::memory_order_release);
    }
    Slot* slot_ = nullptr;
  };

  // The gate held closed by one maintenance, every operation out; reopens on destruction.
  class Closed {
   public:
    explicit Closed(OperationGate& g) : gate_(&g) { g.CloseAndDrain(); }
    Closed(Closed&& o) noexcept : gate_(std::exchange(o.gate_, nullptr)) {}
    Closed(const Closed&) = delete;
    Closed& operator=(const Closed&) = delete;
    Closed& operator=(Closed&&) = delete;
    ~Closed() {
      if (gate_ != nullptr) gate_->Open();
    }

   private:
    OperationGate* gate_;
  };

  void Register(Slot* s) {
    std::lock_guard lk(slots_mu_);
    slots_.push_back(s);
  }
  void Unregister(Slot* s) {
    std::lock_guard lk(slots_mu_);
    slots_.erase(std::remove(slots_.begin(), slots_.end(), s), slots_.end());
  }

  // Marks `s` inside; an empty Pass (and `s` outside again) if the gate is closed or closing.
  Pass TryEnter(Slot& s) {
    s.inside.store(true, std::memory_order_seq_cst);
    if (!closed_.load(std::memory_order_seq_cst)) [[likely]] return Pass(&s);
    s.inside.store(false, std::memory_order_release);
    return Pass();
  }
  // True while a maintenance holds the gate or waits for it (operations hold back).
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  void CloseAndDrain() {
    turn_.lock();
    closed_.store(true, std::memory_order_seq_cst);
    // Under slots_mu_: a worker that registers meanwhile is not inside (it enters after it
    // registered, and then sees `closed_`); one that unregisters was not inside either.
    std::lock_guard lk(slots_mu_);
    for (const Slot* s : slots_) {
      Backoff backoff(backoff::kLockHeld, "dex: an operation to leave a draining compute node");
      while (s->inside.load(std::memory_order_seq_cst)) backoff.Pause();
    }
  }
  void Open() {
    closed_.store(false, std::memory_order_release);
    turn_.unlock();
  }

  std::atomic<bool> closed_{false};
  runtime::Mutex turn_;      // one maintenance at a time
  runtime::Mutex slots_mu_;  // slots_
  std::vector<Slot*> slots_;
};

}  // namespace dmindex::designs::dex
