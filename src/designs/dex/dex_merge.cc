// Merges (DEX §7, delete): a delete that leaves an owned node underfull merges it with an
// adjacent sibling under the same owned parent, in the cache, under the exclusive latches of
// parent, left and right (LeanStore-style, taken by upgrading the optimistic guards of one
// traversal, so contention just skips the merge). The right node always goes: the left one
// absorbs its entries, high fence and sibling link, the parent loses the separator. Nothing
// else points to the right node (its left neighbour at that level is the left node), so no
// other node changes. Then the parent is checked the same way, one level up; an owned root
// left with one child hands the root word to that child.
//
// The pool follows at the merge, in the only order that keeps it a B-link tree a reader of
// the pool alone can use at every step (docs/DEX.md, "What may reach the pool"): the parent
// without R's separator (R still reachable through L's old sibling link), L covering R's
// range, R dead. Cooling writes children before parents - right for splits, wrong here.
//
// Under a SHARED parent (near a partition boundary or the root) §7's rule, as for splits
// (dex_split.cc): the parent's remote lock, proceed only if the cached copy has the same
// version (else no merge: refresh the path), write the left node through, write the parent
// without the separator and unlock, refresh the cached parent. Shared nodes themselves never
// merge (the core's lazy deletion), so a shared parent may stay underfull.
//
// Who may still hold the address of the node that went (R), and why reuse of its block is
// safe:
//  * optimistic readers in this compute node hold R's frame (the latch version tells them)
//    or R's address read from the parent; every use of such an address is validated against
//    the parent's version (Probe, Load's upgrade or validation, Reheat, the offload claim),
//    which the merge bumped. Frames are never freed to the system.
//  * R's remote image is overwritten with a DEAD image before R leaves the mapping table,
//    so a thread that READs R afterwards (a cached stale shared ancestor in this or another
//    compute node routes to it, or a racing Load) sees kFlagDead: NodePages::Load refuses it
//    (restart and refresh), and no stale copy of R can enter the cache. Without that, a stale
//    path could reach R's old image, whose fences still cover its keys: a zombie leaf.
//  * the memory-side offload handler starts only at a child that the compute node claimed in
//    its mapping table and validated under a pinned parent; a merge needs both children
//    cached (so not claimed) and never drops a pinned node. Subtrees it walks are uncached,
//    hence untouched by merges.
//  * other compute nodes: R was owned by this compute node, so another one that reaches
//    R's block treats it as stale (dead, or fences owned by someone else) and refreshes.
// The block is reused only for a node this compute node creates in its own cache
// (NewCachedNode, for splits): that node is in the mapping table before its block holds
// anything but the dead image, so any stale pointer to the block either finds the cached
// node (authoritative) or a dead / foreign-owned image. It is NOT returned to the shared
// allocator: the core's remote splits and root growth would publish a node there from its
// remote image alone, and a stale pointer could reach a split's new right leaf before its
// left neighbour shrinks. So the check words (XXH3 over header, version and fences) are not
// what we rely on: they catch torn images, the dead flag and ownership catch stale ones.
#include <algorithm>
#include <atomic>

#include "common/pool_memory.h"
#include "common/retry_status.h"
#include "designs/dex/dex_tree.h"
#include "designs/dex/fill_policy.h"

namespace dmindex::designs::dex {
namespace {

// Whether `a` (an entry's child word or leftmost) points to frame f, swizzled or not.
bool Holds(uint64_t raw, const cache::BufferFrame* f) {
  const cache::Swip s = cache::Swip::FromRaw(raw);
  return s == cache::Swip::Local(f) || s == cache::Swip::Remote(f->remote());
}

}  // namespace

template <tree::KeyValueTraits KV>
bool DexTree<KV>::UnderfullNode(const std::byte* copy, const Header& h) const {
  return h.is_leaf() ? Underfull(shared_.validator.leaf().Used(copy, h), shared_.validator.leaf().Capacity(h))
                     : Underfull(shared_.validator.internal().Used(h), shared_.validator.internal().Capacity(h));
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::MergeAfterDelete(Worker& w, KeyRef key) {
  if (!options_.merge) return Status::Ok();
  for (uint8_t level = 0; level < 64; ++level) {
    bool merged = false;
    Attempts attempts(retry_limits::kDexMerge, "dex merge");
    for (;;) {
      // An optional merge that keeps meeting concurrent changes is skipped, not failed.
      if (attempts.made >= retry_limits::kDexMerge.attempts) return w.cw.EndOperation();
      DMX_RETURN_IF_ERROR(BeforeRetry(w, key, attempts));
      LeafAt at;
      at.stop_level = level;
      Status s = Descend(w, key, Intent::kRead, nullptr, &at);
      if (IsRetry(s)) continue;
      if (s.ok() && at.h.level == level) s = MergeAt(w, at, &merged);
      Status end = w.cw.EndOperation();  // a merged transient left node is written back here
      if (IsRetry(s)) continue;
      if (s.IsNotFound()) return end;  // empty tree
      DMX_RETURN_IF_ERROR(s);
      DMX_RETURN_IF_ERROR(end);
      break;
    }
    if (!merged) break;
  }
  if (!w.need_refresh) return Status::Ok();
  w.need_refresh = false;  // a stale shared node kept us from merging: refresh it now
  return RefreshPath(w, key);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::MergeAt(Worker& w, LeafAt& at, bool* merged) {
  *merged = false;
  if (!at.owned) return Status::Ok();
  ComputeNode& cn = compute_node(w.cn);
  const auto& internal = shared_.validator.internal();
  CopyPage(at.leaf.page(), w.image.data(), layout_.node_bytes);
  if (!at.leaf.Validate()) return RetryStatus();
  if (!UnderfullNode(w.image.data(), at.h)) return Status::Ok();
  CopyPage(at.parent.page(), w.copy.data(), layout_.node_bytes);
  if (!at.parent.Validate()) return RetryStatus();
  const Header ph = DecodeHeader(w.copy.data());
  if (ph.level == kMetaLevel) return ShrinkRoot(w, at, merged);
  const int count = static_cast<int>(internal.Count(ph));
  if (count == 0) return Status::Ok();  // no sibling under this parent
  // The node is the child covering its own low fence; merge it with its right neighbour,
  // or with its left one if it is the last child.
  const int index = internal.ChildIndexFor(w.copy.data(), ph, at.h.low);
  const int left = index + 1 < count ? index : index - 1;
  const int sibling = left == index ? index + 1 : index - 1;
  const uint64_t* slot =
      page_layout_.ChildSlot(at.parent.frame()->page, NodePageLayout<KV>::SlotIndex(sibling));
  auto sg = cn.bm->Resolve(at.parent, slot, at.h.is_leaf(), w.cw, w.pages);
  if (w.pages.stale()) w.need_refresh = true;
  if (!sg.ok()) return sg.status().IsInvalidArgument() ? Status::Ok() : sg.status();
  cache::ExclusiveGuard px = cache::ExclusiveGuard::TryUpgrade(at.parent);
  if (!px.owns()) return RetryStatus();
  cache::ExclusiveGuard lx = cache::ExclusiveGuard::TryUpgrade(left == index ? at.leaf : *sg);
  if (!lx.owns()) return RetryStatus();
  cache::ExclusiveGuard rx = cache::ExclusiveGuard::TryUpgrade(left == index ? *sg : at.leaf);
  if (!rx.owns()) return RetryStatus();
  return MergeSiblings(w, px, lx, rx, left, merged);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::MergeSiblings(Worker& w, cache::ExclusiveGuard& parent,
                              cache::ExclusiveGuard& left, cache::ExclusiveGuard& right,
                              int left_index, bool* merged) {
  const auto& internal = shared_.validator.internal();
  const uint32_t nb = layout_.node_bytes;
  std::byte* pcopy = w.copy.data();
  std::byte* lcopy = w.ctx.sibling();
  std::byte* rcopy = w.ctx.scratch();
  CopyPage(parent.page(), pcopy, nb);
  CopyPage(left.page(), lcopy, nb);
  CopyPage(right.page(), rcopy, nb);
  const Header ph = DecodeHeader(pcopy), lh = DecodeHeader(lcopy), rh = DecodeHeader(rcopy);
  const GlobalAddress raddr = right.frame()->remote();
  // Everything again from what the latches hold: still parent and adjacent children, ours.
  auto& entries = w.internal_entries;
  entries.clear();
  internal.Collect(pcopy, ph, &entries);
  const size_t ri = static_cast<size_t>(left_index + 1);  // the right child's entry
  if (ri >= entries.size()) return Status::Ok();
  const uint64_t lword = left_index < 0 ? ph.leftmost.raw() : entries[left_index].child.raw();
  if (ph.level != lh.level + 1 || lh.level != rh.level || lh.dead() || rh.dead() ||
      !Holds(lword, left.frame()) || !Holds(entries[ri].child.raw(), right.frame()) ||
      entries[ri].key != rh.low || lh.high != rh.low || lh.sibling != raddr ||
      !Owned(w, lh) || !Owned(w, rh))
    return Status::Ok();
  if (!UnderfullNode(lcopy, lh) && !UnderfullNode(rcopy, rh)) return Status::Ok();
  // The result must leave room, or the next inserts split it again (ping-pong); an empty
  // node may always go.
  if (!BuildMerged(w, lh, lcopy, rh, rcopy)) return Status::Ok();
  // A pinned node is the parent of a page some operation uses without admission, or of an
  // offloaded subtree: it must stay (its pin is what keeps that subtree's ancestors cached).
  // Pairs with the pinner's increment-then-validate.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (right.frame()->pins.load(std::memory_order_seq_cst) != 0) return Status::Ok();
  // Splits of L or R that the pool does not show yet go there first, so that the pool's
  // images of both have the fences of their cached ones (and R's cached children that split
  // go with them): the steps below then take the pool from one well-formed tree to another.
  DMX_RETURN_IF_ERROR(PublishSplits(w, left));
  DMX_RETURN_IF_ERROR(PublishSplits(w, right));
  if (!Owned(w, ph)) return MergeUnderSharedParent(w, parent, ph, left, lh, right, rh, merged);

  AbsorbRight(w, left, lh, right);
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(ri));  // the parent forgets R
  if (!internal.Build(w.image.data(), ph, entries))
    return Status::Corruption("dex: a parent without one separator does not fit its node");
  CopyToPool(parent.page(), w.image.data(), nb);
  parent.MarkDirty();
  // The pool follows in B-link order (docs/DEX.md, "What may reach the pool"): first the
  // parent without R's separator (R is still reachable from L's old image, which ends where R
  // starts), then L covering R's range (R unreachable now), then R dead - whatever reads R's
  // block from now on restarts. Written through here: cooling writes children before parents,
  // the wrong order for a merge.
  Status published = WriteThrough(w, parent);
  if (published.ok()) published = WriteThrough(w, left);
  if (published.ok()) published = WriteDead(w, raddr, rh);
  if (!published.ok()) return Unlinked(right, published);
  w.pages.RetirePending(raddr);  // R's image in the pool is dead: it names no value block
  Retire(w, right);
  compute_node(w.cn).retired.merges.fetch_add(1, std::memory_order_relaxed);
  *merged = true;
  return Status::Ok();
}

// A merge whose writes failed (the memory server is unreachable): R's frame stays cached,
// linked from nowhere in the cache, and is not retired (the pool may still reach its block).
template <tree::KeyValueTraits KV>
Status DexTree<KV>::Unlinked(cache::ExclusiveGuard& right, Status failure) {
  right.frame()->parent.store(nullptr, std::memory_order_release);
  return failure;
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::PublishSplits(Worker& w, cache::ExclusiveGuard& node) {
  if (!node.frame()->precedes_parent.load(std::memory_order_acquire)) return Status::Ok();
  return WriteThrough(w, node);
}

template <tree::KeyValueTraits KV>
bool DexTree<KV>::BuildMerged(Worker& w, const Header& lh, const std::byte* lcopy, const Header& rh,
                              const std::byte* rcopy) {
  Header mh = lh;
  mh.high = rh.high;
  mh.sibling = rh.sibling;
  bool built;
  if (lh.is_leaf()) {
    const auto& leaf = shared_.validator.leaf();
    w.leaf_entries.clear();
    leaf.Collect(lcopy, lh, &w.leaf_entries);
    leaf.Collect(rcopy, rh, &w.leaf_entries);
    built = leaf.Build(w.image.data(), mh, w.leaf_entries, /*unsorted=*/false);
  } else {
    const auto& internal = shared_.validator.internal();
    std::vector<InternalEntry> both;  // not w.internal_entries: the parent's, in use by the caller
    internal.Collect(lcopy, lh, &both);
    both.push_back({rh.low, rh.leftmost});  // swizzled or not, moved as is
    internal.Collect(rcopy, rh, &both);
    built = internal.Build(w.image.data(), mh, both);
  }
  if (!built) return false;
  mh = DecodeHeader(w.image.data());
  const uint32_t used = lh.is_leaf() ? shared_.validator.leaf().Used(w.image.data(), mh)
                                     : shared_.validator.internal().Used(mh);
  const uint32_t capacity = lh.is_leaf() ? shared_.validator.leaf().Capacity(mh)
                                         : shared_.validator.internal().Capacity(mh);
  return MergeLeavesRoom(used, capacity, lh.count == 0 || rh.count == 0);
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::AbsorbRight(Worker& w, cache::ExclusiveGuard& left, const Header& lh,
                              const cache::ExclusiveGuard& right) {
  CopyToPool(left.page(), w.image.data(), layout_.node_bytes);
  // R's keys move left: so does the wait for their records (log_watermark.h).
  const uint64_t rend = right.frame()->redo_end.load(std::memory_order_relaxed);
  if (rend > left.frame()->redo_end.load(std::memory_order_relaxed))
    left.frame()->redo_end.store(rend, std::memory_order_relaxed);
  // R's swizzled children now hang below L. R's frame goes only after this: a cooler that
  // gets R's latch must not find children that still name R as their parent.
  if (!lh.is_leaf()) compute_node(w.cn).bm->Adopt(left);
  left.MarkDirty();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::MergeUnderSharedParent(Worker& w, cache::ExclusiveGuard& parent,
                                       const Header& ph, cache::ExclusiveGuard& left,
                                       const Header& lh, cache::ExclusiveGuard& right,
                                       const Header& rh, bool* merged) {
  const auto& internal = shared_.validator.internal();
  const GlobalAddress paddr = parent.frame()->remote();
  const GlobalAddress laddr = left.frame()->remote(), raddr = right.frame()->remote();
  tree::NodeLockGuard guard(shared_.lock, w.ctx.ep);
  Header fh;
  bool valid = false;
  DMX_RETURN_IF_ERROR(LockRemote(w, paddr, guard, &fh, &valid));
  // §7: only if the cached parent is the current one; otherwise refresh, no merge.
  auto& entries = w.internal_entries;
  entries.clear();
  if (valid) internal.Collect(w.ctx.node(), fh, &entries);
  size_t ri = 0;
  while (ri < entries.size() && entries[ri].child != raddr) ++ri;
  if (!valid || fh.dead() || fh.version != ph.version || fh.level != lh.level + 1 ||
      !Shared(w, fh) || ri == entries.size() ||
      entries[ri].key != rh.low || (ri == 0 ? fh.leftmost : entries[ri - 1].child) != laddr) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    w.need_refresh = true;
    return Status::Ok();
  }
  // As under an owned parent (MergeSiblings): the parent without R's separator, then L
  // covering R's range, then R dead.
  AbsorbRight(w, left, lh, right);
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(ri));
  Header nh = fh;
  nh.version = w.ctx.NewVersion(fh.version);
  if (!internal.Build(w.image.data(), nh, entries))
    return Status::Corruption("dex: a shared parent without one separator does not fit its node");
  fabric::Verb write = fabric::Verb::Write(paddr, w.image.data(), layout_.node_bytes);
  DMX_RETURN_IF_ERROR(guard.WriteAndUnlock({&write, 1}));
  compute_node(w.cn).bm->Refresh(parent, w.image.data());  // R's frame becomes an orphan
  Status published = WriteThrough(w, left);
  if (published.ok()) published = WriteDead(w, raddr, rh);
  if (!published.ok()) return Unlinked(right, published);
  w.pages.RetirePending(raddr);  // R's image in the pool is dead: it names no value block
  Retire(w, right);
  compute_node(w.cn).retired.merges.fetch_add(1, std::memory_order_relaxed);
  compute_node(w.cn).retired.shared_merges.fetch_add(1, std::memory_order_relaxed);
  *merged = true;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ShrinkRoot(Worker& w, LeafAt& at, bool* merged) {
  // An owned inner root with a single child: the child becomes the root. Only when this
  // compute node owns every key (one partition); a shared root's height stays.
  if (at.h.is_leaf() || shared_.validator.internal().Count(at.h) != 0) return Status::Ok();
  ComputeNode& cn = compute_node(w.cn);
  cache::ExclusiveGuard mx = cache::ExclusiveGuard::TryUpgrade(at.parent);
  if (!mx.owns()) return RetryStatus();
  cache::ExclusiveGuard rootx = cache::ExclusiveGuard::TryUpgrade(at.leaf);
  if (!rootx.owns()) return RetryStatus();
  page_layout_.CopyHeader(rootx.page(), w.copy.data());
  const Header h = DecodeHeader(w.copy.data());
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h.is_leaf() || h.count != 0 || !Owned(w, h) ||
      rootx.frame()->pins.load(std::memory_order_seq_cst) != 0)
    return Status::Ok();
  // The child must be cached here: it is written through, so that the root word never
  // points at an outdated image (RefreshPath and the core's root growth read it remotely).
  const cache::Swip cs = cache::Swip::Load(page_layout_.ChildSlot(rootx.page(), 0));
  if (!cs.swizzled()) return Status::Ok();
  cache::ExclusiveGuard cx = cache::ExclusiveGuard::TryLock(cs.frame());
  if (!cx.owns()) return RetryStatus();
  DMX_RETURN_IF_ERROR(WriteThrough(w, cx));
  const GlobalAddress old_root = rootx.frame()->remote();
  uint64_t seen = 0;
  DMX_RETURN_IF_ERROR(w.ctx.ep.Cas(shared_.root_word, old_root.raw(), cx.frame()->remote().raw(), &seen));
  if (seen != old_root.raw()) return Status::Ok();  // the root moved meanwhile: leave it
  cn.bm->Attach(mx, page_layout_.ChildSlot(mx.page(), 0), cx);
  rootx.MarkDirty();  // in case the dead image below does not land: see MergeSiblings
  DMX_RETURN_IF_ERROR(WriteDead(w, old_root, h));
  Retire(w, rootx);
  cn.retired.root_shrinks.fetch_add(1, std::memory_order_relaxed);
  *merged = true;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::WriteDead(Worker& w, GlobalAddress addr, const Header& h) {
  Header dh;
  dh.version = w.ctx.NewVersion(h.version);
  dh.level = h.level;
  dh.flags = tree::kFlagDead;
  dh.low = h.low;
  dh.high = h.high;
  const bool built = h.is_leaf() ? shared_.validator.leaf().Build(w.image.data(), dh, {}, /*unsorted=*/false)
                                 : shared_.validator.internal().Build(w.image.data(), dh, {});
  if (!built) return Status::Corruption("dex: a dead node's image does not fit a node");
  return w.ctx.ep.Write(addr, w.image.data(), layout_.node_bytes);
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::Retire(Worker& w, cache::ExclusiveGuard& node) {
  ComputeNode& cn = compute_node(w.cn);
  const GlobalAddress addr = node.frame()->remote();
  cn.bm->Discard(node, w.cw);
  cn.retired.Put(addr);
}

template <tree::KeyValueTraits KV>
Result<cache::ExclusiveGuard> DexTree<KV>::NewCachedNode(Worker& w, uint16_t memory_node) {
  ComputeNode& cn = compute_node(w.cn);
  GlobalAddress block;
  if (cn.retired.Take(memory_node, &block)) {
    // Still registered in the mapping table (a racing traversal claimed or is reading the
    // old address and will restart): reuse it another time.
    if (cn.bm->Lookup(block) == nullptr) {
      auto g = cn.bm->AllocateNew(block, w.cw);
      if (g.ok()) {
        cn.retired.reused.fetch_add(1, std::memory_order_relaxed);
        return g;
      }
    }
    cn.retired.Put(block);
  }
  auto fresh = cn.core.allocator.AllocateOn(w.ctx.ep, memory_node, layout_.node_bytes);
  if (!fresh.ok()) return fresh.status();
  auto g = cn.bm->AllocateNew(*fresh, w.cw);
  if (!g.ok()) cn.core.allocator.Free(*fresh, layout_.node_bytes);
  return g;
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_MERGE(KV)                                                                                  \
  template bool DexTree<KV>::UnderfullNode(const std::byte*, const Header&) const;                        \
  template Status DexTree<KV>::MergeAfterDelete(Worker&, KeyRef);                                          \
  template Status DexTree<KV>::MergeAt(Worker&, LeafAt&, bool*);                                           \
  template Status DexTree<KV>::MergeSiblings(Worker&, cache::ExclusiveGuard&, cache::ExclusiveGuard&,      \
                                             cache::ExclusiveGuard&, int, bool*);                          \
  template Status DexTree<KV>::Unlinked(cache::ExclusiveGuard&, Status);                                   \
  template Status DexTree<KV>::PublishSplits(Worker&, cache::ExclusiveGuard&);                             \
  template bool DexTree<KV>::BuildMerged(Worker&, const Header&, const std::byte*, const Header&,          \
                                         const std::byte*);                                                \
  template void DexTree<KV>::AbsorbRight(Worker&, cache::ExclusiveGuard&, const Header&,                   \
                                          const cache::ExclusiveGuard&);                                   \
  template Status DexTree<KV>::MergeUnderSharedParent(Worker&, cache::ExclusiveGuard&, const Header&,      \
                                                      cache::ExclusiveGuard&, const Header&,               \
                                                      cache::ExclusiveGuard&, const Header&, bool*);       \
  template Status DexTree<KV>::ShrinkRoot(Worker&, LeafAt&, bool*);                                        \
  template Status DexTree<KV>::WriteDead(Worker&, GlobalAddress, const Header&);                           \
  template void DexTree<KV>::Retire(Worker&, cache::ExclusiveGuard&);                                      \
  template Result<cache::ExclusiveGuard> DexTree<KV>::NewCachedNode(Worker&, uint16_t);
DMX_DEX_MERGE(U64Format)
DMX_DEX_MERGE(BytesFormat)
#undef DMX_DEX_MERGE

}  // namespace dmindex::designs::dex
