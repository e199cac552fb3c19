// BufferManager: DEX's compute-side cache of remote tree nodes (§5), one per logical
// compute node. LeanStore-style: fixed frames, a mapping table from remote address to frame,
// pointer swizzling in cached parents, optimistic latching, random-sampling cooling. DEX's
// additions: the cooling map (cooling_map.h), path-aware cooling (a parent is cooled only
// after all its children are unswizzled), I/O-in-progress registration so that concurrent
// misses on one node issue one READ, and lazy leaf admission with probability P_A.
//
// The tree that uses the cache walks it top-down: a "meta" frame the tree owns (outside the
// pool, state kHot) holds the root pointer in its one child slot, and every step is Probe()
// (and Load() on a miss). Children are swizzled only into hot parents. Operations return RetryStatus() when the caller must restart from the root.
//
// Thread-safe; each thread uses its own CacheWorker.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/runtime.h"
#include "cache/buffer_frame.h"
#include "cache/cache_options.h"
#include "cache/cache_worker.h"
#include "cache/cooling_map.h"
#include "cache/frequency_sketch.h"
#include "cache/guards.h"
#include "cache/mapping_table.h"
#include "cache/page_io.h"
#include "cache/swip.h"

namespace dmindex::cache {

class BufferManager {
 public:
  static Result<std::unique_ptr<BufferManager>> Create(const CacheOptions& options,
                                                       const PageLayout& layout);
  ~BufferManager();

  // ---- top-down traversal -------------------------------------------------------------
  struct Step {
    enum Kind { kHit, kMiss, kBusy, kRetry } kind = kRetry;
    OptimisticGuard child;   // kHit: the child, read-latched optimistically
    GlobalAddress missing;   // kMiss, kBusy: the child's remote address
  };
  // The child whose pointer is in `slot` of the optimistically latched `parent`. A cooling
  // or unswizzled cached child is swizzled back in (second chance), which changes `parent`'s
  // version: `parent` is updated to stay valid. kMiss: the child is not cached; the caller
  // may Load() it (or offload the rest of the operation). kRetry: restart from the root
  // (the parent changed, or another thread is loading the child: after waiting a while for
  // that thread). With `report_busy`, a child another thread is loading or holds for one
  // operation is kBusy at once, without waiting: a reader may ReadPrivate() it instead.
  // Inline: the hit (a swizzled child) is the descent's every step; the rest is ProbeRemote.
  // `prefetch`: ask for the child's page lines now (PrefetchPage); false for a child every
  // operation reads (a tree's root), whose lines are in the core's first-level cache already.
  [[gnu::always_inline]] Step Probe(OptimisticGuard& parent, const uint64_t* slot, CacheWorker& w,
                                    bool report_busy = false, bool prefetch = true) {
    const Swip s = Swip::Load(slot);
    // Validate before following the pointer: a torn view of the parent could hold anything.
    if (!parent.Validate()) return {};
    if (!s.swizzled()) return ProbeRemote(parent, slot, s.remote(), w, report_busy);
    if (prefetch) PrefetchPage(s.frame());
    OptimisticGuard child(s.frame());
    if (!child.valid() || !parent.Validate()) return {};
    CacheWorker::Bump(w.counters_.hits);
    return {Step::kHit, child, {}};
  }
  // Brings a missed child in: registers it as loading (so concurrent misses wait instead of
  // reading it again), READs it through `loader` and admits it (inner nodes always, leaves
  // with probability P_A, never a page the loader calls inadmissible) swizzled into
  // `parent`. A page not admitted becomes the worker's transient page until EndOperation(),
  // and its parent stays pinned until then. Retry if another thread registered the node
  // first, or if `parent` changed during the READ (the page is then cached unswizzled and
  // cooling: the restart finds it without a second READ). `hot`: the caller knows the leaf
  // is worth caching (DEX's miss counts): admitted whatever P_A draws (unless P_A is 0).
  // With CacheOptions::frequency there is no draw: a leaf is admitted iff `hot` (the caller
  // asked WorthAdmitting) and P_A > 0, or P_A is 1.
  Result<OptimisticGuard> Load(OptimisticGuard& parent, const uint64_t* slot, GlobalAddress child,
                               bool child_is_leaf, CacheWorker& w, PageLoader& loader, bool hot = false);
  // Probe, then Load on a miss.
  Result<OptimisticGuard> Resolve(OptimisticGuard& parent, const uint64_t* slot,
                                  bool child_is_leaf, CacheWorker& w, PageLoader& loader);

  // Waits (bounded) while another thread loads or holds `addr` (after Probe's kBusy, for a
  // caller that will not read it privately); then restart.
  void WaitWhileRegistered(GlobalAddress addr) const {
    if (const BufferFrame* f = mapping_.Lookup(addr)) WaitWhileBusy(f, addr);
  }
  // The frame registered for `addr` right now (cached, being loaded or held for one
  // operation), or null. The frame may hold another node by the time the caller looks at it.
  const BufferFrame* Registered(GlobalAddress addr) const { return mapping_.Lookup(addr); }
  // READs `addr` into w's private frame, which no other thread can reach (it is never in the
  // mapping table nor swizzled anywhere), for a caller that only reads it: a reader of a node
  // another thread is loading or holds (Probe's kBusy), instead of waiting for that thread.
  // The copy is valid until w's next ReadPrivate; nothing is registered or admitted.
  Result<OptimisticGuard> ReadPrivate(GlobalAddress addr, CacheWorker& w, PageLoader& loader);

  // Registers `addr` as being worked on elsewhere without loading it (DEX offloading, §6.2):
  // concurrent traversals reaching it restart until EndOperation(). Retry if it is cached
  // or registered already.
  Status ClaimTransient(GlobalAddress addr, CacheWorker& w);

  // ---- frequency policy (CacheOptions::frequency; no-ops without it) ---------------------
  // Counts an access to `node` and to its cached `parent` (null: none) in the sketch, one
  // call in touch_period per worker: a countdown is all the other calls cost.
  void Touch(GlobalAddress node, GlobalAddress parent, CacheWorker& w) {
    BeginTouch(node, parent, w);
    EndTouch(w);
  }
  // Touch in two halves, for a caller with work between them (a leaf to search): the first
  // locates the counters and asks for their lines, the second counts. The sketch is as large
  // as the cache has frames and its lines are rarely cached: counting at once stalled a
  // cached lookup on them (docs/results/dex-hit-path.md). An EndTouch without its
  // BeginTouch (an attempt that restarted) counts nothing.
  void BeginTouch(GlobalAddress node, GlobalAddress parent, CacheWorker& w) {
    if (sketch_ == nullptr || --w.touch_countdown_ != 0) return;
    w.touch_countdown_ = options_.touch_period;
    w.touching_ = 1;
    w.touch_[0] = sketch_->Locate(node);
    if (!parent.is_null()) w.touch_[w.touching_++] = sketch_->Locate(parent);
  }
  void EndTouch(CacheWorker& w) {
    for (uint32_t i = 0; i < w.touching_; ++i) sketch_->Increment(w.touch_[i]);
    w.touching_ = 0;
  }
  // TinyLFU's admission: whether a missed `leaf` is worth a frame - a frame is free without
  // evicting, or its estimated frequency beats that of the frame eviction would take next
  // (the oldest of a random cooling bucket). Always true without the sketch, always false
  // with P_A = 0 (no leaf is admitted).
  bool WorthAdmitting(GlobalAddress leaf, CacheWorker& w);
  uint32_t EstimatedFrequency(GlobalAddress node) const { return sketch_ ? sketch_->Estimate(node) : 0; }
  const FrequencySketch* sketch() const { return sketch_.get(); }
  // The owner's say on whether a page whose last change has redo_end `redo_end` may leave the
  // cache (be cooled, then evicted): DEX keeps a page whose last change's redo record has not
  // landed, so nobody reads that change from the pool before it is durable. Set before use.
  void SetLeaveCheck(std::function<bool(uint64_t redo_end)> may_leave) { may_leave_ = std::move(may_leave); }

  // ---- changes made by the tree ---------------------------------------------------------
  // Makes sure w's free set holds a frame, cooling and evicting others if it must, so that
  // its next AllocateNew takes that frame without sampling. Call it holding no frame latch:
  // freeing a frame may need any frame's latch (a child is unswizzled under its parent's),
  // and one the caller held could never be taken - a split latching the parent of every
  // cached frame would sample forever (docs/SYNCHRONIZATION.md, "DEX's cached pages").
  // Retry if no frame could be freed.
  Status ReserveFrame(CacheWorker& w);
  // A frame for a node the caller just created remotely (e.g. a split sibling): registered,
  // hot, dirty, unswizzled, exclusively latched. Swizzle it into its parent with Attach().
  // Takes a frame from w's free set if it has one (ReserveFrame); otherwise samples for one
  // like a Load, which a caller holding latches must not make it do.
  Result<ExclusiveGuard> AllocateNew(GlobalAddress addr, CacheWorker& w);
  // Stores a swizzled pointer to `child` in `slot` of `parent` (both latched by the caller).
  void Attach(ExclusiveGuard& parent, uint64_t* slot, ExclusiveGuard& child);
  // After the caller moved child slots into `to` (a split), makes `to` the parent of every
  // child swizzled in it. The caller holds the latches of `to` and of the old parent.
  void Adopt(ExclusiveGuard& to);
  // Replaces a cached node's page with a fresh remote image (a stale shared node, §4).
  // Children swizzled in the old page stay swizzled if the fresh page still points to them;
  // the others stay cached, unswizzled.
  void Refresh(ExclusiveGuard& node, const std::byte* fresh);
  // Drops the cached copy of `addr`, if any, because remote memory holds a newer one (DEX
  // offloading's invalidation). Its cached children stay cached, unswizzled.
  Status Invalidate(GlobalAddress addr, CacheWorker& w);
  // Drops the exclusively latched `node`, which left the tree (a merge): no write-back.
  // The caller already removed it from its parent's page and moved its children. If it is
  // w's transient page, EndOperation() unregisters it; otherwise its frame is freed now.
  // Releases the latch (optimistic readers restart).
  void Discard(ExclusiveGuard& node, CacheWorker& w);
  // Writes the page of `f` (latched exclusively by the caller: one write-back of a page is in
  // flight at a time) back to remote memory, with swizzled pointers replaced by remote
  // addresses, and marks it clean. Its children marked precedes_parent are written first,
  // recursively (each latched exclusively while it is written: latches are only ever waited
  // for downwards), so the page's image never
  // reaches remote memory ahead of a child image it depends on. Every write-back goes through
  // here, except a transient page's (a leaf: EndOperation).
  Status WriteBack(BufferFrame* f, CacheWorker& w);
  // Writes every dirty cached page accepted by `filter` (all if empty) back to remote
  // memory (each through WriteBack). Returns the count of pages written.
  Result<uint64_t> FlushDirty(CacheWorker& w,
                              const std::function<bool(GlobalAddress)>& filter = {});
  // Drops every cached page (after FlushDirty: dirty pages are lost otherwise). Only while
  // no thread uses the cache; the tree must also forget swizzled pointers it holds outside
  // the pool (its meta page).
  Status DropAll(CacheWorker& w);
  // A copy of `page` with every swizzled pointer replaced by its child's remote address.
  void UnswizzledCopy(const std::byte* page, std::byte* out) const;

  // ---- replacement (replacement.cc) -----------------------------------------------------
  // Samples frames and cools them, delegating to swizzled children (path-aware): only a
  // node without swizzled children is unswizzled, written back if dirty, and listed in the
  // cooling map. Returns how many were cooled.
  Result<size_t> CoolSamples(CacheWorker& w, size_t samples);
  // Cools `f` if it is hot, unpinned and has no swizzled children, and its latch and its
  // parent's are free right now (*cooled tells). A dirty page is written back *before* it is
  // unswizzled from its parent: while the write is in flight the parent still has a swizzled
  // child, so it cannot be cooled and written back ahead of it (nor evicted and offloaded
  // over). CoolSamples picks the frames; tests force an order with this.
  Status Cool(BufferFrame* f, CacheWorker& w, bool* cooled);

  // ---- inspection ---------------------------------------------------------------------
  CacheStats Stats() const;
  const CacheOptions& options() const { return options_; }
  const PageLayout& layout() const { return layout_; }
  size_t frame_count() const { return frame_count_; }
  BufferFrame& frame(size_t i) { return frames_[i]; }
  BufferFrame* Lookup(GlobalAddress addr) const { return mapping_.Lookup(addr); }
  size_t cooling_size() const { return cooling_.size(); }
  size_t cooling_capacity() const { return cooling_.capacity(); }
  // Checks the structural invariants (mapping, swizzling, parent links, cooling membership,
  // path-awareness). Only meaningful while no thread uses the cache.
  Status CheckInvariants() const;

 private:
  friend class CacheWorker;
  BufferManager(const CacheOptions& options, const PageLayout& layout, size_t frames);

  Result<BufferFrame*> AcquireFreeFrame(CacheWorker& w);
  // A random frame's index, with the frame's line and its page's first line asked for (for
  // SamplePathEnd, which reads both).
  size_t SampleFrame(CacheWorker& w) const;
  // Frame `index` followed down its swizzled children to the end of its cached path (a hot frame
  // without swizzled children), or null if a frame on the way was busy or not hot.
  BufferFrame* SamplePathEnd(size_t index, CacheWorker& w);
  // The policy=lfu choice of a frame to cool: the least frequent of lfu_samples path ends.
  BufferFrame* LeastFrequentPathEnd(CacheWorker& w);
  void ReleaseFreeFrame(BufferFrame* f);  // a frame no worker holds any more
  // Takes an exclusively latched cooling frame out of the cache into w's free set.
  void Evict(BufferFrame* victim, CacheWorker& w);
  // Lists a latched, unswizzled, clean frame as cooling (or leaves it an orphan if its
  // bucket is jammed), evicting the bucket's head if it was full.
  void ListCooling(BufferFrame* f, CacheWorker& w);
  Step Reheat(OptimisticGuard& parent, const uint64_t* slot, BufferFrame* c, GlobalAddress addr,
              CacheWorker& w, bool report_busy);
  // Asks the CPU to fetch the page of frame f (by its index, without reading the frame), so
  // the misses on a frame and its page overlap instead of following each other.
  void PrefetchPage(const BufferFrame* f) const;
  // Probe of a child that is not swizzled in `parent`: cached elsewhere (Reheat) or a miss.
  Step ProbeRemote(OptimisticGuard& parent, const uint64_t* slot, GlobalAddress addr, CacheWorker& w,
                   bool report_busy);
  // Waits (yielding, bounded) while another thread loads or holds node `addr` in frame f.
  void WaitWhileBusy(const BufferFrame* f, GlobalAddress addr) const;
  static bool Busy(FrameState st) { return st == FrameState::kLoading || st == FrameState::kTransient; }
  uint64_t* FindSlot(std::byte* page, Swip s) const;
  bool HasSwizzledChild(const std::byte* page) const;
  // A worker joins (and gets a scratch frame for transient pages) or leaves.
  BufferFrame* Register(CacheWorker* w);
  void Unregister(CacheWorker* w);

  const CacheOptions options_;
  const PageLayout& layout_;
  const size_t frame_count_;
  // Frames and pages: each one anonymous mapping advised to use huge pages (HugeMapping).
  struct Unmap {
    size_t bytes;
    void operator()(void* p) const;
  };
  static std::unique_ptr<std::byte[], Unmap> HugeMapping(size_t bytes);
  static std::unique_ptr<BufferFrame[], Unmap> NewFrames(size_t count);
  std::unique_ptr<BufferFrame[], Unmap> frames_;
  std::unique_ptr<std::byte[], Unmap> pages_;
  std::atomic<size_t> never_used_{0};  // frames_[never_used_..] were never handed out
  MappingTable mapping_;
  CoolingMap cooling_;
  std::unique_ptr<FrequencySketch> sketch_;  // CacheOptions::frequency only
  std::function<bool(uint64_t)> may_leave_;  // SetLeaveCheck

  runtime::Mutex free_mu_;  // frames given back by finished workers or invalidation
  std::vector<BufferFrame*> free_;

  mutable runtime::Mutex workers_mu_;
  std::vector<CacheWorker*> workers_;
  std::atomic<uint64_t> workers_joined_{0};  // ordinals of workers' random streams
  CacheStats retired_;  // counters of destroyed workers
  // Scratch frames of workers, kept for the cache's lifetime: another thread that found one
  // in the mapping table may still read its state after its worker is gone.
  struct Scratch {
    BufferFrame frame;
    std::unique_ptr<std::byte[]> page;
  };
  std::vector<std::unique_ptr<Scratch>> scratch_frames_;
  std::vector<BufferFrame*> free_scratch_;
};

}  // namespace dmindex::cache
