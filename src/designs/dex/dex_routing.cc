// Logical partitioning at run time (DEX §4): which compute node serves a key (and whether
// this process hosts it), admitting operations under the serving node's gate, and moving
// partition boundaries - within a process or across processes (partition_store.h).
#include <algorithm>
#include <chrono>

#include "common/runtime.h"
#include "common/retry_status.h"
#include <optional>

#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {

template <tree::KeyValueTraits KV>
KeyRoute<typename KV::Keys> DexTree<KV>::RouteOf(KeyRef key) const {
  const Map& m = *map_.load(std::memory_order_acquire);
  if (!m.partitioned()) return KeyRoute<Keys>{};  // any compute node serves any key
  const uint32_t owner = m.Owner(key);
  return KeyRoute<Keys>{owner, m.Begin(owner), m.End(owner), Hosts(owner)};
}

template <tree::KeyValueTraits KV>
Result<DexWorker<KV>*> DexTree<KV>::Enter(Workers& ws, KeyRef key, OperationGate::Pass* pass) {
  bool reloaded = false;
  // A compute node whose gate is closed is being drained: written back by a repartitioning
  // (one flush of its dirty pages), a checkpoint or Close; wait for it, within kDexDraining.
  // Made only then: every operation enters.
  std::optional<RetryBudget> drain;
  std::optional<Backoff> drain_wait;
  for (;;) {
    const Map* m = map_.load(std::memory_order_acquire);
    const uint32_t cn = m->partitioned() ? m->Owner(key) : ws.home();
    if (!Hosts(cn)) {
      // Another process may have handed the range to us since we last looked.
      if (!reloaded) {
        reloaded = true;
        DMX_RETURN_IF_ERROR(ReloadMap());
        continue;
      }
      return Status::NotOwner(tree::DescribeKey(key) + " is served by compute node " +
                              std::to_string(cn) + " (keys " + m->RangeText(cn) +
                              "), which this process does not host; route it there "
                              "(Partitioning::RouteKey)");
    }
    // The worker first: its slot is what passes the gate (making one registers the slot).
    auto w = ws.Get(cn);
    if (!w.ok()) return w.status();
    *pass = compute_node(cn).gate.TryEnter((*w)->gate_slot);
    if (pass->entered()) [[likely]] {
      // A map installed while we waited may have moved the key: route again.
      if (map_.load(std::memory_order_acquire) == m) {
        (*w)->map = m;
        return *w;
      }
      *pass = {};
      continue;
    }
    if (!drain) {
      drain.emplace(retry_limits::kDexDraining, "dex: waiting for a draining compute node");
      drain_wait.emplace(backoff::kLockHeld, "a draining compute node to reopen");
    }
    if (!drain->Spend()) return drain->Exhausted(std::to_string(cn));
    drain_wait->Pause();
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ReloadMap() {
  std::lock_guard lk(maps_mu_);
  auto stored = store_.Load(maintenance_->ctx.ep);
  if (!stored.ok()) return stored.status();
  if (stored->version <= map_.load(std::memory_order_acquire)->version()) return Status::Ok();
  return Install(MapOf(stored->boundaries, stored->version), nullptr);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Install(std::unique_ptr<Map> next, const std::function<Status()>& publish) {
  const Map& current = *map_.load(std::memory_order_acquire);
  // Compute nodes whose range stays put keep running: they touch only nodes overlapping
  // their range, whose ownership is the same under both maps.
  std::vector<ComputeNode*> moving;
  for (auto& n : nodes_)
    if (!current.SameRange(*next, n->id)) moving.push_back(n.get());
  std::vector<OperationGate::Closed> gates;  // reopened on every way out
  gates.reserve(moving.size());
  for (ComputeNode* n : moving) gates.emplace_back(n->gate);  // operations in flight finish first
  for (ComputeNode* n : moving) {
    // Its cached nodes may be owned by someone else now: write back, start cold.
    cache::CacheWorker cw(*n->bm, maintenance_->pages);
    auto flushed = n->bm->FlushDirty(cw);
    if (!flushed.ok()) return flushed.status();
    // Before the map is published: its log must not outlive the range it was written for.
    DMX_RETURN_IF_ERROR(TruncateLog(*n));
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
  for (ComputeNode* n : moving) {
    cache::ExclusiveGuard mx(&n->meta);
    SetRoot(mx, *root);
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Result<double> DexTree<KV>::Repartition(std::vector<Key> boundaries) {
  if (!options_.partition) return Status::InvalidArgument("repartition: partitioning is off");
  const auto invalid = [&](const Key& k) {
    if constexpr (kSlotted<KV>) return k.empty() || k.size() > shared_.options.max_key_bytes;
    else return !u64::IsValidKey(k);
  };
  if (boundaries.size() + 1 != partitions_ || !std::is_sorted(boundaries.begin(), boundaries.end()) ||
      std::any_of(boundaries.begin(), boundaries.end(), invalid))
    return Status::InvalidArgument("repartition: need " + std::to_string(partitions_ - 1) +
                                   " ascending valid keys");
  std::vector<std::string> stored_form;  // as the pool holds them (partition_store.h)
  for (const Key& b : boundaries) stored_form.push_back(tree::PublicKeys<Keys>::Public(b));
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
    Status s = Install(MapOf(stored.boundaries, stored.version), nullptr);
    if (!s.ok()) return unlock_on_error(s);
  }
  auto next = std::make_unique<Map>(std::move(boundaries), true, stored.version + 2);
  const Map& current = *map_.load(std::memory_order_acquire);
  // Keys may only leave compute nodes of this process: only it can write their dirty
  // pages back before the others start serving them.
  for (uint32_t i = 0; i < partitions_; ++i) {
    // Keeps its keys: the next range covers the current one (an absent end is +inf).
    const bool had = !current.Empty(i);
    const bool keeps = !next->Empty(i) && next->Begin(i) <= current.Begin(i) &&
                       (!next->End(i) || (current.End(i) && !(*next->End(i) < *current.End(i))));
    if (had && !keeps && !Hosts(i))
      return unlock_on_error(Status::NotOwner(
          "repartition: compute node " + std::to_string(i) + " would give up keys, and it is hosted "
          "by another process; call Repartition there"));
  }
  Status s = Install(std::move(next), [&] { return store_.Publish(ep, stored.version, stored_form); });
  if (!s.ok()) return unlock_on_error(s);
  return std::chrono::duration<double>(runtime::Now() - start).count();
}

template <tree::KeyValueTraits KV>
std::unique_ptr<PartitionMap<typename KV::Keys>> DexTree<KV>::MapOf(const std::vector<std::string>& boundaries,
                                                                    uint64_t version) const {
  std::vector<Key> keys;
  for (const std::string& b : boundaries) keys.push_back(Key(tree::PublicKeys<Keys>::Tree(b)));
  return std::make_unique<Map>(std::move(keys), options_.partition, version);
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_ROUTING(KV)                                                                                \
  template KeyRoute<typename KV::Keys> DexTree<KV>::RouteOf(KeyRef) const;                                 \
  template Result<DexWorker<KV>*> DexTree<KV>::Enter(Workers&, KeyRef, OperationGate::Pass*); \
  template Status DexTree<KV>::ReloadMap();                                                                \
  template Status DexTree<KV>::Install(std::unique_ptr<Map>, const std::function<Status()>&);              \
  template Result<double> DexTree<KV>::Repartition(std::vector<Key>);                                      \
  template std::unique_ptr<PartitionMap<typename KV::Keys>> DexTree<KV>::MapOf(const std::vector<std::string>&, \
                                                                               uint64_t) const;
DMX_DEX_ROUTING(U64Format)
DMX_DEX_ROUTING(BytesFormat)
#undef DMX_DEX_ROUTING

}  // namespace dmindex::designs::dex
