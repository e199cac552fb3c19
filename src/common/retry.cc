#include "common/retry.h"

#include <algorithm>
#include <string>

namespace dmindex {

void Backoff::Pause() {
  switch (stage()) {
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
  const auto ms = spent_ == 0 ? 0
                              : std::chrono::duration_cast<std::chrono::milliseconds>(
                                    runtime::Now() - first_failure_).count();
  std::string limit;
  if (limit_.attempts != 0) limit = std::to_string(limit_.attempts) + " " + limit_.bounds;
  if (limit_.time.count() != 0)
    limit += (limit.empty() ? "" : ", ") + std::to_string(limit_.time.count()) + " ms";
  std::string m = std::string(operation_);
  if (!where.empty()) m += " " + std::string(where);
  m += ": gave up after " + std::to_string(spent_) + " " + limit_.bounds;
  if (limit_.time.count() != 0) m += " in " + std::to_string(ms) + " ms";
  m += " (limit " + limit + ")";
  if (*limit_.meaning != '\0') m += ": " + std::string(limit_.meaning);
  return Status::FromCode(limit_.code, std::move(m));
}

}  // namespace dmindex
