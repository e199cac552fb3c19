// Logical partitioning at run time (DEX §4): which compute node serves a key (and whether
// this process hosts it), admitting operations under the serving node's gate, and moving
// partition boundaries - within a process or across processes (partition_store.h).
#include <algorithm>
#include <chrono>

#include "common/runtime.h"
#include "common/retry_status.h"
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {

KeyRoute DexTree::RouteOf(Key key) const {
  const PartitionMap& m = *map_.load(std::memory_order_acquire);
  if (!m.partitioned()) return KeyRoute{};  // any compute node serves any key
  const uint32_t owner = m.Owner(key);
  return KeyRoute{owner, m.Begin(owner), m.End(owner), Hosts(owner)};
}

Result<DexWorker*> DexTree::Enter(WorkerSet& ws, Key key, std::shared_lock<runtime::SharedMutex>* gate) {
  bool reloaded = false;
  // A draining compute node is being written back by a repartitioning (one flush of its
  // dirty pages); wait for it, within kDexDraining.
  RetryBudget drain(retry_limits::kDexDraining, "dex: waiting for a draining compute node");
  Backoff drain_wait(backoff::kLockHeld, "a repartitioning to finish");
  for (;;) {
    const PartitionMap* m = map_.load(std::memory_order_acquire);
    const uint32_t cn = m->partitioned() ? m->Owner(key) : ws.home();
    if (!Hosts(cn)) {
      // Another process may have handed the range to us since we last looked.
      if (!reloaded) {
        reloaded = true;
        DMX_RETURN_IF_ERROR(ReloadMap());
        continue;
      }
      return Status::NotOwner("key " + std::to_string(key) + " is served by compute node " +
                              std::to_string(cn) + " (keys " + m->RangeText(cn) +
                              "), which this process does not host; route it there "
                              "(Partitioning::RouteKey)");
    }
    DexComputeNode& node = compute_node(cn);
    if (node.draining.load(std::memory_order_acquire)) {
      if (!drain.Spend()) return drain.Exhausted(std::to_string(cn));
      drain_wait.Pause();
      continue;
    }
    std::shared_lock g(node.gate);
    // A map installed while we waited may have moved the key: route again.
    if (map_.load(std::memory_order_acquire) != m) continue;
    auto w = ws.Get(cn);
    if (!w.ok()) return w.status();
    (*w)->map = m;
    *gate = std::move(g);
    return *w;
  }
}

Status DexTree::ReloadMap() {
  std::lock_guard lk(maps_mu_);
  auto stored = store_.Load(maintenance_->ctx.ep);
  if (!stored.ok()) return stored.status();
  if (stored->version <= map_.load(std::memory_order_acquire)->version()) return Status::Ok();
  return Install(std::make_unique<PartitionMap>(std::move(stored->boundaries), options_.partition,
                                                stored->version),
                 nullptr);
}

Status DexTree::Install(std::unique_ptr<PartitionMap> next, const std::function<Status()>& publish) {
  const PartitionMap& current = *map_.load(std::memory_order_acquire);
  // Compute nodes whose range stays put keep running: they touch only nodes overlapping
  // their range, whose ownership is the same under both maps.
  std::vector<DexComputeNode*> moving;
  std::vector<std::unique_lock<runtime::SharedMutex>> gates;
  for (auto& n : nodes_) {
    if (current.SameRange(*next, n->id)) continue;
    n->draining.store(true, std::memory_order_release);
    moving.push_back(n.get());
  }
  struct Undrain {
    std::vector<DexComputeNode*>& nodes;
    ~Undrain() {
      for (DexComputeNode* n : nodes) n->draining.store(false, std::memory_order_release);
    }
  } undrain{moving};
  for (DexComputeNode* n : moving) gates.emplace_back(n->gate);  // operations in flight finish first
  for (DexComputeNode* n : moving) {
    // Its cached nodes may be owned by someone else now: write back, start cold.
    cache::CacheWorker cw(*n->bm, maintenance_->pages);
    auto flushed = n->bm->FlushDirty(cw);
    if (!flushed.ok()) return flushed.status();
    DMX_RETURN_IF_ERROR(n->bm->DropAll(cw));
    cache::ExclusiveGuard mx(&n->meta);
    cache::Swip::Store(page_layout_.ChildSlot(mx.page(), 0),
                       cache::Swip::Remote(GlobalAddress::FromRaw(0)));
  }
  if (publish) DMX_RETURN_IF_ERROR(publish());
  maps_.push_back(std::move(next));
  map_.store(maps_.back().get(), std::memory_order_release);
  // The dropped caches start from the current root (the meta page was reset above).
  auto root = reader_.RefreshRoot(maintenance_->ctx);
  if (!root.ok()) return root.status();
  for (DexComputeNode* n : moving) {
    cache::ExclusiveGuard mx(&n->meta);
    SetRoot(mx, *root);
  }
  return Status::Ok();
}

Result<double> DexTree::Repartition(std::vector<Key> boundaries) {
  if (!options_.partition) return Status::InvalidArgument("repartition: partitioning is off");
  if (boundaries.size() + 1 != partitions_ || !std::is_sorted(boundaries.begin(), boundaries.end()) ||
      std::any_of(boundaries.begin(), boundaries.end(), [](Key k) { return !IsValidKey(k); }))
    return Status::InvalidArgument("repartition: need " + std::to_string(partitions_ - 1) +
                                   " ascending valid keys");
  const auto start = runtime::Now();
  std::lock_guard lk(maps_mu_);
  fabric::Endpoint& ep = maintenance_->ctx.ep;
  // Lock the stored map; under its lock it is the truth, so catch up with it first.
  StoredMap stored;
  RetryBudget locking(retry_limits::kPartitionMapLocked, "repartition");
  Backoff lock_wait(backoff::kPoll, "the partition map's lock");
  for (;;) {
    auto loaded = store_.Load(ep);
    if (!loaded.ok()) return loaded.status();
    stored = std::move(loaded).value();
    Status locked = store_.Lock(ep, stored.version);
    if (locked.ok()) break;
    if (!IsRetry(locked)) return locked;
    if (!locking.Spend()) return locking.Exhausted("");
    lock_wait.Pause();
  }
  auto unlock_on_error = [&](Status s) {
    (void)store_.Unlock(ep, stored.version);
    return s;
  };
  if (stored.version != map_.load(std::memory_order_acquire)->version()) {
    Status s = Install(std::make_unique<PartitionMap>(stored.boundaries, true, stored.version), nullptr);
    if (!s.ok()) return unlock_on_error(s);
  }
  auto next = std::make_unique<PartitionMap>(boundaries, true, stored.version + 2);
  const PartitionMap& current = *map_.load(std::memory_order_acquire);
  // Keys may only leave compute nodes of this process: only it can write their dirty
  // pages back before the others start serving them.
  for (uint32_t i = 0; i < partitions_; ++i) {
    // Keeps its keys: the next range covers the current one (an absent end is +inf).
    const bool had = !current.Empty(i);
    const bool keeps = !next->Empty(i) && next->Begin(i) <= current.Begin(i) &&
                       (!next->End(i) || (current.End(i) && *next->End(i) >= *current.End(i)));
    if (had && !keeps && !Hosts(i))
      return unlock_on_error(Status::NotOwner(
          "repartition: compute node " + std::to_string(i) + " would give up keys, and it is hosted "
          "by another process; call Repartition there"));
  }
  Status s = Install(std::move(next), [&] { return store_.Publish(ep, stored.version, boundaries); });
  if (!s.ok()) return unlock_on_error(s);
  return std::chrono::duration<double>(runtime::Now() - start).count();
}

}  // namespace dmindex::designs::dex
