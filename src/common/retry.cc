#include "common/retry.h"

#include <algorithm>
#include <string>

namespace dmindex {

void Backoff::Note() {
  if (noted_ == nullptr) noted_ = CurrentActivity();
  if (noted_ != nullptr) noted_->Wait(waits_for_, where_, steps_);
}

void Backoff::Pause() {
  const Stage s = stage();
  if (waits_for_ != nullptr && s != Stage::kSpin) Note();
  switch (s) {
    case Stage::kSpin:
      runtime::CpuRelax();
      break;
    case Stage::kYield:
      runtime::Yield();
      break;
    case Stage::kSleep:
      runtime::SleepFor(sleep_);
      sleep_ = std::min(sleep_ * 2, stages_.max_sleep);
      break;
  }
  ++steps_;
}

void Backoff::Reset() {
  steps_ = 0;
  sleep_ = stages_.first_sleep;
}

Backoff::Stage Backoff::stage() const {
  if (steps_ < stages_.spins) return Stage::kSpin;
  if (steps_ - stages_.spins < stages_.yields || stages_.first_sleep.count() == 0) return Stage::kYield;
  return Stage::kSleep;
}

bool RetryBudget::Spend() {
  ++spent_;
  if (limit_.attempts != 0 && spent_ >= limit_.attempts) return false;
  if (limit_.time.count() == 0) return true;
  const auto now = runtime::Now();
  if (spent_ == 1) first_failure_ = now;
  return now - first_failure_ < limit_.time;
}

Status RetryBudget::Exhausted(std::string_view where) const {
  // Appended piece by piece: "lit" + std::string trips GCC 12's -Wrestrict.
  std::string limit;
  if (limit_.attempts != 0) limit.append(std::to_string(limit_.attempts)).append(" ").append(limit_.bounds);
  if (limit_.time.count() != 0) {
    if (!limit.empty()) limit.append(", ");
    limit.append(std::to_string(limit_.time.count())).append(" ms");
  }
  std::string m(operation_);
  if (!where.empty()) m.append(" ").append(where);
  m.append(": gave up after ").append(std::to_string(spent_)).append(" ").append(limit_.bounds);
  if (limit_.time.count() != 0) {
    const auto ms = spent_ == 0 ? 0
                                : std::chrono::duration_cast<std::chrono::milliseconds>(
                                      runtime::Now() - first_failure_).count();
    m.append(" in ").append(std::to_string(ms)).append(" ms");
  }
  m.append(" (limit ").append(limit).append(")");
  if (*limit_.meaning != '\0') m.append(": ").append(limit_.meaning);
  return Status::FromCode(limit_.code, std::move(m));
}

}  // namespace dmindex
