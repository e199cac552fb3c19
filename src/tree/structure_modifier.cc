#include "tree/structure_modifier.h"

#include "tree/entry_ops.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/retry.h"
#include "tree/split.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
Status StructureModifier<KV>::BuildLeafSplit(Ctx& c, const NodeHeader<KV>& h,
                                             std::span<const LeafEntry<KV>> sorted,
                                             LeafSplitImages* out) const {
  const auto& leaf = t_.validator.leaf();
  LeafSplit<KV> split = leaf.Split(h, sorted);
  auto right = t_.PlaceNode(c.ep, c.cn.allocator, 0);
  if (!right.ok()) return right.status();

  NodeHeader<KV> rh;
  rh.version = c.NewVersion();
  rh.low = split.separator;
  rh.high = h.high;
  rh.sibling = h.sibling;
  const bool right_built = leaf.Build(c.sibling(), rh, split.right, t_.options.two_level);

  NodeHeader<KV> lh = h;
  lh.version = c.NewVersion(h.version);
  lh.incarnation = h.incarnation + 1;  // the right half starts at 0
  lh.high = split.separator;
  lh.sibling = *right;
  if (!right_built || !leaf.Build(c.node(), lh, split.left, t_.options.two_level)) {
    t_.UnplaceNode(c.cn.allocator, *right, 0);  // never published
    return Status::Corruption("the split halves of the leaf with low fence " + DescribeKey(h.low) +
                              ") do not fit a node");
  }
  *out = {*right, split.separator};
  return Status::Ok();
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::SplitLeaf(Ctx& c, NodeLockGuard& guard, GlobalAddress addr,
                                        const NodeHeader<KV>& h,
                                        std::span<const LeafEntry<KV>> sorted) const {
  const uint32_t nb = t_.layout.node_bytes;
  LeafSplitImages split;
  DMX_RETURN_IF_ERROR(BuildLeafSplit(c, h, sorted, &split));  // on failure the guard unlocks
  // Right node first: it must be complete before the left node's sibling link exposes it.
  fabric::Verb writes[] = {fabric::Verb::Write(split.right, c.sibling(), nb),
                           fabric::Verb::Write(addr, c.node(), nb)};
  // The parent's lock and READ ride behind the leaf's unlock in its batch when they can:
  // one round trip less per split (docs/SYNCHRONIZATION.md, "The parent's lock in a split's
  // batch").
  NodeLockGuard parent(t_.lock, c.ep);
  DMX_RETURN_IF_ERROR(ReleaseTryingParent(c, guard.held(), writes, addr, split.separator, 1, &parent));
  if (t_.on_leaf_split) t_.on_leaf_split(h.low, split.separator, h.high);
  return InsertSeparator(c, 1, split.separator, split.right, &parent);
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::ReleaseTryingParent(Ctx& c, NodeLock::Held* held, std::span<fabric::Verb> writes,
                                                  GlobalAddress node, const Key& separator, uint8_t level,
                                                  NodeLockGuard* up, const fabric::Verb* trailer_release) const {
  const GlobalAddress parent = ParentToTry(c, node, separator, level);
  if (!parent.is_null()) {
    if (Result<LockOwner> owner = c.LockOwnerOn(parent.node()); owner.ok())
      return t_.lock.WriteUnlockAndTryLock(c.ep, held, writes, c.cn.local_locks.get(), *owner, parent,
                                           c.scratch(), t_.layout.node_bytes, up->held(), trailer_release);
  }
  // No parent to try, or no owner to try it as: the plain release (the separator's insertion
  // locks the parent its ordinary way, and answers any error of the owner then).
  return t_.lock.WriteAndRelease(c.ep, held, writes, trailer_release);
}

template <KeyValueTraits KV>
GlobalAddress StructureModifier<KV>::ParentToTry(Ctx& c, GlobalAddress child, const Key& separator,
                                                 uint8_t level) const {
  typename RoutingCache<KV>::Hit hit;
  if (!t_.options.combine || c.cn.cache == nullptr || !c.cn.cache->FindChild(separator, level, &hit) ||
      hit.level != level || hit.node.node() != child.node())
    return GlobalAddress::Null();
  return hit.node;
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::TakeLockedParent(Ctx& c, uint8_t level, const Key& separator,
                                               NodeLockGuard& locked, NodeHeader<KV>* h,
                                               bool* usable) const {
  *usable = false;
  if (!locked.holds()) return Status::Ok();
  // Under the lock nobody writes the node: a failed check means the cached pointer was
  // stale or the node split since (CoveringLocker then finds the right one).
  std::memcpy(c.node(), c.scratch(), t_.layout.node_bytes);
  if (!t_.validator.Decode(c.node(), h) || h->dead() || h->level != level || separator < h->low ||
      h->BeyondHigh(separator))
    return locked.Unlock();
  *usable = true;
  return Status::Ok();
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::InsertSeparator(Ctx& c, uint8_t level, Key separator,
                                              GlobalAddress child, NodeLockGuard* locked) const {
  const uint32_t nb = t_.layout.node_bytes;
  const auto& internal = t_.validator.internal();
  std::vector<InternalEntry<KV>> entries;
  // An internal split's batch tries the lock of the node one level up as a leaf split's does
  // (SplitLeaf); the two guards take turns holding it into the next level's iteration.
  NodeLockGuard carried[2] = {NodeLockGuard(t_.lock, c.ep), NodeLockGuard(t_.lock, c.ep)};
  uint32_t next_carrier = 0;
  // Restarts only after growing the root to the level the separator goes to.
  RetryBudget budget(retry_limits::kTreeRestarts, "insert a separator");
  for (;;) {
    NodeLockGuard own(t_.lock, c.ep);
    GlobalAddress addr;
    NodeHeader<KV> h;
    bool prelocked = false;
    if (locked != nullptr) {
      DMX_RETURN_IF_ERROR(TakeLockedParent(c, level, separator, *locked, &h, &prelocked));
      if (prelocked) addr = locked->held()->node;
    }
    NodeLockGuard& guard = prelocked ? *locked : own;
    locked = nullptr;  // only a node a split's batch locked (the caller's, or carried) is prelocked
    typename CoveringLocker<KV>::Outcome outcome = CoveringLocker<KV>::Outcome::kLocked;
    if (!prelocked) DMX_RETURN_IF_ERROR(locker_.Lock(c, separator, level, guard, &addr, &h, &outcome));
    if (outcome == CoveringLocker<KV>::Outcome::kEmpty)
      return Status::Corruption("the tree lost its root during a split");
    if (outcome == CoveringLocker<KV>::Outcome::kRootBelow) {
      DMX_RETURN_IF_ERROR(GrowRoot(c, static_cast<uint8_t>(level - 1)));
      if (!budget.Spend())
        return budget.Exhausted("for " + DescribeKey(separator) + " at level " + std::to_string(level));
      continue;
    }
    entries.clear();
    internal.Collect(c.node(), h, &entries);
    if (!tree::InsertSeparator<KV>(entries, separator, child)) return guard.Unlock();  // already there

    NodeHeader<KV> lh = h;
    lh.version = c.NewVersion(h.version);
    if (internal.Fits(lh, entries)) {
      if (!internal.Build(c.node(), lh, entries))
        return Status::Corruption("internal node " + addr.ToString() + " fits its entries but cannot be built");
      fabric::Verb write = fabric::Verb::Write(addr, c.node(), nb);
      // The split is complete without this batch (the right node is reachable by the left's
      // sibling link): not waited for (docs/SYNCHRONIZATION_DETAIL.md, "The separator's
      // batch, unwaited"); the next operation of this thread reaps it.
      DMX_RETURN_IF_ERROR(t_.options.post_separator ? guard.WriteAndUnlockPosted({&write, 1}, &c.posted)
                                                    : guard.WriteAndUnlock({&write, 1}));
      CacheWritten(c, addr, c.node());
      return Status::Ok();
    }
    InternalSplit<KV> split = internal.Split(h, entries);
    auto right = t_.PlaceNode(c.ep, c.cn.allocator, h.level);
    if (!right.ok()) return right.status();
    NodeHeader<KV> rh;
    rh.version = c.NewVersion();
    rh.level = h.level;
    rh.low = split.separator;
    rh.high = h.high;
    rh.sibling = h.sibling;
    rh.leftmost = split.right_leftmost;
    lh.high = split.separator;
    lh.sibling = *right;
    if (!internal.Build(c.sibling(), rh, split.right) || !internal.Build(c.node(), lh, split.left)) {
      t_.UnplaceNode(c.cn.allocator, *right, h.level);  // never published
      return Status::Corruption("the split halves of internal node " + addr.ToString() +
                                " do not fit a node");
    }
    fabric::Verb writes[] = {fabric::Verb::Write(*right, c.sibling(), nb),
                             fabric::Verb::Write(addr, c.node(), nb)};
    NodeLockGuard& next = carried[next_carrier];
    next_carrier ^= 1;
    DMX_RETURN_IF_ERROR(ReleaseTryingParent(c, guard.held(), writes, addr, split.separator,
                                            static_cast<uint8_t>(level + 1), &next));
    locked = &next;
    CacheWritten(c, addr, c.node());
    CacheWritten(c, *right, c.sibling());
    // The new internal node now needs its own separator one level up.
    separator = split.separator;
    child = *right;
    ++level;
    budget.Reset();
  }
}

template <KeyValueTraits KV>
void StructureModifier<KV>::CacheWritten(Ctx& c, GlobalAddress addr, const std::byte* image) const {
  NodeHeader<KV> h;
  if (c.cn.cache != nullptr && t_.validator.ReadHeader(image, &h))
    c.cn.cache->Insert(addr, h, image);
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::GrowRoot(Ctx& c, uint8_t child_level) const {
  auto root = reader_.RefreshRoot(c);
  if (!root.ok()) return root.status();
  if (root->is_null()) return Status::Corruption("the tree lost its root during a split");
  NodeHeader<KV> rh;
  DMX_RETURN_IF_ERROR(reader_.Read(c, *root, c.scratch(), &rh));
  if (rh.level != child_level) return Status::Ok();  // someone else grew it already

  // The new root indexes the root level's whole chain as far as it fits; nodes split off
  // after this read get their separators from their own splitters.
  std::vector<InternalEntry<KV>> entries;
  const auto& internal = t_.validator.internal();
  NodeHeader<KV> nh;  // fences -inf, +inf
  nh.level = static_cast<uint8_t>(child_level + 1);
  nh.leftmost = *root;
  for (GlobalAddress at = rh.sibling; !at.is_null();) {
    NodeHeader<KV> sh;
    DMX_RETURN_IF_ERROR(reader_.Read(c, at, c.scratch(), &sh));
    if (sh.level != child_level || sh.dead()) break;
    entries.push_back({sh.low, at});
    if (!internal.Fits(nh, entries)) {
      entries.pop_back();
      break;
    }
    at = sh.sibling;
  }
  auto fresh = t_.PlaceNode(c.ep, c.cn.allocator, static_cast<uint8_t>(child_level + 1));
  if (!fresh.ok()) return fresh.status();
  nh.version = c.NewVersion();
  if (!internal.Build(c.sibling(), nh, entries)) {
    t_.UnplaceNode(c.cn.allocator, *fresh, nh.level);
    return Status::Corruption("a new root over the root level's chain does not fit a node");
  }
  DMX_RETURN_IF_ERROR(c.ep.Write(*fresh, c.sibling(), t_.layout.node_bytes));
  return PublishRoot(c, *root, *fresh, nh.level);
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::CreateRoot(Ctx& c) const {
  auto fresh = t_.PlaceNode(c.ep, c.cn.allocator, 0);
  if (!fresh.ok()) return fresh.status();
  NodeHeader<KV> h;
  h.version = c.NewVersion();
  if (!t_.validator.leaf().Build(c.sibling(), h, {}, t_.options.two_level)) {
    t_.UnplaceNode(c.cn.allocator, *fresh, 0);
    return Status::Corruption("an empty leaf does not fit a node");
  }
  DMX_RETURN_IF_ERROR(c.ep.Write(*fresh, c.sibling(), t_.layout.node_bytes));
  return PublishRoot(c, GlobalAddress::Null(), *fresh, 0);
}

template <KeyValueTraits KV>
Status StructureModifier<KV>::PublishRoot(Ctx& c, GlobalAddress expected, GlobalAddress fresh,
                                          uint8_t level) const {
  uint64_t old = 0;
  Status s = c.ep.Cas(t_.root_word, expected.raw(), fresh.raw(), &old);
  // A failed verb may or may not have executed: keep the node then (a leak, not a hazard).
  DMX_RETURN_IF_ERROR(s);
  // Lost the race: the node was never published, nobody can hold its address.
  if (old != expected.raw()) t_.UnplaceNode(c.cn.allocator, fresh, level);
  return reader_.RefreshRoot(c).status();
}

template class StructureModifier<U64BytesKV>;
template class StructureModifier<U64KV>;
template class StructureModifier<BytesKV>;

}  // namespace dmindex::tree
