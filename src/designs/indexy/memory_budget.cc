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

void MemoryBudget::WaitForRoom(XWorker& w) {
  const uint64_t stall = options_.stall_bytes();
  if (used() < stall || stopped()) return;
  w.Reclaim();
  if (used() < stall) return;
  stalls_.fetch_add(1, std::memory_order_relaxed);
  WakeBackground();
  const auto start = runtime::Now();
  const auto deadline = start + std::chrono::milliseconds(options_.stall_ms);
  bool room = false;
  {
    std::unique_lock lock(mu_);
    // Polled every millisecond as well: memory also comes back when the epochs free what
    // writers retired, which nobody signals.
    while (!(room = used() < stall || stopped())) {
      const auto now = runtime::Now();
      if (now >= deadline) break;
      room_cv_.WaitUntil(lock, std::min(deadline, now + std::chrono::milliseconds(1)),
                         [&] { return used() < stall || stopped(); });
      lock.unlock();
      w.Reclaim();
      lock.lock();
    }
  }
  if (!room) stall_timeouts_.fetch_add(1, std::memory_order_relaxed);
  stall_us_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(runtime::Now() - start).count()),
      std::memory_order_relaxed);
}

bool MemoryBudget::WaitForWork(std::chrono::microseconds period) {
  std::unique_lock lock(mu_);
  work_cv_.WaitUntil(lock, runtime::Now() + period,
                     [&] { return work_wanted_.load(std::memory_order_acquire) || stopped(); });
  return work_wanted_.exchange(false, std::memory_order_acq_rel);
}

void MemoryBudget::Freed() {
  NotePeak(used());
  std::lock_guard lock(mu_);
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
  s.peak_bytes = std::max(peak_.load(std::memory_order_relaxed), used());
  return s;
}

}  // namespace dmindex::designs::indexy
