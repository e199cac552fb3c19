#include "designs/indexy/memory_budget.h"

#include <algorithm>
#include <mutex>

namespace dmindex::designs::indexy {

MemoryBudget::MemoryBudget(const IndexyOptions& options, const XTree& x) : options_(options), x_(x) {}

bool MemoryBudget::CleaningDue() const {
  if (!options_.clean) return false;
  if (cleaning_started_.load(std::memory_order_relaxed)) return true;
  if (used() < options_.clean_bytes()) return false;
  cleaning_started_.store(true, std::memory_order_relaxed);
  return true;
}

uint64_t MemoryBudget::ReleaseTarget() const {
  const uint64_t u = used(), low = options_.low_bytes();
  return u > low ? u - low : 0;
}

void MemoryBudget::NotePeak(uint64_t bytes) {
  uint64_t p = peak_.load(std::memory_order_relaxed);
  while (bytes > p && !peak_.compare_exchange_weak(p, bytes, std::memory_order_relaxed)) {
  }
}

void MemoryBudget::WakeBackground() {
  if (work_wanted_.exchange(true, std::memory_order_acq_rel)) return;  // already asked
  std::lock_guard lock(mu_);
  work_cv_.NotifyOne();
}

void MemoryBudget::AfterGrowth() {
  const uint64_t u = used();
  NotePeak(u);
  if (u >= options_.high_bytes()) WakeBackground();
}

Status MemoryBudget::WaitForRoom(XWorker& w) {
  const uint64_t stall = options_.stall_bytes(), limit = options_.limit_bytes;
  if (used() < stall) return Status::Ok();
  w.Reclaim();
  if (used() < stall) return Status::Ok();
  stalls_.fetch_add(1, std::memory_order_relaxed);
  WakeBackground();
  const auto start = runtime::Now();
  const auto deadline = start + std::chrono::milliseconds(options_.stall_ms);
  Status result;
  {
    std::unique_lock lock(mu_);
    // Rounds numbered above this one began while this writer waited: their failure is its.
    const uint64_t rounds_before = rounds_begun_;
    waiting_.fetch_add(1, std::memory_order_acq_rel);
    for (;;) {
      const uint64_t u = used();
      if (u < stall) break;
      const auto now = runtime::Now();
      if (u < limit && (now >= deadline || stopped())) {  // within the limit: go on
        if (!stopped()) stall_timeouts_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      if (u >= limit && stopped()) {
        result = Status::Aborted("indexy: the index is closing while X is at its memory limit");
        break;
      }
      const bool failed_since = last_round_ > rounds_before && !last_round_failure_.ok();
      if (u >= limit && failed_since && last_round_nothing_ && now >= deadline) {
        // X's live bytes are at the limit and none can be released (its root and the nodes
        // above the units, at a limit too small for the keys): waiting would never end, and
        // Y is not failing. The write goes on past the limit, counted.
        stall_timeouts_.fetch_add(1, std::memory_order_relaxed);
        over_limit_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      if (u >= limit && failed_since && !last_round_nothing_ && used() >= limit) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        result = Status::OutOfSpace("indexy: X is at its memory limit (" + std::to_string(used()) + " of " +
                                    std::to_string(limit) + " bytes) and releasing to Y failed: " +
                                    last_round_failure_.ToString() + "; the write was not made");
        break;
      }
      // Polled every millisecond as well: memory also comes back when the epochs free what
      // writers retired, which nobody signals.
      const auto poll = now + std::chrono::milliseconds(1);
      // At the limit only a writer that may go on at the deadline wakes for it (the checks
      // above left the loop when it passed); the others wait for room or a failed round.
      const bool may_go_on = u < limit || (failed_since && last_round_nothing_);
      room_cv_.WaitUntil(lock, may_go_on ? std::min(deadline, poll) : poll, [&] {
        const uint64_t now_used = used();
        return now_used < stall || stopped() ||
               (now_used >= limit && last_round_ > rounds_before && !last_round_failure_.ok() &&
                !last_round_nothing_);
      });
      lock.unlock();
      w.Reclaim();
      lock.lock();
    }
    waiting_.fetch_sub(1, std::memory_order_acq_rel);
  }
  stall_us_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(runtime::Now() - start).count()),
      std::memory_order_relaxed);
  return result;
}

bool MemoryBudget::WaitForWork(std::chrono::microseconds period) {
  std::unique_lock lock(mu_);
  work_cv_.WaitUntil(lock, runtime::Now() + period,
                     [&] { return work_wanted_.load(std::memory_order_acquire) || stopped(); });
  return work_wanted_.exchange(false, std::memory_order_acq_rel);
}

uint64_t MemoryBudget::RoundBegins() {
  std::lock_guard lock(mu_);
  return ++rounds_begun_;
}

void MemoryBudget::RoundEnded(uint64_t round, const Status& failure, bool nothing_to_release) {
  NotePeak(used());
  std::lock_guard lock(mu_);
  last_round_ = round;
  last_round_failure_ = failure;
  last_round_nothing_ = nothing_to_release;
  room_cv_.NotifyAll();
}

void MemoryBudget::Stop() {
  stop_.store(true, std::memory_order_release);
  std::lock_guard lock(mu_);
  work_cv_.NotifyAll();
  room_cv_.NotifyAll();
}

BudgetStats MemoryBudget::Stats() const {
  BudgetStats s;
  s.stalls = stalls_.load(std::memory_order_relaxed);
  s.stall_timeouts = stall_timeouts_.load(std::memory_order_relaxed);
  s.stall_us = stall_us_.load(std::memory_order_relaxed);
  s.refused = refused_.load(std::memory_order_relaxed);
  s.over_limit = over_limit_.load(std::memory_order_relaxed);
  s.peak_bytes = std::max(peak_.load(std::memory_order_relaxed), used());
  return s;
}

}  // namespace dmindex::designs::indexy
