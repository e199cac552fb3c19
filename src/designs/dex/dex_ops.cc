// DEX's operations (§7): lookup, update/upsert/delete, one leaf of a range scan, bulk load.
// Each loops over attempts of the cached traversal.
#include <algorithm>
#include <string>

#include "common/pool_memory.h"
#include "common/retry_status.h"
#include "common/runtime.h"
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {
Status DexTree::BeforeRetry(DexWorker& w, Key key, Attempts& attempts) {
  DMX_RETURN_IF_ERROR(w.cw.EndOperation());
  const uint32_t attempt = attempts.made++;
  if (attempt == 0) {  // a new operation: FinishSplit's state is per operation
    w.make_room = false;
    w.half_split = {};
  } else {
    w.ctx.CountRetry();
    if (!attempts.budget.Spend()) return attempts.budget.Exhausted("of key " + std::to_string(key));
  }
  if (w.need_refresh) {
    w.need_refresh = false;
    DMX_RETURN_IF_ERROR(RefreshPath(w, key));
  }
  // The first retries follow a change that is already done (a stale path refreshed, a split
  // finished); later ones meet a writer in progress: give it the core.
  if (attempt > 2) attempts.backoff.Pause();
  return Status::Ok();
}

Result<DexWorker*> WorkerSet::Get(uint32_t compute_node) {
  if (compute_node >= workers_.size()) workers_.resize(compute_node + 1);
  if (!workers_[compute_node]) {
    auto w = tree_.NewWorker(compute_node);
    if (!w.ok()) return w.status();
    workers_[compute_node] = std::move(w).value();
  }
  return workers_[compute_node].get();
}

Status DexTree::Lookup(WorkerSet& ws, Key key, Value* value) {
  std::shared_lock<runtime::SharedMutex> gate;
  auto wp = Enter(ws, key, &gate);
  if (!wp.ok()) return wp.status();
  DexWorker& w = **wp;
  const OffloadRequest req{OffloadOp::kLookup, key, 0};
  w.no_offload = false;
  Attempts attempts(retry_limits::kDexOperation, "dex lookup");
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, key, attempts));
    LeafAt at;
    Status s = Descend(w, key, Intent::kRead, w.no_offload ? nullptr : &req, &at);
    if (s.IsNotFound()) return w.cw.EndOperation().ok() ? s : Status::Corruption("end");
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    if (at.offloaded) {
      DMX_RETURN_IF_ERROR(w.cw.EndOperation());
      if (at.result.outcome == OffloadResult::kNotFound) return Status::NotFound();
      *value = at.result.value;
      return Status::Ok();
    }
    const auto& leaf = shared_.validator.leaf();
    CopyPage(at.leaf.page(), w.copy.data(), layout_.SlotOffset(leaf.UsedSlots(at.h)));
    const int slot = leaf.Find(w.copy.data(), at.h, key);
    const Value v = slot >= 0 ? leaf.ValueAt(w.copy.data(), static_cast<uint32_t>(slot)) : 0;
    if (!at.leaf.Validate()) continue;
    DMX_RETURN_IF_ERROR(w.cw.EndOperation());
    if (slot < 0) return Status::NotFound();
    *value = v;
    return Status::Ok();
  }
}

Status DexTree::Write(WorkerSet& ws, WriteOp op, Key key, Value value) {
  std::shared_lock<runtime::SharedMutex> gate;
  auto wp = Enter(ws, key, &gate);
  if (!wp.ok()) return wp.status();
  DexWorker& w = **wp;
  const OffloadRequest req{ToOffload(op), key, value};
  w.no_offload = false;
  Attempts attempts(retry_limits::kDexOperation, "dex write");
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, key, attempts));
    LeafAt at;
    const Intent intent = op == WriteOp::kUpsert ? Intent::kInsert : Intent::kRead;
    Status s = Descend(w, key, intent, w.no_offload ? nullptr : &req, &at);
    if (s.IsNotFound()) {  // empty tree
      if (op != WriteOp::kUpsert) return w.cw.EndOperation().ok() ? s : Status::Corruption("end");
      DMX_RETURN_IF_ERROR(smo_.CreateRoot(w.ctx));
      w.need_refresh = true;
      continue;
    }
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    if (at.offloaded) {
      DMX_RETURN_IF_ERROR(w.cw.EndOperation());
      if (at.result.outcome == OffloadResult::kNotFound) return Status::NotFound();
      return op == WriteOp::kDelete ? MergeAfterDelete(w, key, at.result.remaining) : Status::Ok();
    }
    s = at.owned ? WriteOwned(w, op, key, value, at)
                 : WriteShared(w, op, key, value, at.leaf.frame()->remote());
    if (IsRetry(s)) continue;
    Status end = w.cw.EndOperation();  // writes a dirty page that was not admitted back
    DMX_RETURN_IF_ERROR(s);
    DMX_RETURN_IF_ERROR(end);
    // Shared leaves are deleted from lazily (the core's rule); owned ones may merge.
    return op == WriteOp::kDelete && at.owned ? MergeAfterDelete(w, key, w.leaf_entries.size())
                                              : Status::Ok();
  }
}

Status DexTree::WriteOwned(DexWorker& w, WriteOp op, Key key, Value value, LeafAt& at) {
  const auto& leaf = shared_.validator.leaf();
  cache::ExclusiveGuard x = cache::ExclusiveGuard::TryUpgrade(at.leaf);
  if (!x.owns()) return RetryStatus();
  // Lock coupling: the parent must still be what led here (so no ancestor was evicted and
  // no subtree above could be offloaded meanwhile, §6.2).
  if (!at.parent.Validate()) return RetryStatus();
  CopyPage(x.page(), w.copy.data(), layout_.node_bytes);
  Header h = DecodeHeader(w.copy.data());
  w.leaf_entries.clear();
  leaf.Collect(w.copy.data(), h, &w.leaf_entries);
  DMX_RETURN_IF_ERROR(tree::ApplyToSorted<KV>(w.leaf_entries, op, key, value));
  if (w.leaf_entries.size() > leaf.capacity()) {
    at.leaf = x.Downgrade();  // unchanged, but unlocking bumps the version
    DMX_RETURN_IF_ERROR(SplitChild(w, at.parent, at.leaf));
    return RetryStatus();  // insert again, now with room
  }
  leaf.Build(w.image.data(), h, w.leaf_entries, /*unsorted=*/false);
  CopyToPool(x.page(), w.image.data(), layout_.node_bytes);
  x.MarkDirty();
  return Status::Ok();
}

Status DexTree::LockRemote(DexWorker& w, GlobalAddress addr, tree::NodeLockGuard& guard,
                          Header* h, bool* valid) {
  uint64_t cas_failures = 0;
  Status s = shared_.lock.LockAndRead(w.ctx.ep, compute_node(w.cn).core.local_locks.get(),
                                      w.ctx.owner_tag, addr, w.ctx.node(), layout_.node_bytes,
                                      guard.held(), &cas_failures);
  w.ctx.CountRetry(cas_failures);
  DMX_RETURN_IF_ERROR(s);
  *valid = shared_.validator.Decode(w.ctx.node(), h);
  return Status::Ok();
}

Status DexTree::WriteShared(DexWorker& w, WriteOp op, Key key, Value value, GlobalAddress addr) {
  const auto& leaf = shared_.validator.leaf();
  tree::NodeLockGuard guard(shared_.lock, w.ctx.ep);
  Header h;
  bool valid = false;
  DMX_RETURN_IF_ERROR(LockRemote(w, addr, guard, &h, &valid));
  // Under the lock: the node must still be a shared leaf covering the key; otherwise it
  // split (or is owned by now) and the path is refreshed.
  if (!valid || h.dead() || !h.is_leaf() || !h.Covers(key) || !Shared(w, h)) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    w.need_refresh = true;
    return RetryStatus();
  }
  w.leaf_entries.clear();
  leaf.Collect(w.ctx.node(), h, &w.leaf_entries);
  Status applied = tree::ApplyToSorted<KV>(w.leaf_entries, op, key, value);
  if (!applied.ok()) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    return applied;
  }
  if (w.leaf_entries.size() > leaf.capacity()) {
    // The core splits it; every node its separator insertion touches covers this leaf's
    // whole range, which crosses a boundary: shared too.
    w.need_refresh = true;
    return smo_.SplitLeaf(w.ctx, guard, addr, h, w.leaf_entries);
  }
  h.version = w.ctx.NewVersion(h.version);
  leaf.Build(w.ctx.node(), h, w.leaf_entries, /*unsorted=*/false);
  fabric::Verb write = fabric::Verb::Write(addr, w.ctx.node(), layout_.node_bytes);
  return guard.WriteAndUnlock({&write, 1});
}

Status DexTree::ScanLeaf(WorkerSet& ws, const tree::ScanRange<KV>& range, Key cursor, size_t limit,
                         std::vector<KeyValue>* out, Key* next) {
  std::shared_lock<runtime::SharedMutex> gate;
  auto wp = Enter(ws, cursor, &gate);
  if (!wp.ok()) return wp.status();
  DexWorker& w = **wp;
  const auto& leaf = shared_.validator.leaf();
  Attempts attempts(retry_limits::kDexOperation, "dex scan");
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, cursor, attempts));
    LeafAt at;
    Status s = Descend(w, cursor, Intent::kRead, nullptr, &at);
    if (s.IsNotFound()) {
      *next = KV::kPosInf;
      return w.cw.EndOperation();
    }
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    CopyPage(at.leaf.page(), w.copy.data(), layout_.SlotOffset(leaf.UsedSlots(at.h)));
    w.leaf_entries.clear();
    leaf.Collect(w.copy.data(), at.h, &w.leaf_entries);
    if (!at.leaf.Validate()) continue;
    DMX_RETURN_IF_ERROR(w.cw.EndOperation());
    for (const LeafEntry& e : w.leaf_entries)
      if (e.key >= cursor && !range.Before(e.key) && !range.Beyond(e.key) && out->size() < limit)
        out->push_back({e.key, e.value});
    *next = at.h.high;
    return Status::Ok();
  }
}

Status DexTree::BulkLoad(DexWorker& w, std::span<const KeyValue> sorted) {
  std::vector<LeafEntry> entries;
  entries.reserve(sorted.size());
  for (const KeyValue& kv : sorted) entries.push_back({kv.key, kv.value, {}});
  DMX_RETURN_IF_ERROR(loader_.Load(w.ctx, entries));
  if (sorted.empty()) return Status::Ok();
  for (auto& n : nodes_) {
    cache::ExclusiveGuard mx(&n->meta);
    auto root = reader_.RefreshRoot(w.ctx);
    if (!root.ok()) return root.status();
    SetRoot(mx, *root);
  }
  const uint32_t parts = partitions_;
  if (!options_.boundaries.empty() || parts == 1 || !options_.partition) return Status::Ok();
  // Balance the partitions over the loaded keys, on leaf fences so that every leaf is owned
  // by exactly one compute node (§4).
  std::vector<Key> boundaries;
  for (size_t i = 1; i < parts; ++i) {
    const Key probe = sorted[sorted.size() * i / parts].key;
    typename tree::TreeReader<KV>::Found found;
    DMX_RETURN_IF_ERROR(reader_.Descend(w.ctx, probe, 0, w.ctx.scratch(), &found));
    Key b = found.h.low == KV::kNegInf ? probe : found.h.low;
    if (!boundaries.empty() && b <= boundaries.back()) b = boundaries.back() + 1;
    boundaries.push_back(b);
  }
  // Only the hosts of the compute nodes losing keys may move them: a process loading for
  // a cluster should host them all (or repartition from each host afterwards).
  Status moved = Repartition(boundaries).status();
  return moved.IsNotOwner() ? Status::Ok() : moved;
}

}  // namespace dmindex::designs::dex
