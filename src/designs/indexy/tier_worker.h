// The background of one IndeXY index: a thread (through the runtime seam) that releases X
// down to its low mark whenever X reaches its high mark, pre-cleans dirty units once X has
// reached clean_from, and otherwise sleeps until a writer wakes it (MemoryBudget). One thread
// does both, so cleaning and release never run on the same unit at once and Y's writes of one
// key happen in the order X's values were written - which the rules of x_index.h rely on.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/runtime.h"
#include "designs/indexy/precleaner.h"
#include "designs/indexy/release_policy.h"
#include "designs/indexy/tiers.h"

namespace dmindex::designs::indexy {

struct BackgroundCounters {
  uint64_t release_rounds = 0;
  uint64_t released_units = 0;
  uint64_t released_entries = 0;
  uint64_t released_bytes = 0;
  uint64_t release_written = 0;   // dirty entries a release had to write first
  // Of the released units: single entries (ranked by their parent's density), and units with
  // counters but no sampled access (density 0).
  uint64_t released_single_units = 0;
  uint64_t released_unaccessed_units = 0;
  // The density rankings' candidates, summed over the rounds, and the single entries among
  // them.
  uint64_t ranked_candidates = 0;
  uint64_t ranked_single_candidates = 0;
  uint64_t cleaned_units = 0;
  uint64_t cleaned_entries = 0;
  uint64_t clean_passes = 0;
  uint64_t errors = 0;            // failed Y writes and walks (retried later)
};

class TierWorker {
 public:
  explicit TierWorker(Tiers& tiers);
  // Stops and joins the thread.
  ~TierWorker();
  TierWorker(const TierWorker&) = delete;
  TierWorker& operator=(const TierWorker&) = delete;

  void Stop();
  BackgroundCounters Counters() const;
  // The last background error, if any (for properties and the index's Close).
  std::string last_error() const;

 private:
  void Run();
  struct RoundOutcome {
    uint64_t freed = 0;  // bytes
    Status failure;      // the last error of a unit's release, or of the choice
    bool stale = false;  // a chosen unit had left X when it was released
    bool nothing = false;  // no error, and X's live bytes at the limit: nothing can leave
  };
  // Releases until X is at or below its low mark, and tells the budget how the round went
  // (waiting writers take a failure as theirs); false if it freed nothing.
  bool ReleaseRound(XWorker& w);
  // Releases `units` in order until `target` bytes are freed.
  void ReleaseUnits(XWorker& w, const std::vector<XUnit>& units, uint64_t target, RoundOutcome* out);
  // Frees what the releases retired, as far as the other threads' epochs allow.
  void ReclaimRetired(XWorker& w);
  void NoteError(const Status& s);

  Tiers& tiers_;
  ReleasePolicyRunner policy_;
  PreCleaner cleaner_;
  uint64_t released_since_decay_ = 0;  // bytes
  std::atomic<uint64_t> release_rounds_{0}, released_units_{0}, released_entries_{0}, released_bytes_{0},
      release_written_{0}, released_single_units_{0}, released_unaccessed_units_{0}, ranked_candidates_{0},
      ranked_single_candidates_{0}, cleaned_units_{0}, cleaned_entries_{0}, clean_passes_{0}, errors_{0};
  mutable runtime::Mutex error_mu_;
  std::string last_error_;
  runtime::Thread thread_;  // last: starts after everything above exists
};

}  // namespace dmindex::designs::indexy
