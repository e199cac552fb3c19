#include "designs/dex/dex_index.h"

#include "designs/dex/dex_tree.h"
#include "designs/input_checks.h"

namespace dmindex::designs {
namespace {

using dex::DexTree;
using dex::WriteOp;

class DexSession final : public Session {
 public:
  DexSession(DexTree& tree, uint32_t home) : tree_(tree), workers_(tree, home) {}

  Status Lookup(Key key, Value* value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Lookup(workers_, key, value);
  }
  Status Insert(Key key, Value value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Write(workers_, WriteOp::kUpsert, key, value);
  }
  Status Update(Key key, Value value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Write(workers_, WriteOp::kUpdate, key, value);
  }
  Status Delete(Key key) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Write(workers_, WriteOp::kDelete, key, 0);
  }
  // Successive fence-key lookups, leaf by leaf (§7: DEX keeps no leaf links to follow).
  Status Scan(Key start, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(CheckKey(start));
    out->clear();
    for (Key cursor = start; out->size() < count;) {
      Key next = 0;
      DMX_RETURN_IF_ERROR(tree_.ScanLeaf(workers_, cursor, count, out, &next));
      if (next == tree::U64KV::kPosInf) break;
      cursor = next;
    }
    return Status::Ok();
  }

 private:
  DexTree& tree_;
  dex::WorkerSet workers_;
};

class DexIndex final : public Index {
 public:
  explicit DexIndex(std::unique_ptr<DexTree> tree) : tree_(std::move(tree)) {}
  std::string design() const override { return "dex"; }

  Status BulkLoad(std::span<const KeyValue> sorted) override {
    auto w = tree_->NewWorker(tree_->first_node());
    if (!w.ok()) return w.status();
    return tree_->BulkLoad(**w, sorted);
  }
  Result<std::unique_ptr<Session>> OpenSession(uint32_t compute_node) override {
    if (compute_node >= tree_->compute_nodes())
      return Status::InvalidArgument("compute node " + std::to_string(compute_node) +
                                     " out of range (the index has " +
                                     std::to_string(tree_->compute_nodes()) + ")");
    return std::unique_ptr<Session>(new DexSession(*tree_, tree_->first_node() + compute_node));
  }
  IndexStats Stats() const override { return tree_->Stats(); }
  Route RouteKey(Key key) const override { return tree_->RouteOf(key); }
  Result<double> Repartition(std::vector<Key> boundaries) override {
    return tree_->Repartition(std::move(boundaries));
  }

 private:
  std::unique_ptr<DexTree> tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeDex(fabric::Fabric& fabric, const IndexOptions& options) {
  auto tree = DexTree::Open(fabric, options);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new DexIndex(std::move(tree).value()));
}

}  // namespace dmindex::designs
