#include "fabric/inproc/verb_script.h"

#include <algorithm>

#include "common/pool_memory.h"

namespace dmindex::fabric {

void VerbCopy::Copy(uint64_t from, uint64_t to) const {
  to = std::min<uint64_t>(to, verb_.length);
  if (from >= to) return;
  auto* local = static_cast<std::byte*>(verb_.local) + from;
  if (verb_.kind == VerbKind::kRead)
    CopyFromPool(local, target_ + from, to - from);
  else
    CopyToPool(target_ + from, local, to - from);
}

HeldVerb::HeldVerb(Match match, std::vector<Range> first)
    : match_(std::move(match)), first_(std::move(first)) {}

HeldVerb::Match HeldVerb::At(VerbKind kind, GlobalAddress remote) {
  return [kind, remote](const Verb& v) { return v.kind == kind && v.remote == remote; };
}

bool HeldVerb::WaitHeld(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.WaitUntil(lock, runtime::Now() + timeout, [&] { return phase_ == Phase::kHeld; });
}

void HeldVerb::Finish(Phase end) {
  {
    std::lock_guard lock(mu_);
    if (phase_ == Phase::kReleased || phase_ == Phase::kFailed) return;
    phase_ = end;
  }
  cv_.NotifyAll();
}

void HeldVerb::Release() { Finish(Phase::kReleased); }
void HeldVerb::Fail() { Finish(Phase::kFailed); }

VerbScript::Outcome HeldVerb::Run(const VerbCopy& copy) {
  {
    std::lock_guard lock(mu_);
    if (phase_ != Phase::kArmed || !match_(copy.verb())) return Outcome::kPass;
    phase_ = Phase::kTaken;
  }
  std::vector<Range> first = first_;
  std::sort(first.begin(), first.end(), [](const Range& a, const Range& b) { return a.from < b.from; });
  for (const Range& r : first) copy.Copy(r.from, r.to);

  std::unique_lock lock(mu_);
  // Held only once the first pieces are copied: the test's writes must come after them. A
  // Release or Fail that came earlier (a test giving up) is kept.
  if (phase_ == Phase::kTaken) phase_ = Phase::kHeld;
  cv_.NotifyAll();
  cv_.Wait(lock, [&] { return phase_ != Phase::kHeld; });
  if (phase_ == Phase::kFailed) return Outcome::kFail;
  lock.unlock();
  // The rest: every byte no range of `first` covered, in address order.
  uint64_t at = 0;
  for (const Range& r : first) {
    copy.Copy(at, r.from);
    at = std::max(at, r.to);
  }
  copy.Copy(at, copy.verb().length);
  return Outcome::kDone;
}

// Every step is sequentially consistent: a poster counted after Set(nullptr) saw the count at
// zero was counted after the store of nullptr, and so loads nullptr (or a later script). Once
// nullptr is stored, new posters stop at the first load: the count drains.
ScriptSlot::Borrowed ScriptSlot::Borrow() {
  if (script_.load() == nullptr) return Borrowed(nullptr, nullptr);
  users_.fetch_add(1);
  return Borrowed(script_.load(), &users_);
}

void ScriptSlot::Set(VerbScript* script) {
  script_.store(script);
  if (script != nullptr) return;
  while (users_.load() != 0) runtime::Yield();
}

}  // namespace dmindex::fabric
