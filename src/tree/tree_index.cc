#include "tree/tree_index.h"

#include "alloc/catalog.h"
#include "tree/remote_tree.h"

namespace dmindex::tree {
namespace {

using Tree = RemoteTree<U64KV>;

// Keys reach it checked against the u64 format (Session's public calls): 8 bytes, not reserved.
class TreeSession final : public Session {
 public:
  TreeSession(const Tree& tree, std::unique_ptr<Tree::Ctx> ctx, const char* design)
      : tree_(tree), ctx_(std::move(ctx)), design_(design) {}

 private:
  Status DoLookup(Slice key, std::string* value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(tree_.Lookup(*ctx_, u64::Decode(key), &v));
    *value = u64::Encode(v);
    return Status::Ok();
  }
  Status DoInsert(Slice key, Slice value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(u64::ValueOf(value, &v, design_));
    return tree_.Upsert(*ctx_, u64::Decode(key), v);
  }
  Status DoUpdate(Slice key, Slice value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(u64::ValueOf(value, &v, design_));
    return tree_.Update(*ctx_, u64::Decode(key), v);
  }
  Status DoDelete(Slice key) override { return tree_.Delete(*ctx_, u64::Decode(key)); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(tree_.Scan(*ctx_, ToScanRange(range), count, &entries_));
    out->reserve(entries_.size());
    for (const auto& e : entries_) out->push_back({u64::Encode(e.key), u64::Encode(e.value)});
    return Status::Ok();
  }
  void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                  std::span<Status> statuses) override {
    keys_.clear();
    for (Slice k : keys) keys_.push_back(u64::Decode(k));
    values_.assign(keys.size(), 0);
    tree_.MultiLookup(*ctx_, keys_, values_, statuses);
    for (size_t i = 0; i < keys.size(); ++i)
      if (statuses[i].ok()) values[i] = u64::Encode(values_[i]);
  }

  const Tree& tree_;
  std::unique_ptr<Tree::Ctx> ctx_;
  const char* design_;
  std::vector<LeafEntry<U64KV>> entries_;
  std::vector<u64::Key> keys_;
  std::vector<u64::Value> values_;
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
    for (const KeyValue& kv : sorted) {
      u64::Value v = 0;
      DMX_RETURN_IF_ERROR(u64::ValueOf(kv.value, &v, design().c_str()));
      entries.push_back({u64::Decode(kv.key), v});
    }
    return tree_->BulkLoad(**ctx, entries);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    auto ctx = tree_->NewContext(compute_node);
    if (!ctx.ok()) return ctx.status();
    return std::unique_ptr<Session>(new TreeSession(*tree_, std::move(ctx).value(), design().c_str()));
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
  if (options.key_format != KeyFormat::kU64)
    return Status::NotSupported("design " + design + " takes u64 keys for now: the tree core's "
                                "byte-key layout is not built yet (key_format = bytes)");
  auto resolved = ResolveTreeOptions(options, defaults);
  if (!resolved.ok()) return resolved.status();
  auto layout = NodeLayout<U64KV>::For(resolved->node_bytes);
  if (!layout.ok()) return layout.status();
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(
      **ep, options.name, {design, options.node_bytes, alloc::KeySchema::Of(options)}, &created,
      options.create_if_missing);
  if (!entry.ok()) return entry.status();
  auto tree = Tree::Create(fabric, *resolved, entry->root_word);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new TreeIndex(design, options, std::move(tree).value()));
}

}  // namespace dmindex::tree
