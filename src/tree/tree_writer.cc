#include "tree/tree_writer.h"

#include <algorithm>
#include <vector>

#include "common/retry.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
Status TreeWriter<KV>::Write(Ctx& c, WriteOp op, KeyRef key, ValueRef value) const {
  // The node format's limits (key and value sizes): refused before anything is locked.
  if (op != WriteOp::kDelete) DMX_RETURN_IF_ERROR(t_.validator.leaf().CheckEntry(key, value));
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
Status TreeWriter<KV>::ApplyLocked(Ctx& c, WriteOp op, KeyRef key, ValueRef value,
                                   NodeLockGuard& guard, GlobalAddress addr,
                                   const NodeHeader<KV>& h) const {
  const auto& leaf = t_.validator.leaf();
  std::byte* image = c.node();
  if (t_.options.two_level && h.unsorted()) {
    // Entry-level write-back: the codec changes one entry in place, bound to the unchanged
    // node version, and says which bytes to WRITE (in order, behind them the unlock).
    const EntryWrite w = leaf.WriteEntry(image, h, op, key, value);
    if (w.outcome == EntryWrite::Outcome::kNotFound) {
      DMX_RETURN_IF_ERROR(guard.Unlock());
      return Status::NotFound();
    }
    if (w.outcome == EntryWrite::Outcome::kWritten) {
      fabric::Verb writes[2];
      for (uint32_t i = 0; i < w.count; ++i)
        writes[i] = fabric::Verb::Write(addr + w.regions[i].offset, image + w.regions[i].offset,
                                        w.regions[i].length);
      return guard.WriteAndUnlock({writes, w.count});
    }
    // No slot or room for the key in this version: rewrite the leaf whole below with a new
    // version, which drops the tombstones (one node-sized WRITE), or split it.
  }

  std::vector<LeafEntry<KV>> entries;
  leaf.Collect(image, h, &entries);
  if (Status applied = ApplyToSorted<KV>(entries, op, key, value); !applied.ok()) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    return applied;
  }

  if (!leaf.Fits(h, entries)) return smo_.SplitLeaf(c, guard, addr, h, entries);
  NodeHeader<KV> nh = h;
  nh.version = c.NewVersion(h.version);
  if (!leaf.Build(image, nh, entries, t_.options.two_level))
    return Status::Corruption("leaf at " + addr.ToString() + " fits its entries but cannot be built");
  fabric::Verb write = fabric::Verb::Write(addr, image, t_.layout.node_bytes);
  return guard.WriteAndUnlock({&write, 1});
}

template class TreeWriter<U64KV>;
template class TreeWriter<BytesKV>;

}  // namespace dmindex::tree
