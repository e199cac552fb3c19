// X's memory limit (docs/INDEXY.md, "Memory"): X's own bytes - every node, entry and value
// allocated and not yet freed, retired ones included - against the limit and its marks.
//   clean_from  pre-cleaning runs from here on
//   high        the background starts releasing, down to
//   low         where it stops
//   stall       writers wait for the background before they add to X
// The wait is bounded (knob stall_ms): when release cannot keep up (nothing clean, everything
// hot) a writer goes on after that long instead of spinning on a 2-core machine, and the wait
// is counted. Nobody waits inside an X operation: an epoch held while waiting would keep the
// released memory from being freed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/runtime.h"
#include "designs/indexy/indexy_options.h"
#include "designs/indexy/x_index.h"

namespace dmindex::designs::indexy {

struct BudgetStats {
  uint64_t stalls = 0;          // writes that waited for room
  uint64_t stall_timeouts = 0;  // of which went on after stall_ms without room
  uint64_t stall_us = 0;        // time spent waiting, all writers
  uint64_t peak_bytes = 0;      // the most X held, sampled at every write and release
};

class MemoryBudget {
 public:
  MemoryBudget(const IndexyOptions& options, const XTree& x);

  uint64_t used() const { return x_.Bytes().total; }
  const IndexyOptions& options() const { return options_; }
  bool AtHigh() const { return used() >= options_.high_bytes(); }
  bool AtLow() const { return used() > options_.low_bytes(); }
  bool CleaningDue() const;
  // Bytes to free to get back to the low mark (0 below it).
  uint64_t ReleaseTarget() const;

  // Before a write: waits while X is at the stall mark (bounded), waking the background and
  // freeing what `w` retired (its own retired memory counts too, and only it frees that).
  void WaitForRoom(XWorker& w);
  // After a write: wakes the background if X reached the high mark.
  void AfterGrowth();

  // The background: sleeps until woken or `period` passed; true if work was asked for.
  bool WaitForWork(std::chrono::microseconds period);
  // The background freed memory: wakes waiting writers.
  void Freed();
  // Stops every wait for good (the index closes).
  void Stop();
  bool stopped() const { return stop_.load(std::memory_order_acquire); }

  BudgetStats Stats() const;

 private:
  void WakeBackground();
  void NotePeak(uint64_t bytes);

  const IndexyOptions options_;
  const XTree& x_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> work_wanted_{false};
  // X reached clean_from once: pre-cleaning runs from then on, as in the authors' code.
  mutable std::atomic<bool> cleaning_started_{false};

  runtime::Mutex mu_;
  runtime::CondVar work_cv_;  // the background waits here
  runtime::CondVar room_cv_;  // stalled writers wait here

  std::atomic<uint64_t> stalls_{0}, stall_timeouts_{0}, stall_us_{0}, peak_{0};
};

}  // namespace dmindex::designs::indexy
