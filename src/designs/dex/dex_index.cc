#include "designs/dex/dex_index.h"

#include "designs/dex/dex_tree.h"

namespace dmindex::designs {
namespace {

using dex::DexTree;
using dex::WriteOp;

// Keys reach it checked (Session's public calls).
class DexSession final : public Session {
 public:
  DexSession(DexTree& tree, uint32_t home) : tree_(tree), workers_(tree, home) {}

 private:
  Status DoLookup(Key key, Value* value) override { return tree_.Lookup(workers_, key, value); }
  Status DoInsert(Key key, Value value) override {
    return tree_.Write(workers_, WriteOp::kUpsert, key, value);
  }
  Status DoUpdate(Key key, Value value) override {
    return tree_.Write(workers_, WriteOp::kUpdate, key, value);
  }
  Status DoDelete(Key key) override { return tree_.Write(workers_, WriteOp::kDelete, key, 0); }
  // Successive fence-key lookups, leaf by leaf (§7: DEX keeps no leaf links to follow).
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    const tree::ScanRange<tree::U64KV> r = tree::ToScanRange(range);
    for (Key cursor = range.start; out->size() < count;) {
      Key next = 0;
      DMX_RETURN_IF_ERROR(tree_.ScanLeaf(workers_, r, cursor, count, out, &next));
      if (r.Beyond(next)) break;  // kPosInf: the last leaf
      cursor = next;
    }
    return Status::Ok();
  }

  DexTree& tree_;
  dex::WorkerSet workers_;
};

class DexIndex final : public Index, public Partitioning {
 public:
  DexIndex(const IndexOptions& options, std::unique_ptr<DexTree> tree)
      : Index("dex", options), tree_(std::move(tree)) {}
  ~DexIndex() override { CloseForDestructor(); }

  uint32_t partitions() const override { return tree_->partitions(); }
  Route RouteKey(Key key) const override { return tree_->RouteOf(key); }
  Result<double> Repartition(std::vector<Key> boundaries) override {
    return tree_->Repartition(std::move(boundaries));
  }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto w = tree_->NewWorker(tree_->first_node());
    if (!w.ok()) return w.status();
    return tree_->BulkLoad(**w, sorted);
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
  auto tree = DexTree::Open(fabric, options);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new DexIndex(options, std::move(tree).value()));
}

}  // namespace dmindex::designs
