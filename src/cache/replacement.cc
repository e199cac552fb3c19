// The replacement half of the BufferManager: free frames, random-sampling cooling with
// path-aware delegation (§5.1, §5.3) - with the frequency policy, the least frequent of
// lfu_samples - and the cooling map's FIFO eviction (§5.2).
#include <algorithm>
#include <cstring>

#include "cache/buffer_manager.h"
#include "common/retry.h"
#include "common/retry_status.h"

namespace dmindex::cache {

namespace {
constexpr int kMaxDelegationDepth = 32;
}  // namespace

Result<BufferFrame*> BufferManager::AcquireFreeFrame(CacheWorker& w) {
  RetryBudget rounds(retry_limits::kFreeFrameRounds, "free a cache frame");
  Backoff backoff(backoff::kRestart, "a cache frame to free");
  for (;;) {
    if (!w.free_frames_.empty()) {
      BufferFrame* f = w.free_frames_.back();
      w.free_frames_.pop_back();
      return f;
    }
    if (never_used_.load(std::memory_order_relaxed) < frame_count_) {
      const size_t i = never_used_.fetch_add(1, std::memory_order_relaxed);
      if (i < frame_count_) return &frames_[i];
    }
    {
      std::lock_guard lock(free_mu_);
      if (!free_.empty()) {
        BufferFrame* f = free_.back();
        free_.pop_back();
        return f;
      }
    }
    // The thread-local free set is empty: sample frames for cooling (their overflow from
    // the cooling map lands in our free set), then take the oldest of a random bucket.
    auto cooled = CoolSamples(w, options_.cooling_samples);
    if (!cooled.ok()) return cooled.status();
    if (w.free_frames_.empty()) {
      if (BufferFrame* victim = cooling_.PopOldest(w.rng_()))
        Evict(victim, w);  // a free frame for the next round
      else
        backoff.Pause();  // everything is busy: let the others move
    }
    if (!rounds.Spend()) return rounds.Exhausted("");
  }
}

Status BufferManager::ReserveFrame(CacheWorker& w) {
  if (!w.free_frames_.empty()) return Status::Ok();
  auto r = AcquireFreeFrame(w);
  if (!r.ok()) return r.status();
  w.free_frames_.push_back(*r);  // AcquireFreeFrame's first choice: AllocateNew takes it
  return Status::Ok();
}

void BufferManager::ReleaseFreeFrame(BufferFrame* f) {
  std::lock_guard lock(free_mu_);
  free_.push_back(f);
}

void BufferManager::Evict(BufferFrame* victim, CacheWorker& w) {
  // Cooling frames are clean (written back when cooled), unswizzled and childless.
  mapping_.Erase(victim->remote(), victim);
  victim->parent.store(nullptr, std::memory_order_relaxed);
  victim->set_remote({});
  victim->set_state(FrameState::kFree);
  victim->latch.Unlock();  // bumps the version: optimistic readers notice
  w.free_frames_.push_back(victim);
  CacheWorker::Bump(w.counters_.evicted);
}

void BufferManager::ListCooling(BufferFrame* f, CacheWorker& w) {
  bool listed = false;
  BufferFrame* victim = cooling_.Push(f, &listed);
  if (listed) {
    f->set_state(FrameState::kCooling);
    CacheWorker::Bump(w.counters_.cooled);
  }  // else: the bucket is jammed by busy frames; f stays an unswizzled hot orphan
  if (victim != nullptr) Evict(victim, w);
}

size_t BufferManager::SampleFrame(CacheWorker& w) const {
  const size_t i = w.rng_() % frame_count_;
  __builtin_prefetch(&frames_[i]);
  __builtin_prefetch(pages_.get() + i * options_.page_bytes);  // IsLeaf reads the header
  return i;
}

BufferFrame* BufferManager::SamplePathEnd(size_t index, CacheWorker& w) {
  BufferFrame* f = &frames_[index];
  // Path-aware delegation: go down swizzled children until a node that has none.
  for (int depth = 0; depth < kMaxDelegationDepth; ++depth) {
    OptimisticGuard g(f);
    if (!g.valid() || f->load_state() != FrameState::kHot) return nullptr;
    BufferFrame* swizzled[64];
    size_t n_swizzled = 0;
    if (!layout_.IsLeaf(f->page)) {
      for (size_t i = 0, n = layout_.ChildCount(f->page); i < n; ++i) {
        const Swip c = Swip::Load(layout_.ChildSlot(f->page, i));
        if (c.swizzled()) {
          // Reservoir sampling keeps a uniform choice without a large buffer.
          if (n_swizzled < 64) swizzled[n_swizzled++] = c.frame();
          else if (uint64_t j = w.rng_() % (n_swizzled + 1); j < 64) swizzled[j] = c.frame();
        }
      }
    }
    if (!g.Validate()) return nullptr;
    if (n_swizzled == 0) return f;  // f is the end of a cached path: cool it
    f = swizzled[w.rng_() % n_swizzled];
  }
  return nullptr;
}

BufferFrame* BufferManager::LeastFrequentPathEnd(CacheWorker& w) {
  // Sampled LFU: random sampling, but a frequent leaf is rarely the one that goes. The
  // samples are independent and each of their lines is rarely cached (a random frame, its
  // page's header, a sketch block), so they are asked for together: the frames and pages
  // first, then the path ends' counters - two rounds of misses instead of three per sample
  // one after another (their walks were most of a READ-ended segment's cycles:
  // docs/SIMULATION.md, "Calibration").
  constexpr uint32_t kMaxSamples = 16;
  const uint32_t n = std::clamp<uint32_t>(options_.lfu_samples, 1, kMaxSamples);
  size_t start[kMaxSamples];
  for (uint32_t k = 0; k < n; ++k) start[k] = SampleFrame(w);
  BufferFrame* end[kMaxSamples];
  FrequencySketch::Counters at[kMaxSamples];
  for (uint32_t k = 0; k < n; ++k) {
    end[k] = SamplePathEnd(start[k], w);
    if (end[k] != nullptr) at[k] = sketch_->Locate(end[k]->remote());
  }
  BufferFrame* least = nullptr;
  uint32_t least_count = UINT32_MAX;
  for (uint32_t k = 0; k < n; ++k) {
    if (end[k] == nullptr) continue;
    const uint32_t e = sketch_->Estimate(at[k]);
    if (e < least_count) least = end[k], least_count = e;
  }
  return least;
}

Result<size_t> BufferManager::CoolSamples(CacheWorker& w, size_t samples) {
  size_t cooled = 0;
  for (size_t s = 0; s < samples; ++s) {
    BufferFrame* f = sketch_ != nullptr ? LeastFrequentPathEnd(w) : SamplePathEnd(SampleFrame(w), w);
    if (f == nullptr) continue;
    bool did = false;
    DMX_RETURN_IF_ERROR(Cool(f, w, &did));
    cooled += did;
  }
  return cooled;
}

Status BufferManager::Cool(BufferFrame* f, CacheWorker& w, bool* cooled) {
  *cooled = false;
  // Cooling is opportunistic: any latch that is not free right now means "not this one".
  // The frame's latch first, then (only tried, never waited for) its parent's.
  ExclusiveGuard fg = ExclusiveGuard::TryLock(f);
  if (!fg.owns()) return Status::Ok();
  if (f->load_state() != FrameState::kHot || f->pins.load(std::memory_order_acquire) != 0 ||
      HasSwizzledChild(f->page))
    return Status::Ok();
  if (may_leave_ && !may_leave_(f->redo_end.load(std::memory_order_relaxed))) return Status::Ok();
  // Written back while still swizzled in its parent (docs/DEX.md, "What may reach the pool"):
  // the parent has a swizzled child until this WRITE is done, so it is neither cooled and
  // written back before it (its image may name this page's new right sibling) nor evicted, so
  // nobody offloads over this page's old remote image. f has no swizzled children, and marked
  // children are always swizzled: WriteBack writes f alone.
  if (f->dirty.load(std::memory_order_relaxed)) {
    // f stays hot (and dirty) if this fails; the error reaches the operation.
    DMX_RETURN_IF_ERROR(WriteBack(f, w));
  }
  BufferFrame* p = f->parent.load(std::memory_order_acquire);
  if (p != nullptr) {
    ExclusiveGuard pg = ExclusiveGuard::TryLock(p);
    // Busy parent: f stays hot, now clean; a later sample cools it.
    if (!pg.owns() || f->parent.load(std::memory_order_acquire) != p) return Status::Ok();
    uint64_t* slot = FindSlot(p->page, Swip::Local(f));
    if (slot == nullptr) return Status::Corruption("cache: parent does not point to its child");
    Swip::Store(slot, Swip::Remote(f->remote()));
    f->parent.store(nullptr, std::memory_order_release);
    // Releasing bumps the parent's version: readers that saw the swizzled pointer restart.
  }
  ListCooling(f, w);
  *cooled = f->load_state() == FrameState::kCooling;
  return Status::Ok();
}

}  // namespace dmindex::cache
