// Pre-cleaning (paper §II.B, Fig. 2): the background walks X's units in key order and writes
// the dirty entries of quiet units to Y ahead of any release, so that release finds them clean
// and frees them without I/O. Each unit's D bit (an insert or update passed through it) and C
// bit (a candidate) decide, on every pass:
//   D=1 C=0  a first sighting: D cleared, C set
//   D=1 C=1  still being written ("intensive inserts"): D cleared, left alone
//   D=0 C=1  no writes since the last pass (the check-back): cleaned, C cleared
//   D=0 C=0  clean or cold: skipped
// After cleaning a unit the pass suspends (locality of the write-back) and the next step
// resumes there. Single entries hanging above the unit depth have no bits: their dirty ones are
// gathered and written in one batch. The paper paces passes by an insert count; here a pass
// that ends waits `pass_period` (the background's idle wait), as the authors' code paces by time.
#pragma once

#include <string>
#include <vector>

#include "designs/indexy/x_index.h"

namespace dmindex::designs::indexy {

struct CleanStep {
  bool pass_ended = false;  // the walk reached the end of X: start over after a pause
  uint64_t units = 0;       // units cleaned
  uint64_t written = 0;     // entries written to Y
};

class PreCleaner {
 public:
  // One step: walks from where the last one stopped to the next unit to clean (or the end),
  // and cleans it.
  Result<CleanStep> Step(XWorker& w, YSink& y);

 private:
  static constexpr size_t kSinglesPerBatch = 64;
  std::string cursor_;
  std::vector<XUnit> singles_;
};

}  // namespace dmindex::designs::indexy
