#include "designs/local/local_index.h"

#include "common/option_checks.h"
#include "designs/local/local_tree.h"

namespace dmindex::designs {
namespace {

// Keys and values reach the tree checked against the index's format (Session's public
// calls); the tree of that format takes them as they are.
template <class F>
class LocalSession final : public Session {
 public:
  explicit LocalSession(local::LocalTree<F>& tree) : tree_(tree), worker_(tree) {}

 private:
  Status DoLookup(Slice key, std::string* value) override { return tree_.Lookup(worker_, key, value); }
  Status DoInsert(Slice key, Slice value) override { return tree_.Upsert(worker_, key, value); }
  Status DoUpdate(Slice key, Slice value) override { return tree_.Update(worker_, key, value); }
  Status DoDelete(Slice key) override { return tree_.Delete(worker_, key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    return tree_.Scan(worker_, range, count, out);
  }

  local::LocalTree<F>& tree_;
  typename local::LocalTree<F>::Worker worker_;  // this session's epoch participant
};

template <class F>
class LocalIndex final : public Index {
 public:
  explicit LocalIndex(const IndexOptions& options) : Index("local", options), tree_(options.node_bytes) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return tree_.BulkLoad(sorted, options().bulk_fill); }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;  // one tree for all compute nodes (local_index.h)
    return std::unique_ptr<Session>(std::make_unique<LocalSession<F>>(tree_));
  }

  IndexStats DoStats() const override {
    IndexStats s;
    s.cache_bytes = tree_.bytes();  // the whole tree is local: nodes and blobs, exactly
    s.retries = tree_.restarts();
    return s;
  }

  void AddProperties(Properties* out) const override {
    out->emplace_back("dmindex.local.nodes", tree_.node_count());
    out->emplace_back("dmindex.local.retired-bytes", tree_.retired_bytes());
  }

  local::LocalTree<F> tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeLocalIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  if (options.key_format == KeyFormat::kU64) {
    DMX_RETURN_IF_ERROR(CheckIndexOptions(options, local::LocalTree<local::U64Keys>::MinNodeBytes(), {}));
    return std::unique_ptr<Index>(std::make_unique<LocalIndex<local::U64Keys>>(options));
  }
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, local::LocalTree<local::ByteKeys>::MinNodeBytes(), {}));
  return std::unique_ptr<Index>(std::make_unique<LocalIndex<local::ByteKeys>>(options));
}

}  // namespace dmindex::designs
