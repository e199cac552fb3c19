// dmindex::Index and Session over a tree of 8-byte keys and values: the u64 format's keys and
// values are decoded at this boundary (Session's public calls checked them: 8 bytes, not
// reserved). Written once for every tree type with RemoteTree<U64KV>'s operations - the core
// tree itself (naive, sherman: tree_index.cc) and designs that wrap it (RF-tree) - so the
// conversions live in one place:
//
//   Tree::Ctx, NewContext(compute_node), Lookup, Upsert, Update, Delete, Scan, MultiLookup,
//   BulkLoad, Stats() -> TreeStats, AddProperties(std::vector<pair<string, uint64_t>>*).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/u64.h"
#include "dmindex/index.h"
#include "tree/remote_tree.h"
#include "tree/scan_range.h"

namespace dmindex::tree {

template <typename Tree>
class U64TreeSession final : public Session {
 public:
  U64TreeSession(const Tree& tree, std::unique_ptr<typename Tree::Ctx> ctx, const char* design)
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
  std::unique_ptr<typename Tree::Ctx> ctx_;
  const char* design_;
  std::vector<LeafEntry<U64KV>> entries_;
  std::vector<u64::Key> keys_;
  std::vector<u64::Value> values_;
};

template <typename Tree>
class U64TreeIndex final : public Index {
 public:
  U64TreeIndex(std::string design, const IndexOptions& options, std::unique_ptr<Tree> tree)
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
      entries.push_back({u64::Decode(kv.key), v, {}});
    }
    return tree_->BulkLoad(**ctx, entries);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    auto ctx = tree_->NewContext(compute_node);
    if (!ctx.ok()) return ctx.status();
    return std::unique_ptr<Session>(
        new U64TreeSession<Tree>(*tree_, std::move(ctx).value(), design().c_str()));
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

  void AddProperties(Properties* out) const override { tree_->AddProperties(out); }

  std::unique_ptr<Tree> tree_;
};

}  // namespace dmindex::tree
