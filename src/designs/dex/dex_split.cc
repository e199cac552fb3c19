// Structure changes (§7, insert): eager splits of full owned nodes in the cache, and the
// shared-parent rule. Who may change what:
//  * an owned node and its new sibling are changed in the cache, under the local latches of
//    the node and its parent; the new sibling's image is written at once (nothing may link a
//    block that holds no node), the node itself later, but before its parent (it is marked
//    precedes_parent): docs/DEX.md, "What may reach the pool";
//  * a shared parent is changed remotely, under its remote lock, and only if the cached copy
//    the traversal used is up to date (same version) - otherwise the path is refreshed from
//    the root and the insert retried. Before a shared parent points to them, the split node
//    and its sibling are written through, so remote memory holds whatever shared nodes
//    reference;
//  * a shared node that overflows is split by the core (tree/structure_modifier.h). Every
//    node the core then touches covers the split node's whole range, which crosses a
//    partition boundary, so it is shared too: the core never writes a node that a compute
//    node may hold dirty in its cache.
#include <algorithm>

#include "common/pool_memory.h"
#include "common/retry_status.h"
#include "designs/dex/dex_tree.h"
#include "tree/split.h"

namespace dmindex::designs::dex {
namespace {

// The node size rule (tree/slotted_layout.h: SlottedLayout::MinNodeBytes) guarantees that both
// halves of a split fit: a half that does not is a broken invariant, not a full pool.
template <typename Header>
Status SplitDoesNotFit(const Header& h) {
  return Status::Corruption("dex: a half of a split node of level " + std::to_string(h.level) +
                            " does not fit a node (the node size rule is broken)");
}

}  // namespace

template <tree::KeyValueTraits KV>
bool DexTree<KV>::Full(const std::byte* copy, const Header& h) const {
  return h.is_leaf() ? !shared_.validator.leaf().HasRoom(copy, h) : !shared_.validator.internal().HasRoom(h);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::SplitChild(Worker& w, cache::OptimisticGuard& parent,
                           cache::OptimisticGuard& child) {
  // The new sibling's frame is set aside before any latch is taken: freeing one may need the
  // latch of the parent (to unswizzle a child from it) or of the child, and with both held
  // a cache whose frames all hang below this parent could never free one - the split, and
  // every operation waiting for its compute node's gate, would stall (docs/SYNCHRONIZATION.md,
  // "DEX's cached pages"). Sampling may cool the parent or child: the upgrade then fails and
  // the caller restarts, with the frame still reserved.
  DMX_RETURN_IF_ERROR(compute_node(w.cn).bm->ReserveFrame(w.cw));
  cache::ExclusiveGuard px = cache::ExclusiveGuard::TryUpgrade(parent);
  if (!px.owns()) return Status::Ok();  // changed meanwhile: the caller restarts
  cache::ExclusiveGuard cx = cache::ExclusiveGuard::TryUpgrade(child);
  if (!cx.owns()) return Status::Ok();
  CopyPage(cx.page(), w.copy.data(), layout_.node_bytes);
  const Header ch = DecodeHeader(w.copy.data());
  if (!Full(w.copy.data(), ch) || !Owned(w, ch)) return Status::Ok();
  page_layout_.CopyHeader(px.page(), w.copy.data());
  const Header ph = DecodeHeader(w.copy.data());
  if (ph.level == kMetaLevel) return SplitRoot(w, px, cx, ch);
  if (!Owned(w, ph)) return SplitUnderSharedParent(w, px, ph, cx, ch);
  // Eager splitting keeps owned parents below capacity (room for any separator) on the way
  // down of an insert; if this one filled up meanwhile - or the write is an update, whose
  // descent does not split (a longer value can overflow a slotted leaf) - the restart splits
  // it first.
  if (!shared_.validator.internal().HasRoom(ph)) {
    w.make_room = true;
    return Status::Ok();
  }
  Key separator;
  cache::ExclusiveGuard right;
  DMX_RETURN_IF_ERROR(SplitInCache(w, cx, ch, &separator, &right));
  return InsertIntoOwnedParent(w, px, separator, right);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::SplitInCache(Worker& w, cache::ExclusiveGuard& node, const Header& h,
                             Key* separator, cache::ExclusiveGuard* right) {
  ComputeNode& cn = compute_node(w.cn);
  const GlobalAddress addr = node.frame()->remote();
  // The sibling stays on the node's memory server: subtrees below level M stay together,
  // which offloading needs (§3).
  auto rg = NewCachedNode(w, addr.node());
  if (!rg.ok()) return rg.status();
  *right = std::move(*rg);
  // Keys move right: so does the wait for their records (log_watermark.h).
  right->frame()->redo_end.store(node.frame()->redo_end.load(std::memory_order_relaxed), std::memory_order_relaxed);
  const GlobalAddress raddr = right->frame()->remote();
  CopyPage(node.page(), w.copy.data(), layout_.node_bytes);
  Header rh;
  rh.version = w.ctx.NewVersion();
  rh.level = h.level;
  rh.high = h.high;
  rh.sibling = h.sibling;
  Header lh = h;
  lh.sibling = raddr;
  if (h.is_leaf()) {
    const auto& leaf = shared_.validator.leaf();
    w.leaf_entries.clear();
    leaf.Collect(w.copy.data(), h, &w.leaf_entries);
    auto split = leaf.Split(h, w.leaf_entries);
    rh.low = lh.high = *separator = split.separator;
    if (!leaf.Build(w.image.data(), rh, split.right, false)) return SplitDoesNotFit(h);
    CopyToPool(right->page(), w.image.data(), layout_.node_bytes);
    if (!leaf.Build(w.image.data(), lh, split.left, false)) return SplitDoesNotFit(h);
  } else {
    const auto& internal = shared_.validator.internal();
    w.internal_entries.clear();
    internal.Collect(w.copy.data(), h, &w.internal_entries);
    auto split = internal.Split(h, w.internal_entries);
    rh.low = lh.high = *separator = split.separator;
    rh.leftmost = split.right_leftmost;  // may be a swizzled pointer: it moves as is
    if (!internal.Build(w.image.data(), rh, split.right)) return SplitDoesNotFit(h);
    CopyToPool(right->page(), w.image.data(), layout_.node_bytes);
    if (!internal.Build(w.image.data(), lh, split.left)) return SplitDoesNotFit(h);
    cn.bm->Adopt(*right);  // swizzled children that moved get their new parent
  }
  // The new node's image reaches the pool now, before any image naming it (the node's own,
  // with its new sibling link, or the parent's, with the new separator) can: a block is only
  // ever linked once it holds a node (docs/DEX.md, "What may reach the pool"). Its children
  // that split since their last write-back go first (BufferManager::WriteBack).
  DMX_RETURN_IF_ERROR(cn.bm->WriteBack(right->frame(), w.cw));
  CopyToPool(node.page(), w.image.data(), layout_.node_bytes);
  // Narrowed: its parent's image with the new separator must not reach the pool before this
  // one, or the pool's old image of this node would still claim the moved keys.
  node.MarkDirtyBeforeParent();
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::InsertIntoOwnedParent(Worker& w, cache::ExclusiveGuard& parent, const Key& separator,
                                      cache::ExclusiveGuard& right) {
  const auto& internal = shared_.validator.internal();
  CopyPage(parent.page(), w.copy.data(), layout_.node_bytes);
  const Header ph = DecodeHeader(w.copy.data());
  w.internal_entries.clear();
  internal.Collect(w.copy.data(), ph, &w.internal_entries);
  const auto index = tree::InsertSeparator<KV>(w.internal_entries, separator, right.frame()->remote());
  if (!index) return Status::Corruption("dex: separator of a new split already in its parent");
  if (!internal.Build(w.image.data(), ph, w.internal_entries))
    return Status::Corruption("dex: a parent with room cannot take the separator of its child's split");
  CopyToPool(parent.page(), w.image.data(), layout_.node_bytes);
  compute_node(w.cn).bm->Attach(parent, page_layout_.ChildSlot(parent.page(), *index + 1), right);
  parent.MarkDirty();
  return Status::Ok();
}

// A split whose halves someone else may reach by their remote images (under a shared parent,
// or as the halves of a new root): both are written through (the new right half by
// SplitInCache) before anything links them.
template <tree::KeyValueTraits KV>
Status DexTree<KV>::SplitWrittenThrough(Worker& w, cache::ExclusiveGuard& node, const Header& h,
                                    Key* separator, cache::ExclusiveGuard* right) {
  DMX_RETURN_IF_ERROR(SplitInCache(w, node, h, separator, right));
  return WriteThrough(w, node);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::WriteThrough(Worker& w, cache::ExclusiveGuard& node) {
  return compute_node(w.cn).bm->WriteBack(node.frame(), w.cw);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::SplitUnderSharedParent(Worker& w, cache::ExclusiveGuard& parent,
                                       const Header& ph, cache::ExclusiveGuard& child,
                                       const Header& ch) {
  ComputeNode& cn = compute_node(w.cn);
  const auto& internal = shared_.validator.internal();
  const GlobalAddress paddr = parent.frame()->remote();
  tree::NodeLockGuard guard(shared_.lock, w.ctx.ep);
  Header fh;
  bool valid = false;
  DMX_RETURN_IF_ERROR(LockRemote(w, paddr, guard, &fh, &valid));
  // Proceed only if the cached parent is the current one (§7): same version, still the
  // parent of this child's range.
  if (!valid || fh.dead() || fh.version != ph.version ||
      fh.level != ch.level + 1 || !fh.Covers(ch.low) ||
      !Shared(w, fh)) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    w.need_refresh = true;
    return Status::Ok();
  }
  Key separator;
  cache::ExclusiveGuard right;
  DMX_RETURN_IF_ERROR(SplitWrittenThrough(w, child, ch, &separator, &right));
  const GlobalAddress raddr = right.frame()->remote();
  w.internal_entries.clear();
  internal.Collect(w.ctx.node(), fh, &w.internal_entries);
  if (!tree::InsertSeparator<KV>(w.internal_entries, separator, raddr))
    return Status::Corruption("dex: separator of a new split already in its shared parent");
  Header lh = fh;
  lh.version = w.ctx.NewVersion(fh.version);
  if (internal.Fits(lh, w.internal_entries)) {
    if (!internal.Build(w.image.data(), lh, w.internal_entries)) return SplitDoesNotFit(lh);
    fabric::Verb write = fabric::Verb::Write(paddr, w.image.data(), layout_.node_bytes);
    DMX_RETURN_IF_ERROR(guard.WriteAndUnlock({&write, 1}));
  } else {
    // The shared parent overflows: split it here, under its lock, and let the core insert
    // its separator one level up (that level covers the parent's whole, shared range).
    auto split = internal.Split(fh, w.internal_entries);
    auto praddr = cn.core.allocator.AllocateOn(w.ctx.ep, paddr.node(), layout_.node_bytes);
    if (!praddr.ok()) return praddr.status();
    Header rh;
    rh.version = w.ctx.NewVersion();
    rh.level = fh.level;
    rh.low = split.separator;
    rh.high = fh.high;
    rh.sibling = fh.sibling;
    rh.leftmost = split.right_leftmost;
    lh.high = split.separator;
    lh.sibling = *praddr;
    if (!internal.Build(w.ctx.sibling(), rh, split.right) || !internal.Build(w.image.data(), lh, split.left)) {
      cn.core.allocator.Free(*praddr, layout_.node_bytes);  // never written
      return SplitDoesNotFit(fh);
    }
    fabric::Verb writes[] = {fabric::Verb::Write(*praddr, w.ctx.sibling(), layout_.node_bytes),
                             fabric::Verb::Write(paddr, w.image.data(), layout_.node_bytes)};
    DMX_RETURN_IF_ERROR(guard.WriteAndUnlock(writes));
    DMX_RETURN_IF_ERROR(smo_.InsertSeparator(w.ctx, static_cast<uint8_t>(fh.level + 1),
                                             split.separator, *praddr));
  }
  // The cached parent takes the image just written (w.image: the core's separator insertion
  // reuses the context's buffers); the new sibling is swizzled into it if it stayed there.
  cn.bm->Refresh(parent, w.image.data());
  for (size_t i = 0, n = page_layout_.ChildCount(parent.page()); i < n; ++i) {
    uint64_t* slot = page_layout_.ChildSlot(parent.page(), i);
    if (cache::Swip::Load(slot) == cache::Swip::Remote(raddr)) {
      cn.bm->Attach(parent, slot, right);
      break;
    }
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::SplitRoot(Worker& w, cache::ExclusiveGuard& meta, cache::ExclusiveGuard& root,
                          const Header& h) {
  // The meta page may still point to a former root: the tree grew above it elsewhere (a
  // shared root split by the core, or by another compute node), and that split narrowed its
  // fences into this partition, so it is owned now. It is not the root and must not be split
  // as one: the core would find the tree grown already and leave the new half without a
  // separator, reachable only through a sibling link that DEX's traversal does not follow.
  // Point the meta page to the current root instead; the restart reaches the node through
  // its real parent and splits it under that.
  auto current = reader_.RefreshRoot(w.ctx);
  if (!current.ok()) return current.status();
  if (*current != root.frame()->remote()) {
    SetRoot(meta, *current);
    return Status::Ok();
  }
  // The owned root: this compute node owns every key, so nobody else splits it or grows the
  // tree above it. Split it in the cache, write both halves through and let the core grow a
  // new root over them.
  Key separator;
  cache::ExclusiveGuard right;
  DMX_RETURN_IF_ERROR(SplitWrittenThrough(w, root, h, &separator, &right));
  DMX_RETURN_IF_ERROR(smo_.GrowRoot(w.ctx, h.level));
  auto fresh = reader_.RefreshRoot(w.ctx);
  if (!fresh.ok()) return fresh.status();
  SetRoot(meta, *fresh);
  return Status::Ok();
}


// The traversal met a node whose high fence is at or below the key while the parent routed the
// key to it: the pool holds a split whose separator the parent does not show yet (a half
// split, docs/DEX.md "What may reach the pool"). Either its splitter is between writing the
// halves and the parent (a remote split of a shared node, or a shared-parent split, §7), or
// it died there - a compute process that wrote a narrowed page back before its parent and
// crashed leaves one for good. B-link readers move right; DEX's traversal, which only goes
// down, finishes the split instead, as its splitter would have:
//  * under an owned parent (ours, authoritative in this cache), the separator goes into the
//    cached parent, which is written back later like any change (the narrowed node is already
//    in the pool, and so is its right half: nothing else has to go first);
//  * under a shared parent, the path is refreshed first (the cached parent may just be old);
//    if the refreshed parent still lacks the separator, the core's idempotent separator
//    insertion puts it in under the parent's lock - a live splitter's own insertion then
//    finds it done;
//  * at the top (the root split and no root above it yet), the core's root growth.
template <tree::KeyValueTraits KV>
Status DexTree<KV>::FinishSplit(Worker& w, cache::OptimisticGuard& parent, const Header& ph,
                            cache::OptimisticGuard& node, const Header& h) {
  const GlobalAddress addr = node.frame()->remote();
  if (ph.level == kMetaLevel) {
    auto root = reader_.RefreshRoot(w.ctx);
    if (!root.ok()) return root.status();
    if (*root == addr) DMX_RETURN_IF_ERROR(smo_.GrowRoot(w.ctx, h.level));
    w.need_refresh = true;
    return RetryStatus();
  }
  if (!Owned(w, ph)) {
    const bool seen_after_refresh = w.half_split == addr && w.half_split_high == h.high;
    w.half_split = addr;
    w.half_split_high = h.high;
    if (seen_after_refresh)
      DMX_RETURN_IF_ERROR(smo_.InsertSeparator(w.ctx, static_cast<uint8_t>(h.level + 1), h.high, h.sibling));
    w.need_refresh = true;
    return RetryStatus();
  }
  DMX_RETURN_IF_ERROR(LinkHalfSplit(w, parent, h.high, h.sibling));
  return RetryStatus();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::LinkHalfSplit(Worker& w, cache::OptimisticGuard& parent, const Key& separator,
                              GlobalAddress sibling) {
  cache::ExclusiveGuard px = cache::ExclusiveGuard::TryUpgrade(parent);
  if (!px.owns()) return RetryStatus();
  const auto& internal = shared_.validator.internal();
  CopyPage(px.page(), w.copy.data(), layout_.node_bytes);
  const Header fh = DecodeHeader(w.copy.data());
  w.internal_entries.clear();
  internal.Collect(w.copy.data(), fh, &w.internal_entries);
  const bool routes_here = fh.Covers(separator) && tree::SeparatorSlot<KV>(w.internal_entries, separator);
  if (!routes_here) {  // not the half split it seemed: the cached path is stale
    w.need_refresh = true;
    return RetryStatus();
  }
  if (!internal.HasRoom(fh)) {
    w.make_room = true;  // the next descent splits the full parent first
    return RetryStatus();
  }
  (void)tree::InsertSeparator<KV>(w.internal_entries, separator, sibling);  // its slot was checked above
  if (!internal.Build(w.image.data(), fh, w.internal_entries))
    return Status::Corruption("dex: a parent with room cannot take a half split's separator");
  CopyToPool(px.page(), w.image.data(), layout_.node_bytes);
  px.MarkDirty();
  w.make_room = false;
  compute_node(w.cn).finished_splits.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_SPLIT(KV)                                                                                  \
  template bool DexTree<KV>::Full(const std::byte*, const Header&) const;                                 \
  template Status DexTree<KV>::SplitChild(Worker&, cache::OptimisticGuard&, cache::OptimisticGuard&);      \
  template Status DexTree<KV>::SplitInCache(Worker&, cache::ExclusiveGuard&, const Header&, Key*,          \
                                            cache::ExclusiveGuard*);                                       \
  template Status DexTree<KV>::InsertIntoOwnedParent(Worker&, cache::ExclusiveGuard&, const Key&,          \
                                                     cache::ExclusiveGuard&);                              \
  template Status DexTree<KV>::SplitWrittenThrough(Worker&, cache::ExclusiveGuard&, const Header&, Key*,   \
                                                   cache::ExclusiveGuard*);                                \
  template Status DexTree<KV>::WriteThrough(Worker&, cache::ExclusiveGuard&);                              \
  template Status DexTree<KV>::SplitUnderSharedParent(Worker&, cache::ExclusiveGuard&, const Header&,      \
                                                      cache::ExclusiveGuard&, const Header&);              \
  template Status DexTree<KV>::SplitRoot(Worker&, cache::ExclusiveGuard&, cache::ExclusiveGuard&,          \
                                         const Header&);                                                   \
  template Status DexTree<KV>::FinishSplit(Worker&, cache::OptimisticGuard&, const Header&,                \
                                           cache::OptimisticGuard&, const Header&);                        \
  template Status DexTree<KV>::LinkHalfSplit(Worker&, cache::OptimisticGuard&, const Key&, GlobalAddress);
DMX_DEX_SPLIT(U64Format)
DMX_DEX_SPLIT(BytesFormat)
#undef DMX_DEX_SPLIT

}  // namespace dmindex::designs::dex
