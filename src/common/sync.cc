#include "common/sync.h"

namespace dmindex {

void Semaphore::Acquire() {
  std::unique_lock lock(mu_);
  cv_.Wait(lock, [this] { return count_ > 0; });
  --count_;
}

bool Semaphore::TryAcquire() {
  std::lock_guard lock(mu_);
  if (count_ == 0) return false;
  --count_;
  return true;
}

void Semaphore::Release() {
  {
    std::lock_guard lock(mu_);
    ++count_;
  }
  cv_.NotifyOne();  // one slot: one waiter; every waiter re-checks count_ under the mutex
}

void Latch::CountDown() {
  std::lock_guard lock(mu_);
  if (count_ > 0 && --count_ == 0) cv_.NotifyAll();
}

void Latch::Wait() {
  std::unique_lock lock(mu_);
  cv_.Wait(lock, [this] { return count_ == 0; });
}

void Barrier::ArriveAndWait() {
  std::unique_lock lock(mu_);
  const uint64_t generation = generation_;
  if (--waiting_ == 0) {
    if (on_completion_) on_completion_();
    waiting_ = parties_;
    ++generation_;
    cv_.NotifyAll();
    return;
  }
  cv_.Wait(lock, [&] { return generation_ != generation; });
}

void ParkingLot::Wake() {
  { std::lock_guard lock(mu_); }  // orders the change before any waiter's next check
  cv_.NotifyAll();
}

}  // namespace dmindex
