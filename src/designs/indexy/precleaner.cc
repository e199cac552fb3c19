#include "designs/indexy/precleaner.h"

namespace dmindex::designs::indexy {

Result<CleanStep> PreCleaner::Step(XWorker& w, YSink& y) {
  CleanStep step;
  std::vector<XUnit> chosen;
  step.pass_ended = true;
  DMX_RETURN_IF_ERROR(w.ForEachUnit(cursor_, [&](XUnit& u) {
    cursor_ = u.id;
    if (u.single) {
      u.handle = nullptr;
      singles_.push_back(std::move(u));
      if (singles_.size() < kSinglesPerBatch) return true;
      step.pass_ended = false;
      return false;
    }
    const uint8_t dc = u.bits & (unit_bits::kDirty | unit_bits::kCandidate);
    if (dc == unit_bits::kDirty) {
      w.ChangeBits(u, unit_bits::kCandidate, unit_bits::kDirty);
    } else if (dc == (unit_bits::kDirty | unit_bits::kCandidate)) {
      w.ChangeBits(u, 0, unit_bits::kDirty);
    } else if (dc == unit_bits::kCandidate) {
      w.ChangeBits(u, 0, unit_bits::kCandidate);
      u.handle = nullptr;
      chosen.push_back(std::move(u));
      step.pass_ended = false;
      return false;
    }
    return true;
  }));
  if (step.pass_ended) cursor_.clear();
  if (singles_.size() >= kSinglesPerBatch || (step.pass_ended && !singles_.empty())) {
    chosen.insert(chosen.end(), singles_.begin(), singles_.end());
    singles_.clear();
  }
  if (chosen.empty()) return step;
  auto written = w.Clean(chosen, y);
  if (!written.ok()) return written.status();
  step.written = *written;
  step.units = chosen.size();
  return step;
}

}  // namespace dmindex::designs::indexy
