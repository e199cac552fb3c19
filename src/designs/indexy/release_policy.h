// Which units of X to release when X crossed its high mark (docs/INDEXY.md, "How it works": *Release*):
//
//  * density: the paper's Algorithm 1. Candidates start as the root's children, ranked by
//    access density (sampled accesses / estimated entries); the shortest prefix of the ranking
//    whose size reaches the target (within `margin`) is released, otherwise a node is split
//    into its children - the largest one whose children's densities differ by more than `gap`
//    of its own, or else the largest - and the ranking redone. Fixed where the paper's loop
//    cannot end (digest §12.1.4): only nodes above the unit depth split (deeper ones have no
//    counters), and when nothing can split, the prefix found so far is released, overshoot
//    and all; a tree smaller than the target is released whole.
//  * clock: the authors' code's second chance over the units in key order, resuming where the
//    last round stopped: a unit accessed since it was last passed loses its reference bit and
//    stays; the others are released until the target is reached (two laps at most).
//
// Sizes are estimates: entries (the sampled insert counters) times X's mean bytes per entry.
#pragma once

#include <string>
#include <vector>

#include "designs/indexy/indexy_options.h"
#include "designs/indexy/x_index.h"

namespace dmindex::designs::indexy {

class ReleasePolicyRunner {
 public:
  explicit ReleasePolicyRunner(const IndexyOptions& options) : options_(options) {}

  // Units to release, in order, for about `target_bytes`.
  Result<std::vector<XUnit>> Select(XWorker& w, uint64_t target_bytes, double bytes_per_entry);

  // The last density ranking's candidates, and how many of them were single entries (a
  // leaf hanging above the unit depth: no counters, ranked by its parent's density) - what
  // the ranking could tell apart (docs/results/indexy.md, "Fig. 8").
  uint64_t last_candidates() const { return last_candidates_; }
  uint64_t last_single_candidates() const { return last_single_candidates_; }

 private:
  Result<std::vector<XUnit>> SelectByDensity(XWorker& w, double target, double bytes_per_entry);
  Result<std::vector<XUnit>> SelectByClock(XWorker& w, double target, double bytes_per_entry);

  const IndexyOptions options_;
  std::string clock_cursor_;  // the clock's hand: the last unit it passed
  uint64_t last_candidates_ = 0, last_single_candidates_ = 0;
};

}  // namespace dmindex::designs::indexy
