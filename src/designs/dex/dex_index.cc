#include "designs/dex/dex_index.h"

#include "designs/dex/dex_tree.h"

namespace dmindex::designs {
namespace {

using dex::DexTree;
using dex::WriteOp;

// Keys reach it checked against the u64 format (Session's public calls); DEX works on their
// integers (dex_keys.h).
class DexSession final : public Session {
 public:
  DexSession(DexTree& tree, uint32_t home) : tree_(tree), workers_(tree, home) {}

 private:
  Status DoLookup(Slice key, std::string* value) override {
    dex::Value v = 0;
    DMX_RETURN_IF_ERROR(tree_.Lookup(workers_, u64::Decode(key), &v));
    *value = u64::Encode(v);
    return Status::Ok();
  }
  Status DoInsert(Slice key, Slice value) override { return Write(WriteOp::kUpsert, key, value); }
  Status DoUpdate(Slice key, Slice value) override { return Write(WriteOp::kUpdate, key, value); }
  Status DoDelete(Slice key) override { return tree_.Write(workers_, WriteOp::kDelete, u64::Decode(key), 0); }
  // Successive fence-key lookups, leaf by leaf (§7: DEX keeps no leaf links to follow).
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    const tree::ScanRange<tree::U64KV> r = tree::ToScanRange(range);
    pairs_.clear();
    Status s;
    for (dex::Key cursor = r.start; pairs_.size() < count;) {
      dex::Key next = 0;
      s = tree_.ScanLeaf(workers_, r, cursor, count, &pairs_, &next);
      if (!s.ok() || r.Beyond(next)) break;  // kPosInf: the last leaf
      cursor = next;
    }
    // NotOwner keeps the pairs before the foreign partition (Session::Scan).
    out->reserve(pairs_.size());
    for (const dex::KeyValue& kv : pairs_) out->push_back({u64::Encode(kv.key), u64::Encode(kv.value)});
    return s;
  }
  Status Write(WriteOp op, Slice key, Slice value) {
    dex::Value v = 0;
    DMX_RETURN_IF_ERROR(u64::ValueOf(value, &v, "dex"));
    return tree_.Write(workers_, op, u64::Decode(key), v);
  }

  DexTree& tree_;
  dex::WorkerSet workers_;
  std::vector<dex::KeyValue> pairs_;
};

class DexIndex final : public Index, public Partitioning {
 public:
  DexIndex(const IndexOptions& options, std::unique_ptr<DexTree> tree)
      : Index("dex", options), tree_(std::move(tree)) {}
  ~DexIndex() override { CloseForDestructor(); }

  uint32_t partitions() const override { return tree_->partitions(); }
  Route RouteKey(Slice key) const override {
    if (key.size() != kU64KeyBytes) return Route{};  // not a key of the index: nobody's
    const dex::KeyRoute r = tree_->RouteOf(u64::Decode(key));
    Route route{r.compute_node, u64::Encode(r.begin), std::nullopt, r.hosted};
    if (r.end) route.end = u64::Encode(*r.end);
    return route;
  }
  Result<double> Repartition(std::vector<std::string> boundaries) override {
    std::vector<dex::Key> keys;
    for (const std::string& b : boundaries) {
      if (Status s = rules().CheckKey(b); !s.ok())
        return Status::InvalidArgument("partition boundary: " + s.message());
      keys.push_back(u64::Decode(b));
    }
    return tree_->Repartition(std::move(keys));
  }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto w = tree_->NewWorker(tree_->first_node());
    if (!w.ok()) return w.status();
    std::vector<dex::KeyValue> pairs;
    pairs.reserve(sorted.size());
    for (const KeyValue& kv : sorted) {
      dex::Value v = 0;
      DMX_RETURN_IF_ERROR(u64::ValueOf(kv.value, &v, "dex"));
      pairs.push_back({u64::Decode(kv.key), v});
    }
    return tree_->BulkLoad(**w, pairs);
  }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    return std::unique_ptr<Session>(new DexSession(*tree_, tree_->first_node() + compute_node));
  }
  IndexStats DoStats() const override { return tree_->Stats(); }
  void AddProperties(Properties* out) const override {
    for (auto& p : tree_->Counters()) out->push_back(std::move(p));
  }
  // With partitioning off every compute node serves every key.
  Partitioning* DoPartitioning() override { return tree_->options().partition ? this : nullptr; }
  Status DoClose() override { return tree_->Close(); }

  std::unique_ptr<DexTree> tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeDex(fabric::Fabric& fabric, const IndexOptions& options) {
  if (options.key_format != KeyFormat::kU64)
    return Status::NotSupported("design dex takes u64 keys for now (key_format = bytes is not "
                                "built into its pages, partition map and offload requests yet)");
  auto tree = DexTree::Open(fabric, options);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new DexIndex(options, std::move(tree).value()));
}

}  // namespace dmindex::designs
