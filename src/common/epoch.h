// Epoch-based reclamation: memory unlinked from a concurrent structure is freed only once no
// thread can still be reading it (Fraser, "Practical lock-freedom", 2004; as in Leis et al.'s
// ART with optimistic lock coupling, DaMoN'16). Optimistic readers hold no locks, so a node a
// writer replaced may still be under a reader's feet; it is retired here instead of deleted.
//
// Each thread that reads or changes the structure owns a Participant and brackets every
// operation with an EpochGuard. The global epoch advances from e to e+1 only when every
// participant inside an operation has announced e; memory retired while the epoch was r is
// freed once the epoch reaches r+2, when every operation that could have seen it has ended.
// All announcements and the advance are sequentially consistent, so a reader that announced
// the current epoch sees every unlink made before the epoch got there.
//
// Participants may be created and destroyed at any time (sessions come and go); what a
// departing participant retired is handed to the manager and freed by whoever reclaims next.
// Waiting never happens here: reclamation is attempted, and what cannot be freed yet stays.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/runtime.h"

namespace dmindex {

class EpochManager {
 public:
  // How retired memory is freed: `free_fn(object, context)`.
  using FreeFn = void (*)(void* object, void* context);

  class Participant;

  EpochManager() = default;
  // Frees everything still retired. No participant may be inside an operation.
  ~EpochManager();
  EpochManager(const EpochManager&) = delete;
  EpochManager& operator=(const EpochManager&) = delete;

  std::unique_ptr<Participant> Join();

  // A participant also reclaims when it left an operation having retired this many bytes
  // since it last did (0: only every few retires). For structures whose retired memory counts
  // against a limit (IndeXY's X): big values retired by few operations must not wait for
  // dozens more.
  void set_reclaim_bytes(uint64_t bytes) { reclaim_bytes_.store(bytes, std::memory_order_relaxed); }

  uint64_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }
  // Bytes retired and not yet freed, over all participants (what Retire was told).
  uint64_t pending_bytes() const { return pending_bytes_.load(std::memory_order_relaxed); }
  uint64_t freed_objects() const { return freed_objects_.load(std::memory_order_relaxed); }

 private:
  struct Retired {
    void* object;
    FreeFn free_fn;
    void* context;
    uint64_t bytes;
    uint64_t epoch;
  };
  // A participant's announcement: 0 while outside an operation, else the epoch it entered in.
  struct alignas(64) Slot {
    std::atomic<uint64_t> announced{0};
  };

  // Advances the epoch if every active participant announced the current one.
  void TryAdvance();
  // Frees the items of `list` retired at least two epochs ago; keeps the others.
  void FreeExpired(std::vector<Retired>* list);
  void Leave(Slot* slot, std::vector<Retired>&& leftovers);

  std::atomic<uint64_t> epoch_{2};
  std::atomic<uint64_t> reclaim_bytes_{0};
  std::atomic<uint64_t> pending_bytes_{0};
  std::atomic<uint64_t> freed_objects_{0};
  runtime::Mutex mu_;                       // slots_ and orphans_
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Retired> orphans_;            // retired by participants that left
};

class EpochManager::Participant {
 public:
  ~Participant();
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;

  // Nestable; only the outermost pair announces.
  void Enter() {
    if (depth_++ == 0) slot_->announced.store(manager_.epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  }
  // Leaving the outermost operation also reclaims, every few retires.
  void Exit() {
    if (--depth_ != 0) return;
    slot_->announced.store(0, std::memory_order_release);
    if (retired_.size() >= reclaim_at_ || ReclaimForBytes()) Reclaim();
  }
  bool inside() const { return depth_ > 0; }

  // `object` is unlinked: nobody who starts an operation from now on can reach it. It is
  // freed by `free_fn(object, context)` once every operation that could have is over.
  void Retire(void* object, FreeFn free_fn, void* context, uint64_t bytes);
  // Tries to advance the epoch and frees what has expired (also done every few retires).
  // Returns the number of items still waiting. Must be called outside an operation.
  size_t Reclaim();

 private:
  friend class EpochManager;
  Participant(EpochManager& manager, Slot* slot) : manager_(manager), slot_(slot) {}

  bool ReclaimForBytes() const {
    const uint64_t limit = manager_.reclaim_bytes_.load(std::memory_order_relaxed);
    return limit != 0 && retired_bytes_ >= limit;
  }

  EpochManager& manager_;
  Slot* slot_;
  uint32_t depth_ = 0;
  uint64_t retired_bytes_ = 0;  // retired since the last Reclaim
  size_t reclaim_at_ = 64;  // Reclaim when this many are waiting (amortises the slot scan)
  std::vector<EpochManager::Retired> retired_;
};

// Brackets one operation.
class EpochGuard {
 public:
  explicit EpochGuard(EpochManager::Participant& p) : p_(p) { p_.Enter(); }
  ~EpochGuard() { p_.Exit(); }
  EpochGuard(const EpochGuard&) = delete;
  EpochGuard& operator=(const EpochGuard&) = delete;

 private:
  EpochManager::Participant& p_;
};

}  // namespace dmindex
