#include "tree/tree_writer.h"

#include <algorithm>
#include <vector>

#include "common/retry.h"
#include "common/retry_status.h"
#include "common/runtime.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
Status TreeWriter<KV>::Write(Ctx& c, WriteOp op, KeyRef key, ValueRef value, const CompareValue* cas) const {
  // The node format's limits (key and value sizes): refused before anything is locked.
  if (op != WriteOp::kDelete) DMX_RETURN_IF_ERROR(CheckValue<KV>(t_.options, value));
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
      case CoveringLocker<KV>::Outcome::kLocked: {
        if (cas != nullptr) {
          bool equal = false;
          Status compared = CompareLocked(c, key, h, *cas, &equal);
          if (!compared.ok() || !equal) {
            DMX_RETURN_IF_ERROR(guard.Unlock());
            if (!IsRetry(compared)) return compared;
            if (!budget.Spend()) return budget.Exhausted("compare of " + DescribeKey(key));
            continue;
          }
        }
        DMX_RETURN_IF_ERROR(ApplyLocked(c, op, key, value, guard, addr, h));
        if (cas != nullptr) *cas->swapped = true;
        return Status::Ok();
      }
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
Status TreeWriter<KV>::CompareLocked(Ctx& c, KeyRef key, const NodeHeader<KV>& h, const CompareValue& cas,
                                     bool* equal) const {
  if constexpr (!std::is_same_v<Value, std::string>) {
    (void)c, (void)key, (void)h, (void)cas, (void)equal;
    return Status::NotSupported("CompareAndSwap on a tree of integer values");
  } else {
    const auto& leaf = t_.validator.leaf();
    const std::byte* image = c.node();
    const int slot = leaf.Find(image, h, key);
    if (slot < 0) return Status::NotFound();
    Value found;
    bool fetched = true;
    if constexpr (KV::kValueBlocks) {
      // The block cannot be replaced while we hold the leaf's lock; it is read as a lookup
      // reads it (validated, within the lease).
      const ValueBlockRef ref = leaf.BlockAt(image, h, static_cast<uint32_t>(slot));
      if (!ref.is_null()) {
        typename ValueStore<KV>::Fetch fetch{ref, KV::Owner(key), &found};
        DMX_RETURN_IF_ERROR(values_.FetchAll(c, {&fetch, 1}, runtime::Now(), &fetched));
        if (!fetched) return RetryStatus("value block of a compare-and-swap");
      } else {
        found = leaf.ValueAt(image, h, static_cast<uint32_t>(slot));
      }
    } else {
      found = leaf.ValueAt(image, h, static_cast<uint32_t>(slot));
    }
    *equal = std::string_view(found) == cas.expected;
    if (!*equal && cas.current != nullptr) *cas.current = std::move(found);
    return Status::Ok();
  }
}

template <KeyValueTraits KV>
Status TreeWriter<KV>::ApplyLocked(Ctx& c, WriteOp op, KeyRef key, ValueRef value,
                                   NodeLockGuard& guard, GlobalAddress addr,
                                   const NodeHeader<KV>& h) const {
  const auto& leaf = t_.validator.leaf();
  std::byte* image = c.node();
  // Out of line (value_store.h): the value's block is written on the leaf's memory node
  // first - in the in-order batch of the leaf write, so it has landed before any reader can
  // follow the reference - and the block the key held before is retired once the write that
  // unlinked it has completed.
  ValueBlockRef block, old;
  fabric::Verb block_write;
  if constexpr (KV::kValueBlocks) {
    const int at = leaf.Find(image, h, key);
    if (at >= 0) old = leaf.BlockAt(image, h, static_cast<uint32_t>(at));
    if (at < 0 && op != WriteOp::kUpsert) {
      DMX_RETURN_IF_ERROR(guard.Unlock());
      return Status::NotFound();
    }
    if (op != WriteOp::kDelete && value.size() > leaf.InlineLimit()) {
      auto prepared = values_.Prepare(c, key, value, addr.node(), &block_write);
      if (!prepared.ok()) {
        DMX_RETURN_IF_ERROR(guard.Unlock());
        return prepared.status();
      }
      block = *prepared;
      value = ValueRef{};
    }
  }
  // Writes `writes` (behind the block, if any) and unlocks; then the old block is unlinked.
  auto finish = [&](std::span<fabric::Verb> writes) -> Status {
    fabric::Verb all[3];
    uint32_t n = 0;
    if (!block.is_null()) all[n++] = block_write;
    for (const fabric::Verb& w : writes) all[n++] = w;
    DMX_RETURN_IF_ERROR(guard.WriteAndUnlock({all, n}));
    if constexpr (KV::kValueBlocks) values_.Retire(c, old);
    return Status::Ok();
  };
  if (t_.options.two_level && h.unsorted()) {
    // Entry-level write-back: the codec changes one entry in place, bound to the unchanged
    // node version, and says which bytes to WRITE (in order, behind them the unlock).
    const EntryWrite w = leaf.WriteEntry(image, h, op, key, LeafEntry<KV>{Key(key), Value(value), block});
    if (w.outcome == EntryWrite::Outcome::kNotFound) {
      DMX_RETURN_IF_ERROR(guard.Unlock());
      return Status::NotFound();
    }
    if (w.outcome == EntryWrite::Outcome::kWritten) {
      fabric::Verb writes[2];
      for (uint32_t i = 0; i < w.count; ++i)
        writes[i] = fabric::Verb::Write(addr + w.regions[i].offset, image + w.regions[i].offset,
                                        w.regions[i].length);
      return finish({writes, w.count});
    }
    // No slot or room for the key in this version: rewrite the leaf whole below with a new
    // version, which drops the tombstones (one node-sized WRITE), or split it.
  }

  std::vector<LeafEntry<KV>> entries;
  leaf.Collect(image, h, &entries);
  if (Status applied = ApplyToSorted<KV>(entries, op, key, value, block); !applied.ok()) {
    if constexpr (KV::kValueBlocks) {
      if (!block.is_null()) values_.Free(c, block);
    }
    DMX_RETURN_IF_ERROR(guard.Unlock());
    return applied;
  }

  if (!leaf.Fits(h, entries)) {
    // The split writes its nodes in batches of its own: the block lands first.
    if (!block.is_null()) DMX_RETURN_IF_ERROR(c.ep.Post({&block_write, 1}, fabric::Ordering::kInOrder));
    DMX_RETURN_IF_ERROR(smo_.SplitLeaf(c, guard, addr, h, entries));
    if constexpr (KV::kValueBlocks) values_.Retire(c, old);
    return Status::Ok();
  }
  NodeHeader<KV> nh = h;
  nh.version = c.NewVersion(h.version);
  if (!leaf.Build(image, nh, entries, t_.options.two_level))
    return Status::Corruption("leaf at " + addr.ToString() + " fits its entries but cannot be built");
  fabric::Verb write = fabric::Verb::Write(addr, image, t_.layout.node_bytes);
  return finish({&write, 1});
}

template class TreeWriter<U64BytesKV>;
template class TreeWriter<U64KV>;
template class TreeWriter<BytesKV>;

}  // namespace dmindex::tree
