// X's memory limit (docs/INDEXY.md, "Memory"): X's own bytes - every node, entry and value
// allocated and not yet freed, retired ones included - against the limit and its marks.
//   clean_from  pre-cleaning runs from here on
//   high        the background starts releasing, down to
//   low         where it stops
//   stall       writers wait for the background before they add to X
//   limit       no write starts while X is at it
// Between the stall mark and the limit the wait is bounded (knob stall_ms): when release is
// slow (nothing clean, everything hot) a writer goes on after that long - X is still within
// its limit - instead of spinning on a 2-core machine, and the wait is counted. At the limit a
// write is not made until release has made room; when a release round that began while the
// writer waited freed nothing and failed (Y refuses writes), the writer gets OutOfSpace naming
// the limit and Y's error, and the index is unchanged: what writers were told succeeded stays
// in X (dirty) until Y takes it. So X passes its limit only by the writes already under way
// when it reached it (each adds one entry and the nodes it grows or splits) - and when its
// unreleasable part (root, nodes above the units) is itself at the limit, a limit too small
// for the keys: then writers go on after stall_ms, counted. Nobody waits inside an X
// operation: an epoch held while waiting would keep the released memory from being freed.
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
  uint64_t refused = 0;         // writes refused at the limit (OutOfSpace: release failed)
  uint64_t over_limit = 0;      // writes that went past the limit: nothing in X could be released
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

  // Before a write: waits while X is at the stall mark (above), waking the background and
  // freeing what `w` retired (its own retired memory counts too, and only it frees that).
  // Ok: make the write. OutOfSpace: X is at its limit and release failed since the wait
  // began; Aborted: the index is closing with X at its limit. Either way, do not write.
  Status WaitForRoom(XWorker& w);
  // After a write: wakes the background if X reached the high mark.
  void AfterGrowth();

  // The background: sleeps until woken or `period` passed; true if work was asked for.
  bool WaitForWork(std::chrono::microseconds period);
  // The background, around each release round: RoundBegins numbers it, RoundEnded says how it
  // went - `failure` is the error of a round that freed nothing (not Ok), which writers waiting
  // at the limit since before the round began get; unless `nothing_to_release` (no error: X's
  // live bytes are at the limit and nothing can leave), when they go on after stall_ms past
  // the limit, counted. Wakes waiting writers.
  uint64_t RoundBegins();
  void RoundEnded(uint64_t round, const Status& failure, bool nothing_to_release = false);
  // Stops every wait for good (the index closes).
  void Stop();
  bool stopped() const { return stop_.load(std::memory_order_acquire); }

  BudgetStats Stats() const;
  // Writers waiting for room now (each counted once it knows which release rounds are its).
  uint32_t waiting() const { return waiting_.load(std::memory_order_acquire); }

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
  // Under mu_: release rounds begun, the last one that ended, and whether it failed (why).
  uint64_t rounds_begun_ = 0;
  uint64_t last_round_ = 0;
  Status last_round_failure_;
  bool last_round_nothing_ = false;

  std::atomic<uint32_t> waiting_{0};
  std::atomic<uint64_t> stalls_{0}, stall_timeouts_{0}, stall_us_{0}, refused_{0}, over_limit_{0}, peak_{0};
};

}  // namespace dmindex::designs::indexy
