#include "tree/tree_index.h"

#include "alloc/catalog.h"
#include "tree/remote_tree.h"

namespace dmindex::tree {
namespace {

using Tree = RemoteTree<U64KV>;

// Keys reach it checked (Session's public calls).
class TreeSession final : public Session {
 public:
  TreeSession(const Tree& tree, std::unique_ptr<Tree::Ctx> ctx) : tree_(tree), ctx_(std::move(ctx)) {}

 private:
  Status DoLookup(Key key, Value* value) override { return tree_.Lookup(*ctx_, key, value); }
  Status DoInsert(Key key, Value value) override { return tree_.Upsert(*ctx_, key, value); }
  Status DoUpdate(Key key, Value value) override { return tree_.Update(*ctx_, key, value); }
  Status DoDelete(Key key) override { return tree_.Delete(*ctx_, key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(tree_.Scan(*ctx_, ToScanRange(range), count, &entries_));
    out->reserve(entries_.size());
    for (const auto& e : entries_) out->push_back({e.key, e.value});
    return Status::Ok();
  }
  void DoMultiGet(std::span<const Key> keys, std::span<Value> values,
                  std::span<Status> statuses) override {
    tree_.MultiLookup(*ctx_, keys, values, statuses);
  }

  const Tree& tree_;
  std::unique_ptr<Tree::Ctx> ctx_;
  std::vector<LeafEntry<U64KV>> entries_;
};

class TreeIndex final : public Index {
 public:
  TreeIndex(std::string design, const IndexOptions& options, std::unique_ptr<Tree> tree)
      : Index(std::move(design), options), tree_(std::move(tree)) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto ctx = tree_->NewContext(0);
    if (!ctx.ok()) return ctx.status();
    std::vector<LeafEntry<U64KV>> entries;
    entries.reserve(sorted.size());
    for (const KeyValue& kv : sorted) entries.push_back({kv.key, kv.value});
    return tree_->BulkLoad(**ctx, entries);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    auto ctx = tree_->NewContext(compute_node);
    if (!ctx.ok()) return ctx.status();
    return std::unique_ptr<Session>(new TreeSession(*tree_, std::move(ctx).value()));
  }

  IndexStats DoStats() const override {
    TreeStats t = tree_->Stats();
    IndexStats s;
    s.cache_hits = t.cache_hits;
    s.cache_misses = t.cache_misses;
    s.cache_bytes = t.cache_bytes;
    s.pool_bytes = t.pool_bytes;
    s.retries = t.retries;
    return s;
  }

  std::unique_ptr<Tree> tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> OpenTreeIndex(fabric::Fabric& fabric, const std::string& design,
                                             const IndexOptions& options,
                                             const TreeOptions& defaults) {
  auto resolved = ResolveTreeOptions(options, defaults);
  if (!resolved.ok()) return resolved.status();
  auto layout = NodeLayout<U64KV>::For(resolved->node_bytes);
  if (!layout.ok()) return layout.status();
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(**ep, options.name, design, options.node_bytes, &created,
                                            options.create_if_missing);
  if (!entry.ok()) return entry.status();
  auto tree = Tree::Create(fabric, *resolved, entry->root_word);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new TreeIndex(design, options, std::move(tree).value()));
}

}  // namespace dmindex::tree
