#include "designs/local/local_index.h"

#include "common/option_checks.h"
#include "designs/local/local_tree.h"

namespace dmindex::designs {
namespace {

// Keys reach it checked against the u64 format (Session's public calls); the tree works on
// their integers.
class LocalSession final : public Session {
 public:
  explicit LocalSession(local::LocalTree& tree) : tree_(tree) {}

 private:
  Status DoLookup(Slice key, std::string* value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(tree_.Lookup(u64::Decode(key), &v));
    *value = u64::Encode(v);
    return Status::Ok();
  }
  Status DoInsert(Slice key, Slice value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(u64::ValueOf(value, &v, "local"));
    return tree_.Upsert(u64::Decode(key), v);
  }
  Status DoUpdate(Slice key, Slice value) override {
    u64::Value v = 0;
    DMX_RETURN_IF_ERROR(u64::ValueOf(value, &v, "local"));
    return tree_.Update(u64::Decode(key), v);
  }
  Status DoDelete(Slice key) override { return tree_.Delete(u64::Decode(key)); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    local::KeyRange r{u64::Decode(range.start), range.after_start, std::nullopt};
    if (range.end) r.end = u64::Decode(*range.end);
    DMX_RETURN_IF_ERROR(tree_.Scan(r, count, &pairs_));
    out->reserve(pairs_.size());
    for (const u64::KeyValue& kv : pairs_) out->push_back({u64::Encode(kv.key), u64::Encode(kv.value)});
    return Status::Ok();
  }

  local::LocalTree& tree_;
  std::vector<u64::KeyValue> pairs_;
};

class LocalIndex final : public Index {
 public:
  explicit LocalIndex(const IndexOptions& options) : Index("local", options), tree_(options.node_bytes) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    std::vector<u64::KeyValue> pairs;
    pairs.reserve(sorted.size());
    for (const KeyValue& kv : sorted) {
      u64::Value v = 0;
      DMX_RETURN_IF_ERROR(u64::ValueOf(kv.value, &v, "local"));
      pairs.push_back({u64::Decode(kv.key), v});
    }
    return tree_.BulkLoad(pairs, options().bulk_fill);
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
  if (options.key_format != KeyFormat::kU64)
    return Status::NotSupported("design local takes u64 keys for now (key_format = bytes)");
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, local::LocalTree::MinNodeBytes(), {}));
  return std::unique_ptr<Index>(std::make_unique<LocalIndex>(options));
}

}  // namespace dmindex::designs
