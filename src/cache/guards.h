// RAII access to a BufferFrame, in the three modes of its VersionLock (common/version_lock.h):
//   OptimisticGuard  remembers a version; reads are valid only if Validate() still holds.
//   SharedGuard      holds the latch shared: the page does not change while it lives.
//   ExclusiveGuard   holds the latch exclusively; releasing bumps the version.
// Restarts are reported, not thrown: a failed acquisition or validation tells the caller to
// restart its operation from the root.
#pragma once

#include <cstddef>
#include <utility>

#include "cache/buffer_frame.h"
#include "common/retry.h"

namespace dmindex::cache {

class OptimisticGuard {
 public:
  OptimisticGuard() = default;
  // Waits briefly while a writer holds the latch (retry_limits::kOptimisticRead); valid() is
  // false if it did not let go, and the caller restarts.
  [[gnu::always_inline]] explicit OptimisticGuard(BufferFrame* f) : frame_(f) {
    valid_ = f->latch.TryOptimistic(&version_) || WaitForWriter();
  }
  OptimisticGuard(BufferFrame* f, uint64_t version) : frame_(f), version_(version), valid_(true) {}

  bool valid() const { return valid_; }
  // True iff nobody wrote the frame since the guard was taken.
  [[gnu::always_inline]] bool Validate() const { return valid_ && frame_->latch.Validate(version_); }
  BufferFrame* frame() const { return frame_; }
  const std::byte* page() const { return frame_->page; }
  uint64_t version() const { return version_; }

 private:
  // Out of line: the wait is rare, and inlining it would keep the constructor out of the
  // descent's hit path.
  [[gnu::noinline]] bool WaitForWriter() {
    RetryBudget waits(retry_limits::kOptimisticRead, "read a cache frame optimistically");
    Backoff backoff(backoff::kLatchHeld, "a cache frame's writer");
    while (waits.Spend()) {
      backoff.Pause();
      if (frame_->latch.TryOptimistic(&version_)) return true;
    }
    return false;
  }

  BufferFrame* frame_ = nullptr;
  uint64_t version_ = 0;
  bool valid_ = false;
};

class SharedGuard {
 public:
  explicit SharedGuard(BufferFrame* f) : frame_(f) { f->latch.LockShared(); }
  SharedGuard(const SharedGuard&) = delete;
  SharedGuard& operator=(const SharedGuard&) = delete;
  ~SharedGuard() { frame_->latch.UnlockShared(); }
  BufferFrame* frame() const { return frame_; }
  const std::byte* page() const { return frame_->page; }

 private:
  BufferFrame* frame_;
};

class ExclusiveGuard {
 public:
  ExclusiveGuard() = default;
  // Blocks until the latch is free.
  explicit ExclusiveGuard(BufferFrame* f) : frame_(f) { f->latch.Lock(); }
  // Upgrades an optimistic read; empty (owns() false) if someone wrote in between.
  static ExclusiveGuard TryUpgrade(const OptimisticGuard& g) {
    ExclusiveGuard x;
    if (g.valid() && g.frame()->latch.Upgrade(g.version())) x.frame_ = g.frame();
    return x;
  }
  static ExclusiveGuard TryLock(BufferFrame* f) {
    ExclusiveGuard x;
    if (f->latch.TryLock()) x.frame_ = f;
    return x;
  }
  ExclusiveGuard(ExclusiveGuard&& o) noexcept : frame_(std::exchange(o.frame_, nullptr)) {}
  ExclusiveGuard& operator=(ExclusiveGuard&& o) noexcept {
    if (this != &o) {
      Release();
      frame_ = std::exchange(o.frame_, nullptr);
    }
    return *this;
  }
  ~ExclusiveGuard() { Release(); }

  bool owns() const { return frame_ != nullptr; }
  BufferFrame* frame() const { return frame_; }
  std::byte* page() const { return frame_->page; }
  // The page now differs from remote memory and must be written back before it is dropped.
  void MarkDirty() { frame_->dirty.store(true, std::memory_order_relaxed); }
  // Dirty, and remote memory must get this page before any page pointing to it (a split
  // narrowed it: BufferFrame::precedes_parent).
  void MarkDirtyBeforeParent() {
    frame_->precedes_parent.store(true, std::memory_order_relaxed);
    MarkDirty();
  }
  void Release() {
    if (frame_) std::exchange(frame_, nullptr)->latch.Unlock();
  }
  // Releases and returns an optimistic guard on the new version, so the holder can go on
  // reading (lock coupling continues without a gap).
  OptimisticGuard Downgrade() {
    BufferFrame* f = std::exchange(frame_, nullptr);
    return OptimisticGuard(f, f->latch.Unlock());
  }

 private:
  BufferFrame* frame_ = nullptr;
};

}  // namespace dmindex::cache
