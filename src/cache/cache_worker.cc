#include "cache/cache_worker.h"

#include <random>

#include "cache/buffer_manager.h"
#include "cache/guards.h"

namespace dmindex::cache {

namespace {
// A worker's stream derives from the cache's seed and the order in which workers joined it:
// runs replay exactly (the cache's tests assert what a seeded stream samples), and no two
// workers of one cache sample alike.
std::mt19937_64 WorkerStream(uint64_t seed, uint64_t ordinal) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(ordinal),
                    static_cast<uint32_t>(ordinal >> 32)};
  return std::mt19937_64(seq);
}
}  // namespace

CacheWorker::CacheWorker(BufferManager& bm, PageWriter& writer)
    : bm_(bm),
      writer_(writer),
      rng_(WorkerStream(bm.options().seed, bm.workers_joined_.fetch_add(1, std::memory_order_relaxed))),
      staging_(new std::byte[bm.options().page_bytes]),
      scratch_(bm.Register(this)),
      private_page_(new std::byte[bm.options().page_bytes]()),
      private_(std::make_unique<BufferFrame>()) {
  private_->page = private_page_.get();
}

CacheWorker::~CacheWorker() {
  (void)EndOperation();  // a failed write-back here has no one left to report to
  for (BufferFrame* f : free_frames_) bm_.ReleaseFreeFrame(f);
  bm_.Unregister(this);
}

Status CacheWorker::EndTransient() {
  BufferFrame* f = transient_;
  ExclusiveGuard g(f);
  Status s;
  if (f->dirty.load(std::memory_order_relaxed)) {
    s = writer_.WriteBack(f->remote(), f->page);
    if (s.ok()) Bump(counters_.write_backs);
  }
  // Unregister even if the write failed: holding the node forever would block its owner.
  bm_.mapping_.Erase(f->remote(), f);
  f->dirty.store(false, std::memory_order_relaxed);
  f->precedes_parent.store(false, std::memory_order_relaxed);
  f->set_remote({});
  f->set_state(FrameState::kFree);
  g.Release();
  if (f != scratch_) free_frames_.push_back(f);
  transient_ = nullptr;
  if (transient_parent_ != nullptr) {
    transient_parent_->pins.fetch_sub(1, std::memory_order_acq_rel);
    transient_parent_ = nullptr;
  }
  return s;
}

CacheStats CacheWorker::stats() const {
  CacheStats s;
  s.hits = counters_.hits.load(std::memory_order_relaxed);
  s.misses = counters_.misses.load(std::memory_order_relaxed);
  s.admitted = counters_.admitted.load(std::memory_order_relaxed);
  s.bypassed = counters_.bypassed.load(std::memory_order_relaxed);
  s.cooled = counters_.cooled.load(std::memory_order_relaxed);
  s.evicted = counters_.evicted.load(std::memory_order_relaxed);
  s.write_backs = counters_.write_backs.load(std::memory_order_relaxed);
  return s;
}

// ---- the buffer manager's side: registration and counters of all workers ------------

BufferFrame* BufferManager::Register(CacheWorker* w) {
  std::lock_guard lock(workers_mu_);
  workers_.push_back(w);
  if (!free_scratch_.empty()) {
    BufferFrame* f = free_scratch_.back();
    free_scratch_.pop_back();
    return f;
  }
  auto s = std::make_unique<Scratch>();
  s->page.reset(new std::byte[options_.page_bytes]());
  s->frame.page = s->page.get();
  scratch_frames_.push_back(std::move(s));
  return &scratch_frames_.back()->frame;
}

void BufferManager::Unregister(CacheWorker* w) {
  std::lock_guard lock(workers_mu_);
  std::erase(workers_, w);
  free_scratch_.push_back(w->scratch_);
  retired_ += w->stats();
}

CacheStats BufferManager::Stats() const {
  CacheStats s;
  {
    std::lock_guard lock(workers_mu_);
    s = retired_;
    for (const CacheWorker* w : workers_) s += w->stats();
  }
  s.frames = frame_count_;
  s.frames_used = 0;
  for (size_t i = 0; i < frame_count_; ++i) {
    const FrameState st = frames_[i].load_state();
    s.frames_used += st == FrameState::kHot || st == FrameState::kCooling;
  }
  return s;
}

}  // namespace dmindex::cache
