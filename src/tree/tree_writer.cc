#include "tree/tree_writer.h"

#include <algorithm>
#include <vector>

#include "common/retry.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
Status TreeWriter<KV>::Write(Ctx& c, WriteOp op, const Key& key, const Value& value) const {
  // Restarts only after creating the root of an empty tree (someone else may create it too).
  RetryBudget budget(retry_limits::kTreeRestarts, "write");
  for (;;) {
    NodeLockGuard guard(t_.lock, c.ep);
    GlobalAddress addr;
    NodeHeader<KV> h;
    typename CoveringLocker<KV>::Outcome outcome;
    DMX_RETURN_IF_ERROR(locker_.Lock(c, key, 0, guard, &addr, &h, &outcome));
    switch (outcome) {
      case CoveringLocker<KV>::Outcome::kLocked:
        return ApplyLocked(c, op, key, value, guard, addr, h);
      case CoveringLocker<KV>::Outcome::kEmpty:
        if (op != WriteOp::kUpsert) return Status::NotFound();
        DMX_RETURN_IF_ERROR(smo_.CreateRoot(c));
        if (!budget.Spend()) return budget.Exhausted("of " + DescribeKey(key) + " into an empty tree");
        continue;
      case CoveringLocker<KV>::Outcome::kRootBelow:
        return Status::Corruption("tree has no leaf level");
    }
  }
}

template <KeyValueTraits KV>
Status TreeWriter<KV>::ApplyLocked(Ctx& c, WriteOp op, const Key& key, const Value& value,
                                   NodeLockGuard& guard, GlobalAddress addr,
                                   const NodeHeader<KV>& h) const {
  const auto& leaf = t_.validator.leaf();
  std::byte* image = c.node();
  if (t_.options.two_level && h.unsorted()) {
    int slot = leaf.Find(image, h, key);
    if (slot < 0 && op != WriteOp::kUpsert) {
      DMX_RETURN_IF_ERROR(guard.Unlock());
      return Status::NotFound();
    }
    // A new key goes back to its own tombstone, else to an empty slot, never to another
    // key's tombstone: within a version a key keeps one slot (leaf_node.h).
    if (slot < 0) slot = leaf.InsertSlot(image, h, key);
    if (slot >= 0) {  // entry-level write-back: one slot, same node version
      const auto i = static_cast<uint32_t>(slot);
      if (op == WriteOp::kDelete)
        leaf.EncodeTomb(image, i, key, h.version);
      else
        leaf.EncodeSlot(image, i, key, value, h.version);
      const uint32_t off = t_.layout.SlotOffset(i);
      fabric::Verb write = fabric::Verb::Write(addr + off, image + off, NodeLayout<KV>::kSlotBytes);
      return guard.WriteAndUnlock({&write, 1});
    }
    // No slot for the key in this version: rewrite the leaf whole below with a new version,
    // which drops the tombstones (one node-sized WRITE instead of a slot), or split it.
  }

  std::vector<LeafEntry<KV>> entries;
  entries.reserve(leaf.capacity() + 1);
  leaf.Collect(image, h, &entries);
  if (Status applied = ApplyToSorted<KV>(entries, op, key, value); !applied.ok()) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    return applied;
  }

  if (entries.size() > leaf.capacity()) return smo_.SplitLeaf(c, guard, addr, h, entries);
  NodeHeader<KV> nh = h;
  nh.version = c.NewVersion(h.version);
  leaf.Build(image, nh, entries, t_.options.two_level);
  fabric::Verb write = fabric::Verb::Write(addr, image, t_.layout.node_bytes);
  return guard.WriteAndUnlock({&write, 1});
}

template class TreeWriter<U64KV>;

}  // namespace dmindex::tree
