// Opening a DEX index (§4 across processes): the catalog entry, the partition map in the
// pool, and this process's host leases.
#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>

#include "common/runtime.h"
#include "alloc/catalog.h"
#include "common/retry.h"
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {
namespace {

// A process that opens an index another one is creating waits for its partition map.
Result<GlobalAddress> AwaitMapBlock(fabric::Endpoint& ep, GlobalAddress map_word, const std::string& name) {
  RetryBudget budget(retry_limits::kPartitionMapCreated, "open dex index");
  Backoff backoff(backoff::kPoll, "the partition map of an index being created", map_word);
  for (;;) {
    uint64_t raw = 0;
    DMX_RETURN_IF_ERROR(ep.Read(map_word, &raw, 8));
    if (raw != 0) return GlobalAddress::FromRaw(raw);
    if (!budget.Spend()) return budget.Exhausted(name + " (no partition map at " + map_word.ToString() + ")");
    backoff.Pause();
  }
}

// Host tokens name a lease: a tag above the 34 bits of a HolderId.
constexpr uint64_t kLeaseTokenTag = uint64_t{0x4c53} << 48;
uint64_t HostToken(lease::HolderId id) { return kLeaseTokenTag | id.Pack(); }
std::optional<lease::HolderId> HolderOf(uint64_t token) {
  if ((token >> 48) != (kLeaseTokenTag >> 48)) return std::nullopt;  // not a lease's (an older opener's)
  return lease::HolderId::Unpack(token & ((uint64_t{1} << lease::HolderId::kBits) - 1));
}

}  // namespace

// Claims the compute nodes an opener asks for. If they (or, without `first`, all runs) are
// hosted, watches their hosts' leases: a host whose lease expired is fenced - it can never
// write to the pool again (DexTree::Live) - and its host words freed, then claimed here (the
// opener then replays their redo logs). A host seen renewing is alive: InvalidArgument, as
// before. So a dead process's compute nodes are taken over by the next opener, after at
// most its lease length plus a quarter (lease::TakeoverWait), with no operator; a live
// host costs an opener one renewal period of watching.
template <tree::KeyValueTraits KV>
Result<uint32_t> DexTree<KV>::ClaimOrTakeOver(fabric::Endpoint& ep, const PartitionStore& store,
                                              uint32_t parts, uint32_t count,
                                              std::optional<uint32_t> first, uint64_t token) {
  lease::LeaseObserver watcher;
  std::map<uint64_t, std::chrono::milliseconds> still;  // per host token: how long unchanged
  std::set<uint64_t> alive;                             // host tokens seen renewing
  Backoff poll(backoff::kPoll, "the leases of the hosts of the wanted compute nodes");
  for (;;) {
    auto claimed = store.ClaimHosts(ep, parts, count, first, token);
    if (claimed.ok() || !claimed.status().IsInvalidArgument()) return claimed;
    auto snap = store.Inspect(ep);
    if (!snap.ok()) return snap.status();
    const uint32_t from = first.value_or(0), to = first ? *first + count : parts;
    bool freed = false, undecided = false;
    for (uint32_t i = from; i < to && i < snap->leases.size(); ++i) {
      const uint64_t host = snap->leases[i];
      const auto holder = HolderOf(host);
      if (!holder) continue;  // free, or a token without a lease: only an operator frees it
      auto fenced = watcher.FenceIfExpired(ep, *holder);
      if (!fenced.ok()) return fenced.status();
      if (*fenced) {
        // A CAS from the dead host's token: a racing taker that freed (or took) it first wins.
        DMX_RETURN_IF_ERROR(store.ReleaseHosts(ep, i, 1, host));
        freed = true;
        continue;
      }
      auto unchanged = watcher.StillFor(ep, *holder);
      if (!unchanged.ok()) return unchanged.status();
      // A renewal since the last look (the time unchanged went down): the host is alive.
      auto [it, fresh] = still.try_emplace(host, *unchanged);
      if (!fresh && *unchanged < it->second) alive.insert(host);
      it->second = *unchanged;
      if (!alive.contains(host)) undecided = true;
    }
    if (freed) continue;
    if (!undecided) return claimed;  // every host renewed while we watched
    poll.Pause();
  }
}

// The creator of the catalog entry (race-free, alloc::Catalog) writes the partition map and
// claims its compute nodes before it publishes the map's address; everyone else waits for
// that address, adopts the stored map and claims free compute nodes.
template <tree::KeyValueTraits KV>
Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Open(fabric::Fabric& fabric, const IndexOptions& index) {
  auto o = ResolveDexOptions(index);
  if (!o.ok()) return o.status();
  auto layout = Layout::For(o->tree);  // the slotted format's: its node size rule, naming the size needed
  if (!layout.ok()) return layout.status();
  if (fabric.memory_nodes() >= 0x8000) return Status::InvalidArgument("dex: too many memory nodes");
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(
      **ep, index.name, {"dex", index.node_bytes, alloc::KeySchema::Of(index), fabric.memory_nodes()}, &created,
      index.create_if_missing);
  if (!entry.ok()) return entry.status();
  o->tree.chunk_owner = entry->owner;  // every chunk of this process's allocators
  // This process's lease: its id is the host token, so an opener that finds the compute
  // nodes it wants hosted can tell whether their host is still alive.
  lease::LeaseOptions lo;
  lo.length = std::chrono::milliseconds(o->lease_ms);
  auto lease = lease::Lease::Claim(fabric, lo);
  if (!lease.ok()) return lease.status();
  auto hold = alloc::IndexHold::Take(fabric, *entry, lease->get(), lo.length);
  if (!hold.ok()) return hold.status();
  const uint64_t token = HostToken((*lease)->id());
  auto opened = created ? Create(fabric, **ep, *o, *layout, *entry, token)
                        : Join(fabric, **ep, *o, *layout, *entry, index.name, token);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<DexTree> t = std::move(opened).value();
  t->lease_ = std::move(lease).value();
  t->hold_ = std::move(hold).value();
  t->host_token_ = token;
  // Until the maintenance worker exists (then the destructor does it), failing gives the
  // leases back here.
  auto give_back = [&](Status s) {
    (void)t->store_.ReleaseHosts(**ep, t->first_, o->compute_nodes, token);
    return s;
  };
  auto stored = t->store_.Load(**ep);
  if (!stored.ok()) return give_back(stored.status());
  t->maps_.push_back(t->MapOf(stored->boundaries, stored->version));
  t->map_.store(t->maps_.back().get(), std::memory_order_release);
  auto m = t->NewWorker(t->first_);
  if (!m.ok()) return give_back(m.status());
  t->maintenance_ = std::move(m).value();
  // Point every compute node's meta page at the current root.
  uint64_t root = 0;
  DMX_RETURN_IF_ERROR((*ep)->Read(entry->root_word, &root, 8));
  for (auto& n : t->nodes_) {
    cache::ExclusiveGuard mx(&n->meta);
    t->SetRoot(mx, GlobalAddress::FromRaw(root));
  }
  // What a previous host of these compute nodes acknowledged is applied before anything
  // is served (dex_durability.cc).
  DMX_RETURN_IF_ERROR(t->AttachLogs(**ep, *entry));
  for (auto& n : t->nodes_)
    if (n->log) DMX_RETURN_IF_ERROR(t->ReplayLog(*n));
  t->StartWriteBack();
  return t;
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Create(fabric::Fabric& fabric, fabric::Endpoint& ep,
                                                 const DexOptions& o, const Layout& layout,
                                                 const alloc::CatalogEntry& entry, uint64_t token) {
  const uint32_t parts = o.partitions != 0 ? o.partitions : o.compute_nodes;
  const uint32_t first = static_cast<uint32_t>(std::max<int64_t>(o.first_node, 0));
  if (first + o.compute_nodes > parts)
    return Status::InvalidArgument("dex: knob first_node leaves too few of the " + std::to_string(parts) +
                                   " compute nodes for this process's " + std::to_string(o.compute_nodes));
  const std::vector<std::string> boundaries = InitialBoundaries(o, parts);
  std::unique_ptr<DexTree> t(new DexTree(fabric, o, layout, entry.root_word, first, parts));
  const uint32_t max_key = entry.schema.max_key_bytes;
  auto block = t->nodes_[0]->core.allocator.Allocate(ep, PartitionStore::BlockBytes(parts, max_key));
  if (!block.ok()) return block.status();
  DMX_RETURN_IF_ERROR(PartitionStore::Initialize(ep, *block, parts, max_key, boundaries));
  t->store_ = PartitionStore(*block);
  auto claimed = t->store_.ClaimHosts(ep, parts, o.compute_nodes, first, token);
  if (!claimed.ok()) return claimed.status();
  // A creator that dies here leaves the index without a map: openers time out clearly.
  Status published = ep.Write(entry.aux_word(0), &block.value(), 8);
  if (!published.ok()) {
    (void)t->store_.ReleaseHosts(ep, first, o.compute_nodes, token);
    return published;
  }
  return t;
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Join(fabric::Fabric& fabric, fabric::Endpoint& ep,
                                               const DexOptions& o, const Layout& layout,
                                               const alloc::CatalogEntry& entry,
                                               const std::string& name, uint64_t token) {
  auto block = AwaitMapBlock(ep, entry.aux_word(0), name);
  if (!block.ok()) return block.status();
  PartitionStore store(*block);
  auto stored = store.Load(ep);
  if (!stored.ok()) return stored.status();
  const uint32_t parts = static_cast<uint32_t>(stored->boundaries.size() + 1);
  // The stored map is the cluster's: an opener may not disagree with it.
  if (o.partitions != 0 && o.partitions != parts)
    return Status::InvalidArgument("dex: index " + name + " is partitioned over " +
                                   std::to_string(parts) + " compute nodes, this process says " +
                                   std::to_string(o.partitions) + " (knob partitions)");
  if (!o.boundaries.empty() && o.boundaries != stored->boundaries)
    return Status::InvalidArgument("dex: index " + name +
                                   " exists with other boundaries; move them with Repartition");
  std::optional<uint32_t> want_first;
  if (o.first_node >= 0) want_first = static_cast<uint32_t>(o.first_node);
  if (want_first.value_or(0) + o.compute_nodes > parts)
    return Status::InvalidArgument("dex: index " + name + " has " + std::to_string(parts) +
                                   " compute nodes; this process asks for " +
                                   std::to_string(o.compute_nodes) + " from " +
                                   std::to_string(want_first.value_or(0)));
  auto first = ClaimOrTakeOver(ep, store, parts, o.compute_nodes, want_first, token);
  if (!first.ok()) return first.status();
  std::unique_ptr<DexTree> t(new DexTree(fabric, o, layout, entry.root_word, *first, parts));
  t->store_ = store;
  return t;
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_OPEN(KV)                                                                                   \
  template Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Open(fabric::Fabric&, const IndexOptions&);   \
  template Result<uint32_t> DexTree<KV>::ClaimOrTakeOver(fabric::Endpoint&, const PartitionStore&, uint32_t,  \
                                                         uint32_t, std::optional<uint32_t>, uint64_t);       \
  template Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Create(                                        \
      fabric::Fabric&, fabric::Endpoint&, const DexOptions&, const Layout&, const alloc::CatalogEntry&, uint64_t); \
  template Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Join(fabric::Fabric&, fabric::Endpoint&,       \
                                                                  const DexOptions&, const Layout&,         \
                                                                  const alloc::CatalogEntry&,               \
                                                                  const std::string&, uint64_t);
DMX_DEX_OPEN(U64Format)
DMX_DEX_OPEN(BytesFormat)
#undef DMX_DEX_OPEN

}  // namespace dmindex::designs::dex
