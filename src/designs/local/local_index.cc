#include "designs/local/local_index.h"

#include "designs/input_checks.h"
#include "designs/local/local_tree.h"

namespace dmindex::designs {
namespace {

class LocalSession final : public Session {
 public:
  explicit LocalSession(local::LocalTree& tree) : tree_(tree) {}

  Status Lookup(Key key, Value* value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Lookup(key, value);
  }
  Status Insert(Key key, Value value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Upsert(key, value);
  }
  Status Update(Key key, Value value) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Update(key, value);
  }
  Status Delete(Key key) override {
    DMX_RETURN_IF_ERROR(CheckKey(key));
    return tree_.Delete(key);
  }
  Status Scan(Key start, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(CheckKey(start));
    return tree_.Scan(start, count, out);
  }

 private:
  local::LocalTree& tree_;
};

class LocalIndex final : public Index {
 public:
  explicit LocalIndex(const IndexOptions& options) : options_(options), tree_(options.node_bytes) {}

  std::string design() const override { return "local"; }

  Status BulkLoad(std::span<const KeyValue> sorted) override {
    DMX_RETURN_IF_ERROR(CheckBulkInput(sorted));
    return tree_.BulkLoad(sorted, options_.bulk_fill);
  }

  Result<std::unique_ptr<Session>> OpenSession(uint32_t compute_node) override {
    DMX_RETURN_IF_ERROR(CheckComputeNode(options_, compute_node));
    return std::unique_ptr<Session>(std::make_unique<LocalSession>(tree_));
  }

  IndexStats Stats() const override {
    IndexStats s;
    s.cache_bytes = tree_.node_count() * tree_.node_bytes();  // the whole tree is local
    s.retries = tree_.restarts();
    return s;
  }

 private:
  const IndexOptions options_;
  local::LocalTree tree_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeLocalIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, local::LocalTree::MinNodeBytes(), {}));
  return std::unique_ptr<Index>(std::make_unique<LocalIndex>(options));
}

}  // namespace dmindex::designs
