// DEX's operations (§7): lookup, update/upsert/delete, bulk load (scans: dex_scan.cc).
// Each loops over attempts of the cached traversal.
//
// A cached page is read under its optimistic latch, and its latch validated *before*
// anything read is acted on: a page read while a latch holder rewrote it may be any mix of
// two images. A slotted node's offsets in such a mix could point anywhere, so a slotted page
// is copied and validated before it is decoded; the u64 format's pages are searched in place
// with every index bounded by the node (docs/SYNCHRONIZATION.md, "DEX's cached pages").
#include <algorithm>
#include <string>

#include "common/pool_memory.h"
#include "common/retry_status.h"
#include "common/runtime.h"
#include "designs/dex/dex_tree.h"
#include "designs/dex/fill_policy.h"

namespace dmindex::designs::dex {

template <tree::KeyValueTraits KV>
Status DexTree<KV>::BeforeRetry(Worker& w, KeyRef key, Attempts& attempts) {
  DMX_RETURN_IF_ERROR(w.cw.EndOperation());
  const uint32_t attempt = attempts.made++;
  if (attempt == 0) {  // a new operation: FinishSplit's state is per operation
    w.make_room = false;
    w.half_split = {};
    w.reads_upto = 0;
  } else {
    w.ctx.CountRetry();
    // A restart, not the hit path, asks the clock whether the lease still holds: a handle
    // that woke from a stall past it reads memory that may have been reused (its answer
    // would be refused after the read anyway), and stops here instead of restarting on it.
    DMX_RETURN_IF_ERROR(Live());
    if (!attempts.budget) {
      attempts.budget.emplace(attempts.limit, attempts.operation);
      attempts.backoff.emplace(backoff::kRestart);
    }
    if (!attempts.budget->Spend()) return attempts.budget->Exhausted("of " + tree::DescribeKey(key));
  }
  if (w.need_refresh) {
    w.need_refresh = false;
    DMX_RETURN_IF_ERROR(RefreshPath(w, key));
  }
  // The first retries follow a change that is already done (a stale path refreshed, a split
  // finished); later ones meet a writer in progress: give it the core.
  if (attempt > 2) attempts.backoff->Pause();
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Result<DexWorker<KV>*> WorkerSet<KV>::Make(uint32_t compute_node) {
  if (compute_node >= workers_.size()) workers_.resize(compute_node + 1);
  auto w = tree_.NewWorker(compute_node);
  if (!w.ok()) return w.status();
  workers_[compute_node] = std::move(w).value();
  return workers_[compute_node].get();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Lookup(Workers& ws, KeyRef key, std::string* value) {
  OperationGate::Pass pass;
  auto wp = Enter(ws, key, &pass);
  if (!wp.ok()) return wp.status();
  Worker& w = **wp;
  const OffloadRequest<KV> req{OffloadOp::kLookup, key, {}, {}};
  const auto& leaf = shared_.validator.leaf();
  w.no_offload = false;
  Attempts attempts(retry_limits::kDexOperation, "dex lookup");
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, key, attempts));
    // Before the leaf is read (cached copy, READ or offload): a value block it names is
    // accepted only within the lease from here (tree/value_store.h).
    runtime::Clock::time_point started;
    const bool leased = LeaseStart(&started);
    LeafAt at;
    Status s = Descend(w, key, Intent::kLookup, w.no_offload ? nullptr : &req, &at);
    if (s.IsNotFound()) return w.cw.EndOperation().ok() ? s : Status::Corruption("end");
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    if (!at.offloaded) BeginTouchLeaf(w, at);
    tree::ValueBlockRef ref;
    if (at.offloaded) {
      DMX_RETURN_IF_ERROR(w.cw.EndOperation());
      DMX_RETURN_IF_ERROR(AwaitLanded(w));  // the leaf's image may hold a write being logged
      if (at.result.r.outcome == OffloadResult::kNotFound) return Status::NotFound();
      ref = at.result.block;
      if (ref.is_null()) {
        *value = std::move(at.result.value);
        return Status::Ok();
      }
    } else {
      int slot = -1;
      const bool found = FindInCachedLeaf(w, at.leaf, at.h, key, &slot);
      EndTouchLeaf(w);
      if (!found) continue;
      DMX_RETURN_IF_ERROR(w.cw.EndOperation());
      DMX_RETURN_IF_ERROR(AwaitLanded(w));  // the answer may be a write whose record is in flight
      if (slot < 0) return Status::NotFound();
      // Tested before it is copied into `ref`: GCC copies the 13 bytes it holds as two
      // overlapping words whose load waited for the stores before it (2% of a cached lookup).
      const tree::ValueBlockRef in_leaf = leaf.BlockAt(w.copy.data(), at.h, static_cast<uint32_t>(slot));
      if (in_leaf.is_null()) {
        *value = leaf.ValueAt(w.copy.data(), at.h, static_cast<uint32_t>(slot));
        return Status::Ok();
      }
      ref = in_leaf;
    }
    if (!leased) {  // the first value block this process meets: read again, with the clock
      NeedsLease();
      continue;
    }
    bool fetched = false;
    DMX_RETURN_IF_ERROR(FetchValue(w, key, ref, started, value, &fetched));
    if (fetched) return Status::Ok();
    // Replaced, or read past the lease: read the leaf again (BeforeRetry counts it).
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Write(Workers& ws, WriteOp op, KeyRef key, ValueRef value, const tree::CompareValue* cas) {
  // A full redo log is emptied by a checkpoint, outside the compute node's gate (whose
  // barrier it takes); a writer meets that at most once per ring's worth of records. Of the
  // writers that found it full together, the first checkpoints; the others find the head
  // moved and retry (one flush per full ring, not one per waiting writer).
  for (;;) {
    LogFull full;
    Status s = WriteOnce(ws, op, key, value, cas, &full);
    if (full.cn == UINT32_MAX) return s;
    std::lock_guard lk(maps_mu_);
    if (Hosts(full.cn) && compute_node(full.cn).log_head.load() == full.head)
      DMX_RETURN_IF_ERROR(Checkpoint(compute_node(full.cn)));
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::WriteOnce(Workers& ws, WriteOp op, KeyRef key, ValueRef value, const tree::CompareValue* cas,
                              LogFull* log_full) {
  OperationGate::Pass pass;
  auto wp = Enter(ws, key, &pass);
  if (!wp.ok()) return wp.status();
  Worker& w = **wp;
  const bool logging = Logging(w);
  if (logging && !ReserveRecord(w, op, key, op == WriteOp::kDelete ? 0 : value.size())) {
    log_full->cn = w.cn;
    log_full->head = compute_node(w.cn).log_head.load();
    return Status::Ok();
  }
  // The record holds the value even when a block does; a reservation no record claimed goes
  // back on every way out.
  w.record.value = value;
  struct Unreserve {
    DexTree& t;
    Worker& w;
    ~Unreserve() {
      t.ReleaseRecord(w);
      w.cas = nullptr;
    }
  } unreserve{*this, w};
  w.cas = cas;
  // A value too long for the leaf goes to a block of its own first: written once, before
  // any attempt (nothing links it yet), linked by the attempt that succeeds, given back if
  // the key is not there to update.
  tree::ValueBlockRef block;
  if (op != WriteOp::kDelete && value.size() > shared_.validator.leaf().InlineLimit()) {
    auto written = WriteValueBlock(w, key, value);
    if (!written.ok()) return written.status();
    block = *written;
    value = ValueRef{};
  }
  const OffloadRequest<KV> req{ToOffload(op), key, value, block};
  // With a redo log writes are not offloaded: the handler's order of two writes to one key
  // is not known here, and the log must follow it (dex_durability.cc). A CompareAndSwap is
  // never offloaded: it compares where this process applies the write (CompareUnderLock).
  w.no_offload = logging || cas != nullptr;
  Attempts attempts(retry_limits::kDexOperation, "dex write");
  Status s;
  bool underfull = false;
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, key, attempts));
    LeafAt at;
    const Intent intent = op == WriteOp::kUpsert ? Intent::kInsert : Intent::kRead;
    s = Descend(w, key, intent, w.no_offload ? nullptr : &req, &at);
    if (s.IsNotFound()) {  // empty tree
      if (op != WriteOp::kUpsert) {
        if (!w.cw.EndOperation().ok()) return Status::Corruption("end");
        break;
      }
      DMX_RETURN_IF_ERROR(smo_.CreateRoot(w.ctx));
      w.need_refresh = true;
      continue;
    }
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    if (at.offloaded) {
      DMX_RETURN_IF_ERROR(w.cw.EndOperation());
      if (at.result.r.outcome == OffloadResult::kNotFound) {
        s = Status::NotFound();
        break;
      }
      // The handler's leaf write has landed: the block it unlinked can go.
      values_.Retire(w.ctx, at.result.block);
      underfull = (at.result.r.flags & OffloadResult::kUnderfull) != 0;
      s = Status::Ok();
      break;
    }
    BeginTouchLeaf(w, at);
    s = at.owned ? WriteOwned(w, op, key, value, block, at, &underfull)
                 : WriteShared(w, op, key, value, block, at.leaf.frame()->remote());
    EndTouchLeaf(w);
    if (IsRetry(s)) continue;
    Status end = w.cw.EndOperation();  // writes a dirty page that was not admitted back
    if (s.ok()) s = end;
    underfull = underfull && at.owned;  // shared leaves are deleted from lazily (the core's rule)
    break;
  }
  const bool not_swapped = cas != nullptr && s.ok() && !*cas->swapped;
  if ((s.IsNotFound() || not_swapped) && !block.is_null()) FreeValueBlock(w, block);  // never linked
  if (logging && !w.record.claimed && (s.ok() || s.IsNotFound())) {
    // Answered from the page without a change of its own (NotFound, a failed comparison):
    // only once the writes it read are durable (log_watermark.h).
    Status landed = AwaitLanded(w);
    if (!landed.ok()) s = landed;
  }
  if (logging) s = FinishRecord(w, s);
  if (!s.ok()) return s;
  return op == WriteOp::kDelete && underfull ? MergeAfterDelete(w, key) : Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::WriteOwned(Worker& w, WriteOp op, KeyRef key, ValueRef value, const tree::ValueBlockRef& block,
                               LeafAt& at, bool* underfull) {
  const auto& leaf = shared_.validator.leaf();
  cache::ExclusiveGuard x = cache::ExclusiveGuard::TryUpgrade(at.leaf);
  if (!x.owns()) return RetryStatus();
  w.Read(x.frame());  // its answer may rest on a write still being logged
  // Lock coupling: the parent must still be what led here (so no ancestor was evicted and
  // no subtree above could be offloaded meanwhile, §6.2).
  if (!at.parent.Validate()) return RetryStatus();
  if constexpr (!kSlotted<KV>) {
    // The hit path of an update: nothing but the key's slot is read. at.h is the page's
    // header (the upgrade found the version the descent validated it at), and no writer can
    // change the page under the exclusive latch.
    if (w.cas == nullptr && op != WriteOp::kDelete && !at.h.unsorted()) {
      const int slot = page_layout_.FindInPlace(x.page(), at.h.count, key);
      if (slot >= 0) return RewriteSlot(w, x, at.h, op, key, value, block, static_cast<uint32_t>(slot));
    }
  }
  CopyPage(x.page(), w.copy.data(), layout_.node_bytes);
  Header h = DecodeHeader(w.copy.data());
  if (w.cas != nullptr) {
    bool equal = false;
    DMX_RETURN_IF_ERROR(CompareUnderLock(w, key, w.copy.data(), h, &equal));
    if (!equal) return Status::Ok();  // nothing changed: no record, the page stays clean
  }
  const int slot = leaf.Find(w.copy.data(), h, key);
  if constexpr (!kSlotted<KV>) {
    if (slot >= 0 && op != WriteOp::kDelete)
      return RewriteSlot(w, x, h, op, key, value, block, static_cast<uint32_t>(slot));
  }
  const tree::ValueBlockRef old =
      slot >= 0 ? leaf.BlockAt(w.copy.data(), h, static_cast<uint32_t>(slot)) : tree::ValueBlockRef{};
  w.leaf_entries.clear();
  leaf.Collect(w.copy.data(), h, &w.leaf_entries);
  DMX_RETURN_IF_ERROR(tree::ApplyToSorted<KV>(w.leaf_entries, op, key, value, block));
  if (!leaf.Fits(h, w.leaf_entries)) {
    at.leaf = x.Downgrade();  // unchanged, but unlocking bumps the version
    DMX_RETURN_IF_ERROR(SplitChild(w, at.parent, at.leaf));
    return RetryStatus();  // insert again, now with room
  }
  if (!leaf.Build(w.image.data(), h, w.leaf_entries, /*unsorted=*/false))
    return Status::Corruption("dex: a leaf that fits its entries cannot be built");
  CopyToPool(x.page(), w.image.data(), layout_.node_bytes);
  x.MarkDirty();
  // The pool's image of the leaf may still name the old block until the leaf is written
  // back (pending_blocks.h).
  pending_.Add(x.frame()->remote(), old);
  if (op == WriteOp::kDelete) *underfull = UnderfullNode(w.image.data(), DecodeHeader(w.image.data()));
  if (w.cas != nullptr) *w.cas->swapped = true;
  return w.record.reserved != 0 ? ClaimRecord(w, x, op, key) : Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::RewriteSlot(Worker& w, cache::ExclusiveGuard& x, const Header& h, WriteOp op, KeyRef key,
                                ValueRef value, const tree::ValueBlockRef& block, uint32_t slot) {
  if constexpr (kSlotted<KV>) {
    return Status::Corruption("dex: a slotted leaf has no fixed slots");
  } else {
    // The page Collect, ApplyToSorted and Build would make, without collecting the leaf.
    const auto& leaf = shared_.validator.leaf();
    const uint32_t off = layout_.SlotOffset(slot);
    CopyPage(x.page() + off, w.copy.data() + off, Layout::kSlotBytes);
    const tree::ValueBlockRef old = leaf.BlockAt(w.copy.data(), h, slot);
    leaf.EncodeEntry(w.copy.data(), slot, LeafEntry{key, Value(value), block}, h.version);
    CopyToPool(x.page() + off, w.copy.data() + off, Layout::kSlotBytes);
    x.MarkDirty();
    pending_.Add(x.frame()->remote(), old);
    if (w.cas != nullptr) *w.cas->swapped = true;
    return w.record.reserved != 0 ? ClaimRecord(w, x, op, key) : Status::Ok();
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::LockRemote(Worker& w, GlobalAddress addr, tree::NodeLockGuard& guard, Header* h, bool* valid) {
  uint64_t cas_failures = 0;
  auto me = w.ctx.LockOwnerOn(addr.node());  // the process's lease and this worker's redo block
  if (!me.ok()) return me.status();
  Status s = shared_.lock.LockAndRead(w.ctx.ep, compute_node(w.cn).core.local_locks.get(), *me, addr,
                                      w.ctx.node(), layout_.node_bytes, guard.held(), &cas_failures);
  w.ctx.CountRetry(cas_failures);
  DMX_RETURN_IF_ERROR(s);
  *valid = shared_.validator.Decode(w.ctx.node(), h);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::WriteShared(Worker& w, WriteOp op, KeyRef key, ValueRef value, const tree::ValueBlockRef& block,
                                GlobalAddress addr) {
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
  if (w.cas != nullptr) {
    bool equal = false;
    Status compared = CompareUnderLock(w, key, w.ctx.node(), h, &equal);
    if (!compared.ok() || !equal) {
      DMX_RETURN_IF_ERROR(guard.Unlock());
      return compared;
    }
  }
  const int slot = leaf.Find(w.ctx.node(), h, key);
  const tree::ValueBlockRef old =
      slot >= 0 ? leaf.BlockAt(w.ctx.node(), h, static_cast<uint32_t>(slot)) : tree::ValueBlockRef{};
  w.leaf_entries.clear();
  leaf.Collect(w.ctx.node(), h, &w.leaf_entries);
  Status applied = tree::ApplyToSorted<KV>(w.leaf_entries, op, key, value, block);
  if (!applied.ok()) {
    DMX_RETURN_IF_ERROR(guard.Unlock());
    return applied;
  }
  if (!leaf.Fits(h, w.leaf_entries)) {
    // The core splits it; every node its separator insertion touches covers this leaf's
    // whole range, which crosses a boundary: shared too.
    w.need_refresh = true;
    DMX_RETURN_IF_ERROR(smo_.SplitLeaf(w.ctx, guard, addr, h, w.leaf_entries));
  } else {
    h.version = w.ctx.NewVersion(h.version);
    if (!leaf.Build(w.ctx.node(), h, w.leaf_entries, /*unsorted=*/false))
      return Status::Corruption("dex: a shared leaf that fits its entries cannot be built");
    fabric::Verb write = fabric::Verb::Write(addr, w.ctx.node(), layout_.node_bytes);
    DMX_RETURN_IF_ERROR(guard.WriteAndUnlock({&write, 1}));
  }
  values_.Retire(w.ctx, old);  // the write that unlinked it has landed
  if (w.cas != nullptr) *w.cas->swapped = true;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::BulkLoad(Worker& w, std::span<const LeafEntry> sorted) {
  DMX_RETURN_IF_ERROR(loader_.Load(w.ctx, sorted));
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
    const Key& probe = sorted[sorted.size() * i / parts].key;
    typename tree::TreeReader<KV>::Found found;
    DMX_RETURN_IF_ERROR(reader_.Descend(w.ctx, probe, 0, w.ctx.scratch(), &found));
    Key b = found.h.low == KV::kNegInf ? probe : found.h.low;
    if (!boundaries.empty() && !(boundaries.back() < b)) {
      // Two probes in one leaf (a small load): the next position after the last boundary
      // (u64: the next integer; bytes: the last boundary and a zero byte, if that is a key).
      if constexpr (kSlotted<KV>) {
        b = boundaries.back();
        if (b.size() < shared_.options.max_key_bytes) b.push_back('\0');
      } else {
        b = boundaries.back() + 1;
      }
    }
    boundaries.push_back(b);
  }
  // Only the hosts of the compute nodes losing keys may move them: a process loading for
  // a cluster should host them all (or repartition from each host afterwards).
  Status moved = Repartition(boundaries).status();
  return moved.IsNotOwner() ? Status::Ok() : moved;
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_OPS(KV)                                                                                   \
  template Status DexTree<KV>::BeforeRetry(Worker&, KeyRef, Attempts&);                                   \
  template Status DexTree<KV>::Lookup(Workers&, KeyRef, std::string*);                                    \
  template Status DexTree<KV>::Write(Workers&, WriteOp, KeyRef, ValueRef, const tree::CompareValue*);                                \
  template Status DexTree<KV>::WriteOwned(Worker&, WriteOp, KeyRef, ValueRef, const tree::ValueBlockRef&, \
                                          LeafAt&, bool*);                                                \
  template Status DexTree<KV>::RewriteSlot(Worker&, cache::ExclusiveGuard&, const Header&, WriteOp, KeyRef,  \
                                           ValueRef, const tree::ValueBlockRef&, uint32_t);              \
  template Status DexTree<KV>::LockRemote(Worker&, GlobalAddress, tree::NodeLockGuard&, Header*, bool*);  \
  template Status DexTree<KV>::WriteShared(Worker&, WriteOp, KeyRef, ValueRef, const tree::ValueBlockRef&, \
                                           GlobalAddress);                                                \
  template Status DexTree<KV>::BulkLoad(Worker&, std::span<const LeafEntry>);                             \
  template class WorkerSet<KV>;
DMX_DEX_OPS(U64Format)
DMX_DEX_OPS(BytesFormat)
#undef DMX_DEX_OPS

}  // namespace dmindex::designs::dex
