// DexTree: construction, workers, the cached traversal (Algorithm 1) and refresh_from_root.
#include "designs/dex/dex_tree.h"

#include <algorithm>
#include <chrono>

#include "common/pool_memory.h"
#include "common/retry_status.h"

namespace dmindex::designs::dex {
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   runtime::Now().time_since_epoch())
                                   .count());
}

// Cache per compute node (the floor: 64 nodes, docs/DEX.md "Knobs").
uint64_t CacheBytes(const DexOptions& o, uint32_t node_bytes) {
  return std::max<uint64_t>(o.cache_bytes, 64ull * node_bytes);
}

}  // namespace

template <tree::KeyValueTraits KV>
DexComputeNode<KV>::DexComputeNode(uint32_t id_, uint16_t memory_nodes, const DexOptions& o,
                                   const tree::NodeLayout<KV>& layout, const NodePageLayout<KV>& page_layout)
    : id(id_),
      core(id_, memory_nodes, o.tree, layout),
      meta_page(new std::byte[layout.node_bytes]()),
      offload(o.offload, o.offload_level, o.explore, o.cost_factor, o.local_search_ns,
              CacheBytes(o, layout.node_bytes) / layout.node_bytes, o.frequency) {
  cache::CacheOptions co;
  co.cache_bytes = CacheBytes(o, layout.node_bytes);
  co.page_bytes = layout.node_bytes;
  co.leaf_admission = o.leaf_admission;
  co.frequency = o.frequency;
  co.seed = 0x5EED + id_;
  bm = std::move(cache::BufferManager::Create(co, page_layout)).value();
  // A change whose record is in flight stays cached: read from the pool (an eviction, then a
  // miss, offload or private read) nobody could tell it is not durable yet (log_watermark.h).
  bm->SetLeaveCheck([this](uint64_t redo_end) { return landed.Reached(redo_end, log_tail) == LogWatermark::Reach::kLanded; });
  // The meta page: an internal node with no separators whose leftmost child is the root.
  page_layout.BuildMeta(meta_page.get());
  meta.page = meta_page.get();
  meta.set_state(cache::FrameState::kHot);
}

template <tree::KeyValueTraits KV>
DexWorker<KV>::DexWorker(DexTree<KV>& tree, uint32_t compute_node, std::unique_ptr<fabric::Endpoint> ep)
    : cn(compute_node),
      // The locks of shared nodes name this process's one lease (DEX's host lease), so a
      // process that dies holding one is taken over like the core's (docs/SYNCHRONIZATION.md).
      ctx(std::move(ep), &tree.compute_node(compute_node).core, tree.layout_.node_bytes, tree.lease_.get()),
      map(tree.map_.load(std::memory_order_acquire)),
      pages(tree.shared_, tree.reader_, ctx, compute_node, &map, &tree.pending_, &tree.compute_node(compute_node).landed),
      cw(*tree.compute_node(compute_node).bm, pages),
      copy(tree.layout_.node_bytes),
      image(tree.layout_.node_bytes),
      gate(tree.compute_node(compute_node).gate),
      watermark(tree.compute_node(compute_node).landed) {
  pages.SetGuard(tree.lease_.get());
  gate.Register(&gate_slot);
  watermark.Register(&log_slot);
}

template <tree::KeyValueTraits KV>
DexWorker<KV>::~DexWorker() {
  watermark.Unregister(&log_slot);
  gate.Unregister(&gate_slot);
}

template <tree::KeyValueTraits KV>
DexTree<KV>::DexTree(fabric::Fabric& fabric, const DexOptions& o, const Layout& layout, GlobalAddress root_word,
                     uint32_t first, uint32_t partitions)
    : options_(o),
      layout_(layout),
      page_layout_(layout),
      fabric_(fabric),
      shared_(fabric, o.tree, layout, root_word),
      reader_(shared_),
      locker_(shared_, reader_),
      smo_(shared_, reader_, locker_),
      loader_(shared_, reader_),
      values_(shared_),
      first_(first),
      partitions_(partitions),
      store_(GlobalAddress{}) {
  for (uint32_t i = 0; i < o.compute_nodes; ++i)
    nodes_.push_back(std::make_unique<ComputeNode>(first + i, fabric.memory_nodes(), o, layout, page_layout_));
}

template <tree::KeyValueTraits KV>
DexTree<KV>::~DexTree() {
  Status ignored = Close();  // Index::Close reports it; a destructor cannot
  (void)ignored;
}

// A closing process writes its dirty pages back (they are the only copy of its writes)
// and gives up its compute nodes, so another process may host them. The leases are given
// back even if a write-back failed: the pages that did not reach the pool are lost either
// way, and holding the compute nodes would only keep other processes from serving them.
template <tree::KeyValueTraits KV>
Status DexTree<KV>::Close() {
  if (!maintenance_ || closed_) return Status::Ok();
  closed_ = true;
  StopWriteBack();
  Status flushed = FlushAll();
  Status released = host_token_ == 0 ? Status::Ok()
                                     : store_.ReleaseHosts(maintenance_->ctx.ep, first_,
                                                           compute_nodes(), host_token_);
  if (hold_) hold_->Release();  // a drop elsewhere may go on
  if (!flushed.ok())
    return Status::FromCode(flushed.code(), "close: writing dirty pages back: " + flushed.message());
  return released;
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::FlushAll() {
  std::lock_guard lk(maps_mu_);
  for (auto& n : nodes_) {
    OperationGate::Closed closed(n->gate);
    cache::CacheWorker cw(*n->bm, maintenance_->pages);
    auto flushed = n->bm->FlushDirty(cw);
    if (!flushed.ok()) return flushed.status();
    DMX_RETURN_IF_ERROR(TruncateLog(*n));  // everything it covers is in the pool now
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<DexWorker<KV>>> DexTree<KV>::NewWorker(uint32_t compute_node) {
  if (!Hosts(compute_node))
    return Status::InvalidArgument("compute node " + std::to_string(compute_node) +
                                   " is not hosted by this process (it hosts " +
                                   std::to_string(first_) + ".." +
                                   std::to_string(first_ + nodes_.size() - 1) + ")");
  auto ep = fabric_.Connect();
  if (!ep.ok()) return ep.status();
  return std::make_unique<Worker>(*this, compute_node, std::move(ep).value());
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::SetRoot(cache::ExclusiveGuard& meta, GlobalAddress root) {
  uint64_t* slot = page_layout_.ChildSlot(meta.page(), 0);
  const cache::Swip s = cache::Swip::Load(slot);
  const GlobalAddress current = s.swizzled() ? s.frame()->remote() : s.remote();
  if (current == root) return;
  // The old root stays cached as an orphan: the new root points to it.
  if (s.swizzled()) s.frame()->parent.store(nullptr, std::memory_order_release);
  cache::Swip::Store(slot, cache::Swip::Remote(root));
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::RefreshPath(Worker& w, KeyRef key) {
  ComputeNode& cn = compute_node(w.cn);
  auto root = reader_.RefreshRoot(w.ctx);
  if (!root.ok()) return root.status();
  {
    cache::ExclusiveGuard mx(&cn.meta);
    SetRoot(mx, *root);
  }
  std::byte* buf = w.ctx.scratch();
  GlobalAddress addr = *root;
  for (int hop = 0; hop < 1024 && !addr.is_null(); ++hop) {
    Header h;
    Status read = reader_.Read(w.ctx, addr, buf, &h);
    // A node being written back by its owner (TreeReader::Read): not a shared node, so
    // nothing to refresh here; the restart copes.
    if (IsRetry(read)) return Status::Ok();
    DMX_RETURN_IF_ERROR(read);
    if (h.dead() || key < h.low) return Status::Ok();  // stale; the restart copes
    if (h.BeyondHigh(key)) {  // split after its parent was read: move right (B-link)
      addr = h.sibling;
      continue;
    }
    // A cached copy of a shared node is a read-only snapshot: refresh it if it is outdated.
    // (Its node may have become owned since, by splits narrowing its fences.) Owned nodes,
    // and everything below them, are authoritative in their owner's cache: stop there.
    bool cached_shared = false;
    if (cache::BufferFrame* f = cn.bm->Lookup(addr)) {
      cache::ExclusiveGuard fx(f);
      const auto st = f->load_state();
      if (f->remote() == addr && (st == cache::FrameState::kHot || st == cache::FrameState::kCooling)) {
        page_layout_.CopyHeader(f->page, w.copy.data());
        const Header ch = DecodeHeader(w.copy.data());
        cached_shared = Shared(w, ch);
        if (cached_shared && ch.version != h.version) cn.bm->Refresh(fx, buf);
      }
    }
    if (!Shared(w, h) && !cached_shared) return Status::Ok();
    if (h.is_leaf()) return Status::Ok();
    addr = shared_.validator.internal().ChildFor(buf, h, key);
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Descend(Worker& w, KeyRef key, Intent intent, const OffloadRequest<KV>* offload,
                            LeafAt* out) {
  ComputeNode& cn = compute_node(w.cn);
  const auto& internal = shared_.validator.internal();
  cache::OptimisticGuard node(&cn.meta), parent;
  if (!node.valid()) return RetryStatus();
  const uint64_t* slot = page_layout_.ChildSlot(cn.meta.page, 0);
  if (cache::Swip::Load(slot).is_null()) {
    if (!node.Validate()) return RetryStatus();
    // Another compute node may have created the root since: ask the root word.
    auto root = reader_.RefreshRoot(w.ctx);
    if (!root.ok()) return root.status();
    if (root->is_null()) return Status::NotFound("empty tree");
    cache::ExclusiveGuard mx(&cn.meta);
    SetRoot(mx, *root);
    return RetryStatus();
  }
  int expect = -1;  // the root's level is not known before reading it
  // The header of the node just reached, decoded where the caller gets the leaf's: one
  // header, neither zeroed nor copied per operation (FinishSplit's rare path decodes the
  // parent's again, ParentHeader).
  Header& h = out->h;
  Key child_low = KV::kNegInf, child_high = KV::kPosInf;  // the next child's range, by `node`
  for (int depth = 0; depth < 64; ++depth) {
    const uint32_t child_level = expect < 0 ? 0 : static_cast<uint32_t>(expect);
    // A leaf another operation is fetching or holds: a lookup READs its own copy instead of
    // waiting for it (docs/SYNCHRONIZATION.md, "DEX's offloaded lookups and readers of a busy
    // leaf"); a write waits and restarts. Either is a miss that leaves the leaf uncached.
    // The root (the meta page's child, expect < 0) is read by every operation: its lines
    // are in the core's cache, so asking for them again is only instructions.
    auto step = cn.bm->Probe(node, slot, w.cw, /*report_busy=*/expect == 0, /*prefetch=*/expect >= 0);
    if (step.kind == cache::BufferManager::Step::kRetry) return RetryStatus();
    if (step.kind == cache::BufferManager::Step::kBusy && intent != Intent::kLookup) {
      cn.offload.CountMiss(step.missing);
      cn.bm->WaitWhileRegistered(step.missing);
      return RetryStatus();
    }
    if (step.kind == cache::BufferManager::Step::kBusy) {
      w.pages.Expect(std::move(child_low), std::move(child_high), /*busy_here=*/true);
      auto copy = cn.bm->ReadPrivate(step.missing, w.cw, w.pages);
      if (w.pages.stale()) w.need_refresh = true;
      if (!copy.ok()) return copy.status();
      DMX_RETURN_IF_ERROR(CheckPoolImage(w, step.missing));  // the holder may be writing it
      cn.offload.CountMiss(step.missing);
      cn.offload.private_reads.fetch_add(1, std::memory_order_relaxed);
      step.child = *copy;
    } else if (step.kind == cache::BufferManager::Step::kMiss) {
      // policy=lfu: a leaf the cache's sketch finds worth a frame is read and admitted, not
      // offloaded (an offload brings nothing into the cache).
      const bool worth = expect == 0 && cn.bm->sketch() != nullptr && cn.bm->WorthAdmitting(step.missing, w.cw);
      // Offload the rest if the child is ours, low enough, and the cost model says so.
      if (offload != nullptr && expect >= 0 && node.frame() != &cn.meta && !worth &&
          cn.offload.Decide(child_level, step.missing, w.ctx.rng)) {
        Status s = Offload(w, node, step.missing, child_level, *offload, out);
        if (s.code() != Status::Code::kNotSupported) return s;  // NotSupported: not offloadable, go on normally
      }
      // A leaf that kept missing without being cached is worth a frame now (OffloadPolicy::Hot).
      const bool hot = worth || (expect == 0 && cn.offload.Hot(0, step.missing));
      if (hot) cn.offload.hot_reads.fetch_add(1, std::memory_order_relaxed);
      const bool timed = cn.offload.SampleLatency(w.latency_countdown);
      const uint64_t t0 = timed ? NowNs() : 0;
      w.pages.Expect(std::move(child_low), std::move(child_high));
      auto loaded = cn.bm->Load(node, slot, step.missing, expect == 0, w.cw, w.pages, hot);
      if (w.pages.stale()) w.need_refresh = true;
      if (!loaded.ok()) return loaded.status();
      if (timed) cn.offload.RecordRead(NowNs() - t0);
      step.child = *loaded;
    }
    parent = node;
    node = step.child;
    // Fence check (Algorithm 1, lines 39-40): a stale shared parent leads to a wrong node.
    if constexpr (kSlotted<KV>) {  // a slotted header is decoded from a validated copy only
      page_layout_.CopyHeader(node.page(), w.copy.data());
      if (!node.Validate()) return RetryStatus();
      h = DecodeHeader(w.copy.data());
    } else {  // fixed offsets: decoded in place, used only once the latch validates
      page_layout_.HeaderInPlace(node.page(), &h);
      if (!node.Validate()) return RetryStatus();
    }
    if (!h.dead() && (expect < 0 || h.level == expect) && !(key < h.low) && h.BeyondHigh(key) &&
        !h.sibling.is_null()) {
      Header ph;
      if (!ParentHeader(w, parent, &ph)) return RetryStatus();
      return FinishSplit(w, parent, ph, node, h);
    }
    if (h.dead() || (expect >= 0 && h.level != expect) || !h.Covers(key)) {
      w.need_refresh = true;
      return RetryStatus();
    }
    if (h.level <= out->stop_level) {
      out->leaf = node;
      out->parent = parent;
      // Only writes and merges act on ownership; a lookup reads the leaf either way.
      out->owned = intent != Intent::kLookup && Owned(w, h);
      return Status::Ok();
    }
    if ((intent == Intent::kInsert || w.make_room) && Owned(w, h) && !internal.HasRoom(h)) {
      DMX_RETURN_IF_ERROR(SplitChild(w, parent, node));
      return RetryStatus();
    }
    int idx = -1;
    if (!SearchCachedInternal(w, node, h, key, &idx, &child_low, &child_high)) return RetryStatus();
    slot = page_layout_.ChildSlot(node.frame()->page, NodePageLayout<KV>::SlotIndex(idx));
    expect = h.level - 1;
  }
  return Status::Corruption("dex: path deeper than 64 levels");
}

template <tree::KeyValueTraits KV>
bool DexTree<KV>::ParentHeader(Worker& w, const cache::OptimisticGuard& parent, Header* ph) {
  if (parent.frame() == &compute_node(w.cn).meta) {  // above the root: only its level says so
    *ph = Header{};
    ph->level = kMetaLevel;
    return parent.Validate();
  }
  if constexpr (kSlotted<KV>) {
    page_layout_.CopyHeader(parent.page(), w.copy.data());
    if (!parent.Validate()) return false;
    *ph = DecodeHeader(w.copy.data());
    return true;
  } else {
    page_layout_.HeaderInPlace(parent.page(), ph);
    return parent.Validate();
  }
}

// Inline: Descend, its one caller, runs it once per level of every operation.
template <tree::KeyValueTraits KV>
[[gnu::always_inline]] inline bool DexTree<KV>::SearchCachedInternal(Worker& w, const cache::OptimisticGuard& node, const Header& h, KeyRef key,
                                       int* idx, Key* low, Key* high) const {
  const auto& internal = shared_.validator.internal();
  const uint32_t count = internal.Count(h);
  if constexpr (kSlotted<KV>) {
    CopyPage(node.page(), w.copy.data(), page_layout_.InternalBytes(h));
    if (!node.Validate()) return false;
    *idx = internal.ChildIndexFor(w.copy.data(), h, key);
    *low = *idx < 0 ? h.low : internal.KeyAt(w.copy.data(), h, static_cast<uint32_t>(*idx));
    *high = *idx + 1 < static_cast<int>(count) ? internal.KeyAt(w.copy.data(), h, static_cast<uint32_t>(*idx + 1))
                                               : h.high;
    return true;
  } else {
    // Indices below Count(h) (the node's capacity at most) whatever the page holds; nothing
    // read is used before the validation says the page did not change since `node` was taken.
    *idx = page_layout_.ChildIndexInPlace(node.page(), count, key);
    *low = *idx < 0 ? h.low : page_layout_.SeparatorInPlace(node.page(), static_cast<uint32_t>(*idx));
    *high = *idx + 1 < static_cast<int>(count) ? page_layout_.SeparatorInPlace(node.page(), static_cast<uint32_t>(*idx + 1))
                                               : h.high;
    return node.Validate();
  }
}

template <tree::KeyValueTraits KV>
bool DexTree<KV>::FindInCachedLeaf(Worker& w, const cache::OptimisticGuard& leaf, const Header& h, KeyRef key,
                                   int* slot) const {
  if constexpr (!kSlotted<KV>) {
    if (!h.unsorted()) {
      *slot = page_layout_.FindInPlace(leaf.page(), h.count, key);
      if (*slot >= 0) {  // the slot's words, for the codec to decode once they validate
        const uint32_t off = layout_.SlotOffset(static_cast<uint32_t>(*slot));
        CopyPage(leaf.page() + off, w.copy.data() + off, Layout::kSlotBytes);
      }
      w.Read(leaf.frame());
      return leaf.Validate();
    }
  }
  CopyPage(leaf.page(), w.copy.data(), page_layout_.LeafBytes(h));
  w.Read(leaf.frame());
  if (!leaf.Validate()) return false;
  *slot = shared_.validator.leaf().Find(w.copy.data(), h, key);
  return true;
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Offload(Worker& w, cache::OptimisticGuard& parent, GlobalAddress child, uint32_t level,
                            const OffloadRequest<KV>& req, LeafAt* out) {
  ComputeNode& cn = compute_node(w.cn);
  // Only a subtree this compute node owns alone can be finished elsewhere (§6).
  CopyPage(parent.page(), w.copy.data(), layout_.node_bytes);
  if (!parent.Validate()) return RetryStatus();
  const Header ph = DecodeHeader(w.copy.data());
  const auto& internal = shared_.validator.internal();
  const int idx = internal.ChildIndexFor(w.copy.data(), ph, req.key);
  const Key lo = idx < 0 ? ph.low : internal.KeyAt(w.copy.data(), ph, static_cast<uint32_t>(idx));
  const Key hi = idx + 1 < static_cast<int>(internal.Count(ph))
                     ? internal.KeyAt(w.copy.data(), ph, static_cast<uint32_t>(idx + 1))
                     : ph.high;
  // The parent must be ours too: below a shared parent, an owned subtree may hold cached
  // nodes that a refresh (or a split of that parent) left unswizzled, dirty ones included,
  // which the memory server cannot see. Below an owned parent, an uncached node proves
  // that nothing of its subtree is in use or dirty here (path-aware caching, §6.2).
  if (!Owned(w, ph) || !w.map->Owns(w.cn, lo, hi)) return Status::NotSupported("shared subtree");
  // A write registers the subtree root as busy (I/O flag): nobody loads, changes or offloads
  // into the subtree until the reply (§6.2). A lookup changes nothing and registers nothing,
  // so operations on a hot node do not queue behind it (docs/SYNCHRONIZATION.md, "DEX's
  // offloaded lookups"). Either pins the parent.
  if (req.op != OffloadOp::kLookup) {
    Status claim = cn.bm->ClaimTransient(child, w.cw);
    if (!claim.ok()) return claim;
  }
  parent.frame()->pins.fetch_add(1, std::memory_order_acq_rel);
  struct Unpin {
    cache::BufferFrame* f;
    ~Unpin() { f->pins.fetch_sub(1, std::memory_order_acq_rel); }
  } unpin{parent.frame()};
  if (!parent.Validate()) return RetryStatus();
  EncodeRequest<KV>(req, shared_.options, child, static_cast<uint8_t>(level), &w.request);
  fabric::RpcReply reply;
  const bool timed = cn.offload.SampleLatency(w.latency_countdown);
  const uint64_t t0 = timed ? NowNs() : 0;
  Status s = w.ctx.ep.Call(child.node(), kOffloadOpcode, w.request, &reply);
  if (s.IsInvalidArgument()) {  // the memory server has no handler
    cn.offload.Disable();
    return Status::NotSupported("no offload handler");
  }
  DMX_RETURN_IF_ERROR(s);
  if (timed) cn.offload.RecordOffload(NowNs() - t0);
  OffloadReply<KV>& r = out->result;
  DMX_RETURN_IF_ERROR(DecodeReply<KV>(reply, &r));
  if (r.r.outcome == OffloadResult::kFallback) {
    cn.offload.fallbacks.fetch_add(1, std::memory_order_relaxed);
    w.no_offload = true;  // take the normal path on the restart
    return RetryStatus();
  }
  cn.offload.offloads.fetch_add(1, std::memory_order_relaxed);
  cn.offload.CountMiss(child);
  cn.bm->Touch(child, parent.frame()->remote(), w.cw);  // an access all the same (policy=lfu)
  if (req.op == OffloadOp::kLookup) {
    // Answered from the pool's image of a leaf, which may hold a non-admitted write of this
    // compute node whose record is still in flight.
    if (r.r.written == 0) return Status::Corruption("dex offload: a lookup's reply names no leaf");
    DMX_RETURN_IF_ERROR(CheckPoolImage(w, GlobalAddress::FromRaw(r.r.written)));
  } else if (r.r.written != 0) {
    // Cached copies of what the memory server changed are stale now (§6.2).
    DMX_RETURN_IF_ERROR(cn.bm->Invalidate(GlobalAddress::FromRaw(r.r.written), w.cw));
  }
  if (r.r.parent_written != 0)
    DMX_RETURN_IF_ERROR(cn.bm->Invalidate(GlobalAddress::FromRaw(r.r.parent_written), w.cw));
  if (r.r.split_here != 0 || r.r.split_sibling != 0) cn.offload.splits.fetch_add(1, std::memory_order_relaxed);
  if (r.r.split_sibling != 0) {
    // The split leaf was the subtree root: its parent is the pinned one here. Link the new
    // sibling now; if that must wait (the parent changed or is full), the leaf stays a valid
    // half split, which the next traversal through it finishes (FinishSplit).
    Status linked = LinkHalfSplit(w, parent, r.separator, GlobalAddress::FromRaw(r.r.split_sibling));
    if (!linked.ok() && !IsRetry(linked)) return linked;
  }
  out->offloaded = true;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
IndexStats DexTree<KV>::Stats() const {
  IndexStats s;
  for (const auto& n : nodes_) {
    const cache::CacheStats c = n->bm->Stats();
    s.cache_hits += c.hits;
    s.cache_misses += c.misses;
    s.cache_bytes += c.frames * layout_.node_bytes;
    // Nodes and blocks allocated and not freed (retired ones too), not the servers' chunks;
    // plus the right halves of the leaves offloaded inserts split: the memory server
    // allocated each (one node), this compute node frees them (its allocator's count may go
    // below zero, the sum stays exact).
    s.pool_bytes += n->core.allocator.bytes_in_use() +
                    n->offload.splits.load(std::memory_order_relaxed) * layout_.node_bytes;
    s.retries += n->core.retries.load(std::memory_order_relaxed);
  }
  return s;
}

template <tree::KeyValueTraits KV>
std::vector<std::pair<std::string, uint64_t>> DexTree<KV>::Counters() const {
  uint64_t offload_splits = 0;
  uint64_t offloads = 0, hot_reads = 0, private_reads = 0, fallbacks = 0, merges = 0, shared_merges = 0, root_shrinks = 0,
           reused = 0, finished_splits = 0, log_appends = 0, log_bytes = 0, checkpoints = 0, replayed = 0, log_ring = 0,
           record_waits = 0, record_reposts = 0;
  for (const auto& n : nodes_) {
    offloads += n->offload.offloads.load(std::memory_order_relaxed);
    hot_reads += n->offload.hot_reads.load(std::memory_order_relaxed);
    private_reads += n->offload.private_reads.load(std::memory_order_relaxed);
    fallbacks += n->offload.fallbacks.load(std::memory_order_relaxed);
    offload_splits += n->offload.splits.load(std::memory_order_relaxed);
    merges += n->retired.merges.load(std::memory_order_relaxed);
    shared_merges += n->retired.shared_merges.load(std::memory_order_relaxed);
    root_shrinks += n->retired.root_shrinks.load(std::memory_order_relaxed);
    reused += n->retired.reused.load(std::memory_order_relaxed);
    finished_splits += n->finished_splits.load(std::memory_order_relaxed);
    log_appends += n->log_appends.load(std::memory_order_relaxed);
    log_bytes += n->log_bytes.load(std::memory_order_relaxed);
    checkpoints += n->checkpoints.load(std::memory_order_relaxed);
    replayed += n->replayed.load(std::memory_order_relaxed);
    record_waits += n->record_waits.load(std::memory_order_relaxed);
    record_reposts += n->record_reposts.load(std::memory_order_relaxed);
    if (n->log) log_ring += RedoLog::BlockBytes(n->log->capacity());
  }
  return {{"dmindex.dex.offloads", offloads},
          {"dmindex.dex.offload-fallbacks", fallbacks},
          {"dmindex.dex.hot-reads", hot_reads},
          {"dmindex.dex.private-reads", private_reads},
          {"dmindex.dex.offload-splits", offload_splits},
          {"dmindex.dex.merges", merges},
          {"dmindex.dex.shared-merges", shared_merges},
          {"dmindex.dex.root-shrinks", root_shrinks},
          {"dmindex.dex.reused-blocks", reused},
          {"dmindex.dex.finished-splits", finished_splits},
          {"dmindex.dex.pending-value-blocks", pending_.size()},
          {"dmindex.dex.log-appends", log_appends},
          {"dmindex.dex.log-bytes", log_bytes},
          {"dmindex.dex.checkpoints", checkpoints},
          {"dmindex.dex.replayed-keys", replayed},
          {"dmindex.dex.record-waits", record_waits},
          {"dmindex.dex.record-reposts", record_reposts},
          {"dmindex.dex.log-ring-bytes", log_ring},  // of Stats().pool_bytes: fixed, not the keys'
          {"dmindex.locks.takeovers", shared_.lock.takeovers()},  // shared nodes' locks (as the core's)
          {"dmindex.locks.repairs", shared_.lock.repairs()}};
}

template struct DexComputeNode<U64Format>;
template struct DexComputeNode<BytesFormat>;
template struct DexWorker<U64Format>;
template struct DexWorker<BytesFormat>;
template class DexTree<U64Format>;
template class DexTree<BytesFormat>;

}  // namespace dmindex::designs::dex
