// dmindex::Index and Session over a tree of the core's key/value traits: the public API's
// keys become the tree's at this boundary - the u64 format's 8 big-endian bytes an integer
// (U64BytesKV), byte keys themselves (BytesKV); values are byte strings in both. Keys reach a
// session checked against the index's format (Session's public calls). Written once for every
// tree type with RemoteTree's operations - the core tree itself (naive, sherman:
// tree_index.cc) and designs that wrap it (RF-tree) - so the conversions live in one place:
//
//   Tree::Traits, Tree::Ctx, NewContext(compute_node), Lookup, Upsert, Update, Delete, Scan,
//   MultiLookup, BulkLoad, Stats() -> TreeStats, AddProperties(vector<pair<string, uint64_t>>*).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "alloc/catalog.h"
#include "alloc/index_hold.h"
#include "common/u64.h"
#include "dmindex/index.h"
#include "tree/public_keys.h"
#include "tree/remote_tree.h"
#include "tree/scan_range.h"

namespace dmindex::tree {

// The public API's keys and the tree's (public_keys.h, shared with DEX).
template <KeyValueTraits KV>
using KeyCodec = PublicKeys<typename KV::Keys>;

// The lease a tree's locks are held under (null: none): the core's, or a wrapping design's.
template <typename Tree>
lease::Lease* LockLeaseOf(const Tree& tree) {
  if constexpr (requires { tree.lock_lease(); }) return tree.lock_lease();
  else return tree.shared().lease.get();
}

template <typename Tree>
class TreeSession final : public Session {
 public:
  using KV = typename Tree::Traits;
  using Codec = KeyCodec<KV>;
  // `lease`: the one the tree's locks are held under (null: none).
  TreeSession(const Tree& tree, std::unique_ptr<typename Tree::Ctx> ctx, lease::Lease* lease)
      : tree_(tree), ctx_(std::move(ctx)), lease_(lease) {}

 private:
  // A read's answer stands only if the lease was live after the read: once it is revoked (a
  // process stalled past it) the index may have been dropped and the memory read reused
  // (docs/OPERATIONS.md, "Drop"). Before the read, a handle known to be revoked stops
  // (NotFenced, no clock read: a clock read per operation was 4% of a cached lookup); one
  // that expired unnoticed reads, and the check after the read refuses its answer and fences
  // it. Writes check the lease before they write.
  Status Live() const { return lease_ == nullptr ? Status::Ok() : lease_->CheckLive(); }
  Status NotFenced() const { return lease_ == nullptr ? Status::Ok() : lease_->CheckNotFenced(); }
  Status Answer(Status s) const {
    if (!s.ok() && !s.IsNotFound()) return s;
    Status live = Live();
    return live.ok() ? s : live;
  }

  Status DoLookup(Slice key, std::string* value) override {
    DMX_RETURN_IF_ERROR(NotFenced());
    return Answer(tree_.Lookup(*ctx_, Codec::Tree(key), value));
  }
  Status DoInsert(Slice key, Slice value) override { return tree_.Upsert(*ctx_, Codec::Tree(key), value); }
  Status DoUpdate(Slice key, Slice value) override { return tree_.Update(*ctx_, Codec::Tree(key), value); }
  Status DoDelete(Slice key) override { return tree_.Delete(*ctx_, Codec::Tree(key)); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(NotFenced());
    DMX_RETURN_IF_ERROR(Answer(tree_.Scan(*ctx_, Codec::Range(range), count, &entries_)));
    out->reserve(entries_.size());
    for (auto& e : entries_) out->push_back({Codec::Public(e.key), std::move(e.value)});
    return Status::Ok();
  }
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                          std::string* current) override {
    if constexpr (requires { tree_.CompareAndSwap(*ctx_, Codec::Tree(key), desired, CompareValue{}); }) {
      return tree_.CompareAndSwap(*ctx_, Codec::Tree(key), desired, CompareValue{expected, swapped, current});
    } else {
      (void)swapped, (void)current;
      return Status::NotSupported("CompareAndSwap: this tree has no compare under its leaf lock (docs/API.md)");
    }
  }
  void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                  std::span<Status> statuses) override {
    if (Status live = NotFenced(); !live.ok()) {
      for (Status& st : statuses) st = live;
      return;
    }
    keys_.clear();
    for (Slice k : keys) keys_.push_back(Codec::Tree(k));
    tree_.MultiLookup(*ctx_, keys_, values, statuses);
    if (Status live = Answer(Status::Ok()); !live.ok())
      for (Status& st : statuses) st = live;
  }

  const Tree& tree_;
  std::unique_ptr<typename Tree::Ctx> ctx_;
  lease::Lease* const lease_;
  std::vector<LeafEntry<KV>> entries_;
  std::vector<typename KV::KeyRef> keys_;
};

template <typename Tree>
class TreeIndex final : public Index {
 public:
  using KV = typename Tree::Traits;
  // `hold`: this handle's registration as a holder of the index (alloc/index_hold.h), until
  // it closes.
  TreeIndex(std::string design, const IndexOptions& options, std::unique_ptr<Tree> tree, fabric::Fabric& fabric,
            uint64_t owner, std::unique_ptr<alloc::IndexHold> hold)
      : Index(std::move(design), options), tree_(std::move(tree)), fabric_(fabric), owner_(owner),
        hold_(std::move(hold)) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto ctx = tree_->NewContext(0);
    if (!ctx.ok()) return ctx.status();
    std::vector<LeafEntry<KV>> entries;
    entries.reserve(sorted.size());
    for (const KeyValue& kv : sorted)
      entries.push_back({typename KV::Key(KeyCodec<KV>::Tree(kv.key)), kv.value, {}});
    return tree_->BulkLoad(**ctx, entries);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    auto ctx = tree_->NewContext(compute_node);
    if (!ctx.ok()) return ctx.status();
    return std::unique_ptr<Session>(new TreeSession<Tree>(*tree_, std::move(ctx).value(), LockLeaseOf(*tree_)));
  }

  IndexStats DoStats() const override {
    TreeStats t = tree_->Stats();
    IndexStats s;
    s.cache_hits = t.cache_hits;
    s.cache_misses = t.cache_misses;
    s.cache_bytes = t.cache_bytes;
    // What the index holds (nodes, value blocks, retired blocks not yet freed), not the
    // chunks the memory servers handed out (t.pool_bytes: 32 MB at a time).
    s.pool_bytes = t.bytes_in_use;
    s.retries = t.retries;
    return s;
  }

  void AddProperties(Properties* out) const override { tree_->AddProperties(out); }

  // A closed handle holds the index no more: a drop elsewhere may go on.
  Status DoClose() override {
    if (hold_) hold_->Release();
    return Status::Ok();
  }

  // Other holders refuse the drop while this handle is still open (itself not counted).
  Status DoPrepareDrop(const DropOptions& options) override {
    return alloc::Catalog::PrepareDrop(fabric_, this->options().name, owner_, options,
                                       hold_ ? hold_->holder() : std::nullopt);
  }
  // The tree goes first (its lease, its threads: nothing of it touches the pool afterwards),
  // then its chunks and name (alloc/catalog.h). A drop that failed is tried again by the
  // next Drop (the index stays closed).
  Status DoDrop(const DropOptions& options) override {
    if (dropped_) return Status::Ok();
    tree_.reset();
    DMX_RETURN_IF_ERROR(alloc::Catalog::Drop(fabric_, this->options().name, owner_, options));
    dropped_ = true;
    return Status::Ok();
  }

  std::unique_ptr<Tree> tree_;  // null once dropping
  bool dropped_ = false;
  fabric::Fabric& fabric_;
  const uint64_t owner_;  // the catalog entry's owner tag
  std::unique_ptr<alloc::IndexHold> hold_;
};

// Registers a handle of the index in `entry` whose tree locks under `lease` as a holder
// (alloc/index_hold.h); none without a lease (lease_ms=0).
inline Result<std::unique_ptr<alloc::IndexHold>> HoldIndex(fabric::Fabric& fabric, const alloc::CatalogEntry& entry,
                                                           lease::Lease* lease) {
  return alloc::IndexHold::Take(fabric, entry, lease, std::chrono::milliseconds(0));
}

}  // namespace dmindex::tree
