// RF-tree (Koo et al., Appl. Sci. 2023: SPREAD applied to a B-link tree): the tree core
// (tree/remote_tree.h) with
//   * internal nodes appended to a search-layer log and leaves spread node by node over the
//     memory nodes (node_placement.h),
//   * a search-layer cache per compute node, read in chunks and published as snapshots
//     (search_layer_cache.h), in place of Sherman's node-by-node cache,
//   * leaf writes under the inline version lock (inline_lock_writer.h; lock=table: the
//     core's writer and lock table, with Sherman's HOCL and combination as knobs),
//   * scans in batches of the leaves the SLC's level-1 node lists (scan_batch=off: leaf by
//     leaf along sibling links, as the paper),
//   * lazy deletion: leaves never merge (the paper's merge is unsafe as written).
// Operations have RemoteTree's signatures, so tree/tree_index_adapter.h adapts it to Index in
// both key formats (U64BytesKV: 8-byte keys in fixed slots; BytesKV: byte strings in slotted
// nodes), with values of any size (out of line past the leaf's inline limit).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "alloc/append_log.h"
#include "common/epoch.h"
#include "designs/rftree/inline_lock_writer.h"
#include "designs/rftree/node_placement.h"
#include "designs/rftree/rftree_options.h"
#include "designs/rftree/search_layer_cache.h"
#include "tree/remote_tree.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
class RfTree {
 public:
  using Traits = KV;
  using Key = typename KV::Key;
  using Value = typename KV::Value;
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;

  // A session's state: the core's per-thread context, and its place in the compute node's
  // search-layer cache (an epoch participant; null without a cache).
  struct Ctx {
    std::unique_ptr<tree::TreeContext<KV>> tree;
    SearchLayerCache<KV>* slc = nullptr;
    std::unique_ptr<EpochManager::Participant> epoch;
  };

  // The tree whose root address is held by `root_word` and whose search-layer log's
  // directory address is held by `log_word` (catalog words).
  static Result<std::unique_ptr<RfTree>> Open(fabric::Fabric& fabric, const RfTreeOptions& options,
                                              GlobalAddress root_word, GlobalAddress log_word);

  Result<std::unique_ptr<Ctx>> NewContext(uint32_t compute_node);
  // The lease its locks are held under (null: none).
  lease::Lease* lock_lease() const { return tree_->shared().lease.get(); }

  Status Lookup(Ctx& c, KeyRef key, Value* value) const {
    return Run(c, [&] { return tree_->Lookup(*c.tree, key, value); });
  }
  Status Upsert(Ctx& c, KeyRef key, ValueRef value) const { return Write(c, tree::WriteOp::kUpsert, key, value); }
  Status Update(Ctx& c, KeyRef key, ValueRef value) const { return Write(c, tree::WriteOp::kUpdate, key, value); }
  Status Delete(Ctx& c, KeyRef key) const { return Write(c, tree::WriteOp::kDelete, key, ValueRef{}); }
  // Update to `desired` if the value is cas.expected (inline_lock_writer.h; lock=table: the
  // core's compare under the lock-table lock).
  Status CompareAndSwap(Ctx& c, KeyRef key, ValueRef desired, const tree::CompareValue& cas) const {
    return Write(c, tree::WriteOp::kUpdate, key, desired, &cas);
  }
  Status Scan(Ctx& c, const tree::ScanRange<KV>& range, size_t count, std::vector<tree::LeafEntry<KV>>* out) const {
    return Run(c, [&] { return tree_->Scan(*c.tree, range, count, out); });
  }
  void MultiLookup(Ctx& c, std::span<const KeyRef> keys, std::span<Value> values, std::span<Status> statuses) const;
  // Caches read before the load are empty: every compute node refreshes at its next operation.
  Status BulkLoad(Ctx& c, std::span<const tree::LeafEntry<KV>> sorted) const {
    DMX_RETURN_IF_ERROR(tree_->BulkLoad(*c.tree, sorted));
    for (SearchLayerCache<KV>* slc : slcs_) slc->RequestRefresh();
    return Status::Ok();
  }

  // bytes_in_use: the leaves and value blocks, and of the search-layer log the blocks handed
  // out, not the room its segments keep for later ones (AppendLog::reserved_bytes).
  tree::TreeStats Stats() const {
    tree::TreeStats s = tree_->Stats();
    s.bytes_in_use = s.bytes_in_use - log_->reserved_bytes() + log_->appended_bytes();
    return s;
  }
  // dmindex.rftree.*: refreshes, refresh-skipped, stale-reads, torn-left-out, slc-nodes,
  // log-garbage-blocks (summed over compute nodes).
  void AddProperties(std::vector<std::pair<std::string, uint64_t>>* out) const;
  const RfTreeOptions& options() const { return options_; }

 private:
  explicit RfTree(const RfTreeOptions& options) : options_(options) {}
  Status Write(Ctx& c, tree::WriteOp op, KeyRef key, ValueRef value,
               const tree::CompareValue* cas = nullptr) const;
  // Every operation: first the compute node's due refresh if this session wins it (outside
  // any epoch guard), then `op` inside the session's epoch guard.
  template <typename Op>
  Status Run(Ctx& c, Op&& op) const {
    if (c.slc != nullptr && c.slc->RefreshDue()) DMX_RETURN_IF_ERROR(c.slc->Refresh(c.tree->ep, *c.epoch));
    if (c.epoch == nullptr) return op();
    EpochGuard guard(*c.epoch);
    return op();
  }

  const RfTreeOptions options_;
  std::unique_ptr<alloc::AppendLog> log_;
  std::shared_ptr<SpreadPlacer> placer_;
  std::vector<SearchLayerCache<KV>*> slcs_;  // by compute node; owned by the core's states
  std::unique_ptr<tree::RemoteTree<KV>> tree_;
  std::unique_ptr<InlineLockWriter<KV>> inline_writer_;  // null: lock=table
};

}  // namespace dmindex::designs::rftree
