#include "designs/dex/dex_index.h"

#include "alloc/catalog.h"
#include "designs/dex/dex_tree.h"
#include "tree/public_keys.h"

namespace dmindex::designs {
namespace {

using dex::DexTree;
using dex::WriteOp;

// Keys and values reach a session checked against the index's rules (Session's public
// calls); DEX works on the format's keys (tree/public_keys.h: u64 integers or the bytes).
template <tree::KeyValueTraits KV>
class DexSession final : public Session {
 public:
  using Codec = tree::PublicKeys<typename KV::Keys>;
  DexSession(DexTree<KV>& tree, uint32_t home) : tree_(tree), workers_(tree, home) {}

 private:
  // A read's answer stands only if the lease was live after the read: once it is revoked (a
  // process stalled past it) the index may have been dropped and the memory read reused
  // (docs/OPERATIONS.md, "Drop"). Before the read, a handle known to be fenced reads nothing
  // (LeaseNotFenced, no clock read). Not for speed: without it every lookup of a woken revoked
  // handle descends through the reused memory until its retry budgets run out -
  // RevokedHolderTest's dex case took 200 s instead of 2 (the fourth pass of
  // docs/results/dex-hit-path.md). One that expired unnoticed still reads: its first
  // operation stops at its first restart (BeforeRetry asks the clock) or is refused by the
  // check after its read, which fences the handle. Writes check the lease before they write.
  Status Answer(Status s) {
    if (!s.ok() && !s.IsNotFound()) return s;
    Status live = tree_.LeaseLive();
    return live.ok() ? s : live;
  }
  Status DoLookup(Slice key, std::string* value) override {
    DMX_RETURN_IF_ERROR(tree_.LeaseNotFenced());
    return Answer(tree_.Lookup(workers_, Codec::Tree(key), value));
  }
  Status DoInsert(Slice key, Slice value) override { return tree_.Write(workers_, WriteOp::kUpsert, Codec::Tree(key), value); }
  Status DoUpdate(Slice key, Slice value) override { return tree_.Write(workers_, WriteOp::kUpdate, Codec::Tree(key), value); }
  Status DoDelete(Slice key) override { return tree_.Write(workers_, WriteOp::kDelete, Codec::Tree(key), {}); }
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped, std::string* current) override {
    const tree::CompareValue cas{expected, swapped, current};
    return tree_.Write(workers_, WriteOp::kUpdate, Codec::Tree(key), desired, &cas);
  }
  // Successive fence-key lookups, leaf by leaf (§7: DEX keeps no leaf links to follow): each
  // next leaf is the one covering the last one's high fence.
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(tree_.LeaseNotFenced());
    const tree::ScanRange<KV> r = Codec::Range(range);
    entries_.clear();
    Status s;
    for (typename KV::Key cursor = r.start; entries_.size() < count;) {
      typename KV::Key next{};
      s = tree_.ScanLeaf(workers_, r, cursor, count, &entries_, &next);
      if (!s.ok() || next == KV::kPosInf || r.Beyond(next)) break;  // kPosInf: the last leaf
      cursor = std::move(next);
    }
    if (Status live = Answer(Status::Ok()); !live.ok()) return live;
    // NotOwner keeps the pairs before the foreign partition (Session::Scan).
    out->reserve(out->size() + entries_.size());
    for (auto& e : entries_) out->push_back({Codec::Public(e.key), std::move(e.value)});
    return s;
  }

  DexTree<KV>& tree_;
  dex::WorkerSet<KV> workers_;
  std::vector<tree::LeafEntry<KV>> entries_;
};

template <tree::KeyValueTraits KV>
class DexIndex final : public Index, public Partitioning {
 public:
  using Codec = tree::PublicKeys<typename KV::Keys>;
  DexIndex(fabric::Fabric& fabric, const IndexOptions& options, std::unique_ptr<DexTree<KV>> tree)
      : Index("dex", options), fabric_(fabric), tree_(std::move(tree)) {}
  ~DexIndex() override { CloseForDestructor(); }

  uint32_t partitions() const override { return tree_->partitions(); }
  Route RouteKey(Slice key) const override {
    if constexpr (!dex::kSlotted<KV>) {
      if (key.size() != kU64KeyBytes) return Route{};  // not a key of the index: nobody's
    }
    const dex::KeyRoute<typename KV::Keys> r = tree_->RouteOf(Codec::Tree(key));
    Route route{r.compute_node, Codec::Public(r.begin), std::nullopt, r.hosted};
    if (r.end) route.end = Codec::Public(*r.end);
    return route;
  }
  Result<double> Repartition(std::vector<std::string> boundaries) override {
    std::vector<typename KV::Key> keys;
    for (const std::string& b : boundaries) {
      if (Status s = rules().CheckKey(b); !s.ok())
        return Status::InvalidArgument("partition boundary: " + s.message());
      keys.push_back(typename KV::Key(Codec::Tree(b)));
    }
    return tree_->Repartition(std::move(keys));
  }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto w = tree_->NewWorker(tree_->first_node());
    if (!w.ok()) return w.status();
    std::vector<tree::LeafEntry<KV>> entries;
    entries.reserve(sorted.size());
    for (const KeyValue& kv : sorted) entries.push_back({typename KV::Key(Codec::Tree(kv.key)), kv.value, {}});
    return tree_->BulkLoad(**w, entries);
  }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    return std::unique_ptr<Session>(new DexSession<KV>(*tree_, tree_->first_node() + compute_node));
  }
  IndexStats DoStats() const override { return tree_->Stats(); }
  void AddProperties(Properties* out) const override {
    for (auto& p : tree_->Counters()) out->push_back(std::move(p));
  }
  // With partitioning off every compute node serves every key.
  Partitioning* DoPartitioning() override { return tree_->options().partition ? this : nullptr; }
  Status DoClose() override { return tree_->Close(); }
  // After Close wrote the dirty pages back and gave the compute nodes up: the tree goes (its
  // threads, its lease), then its chunks - nodes, logs, the partition map's block - and name.
  Status DoPrepareDrop(const DropOptions& options) override {
    return alloc::Catalog::PrepareDrop(fabric_, this->options().name, tree_->options().tree.chunk_owner,
                                       options, tree_->own_holder());
  }
  Status DoDrop(const DropOptions& options) override {
    if (dropped_) return Status::Ok();
    if (tree_) owner_ = tree_->options().tree.chunk_owner;
    tree_.reset();
    DMX_RETURN_IF_ERROR(alloc::Catalog::Drop(fabric_, this->options().name, owner_, options));
    dropped_ = true;
    return Status::Ok();
  }

  fabric::Fabric& fabric_;
  std::unique_ptr<DexTree<KV>> tree_;  // null once dropped
  uint64_t owner_ = 0;                 // the catalog entry's owner tag, once dropping
  bool dropped_ = false;
};

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, const IndexOptions& options) {
  auto tree = DexTree<KV>::Open(fabric, options);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new DexIndex<KV>(fabric, options, std::move(tree).value()));
}

}  // namespace

Result<std::unique_ptr<Index>> MakeDex(fabric::Fabric& fabric, const IndexOptions& options) {
  if (options.key_format == KeyFormat::kU64) return Open<dex::U64Format>(fabric, options);
  return Open<dex::BytesFormat>(fabric, options);
}

}  // namespace dmindex::designs
