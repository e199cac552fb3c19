#include "common/epoch.h"

#include <mutex>

namespace dmindex {

namespace {
// Reclaim after this many more retires of one participant (amortises scanning the slots).
constexpr size_t kReclaimEvery = 64;
}  // namespace

EpochManager::~EpochManager() {
  std::lock_guard lock(mu_);
  for (Retired& r : orphans_) r.free_fn(r.object, r.context);
  orphans_.clear();
}

std::unique_ptr<EpochManager::Participant> EpochManager::Join() {
  std::lock_guard lock(mu_);
  Slot* slot = nullptr;
  for (auto& s : slots_)
    if (s->announced.load(std::memory_order_relaxed) == ~uint64_t{0}) {  // a free slot
      slot = s.get();
      break;
    }
  if (slot == nullptr) {
    slots_.push_back(std::make_unique<Slot>());
    slot = slots_.back().get();
  }
  slot->announced.store(0, std::memory_order_seq_cst);
  return std::unique_ptr<Participant>(new Participant(*this, slot));
}

void EpochManager::TryAdvance() {
  const uint64_t e = epoch_.load(std::memory_order_seq_cst);
  {
    std::lock_guard lock(mu_);
    for (auto& s : slots_) {
      const uint64_t a = s->announced.load(std::memory_order_seq_cst);
      if (a != 0 && a != ~uint64_t{0} && a != e) return;  // someone is still in an older epoch
    }
  }
  uint64_t expected = e;
  epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst);
}

void EpochManager::FreeExpired(std::vector<Retired>* list) {
  const uint64_t e = epoch_.load(std::memory_order_seq_cst);
  size_t kept = 0;
  uint64_t freed_bytes = 0, freed = 0;
  for (Retired& r : *list) {
    if (r.epoch + 2 <= e) {
      r.free_fn(r.object, r.context);
      freed_bytes += r.bytes;
      ++freed;
    } else {
      (*list)[kept++] = r;
    }
  }
  list->resize(kept);
  pending_bytes_.fetch_sub(freed_bytes, std::memory_order_relaxed);
  freed_objects_.fetch_add(freed, std::memory_order_relaxed);
}

void EpochManager::Leave(Slot* slot, std::vector<Retired>&& leftovers) {
  std::lock_guard lock(mu_);
  slot->announced.store(~uint64_t{0}, std::memory_order_seq_cst);  // free for the next Join
  orphans_.insert(orphans_.end(), leftovers.begin(), leftovers.end());
}

EpochManager::Participant::~Participant() {
  if (depth_ > 0) slot_->announced.store(0, std::memory_order_seq_cst);
  manager_.FreeExpired(&retired_);
  manager_.Leave(slot_, std::move(retired_));
}

void EpochManager::Participant::Retire(void* object, FreeFn free_fn, void* context, uint64_t bytes) {
  retired_.push_back(Retired{object, free_fn, context, bytes, manager_.epoch_.load(std::memory_order_seq_cst)});
  manager_.pending_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  retired_bytes_ += bytes;
  if (depth_ == 0 && (retired_.size() >= reclaim_at_ || ReclaimForBytes())) Reclaim();
}

size_t EpochManager::Participant::Reclaim() {
  if (depth_ > 0) return retired_.size();  // our own announcement would hold the epoch back
  manager_.TryAdvance();
  manager_.FreeExpired(&retired_);
  std::vector<Retired> orphans;
  {
    std::unique_lock lock(manager_.mu_, std::try_to_lock);
    if (lock.owns_lock() && !manager_.orphans_.empty()) orphans.swap(manager_.orphans_);
  }
  if (!orphans.empty()) {
    manager_.FreeExpired(&orphans);
    if (!orphans.empty()) {
      std::lock_guard lock(manager_.mu_);
      manager_.orphans_.insert(manager_.orphans_.end(), orphans.begin(), orphans.end());
    }
  }
  reclaim_at_ = retired_.size() + kReclaimEvery;
  retired_bytes_ = 0;
  return retired_.size();
}

}  // namespace dmindex
