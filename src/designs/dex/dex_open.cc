// Opening a DEX index (§4 across processes): the catalog entry, the partition map in the
// pool, and this process's host leases.
#include <algorithm>
#include <chrono>
#include <random>

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

}  // namespace

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
      **ep, index.name, {"dex", index.node_bytes, alloc::KeySchema::Of(index)}, &created,
      index.create_if_missing);
  if (!entry.ok()) return entry.status();
  // This process's host-lease token: random, so two processes (on any machines) differ.
  const uint64_t token = runtime::Entropy() | 1;
  auto opened = created ? Create(fabric, **ep, *o, *layout, *entry, token)
                        : Join(fabric, **ep, *o, *layout, *entry, index.name, token);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<DexTree> t = std::move(opened).value();
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
  auto first = store.ClaimHosts(ep, parts, o.compute_nodes, want_first, token);
  if (!first.ok()) return first.status();
  std::unique_ptr<DexTree> t(new DexTree(fabric, o, layout, entry.root_word, *first, parts));
  t->store_ = store;
  return t;
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_OPEN(KV)                                                                                   \
  template Result<std::unique_ptr<DexTree<KV>>> DexTree<KV>::Open(fabric::Fabric&, const IndexOptions&);   \
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
