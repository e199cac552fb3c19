#include "cache/buffer_manager.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include <sys/mman.h>

#include "common/pool_memory.h"
#include "common/retry.h"
#include "common/retry_status.h"

namespace dmindex::cache {

Result<std::unique_ptr<BufferManager>> BufferManager::Create(const CacheOptions& options,
                                                             const PageLayout& layout) {
  if (options.page_bytes < 64 || options.page_bytes % 8 != 0)
    return Status::InvalidArgument("cache page size must be a multiple of 8 bytes, >= 64");
  if (options.leaf_admission < 0.0 || options.leaf_admission > 1.0)
    return Status::InvalidArgument("leaf admission probability must be in [0, 1]");
  if (options.cooling_fraction <= 0.0 || options.cooling_fraction >= 1.0)
    return Status::InvalidArgument("cooling fraction must be in (0, 1)");
  const uint64_t frames = options.cache_bytes / options.page_bytes;
  // A traversal holds a path; a few paths must fit besides the cooling map.
  constexpr uint64_t kMinFrames = 16;
  if (frames < kMinFrames)
    return Status::InvalidArgument("cache of " + std::to_string(options.cache_bytes) +
                                   " bytes holds fewer than " + std::to_string(kMinFrames) +
                                   " nodes of " + std::to_string(options.page_bytes) + " bytes");
  return std::unique_ptr<BufferManager>(new BufferManager(options, layout, frames));
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Smaller mappings are not advised: their pages fit the TLB anyway, and a huge page is backed
// whole on its first touch (a small cache would hold 2 MiB of memory for a few frames).
constexpr size_t kAdviseFrom = 16 * kHugePage;

}  // namespace

// The hit path touches a frame and a page per level; with 4 KiB pages over a cache of tens
// of megabytes most such touches also miss the TLB. A 2 MiB-aligned mapping advised
// MADV_HUGEPAGE lets the kernel back it with huge pages (transparent_hugepage=madvise or
// always; a no-op otherwise). Anonymous memory is zero, as pages must start, and is backed
// only where it is touched. Throws std::bad_alloc as new[] did.
std::unique_ptr<std::byte[], BufferManager::Unmap> BufferManager::HugeMapping(size_t bytes) {
  const size_t kept = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* m = mmap(nullptr, kept + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  // Keep the aligned `kept` bytes; give the lead and the tail (together one huge page) back.
  auto* base = static_cast<std::byte*>(m);
  const size_t lead = (kHugePage - reinterpret_cast<uintptr_t>(base) % kHugePage) % kHugePage;
  if (lead > 0) munmap(base, lead);
  if (lead < kHugePage) munmap(base + lead + kept, kHugePage - lead);
  if (kept >= kAdviseFrom) madvise(base + lead, kept, MADV_HUGEPAGE);
  return std::unique_ptr<std::byte[], Unmap>(base + lead, Unmap{kept});
}

void BufferManager::Unmap::operator()(void* p) const { munmap(p, bytes); }

std::unique_ptr<BufferFrame[], BufferManager::Unmap> BufferManager::NewFrames(size_t count) {
  static_assert(std::is_trivially_destructible_v<BufferFrame>, "frames are unmapped, not destroyed");
  auto memory = HugeMapping(count * sizeof(BufferFrame));
  auto* frames = reinterpret_cast<BufferFrame*>(memory.get());
  for (size_t i = 0; i < count; ++i) new (&frames[i]) BufferFrame();
  const Unmap unmap = memory.get_deleter();
  memory.release();
  return std::unique_ptr<BufferFrame[], Unmap>(frames, unmap);
}

BufferManager::BufferManager(const CacheOptions& options, const PageLayout& layout, size_t frames)
    : options_(options),
      layout_(layout),
      frame_count_(frames),
      frames_(NewFrames(frames)),
      pages_(HugeMapping(frames * options.page_bytes)),
      mapping_(frames),
      cooling_(std::max<size_t>(1, static_cast<size_t>(frames * options.cooling_fraction))) {
  for (size_t i = 0; i < frames; ++i) frames_[i].page = pages_.get() + i * options.page_bytes;
  // Four counters a frame per row (16 B a frame, under 2 % of a 1 KiB page): few collisions
  // among the nodes that compete for a frame. The window - sketch_window increments a frame -
  // is the history an estimate reflects (4x longer or shorter changed dex-ro by <= 0.01 RTT/op).
  if (options.frequency) sketch_ = std::make_unique<FrequencySketch>(frames * 4, frames * options.sketch_window);
}

BufferManager::~BufferManager() = default;

// ---- traversal --------------------------------------------------------------------------

void BufferManager::PrefetchPage(const BufferFrame* f) const {
  const size_t i = static_cast<size_t>(f - frames_.get());
  if (f < frames_.get() || i >= frame_count_) return;  // a scratch frame
  const std::byte* page = pages_.get() + i * options_.page_bytes;
  // Four lines a step: one line a step cost as many loop instructions as prefetches (callgrind,
  // docs/results/dex-hit-path.md). Check the disassembly after changing this: a form GCC
  // turned into no prefetch at all was once measured 60% slower.
  const uint32_t bytes = options_.page_bytes;
  uint32_t off = 0;
  for (; off + 256 <= bytes; off += 256) {
    __builtin_prefetch(page + off);
    __builtin_prefetch(page + off + 64);
    __builtin_prefetch(page + off + 128);
    __builtin_prefetch(page + off + 192);
  }
  for (; off < bytes; off += 64) __builtin_prefetch(page + off);
}

BufferManager::Step BufferManager::ProbeRemote(OptimisticGuard& parent, const uint64_t* slot,
                                               GlobalAddress addr, CacheWorker& w, bool report_busy) {
  BufferFrame* c = mapping_.Lookup(addr);
  if (c == nullptr) return {Step::kMiss, {}, addr};
  return Reheat(parent, slot, c, addr, w, report_busy);
}

// The child is cached but not swizzled in this parent: cooling (second chance), an orphan,
// or swizzled in a stale parent. Swizzle it here; needs both latches.
BufferManager::Step BufferManager::Reheat(OptimisticGuard& parent, const uint64_t* slot,
                                          BufferFrame* c, GlobalAddress addr, CacheWorker& w,
                                          bool report_busy) {
  const FrameState st = c->load_state();
  if (st != FrameState::kHot && st != FrameState::kCooling) {
    // Validated: the parent still pointed to addr while another thread had it registered.
    if (report_busy && Busy(st) && c->remote() == addr && parent.Validate()) return {Step::kBusy, {}, addr};
    WaitWhileBusy(c, addr);  // I/O in progress: no second READ; restart when it is done
    return {};
  }
  ExclusiveGuard pg = ExclusiveGuard::TryUpgrade(parent);
  if (!pg.owns()) return {};
  ExclusiveGuard cg = ExclusiveGuard::TryLock(c);
  if (!cg.owns()) {
    // Being cooled, written back or evicted: wait for that outside the parent's latch
    // (a while: the caller restarts anyway).
    parent = pg.Downgrade();
    RetryBudget waits(retry_limits::kFrameBusyWait, "wait for a latched frame");
    Backoff backoff(backoff::kLatchHeld, "a latched cache frame of node", addr);
    while (c->latch.locked() && waits.Spend()) backoff.Pause();
    return {};
  }
  if (c->remote() != addr || Swip::Load(slot) != Swip::Remote(addr)) {
    parent = pg.Downgrade();
    return {};
  }
  const FrameState cst = c->load_state();
  if (cst != FrameState::kHot && cst != FrameState::kCooling) {
    parent = pg.Downgrade();
    return {};
  }
  // Only a hot parent takes swizzled children (a cooling one is childless by definition and
  // may be evicted any time), and a traversal only ever stands on hot, swizzled frames: that
  // is what lets a cooled and evicted node vouch that nobody works below it (§6.2).
  if (pg.frame()->load_state() != FrameState::kHot) {
    parent = pg.Downgrade();
    return {};
  }
  BufferFrame* old_parent = c->parent.load(std::memory_order_acquire);
  if (old_parent != nullptr) {
    // Swizzled in another (stale) parent: take it over if that parent is free right now.
    ExclusiveGuard og = ExclusiveGuard::TryLock(old_parent);
    uint64_t* old_slot = og.owns() ? FindSlot(old_parent->page, Swip::Local(c)) : nullptr;
    if (old_slot == nullptr) {
      parent = pg.Downgrade();
      return {};
    }
    Swip::Store(old_slot, Swip::Remote(addr));
  }
  if (cst == FrameState::kCooling) {
    cooling_.Remove(c);
    c->set_state(FrameState::kHot);
  }
  Swip::Store(const_cast<uint64_t*>(slot), Swip::Local(c));
  c->parent.store(pg.frame(), std::memory_order_release);
  parent = pg.Downgrade();
  CacheWorker::Bump(w.counters_.hits);
  return {Step::kHit, cg.Downgrade(), {}};
}

Result<OptimisticGuard> BufferManager::Load(OptimisticGuard& parent, const uint64_t* slot,
                                            GlobalAddress addr, bool child_is_leaf,
                                            CacheWorker& w, PageLoader& loader, bool hot) {
  if (addr.is_null() || !Swip::Representable(addr))
    return Status::Corruption("child pointer " + addr.ToString() + " is not a node address");
  // One transient page per operation: a second miss in the same operation is admitted.
  // A hot leaf skips the draw, but P_A = 0 still means that no leaf is ever cached.
  bool admit = !child_is_leaf || (hot && options_.leaf_admission > 0) || w.transient_ != nullptr ||
               ((sketch_ == nullptr || options_.leaf_admission >= 1.0) && w.Uniform() < options_.leaf_admission);
  BufferFrame* f = w.scratch_;
  if (admit) {
    auto r = AcquireFreeFrame(w);
    if (!r.ok()) return r.status();
    f = *r;
  }
  auto give_back = [&] {
    f->set_state(FrameState::kFree);
    f->set_remote({});
    f->latch.Unlock();
    if (f != w.scratch_) w.free_frames_.push_back(f);
  };
  f->latch.Lock();  // uncontended: nobody else can reach a free frame
  f->set_remote(addr);
  f->set_state(FrameState::kLoading);
  f->dirty.store(false, std::memory_order_relaxed);
  f->precedes_parent.store(false, std::memory_order_relaxed);
  f->parent.store(nullptr, std::memory_order_relaxed);
  if (mapping_.TryInsert(addr, f) != nullptr) {
    // Someone else is loading it (or has it): one READ per node, we restart and find it.
    give_back();
    if (BufferFrame* other = mapping_.Lookup(addr)) WaitWhileBusy(other, addr);
    return RetryStatus();
  }
  CacheWorker::Bump(w.counters_.misses);
  // Read into private memory first: threads holding stale pointers to this frame may still
  // be reading it optimistically, so its bytes change only by whole atomic words.
  Status s = loader.Load(addr, w.staging_.get());
  if (!s.ok()) {
    mapping_.Erase(addr, f);
    give_back();
    return s;
  }
  if (admit && !loader.Admissible(w.staging_.get())) admit = false;
  if (!admit && w.transient_ != nullptr) {
    mapping_.Erase(addr, f);
    give_back();
    return Status::InvalidArgument("cache: an operation needs a second non-cacheable page");
  }
  CopyToPool(f->page, w.staging_.get(), options_.page_bytes);
  if (!admit) {
    f->set_state(FrameState::kTransient);
    w.transient_ = f;
    CacheWorker::Bump(w.counters_.bypassed);
    OptimisticGuard child(f, f->latch.Unlock());
    // The parent stays hot until the operation ends: while it does, no ancestor can be
    // evicted, so nobody offloads a subtree holding this page (§6.2).
    BufferFrame* p = parent.frame();
    p->pins.fetch_add(1, std::memory_order_acq_rel);
    w.transient_parent_ = p;
    if (!parent.Validate()) return RetryStatus();  // EndOperation unpins and unregisters
    return child;
  }
  CacheWorker::Bump(w.counters_.admitted);
  ExclusiveGuard pg = ExclusiveGuard::TryUpgrade(parent);
  f->set_state(FrameState::kHot);
  if (pg.owns() && pg.frame()->load_state() == FrameState::kHot) {
    // Unchanged since the probe, so the slot still holds addr.
    Swip::Store(const_cast<uint64_t*>(slot), Swip::Local(f));
    f->parent.store(pg.frame(), std::memory_order_release);
    parent = pg.Downgrade();
    return OptimisticGuard(f, f->latch.Unlock());
  }
  // The parent changed while we read: keep the page cached, unswizzled and cooling; the
  // restart finds it through the mapping table and swizzles it wherever it now belongs.
  if (pg.owns()) parent = pg.Downgrade();
  ListCooling(f, w);
  f->latch.Unlock();
  return RetryStatus();
}

bool BufferManager::WorthAdmitting(GlobalAddress leaf, CacheWorker& w) {
  if (options_.leaf_admission == 0.0) return false;  // no leaf is ever admitted
  if (sketch_ == nullptr) return true;
  // A frame that needs no eviction: the cache is still filling.
  if (!w.free_frames_.empty() || never_used_.load(std::memory_order_relaxed) < frame_count_) return true;
  const GlobalAddress victim = cooling_.PeekOldest(w.rng_());
  if (victim.is_null()) return true;  // nothing cooling: the next eviction is not known yet
  // Strictly more: a tie keeps what is cached (TinyLFU), so two equally cold leaves do not
  // take turns evicting each other.
  return sketch_->Estimate(leaf) > sketch_->Estimate(victim);
}

Result<OptimisticGuard> BufferManager::Resolve(OptimisticGuard& parent, const uint64_t* slot,
                                               bool child_is_leaf, CacheWorker& w,
                                               PageLoader& loader) {
  Step step = Probe(parent, slot, w);
  if (step.kind == Step::kHit) return step.child;
  if (step.kind == Step::kRetry) return RetryStatus();
  return Load(parent, slot, step.missing, child_is_leaf, w, loader);
}

Result<OptimisticGuard> BufferManager::ReadPrivate(GlobalAddress addr, CacheWorker& w, PageLoader& loader) {
  if (addr.is_null() || !Swip::Representable(addr))
    return Status::Corruption("child pointer " + addr.ToString() + " is not a node address");
  BufferFrame* f = w.private_.get();
  // Only this thread ever reaches f, so its page needs no staging; the latch is taken all the
  // same, so a guard from the previous private read fails validation.
  f->latch.Lock();
  f->set_remote(addr);
  f->set_state(FrameState::kTransient);
  Status s = loader.Load(addr, f->page);
  if (!s.ok()) {
    f->set_state(FrameState::kFree);
    f->set_remote({});
    f->latch.Unlock();
    return s;
  }
  CacheWorker::Bump(w.counters_.misses);
  CacheWorker::Bump(w.counters_.bypassed);
  return OptimisticGuard(f, f->latch.Unlock());
}

Status BufferManager::ClaimTransient(GlobalAddress addr, CacheWorker& w) {
  if (w.transient_ != nullptr) return Status::InvalidArgument("worker already holds a transient page");
  BufferFrame* f = w.scratch_;
  f->latch.Lock();
  f->set_remote(addr);
  f->set_state(FrameState::kTransient);
  f->dirty.store(false, std::memory_order_relaxed);
  f->precedes_parent.store(false, std::memory_order_relaxed);
  const bool inserted = mapping_.TryInsert(addr, f) == nullptr;
  if (!inserted) {
    f->set_state(FrameState::kFree);
    f->set_remote({});
  }
  f->latch.Unlock();
  if (!inserted) return RetryStatus();
  w.transient_ = f;
  return Status::Ok();
}

// ---- changes made by the tree ---------------------------------------------------------

Result<ExclusiveGuard> BufferManager::AllocateNew(GlobalAddress addr, CacheWorker& w) {
  if (addr.is_null() || !Swip::Representable(addr))
    return Status::InvalidArgument("not a node address: " + addr.ToString());
  auto r = AcquireFreeFrame(w);
  if (!r.ok()) return r.status();
  BufferFrame* f = *r;
  ExclusiveGuard g(f);
  f->set_remote(addr);
  f->parent.store(nullptr, std::memory_order_relaxed);
  f->dirty.store(true, std::memory_order_relaxed);
  f->precedes_parent.store(false, std::memory_order_relaxed);
  f->set_state(FrameState::kHot);
  if (mapping_.TryInsert(addr, f) != nullptr) {
    f->set_state(FrameState::kFree);
    f->set_remote({});
    g.Release();
    w.free_frames_.push_back(f);
    return Status::Corruption("new node " + addr.ToString() + " is already cached");
  }
  CacheWorker::Bump(w.counters_.admitted);
  return g;
}

void BufferManager::Attach(ExclusiveGuard& parent, uint64_t* slot, ExclusiveGuard& child) {
  Swip::Store(slot, Swip::Local(child.frame()));
  child.frame()->parent.store(parent.frame(), std::memory_order_release);
}

void BufferManager::Adopt(ExclusiveGuard& to) {
  const size_t n = layout_.ChildCount(to.page());
  for (size_t i = 0; i < n; ++i) {
    const Swip s = Swip::Load(layout_.ChildSlot(to.page(), i));
    if (s.swizzled()) s.frame()->parent.store(to.frame(), std::memory_order_release);
  }
}

void BufferManager::Refresh(ExclusiveGuard& node, const std::byte* fresh) {
  std::vector<BufferFrame*> children;  // swizzled in the old page
  for (size_t i = 0, n = layout_.ChildCount(node.page()); i < n; ++i) {
    const Swip s = Swip::Load(layout_.ChildSlot(node.page(), i));
    if (s.swizzled()) children.push_back(s.frame());
  }
  CopyToPool(node.page(), fresh, options_.page_bytes);
  for (size_t i = 0, n = layout_.ChildCount(node.page()); i < n && !children.empty(); ++i) {
    uint64_t* slot = layout_.ChildSlot(node.page(), i);
    const Swip s = Swip::Load(slot);
    if (s.swizzled()) continue;  // cannot happen for a remote image; be defensive
    auto it = std::find_if(children.begin(), children.end(),
                           [&](BufferFrame* c) { return c->remote() == s.remote(); });
    if (it == children.end()) continue;
    Swip::Store(slot, Swip::Local(*it));
    children.erase(it);
  }
  for (BufferFrame* orphan : children)  // no longer our children: cached, unswizzled
    orphan->parent.store(nullptr, std::memory_order_release);
}

Status BufferManager::Invalidate(GlobalAddress addr, CacheWorker& w) {
  RetryBudget attempts(retry_limits::kInvalidateBusyFrame, "invalidate the cached node");
  Backoff backoff(backoff::kLatchHeld, "a busy cache frame of node", addr);
  for (bool again = false;; again = true) {
    if (again) {
      if (!attempts.Spend()) return attempts.Exhausted(addr.ToString());
      backoff.Pause();
    }
    BufferFrame* c = mapping_.Lookup(addr);
    if (c == nullptr) return Status::Ok();
    const FrameState st = c->load_state();
    if (st != FrameState::kHot && st != FrameState::kCooling) {
      if (c == w.transient_) return Status::Ok();  // our own claim: nothing cached
      continue;
    }
    // Latch order is parent before child.
    BufferFrame* p = c->parent.load(std::memory_order_acquire);
    ExclusiveGuard pg;
    if (p != nullptr) pg = ExclusiveGuard(p);
    ExclusiveGuard cg(c);
    if (c->remote() != addr || c->parent.load(std::memory_order_acquire) != p ||
        (c->load_state() != FrameState::kHot && c->load_state() != FrameState::kCooling))
      continue;
    if (p != nullptr) {
      uint64_t* slot = FindSlot(p->page, Swip::Local(c));
      if (slot != nullptr) Swip::Store(slot, Swip::Remote(addr));
    }
    pg.Release();
    for (size_t i = 0, n = layout_.ChildCount(c->page); i < n; ++i) {
      const Swip s = Swip::Load(layout_.ChildSlot(c->page, i));
      if (s.swizzled()) s.frame()->parent.store(nullptr, std::memory_order_release);
    }
    if (c->load_state() == FrameState::kCooling) cooling_.Remove(c);
    mapping_.Erase(addr, c);
    c->dirty.store(false, std::memory_order_relaxed);  // remote memory is newer
    c->precedes_parent.store(false, std::memory_order_relaxed);
    c->parent.store(nullptr, std::memory_order_relaxed);
    c->set_remote({});
    c->set_state(FrameState::kFree);
    cg.Release();
    w.free_frames_.push_back(c);
    return Status::Ok();
  }
}

void BufferManager::Discard(ExclusiveGuard& node, CacheWorker& w) {
  BufferFrame* f = node.frame();
  f->dirty.store(false, std::memory_order_relaxed);
  f->precedes_parent.store(false, std::memory_order_relaxed);
  if (f == w.transient_) {
    node.Release();
    return;
  }
  if (f->load_state() == FrameState::kCooling) cooling_.Remove(f);
  mapping_.Erase(f->remote(), f);
  f->parent.store(nullptr, std::memory_order_relaxed);
  f->set_remote({});
  f->set_state(FrameState::kFree);
  node.Release();
  w.free_frames_.push_back(f);
}

Status BufferManager::DropAll(CacheWorker& w) {
  for (size_t i = 0; i < frame_count_; ++i) {
    BufferFrame* f = &frames_[i];
    const FrameState st = f->load_state();
    if (st != FrameState::kHot && st != FrameState::kCooling) continue;
    ExclusiveGuard g(f);
    if (st == FrameState::kCooling) cooling_.Remove(f);
    mapping_.Erase(f->remote(), f);
    f->dirty.store(false, std::memory_order_relaxed);
    f->precedes_parent.store(false, std::memory_order_relaxed);
    f->parent.store(nullptr, std::memory_order_relaxed);
    f->set_remote({});
    f->set_state(FrameState::kFree);
    g.Release();
    ReleaseFreeFrame(f);
  }
  if (mapping_.size() != 0) return Status::Aborted("cache: pages in use while dropping all");
  return Status::Ok();
}

void BufferManager::UnswizzledCopy(const std::byte* page, std::byte* out) const {
  CopyFromPool(out, page, options_.page_bytes);
  for (size_t i = 0, n = layout_.ChildCount(out); i < n; ++i) {
    uint64_t* slot = layout_.ChildSlot(out, i);
    const Swip s = Swip::Load(slot);
    if (s.swizzled()) Swip::Store(slot, Swip::Remote(s.frame()->remote()));
  }
}

Status BufferManager::WriteBack(BufferFrame* f, CacheWorker& w) {
  // The caller holds f's latch exclusively, and so does every other write-back of f: two
  // write-backs of one page (a flush and a parent's write-through, say) each encode it with
  // a version of their own, and their WRITEs, landing piece by piece at once, would leave an
  // image of both that validates as neither, in memory nobody writes under a lock.
  // Children whose new range the page's image relies on go first (precedes_parent). Frames
  // are visited top-down and written bottom-up; a chain of marks follows the tree's levels,
  // so the recursion is at most as deep as the tree.
  for (size_t i = 0, n = layout_.ChildCount(f->page); i < n; ++i) {
    const Swip s = Swip::Load(layout_.ChildSlot(f->page, i));
    if (!s.swizzled()) continue;
    BufferFrame* c = s.frame();
    if (!c->precedes_parent.load(std::memory_order_acquire)) continue;
    // Exclusively: one write-back of a page at a time (a flush may be writing c right now).
    ExclusiveGuard cg(c);
    if (c->precedes_parent.load(std::memory_order_acquire)) DMX_RETURN_IF_ERROR(WriteBack(c, w));
  }
  UnswizzledCopy(f->page, w.staging_.get());
  DMX_RETURN_IF_ERROR(w.writer_.WriteBack(f->remote(), w.staging_.get()));
  f->precedes_parent.store(false, std::memory_order_release);
  f->dirty.store(false, std::memory_order_relaxed);
  CacheWorker::Bump(w.counters_.write_backs);
  return Status::Ok();
}

Result<uint64_t> BufferManager::FlushDirty(CacheWorker& w,
                                           const std::function<bool(GlobalAddress)>& filter) {
  const CacheStats before = w.stats();
  for (size_t i = 0; i < frame_count_; ++i) {
    BufferFrame* f = &frames_[i];
    if (!f->dirty.load(std::memory_order_relaxed)) continue;
    // Exclusively, as every write-back: the page holds still and no other write-back of it
    // (a parent's, written through by a merge; cooling) is in flight meanwhile.
    ExclusiveGuard g(f);
    const FrameState st = f->load_state();
    if ((st != FrameState::kHot && st != FrameState::kCooling) ||
        !f->dirty.load(std::memory_order_relaxed) || (filter && !filter(f->remote())))
      continue;
    DMX_RETURN_IF_ERROR(WriteBack(f, w));
  }
  return w.stats().write_backs - before.write_backs;
}

// ---- helpers --------------------------------------------------------------------------

void BufferManager::WaitWhileBusy(const BufferFrame* f, GlobalAddress addr) const {
  // Bounded: the holder may be slow (a long offloaded operation); the caller restarts anyway.
  RetryBudget waits(retry_limits::kFrameBusyWait, "wait for a frame's I/O");
  Backoff backoff(backoff::kLatchHeld, "the I/O of a cache frame of node", addr);
  for (;; backoff.Pause()) {
    const FrameState st = f->load_state();
    if (f->remote() != addr || (st != FrameState::kLoading && st != FrameState::kTransient)) return;
    if (!waits.Spend()) return;
  }
}

uint64_t* BufferManager::FindSlot(std::byte* page, Swip s) const {
  for (size_t i = 0, n = layout_.ChildCount(page); i < n; ++i) {
    uint64_t* slot = layout_.ChildSlot(page, i);
    if (Swip::Load(slot) == s) return slot;
  }
  return nullptr;
}

bool BufferManager::HasSwizzledChild(const std::byte* page) const {
  if (layout_.IsLeaf(page)) return false;
  for (size_t i = 0, n = layout_.ChildCount(page); i < n; ++i)
    if (Swip::Load(layout_.ChildSlot(page, i)).swizzled()) return true;
  return false;
}

}  // namespace dmindex::cache
