// LogWatermark: how far a compute node's redo log is durable, so that no operation answers
// from a write whose record has not landed (docs/DEX_INTERNALS.md, "Durability: the redo
// log, replay and takeover").
//
// A write to a cached leaf is applied under the leaf's latch, claims its record's position
// there, and appends the record after releasing the latch (so writers of one hot leaf
// pipeline their round trips). Until the record lands, the write is in the cache only: if the
// process dies, the next host replays a log without it. Another operation that read the page
// meanwhile must therefore not answer before that record landed - a lookup returning the new
// value, an update answering NotFound after the delete - or it acknowledges a state that a
// crash takes back. So every page carries the end position of the last record of a change to
// it (BufferFrame::redo_end, set under the latch), and an operation that answers from pages
// (a lookup, a scan, a write that changed nothing) first waits until every record below the
// largest end it read has landed.
//
// Records land out of order (each writer posts its own), so "landed below P" is: no record
// below P is still being appended, and none failed. Each worker has a slot holding a lower
// bound of the position it is appending (written before the position is claimed, so a reader
// that read a page carrying that record, and then the tail, sees the slot - both are
// sequentially consistent), or kNone. A record whose append failed (its WRITE and the one
// re-post failed: the memory server stayed away) goes to the failed set, with its bytes. The
// write-back thread posts those again, outside the compute node's gate, and a checkpoint
// clears the set below its barrier's tail (its flush wrote every change below it to the
// pool). An operation that read such a change answers Unavailable until then, and its page
// stays cached (BufferManager::SetLeaveCheck), as does every page changed after it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "common/runtime.h"
#include "dmindex/status.h"

namespace dmindex::designs::dex {

class LogWatermark {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;
  // One worker's record in flight: its own cache line, written only by its worker.
  struct alignas(64) Slot {
    std::atomic<uint64_t> appending{kNone};
  };
  enum class Reach { kLanded, kInFlight, kFailed };

  void Register(Slot* s) {
    std::lock_guard lk(mu_);
    slots_.push_back(s);
  }
  void Unregister(Slot* s) {
    std::lock_guard lk(mu_);
    slots_.erase(std::remove(slots_.begin(), slots_.end(), s), slots_.end());
  }

  // Right before claiming a position from `tail`: a lower bound of it.
  static void Begin(Slot& s, const std::atomic<uint64_t>& tail) {
    s.appending.store(tail.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  }
  // The worker's record landed.
  static void Landed(Slot& s) { s.appending.store(kNone, std::memory_order_seq_cst); }
  // Its append failed for good: readers of its change answer Unavailable until a checkpoint.
  void Failed(Slot& s, uint64_t pos, std::vector<std::byte> bytes) {
    {
      std::lock_guard lk(mu_);
      failed_.emplace(pos, std::move(bytes));
    }
    s.appending.store(kNone, std::memory_order_seq_cst);  // after the insert: see Reached
  }
  // A leaf that was not admitted, whose page and record went out in one batch that failed
  // (dex_durability.cc, PostUncached): its pool image may hold a change whose record never
  // landed, so nobody answers from that image until a checkpoint. Called before the leaf's
  // transient frame leaves the mapping table: a reader that no longer finds the frame
  // registered finds the leaf here.
  void FailedInPool(uint64_t leaf, uint64_t pos) {
    std::lock_guard lk(mu_);
    failed_leaves_.emplace(leaf, pos);
    any_failed_leaf_.store(true, std::memory_order_seq_cst);
  }
  // Unavailable if the pool image of `leaf` may hold such a change.
  Status CheckPoolImage(uint64_t leaf) {
    if (!any_failed_leaf_.load(std::memory_order_seq_cst)) [[likely]] return Status::Ok();
    std::lock_guard lk(mu_);
    if (!failed_leaves_.contains(leaf)) return Status::Ok();
    return Status::Unavailable("dex: this leaf's image in the pool may hold a write whose redo record failed (its "
                               "memory server went away); it is readable again after the next checkpoint");
  }
  // A checkpoint's flush wrote back every page dirty when the tail was `upto`: every change
  // whose record is below it is in the pool, and no replay reaches the records before it.
  void Covered(uint64_t upto) {
    std::lock_guard lk(mu_);
    failed_.erase(failed_.begin(), failed_.lower_bound(upto));
    std::erase_if(failed_leaves_, [&](const auto& e) { return e.second < upto; });
    any_failed_leaf_.store(!failed_leaves_.empty(), std::memory_order_seq_cst);
    Raise(std::min(upto, failed_.empty() ? kNone : failed_.begin()->first));
  }
  // The failed records (position, bytes), to be posted again; Reposted when one landed.
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> FailedRecords() {
    std::lock_guard lk(mu_);
    return {failed_.begin(), failed_.end()};
  }
  void Reposted(uint64_t pos) {
    std::lock_guard lk(mu_);
    failed_.erase(pos);
  }

  // Whether every record below `end` has landed. Cheap when it is known to have.
  Reach Reached(uint64_t end, const std::atomic<uint64_t>& tail) {
    if (end <= landed_.load(std::memory_order_acquire)) [[likely]] return Reach::kLanded;
    uint64_t low = tail.load(std::memory_order_seq_cst);
    std::lock_guard lk(mu_);
    // Slots before the failed set: a record that failed is in the set before its slot clears.
    for (const Slot* s : slots_) low = std::min(low, s->appending.load(std::memory_order_seq_cst));
    const uint64_t failed = failed_.empty() ? kNone : failed_.begin()->first;
    Raise(std::min(low, failed));
    if (failed < std::min(low, end)) return Reach::kFailed;
    return end <= low ? Reach::kLanded : Reach::kInFlight;
  }

 private:
  void Raise(uint64_t to) {
    uint64_t cur = landed_.load(std::memory_order_relaxed);
    while (cur < to && !landed_.compare_exchange_weak(cur, to, std::memory_order_release)) {
    }
  }

  std::atomic<uint64_t> landed_{0};  // every record below it landed (a lower bound)
  runtime::Mutex mu_;                // slots_, failed_, failed_leaves_
  std::vector<Slot*> slots_;
  std::map<uint64_t, std::vector<std::byte>> failed_;  // position -> the record's bytes
  std::map<uint64_t, uint64_t> failed_leaves_;         // FailedInPool: leaf -> its record's position
  std::atomic<bool> any_failed_leaf_{false};
};

}  // namespace dmindex::designs::dex
