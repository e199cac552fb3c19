#include "designs/local/local_index.h"

#include "common/option_checks.h"
#include "designs/local/local_tree.h"

namespace dmindex::designs {
namespace {

// Keys reach it checked (Session's public calls).
class LocalSession final : public Session {
 public:
  explicit LocalSession(local::LocalTree& tree) : tree_(tree) {}

 private:
  Status DoLookup(Key key, Value* value) override { return tree_.Lookup(key, value); }
  Status DoInsert(Key key, Value value) override { return tree_.Upsert(key, value); }
  Status DoUpdate(Key key, Value value) override { return tree_.Update(key, value); }
  Status DoDelete(Key key) override { return tree_.Delete(key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    return tree_.Scan(range, count, out);
  }

  local::LocalTree& tree_;
};

class LocalIndex final : public Index {
 public:
  explicit LocalIndex(const IndexOptions& options) : Index("local", options), tree_(options.node_bytes) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    return tree_.BulkLoad(sorted, options().bulk_fill);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;  // one tree for all compute nodes (local_index.h)
    return std::unique_ptr<Session>(std::make_unique<LocalSession>(tree_));
  }

  IndexStats DoStats() const override {
    IndexStats s;
    s.cache_bytes = tree_.node_count() * tree_.node_bytes();  // the whole tree is local
    s.retries = tree_.restarts();
    return s;
  }

  local::LocalTree tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeLocalIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, local::LocalTree::MinNodeBytes(), {}));
  return std::unique_ptr<Index>(std::make_unique<LocalIndex>(options));
}

}  // namespace dmindex::designs
