// RemoteTree: one B-link tree in the memory pool, as operated by this compute process.
// Assembles the core pieces (reader, covering locker, structure modifier, writer, bulk
// loader) over shared state; designs wrap it (tree_index.h) or reuse its pieces.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tree/batch_lookup.h"
#include "tree/bulk_loader.h"
#include "tree/leaf_scanner.h"
#include "tree/tree_writer.h"

namespace dmindex::tree {

struct TreeStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_bytes = 0;
  uint64_t pool_bytes = 0;      // chunk bytes taken from the memory servers
  uint64_t bytes_in_use = 0;    // nodes and value blocks allocated and not freed (retired ones too)
  uint64_t retired_bytes = 0;   // value blocks unlinked, waiting out their grace period
  uint64_t retries = 0;
  uint64_t handovers = 0;
};

// What a design changes in the core besides options: its own cache of internal nodes per
// compute node (null, or a null result: an InternalCache if the options ask for one), where
// new nodes go (null: the allocator's chunks), and who hears of leaf splits (XStore's
// server queues the retraining of the models covering the leaf).
template <KeyValueTraits KV>
struct TreeHooks {
  std::function<std::unique_ptr<RoutingCache<KV>>(uint32_t compute_node)> make_cache;
  std::shared_ptr<NodePlacer> placer;
  LeafSplitObserver<KV> on_leaf_split;
  // The lease the tree's locks name, made by the design: XStore's memory server holds its
  // locks under its incarnation (lease::Lease::OfMemoryServer). Null: one claimed in memory
  // node 0's lease table when options.lease > 0, none otherwise.
  std::function<std::unique_ptr<lease::Lease>()> make_lease;
  // Null: readers judge a persistently torn image under the node's lock (one READ); set: by
  // asking the tree's only writer (TreeShared::read_from_writer).
  NodeReadByWriter<KV> read_from_writer;
  // The part of each memory node's lock table the tree's nodes hash onto (tree/lock_table.h):
  // kMemoryServer for a memory server's own trees and for the readers of such a tree.
  LockArea lock_area = LockArea::kProcesses;
};

template <KeyValueTraits KV>
class RemoteTree {
 public:
  using Traits = KV;
  using Key = typename KV::Key;
  using Value = typename KV::Value;
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Ctx = TreeContext<KV>;

  // `root_word`: the remote word holding the root's address (a catalog entry's root word).
  static Result<std::unique_ptr<RemoteTree>> Create(fabric::Fabric& fabric,
                                                    const TreeOptions& options,
                                                    GlobalAddress root_word,
                                                    const TreeHooks<KV>& hooks = {});

  // A per-thread context on logical compute node `compute_node`.
  Result<std::unique_ptr<Ctx>> NewContext(uint32_t compute_node);

  // Each operation first reaps the release its context's previous one posted without
  // waiting (TreeContext::ReapPosted; TreeOptions::post_separator).
  Status Lookup(Ctx& c, KeyRef key, Value* value) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return reader_.Lookup(c, key, value);
  }
  Status Upsert(Ctx& c, KeyRef key, ValueRef value) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return writer_.Write(c, WriteOp::kUpsert, key, value);
  }
  Status Update(Ctx& c, KeyRef key, ValueRef value) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return writer_.Write(c, WriteOp::kUpdate, key, value);
  }
  Status Delete(Ctx& c, KeyRef key) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return writer_.Write(c, WriteOp::kDelete, key, ValueRef{});
  }
  // Update to `desired` if the value is cas.expected, compared under the leaf's lock.
  Status CompareAndSwap(Ctx& c, KeyRef key, ValueRef desired, const CompareValue& cas) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return writer_.Write(c, WriteOp::kUpdate, key, desired, &cas);
  }
  void MultiLookup(Ctx& c, std::span<const KeyRef> keys, std::span<Value> values,
                   std::span<Status> statuses) const {
    if (Status reaped = c.ReapPosted(); !reaped.ok()) {
      for (Status& s : statuses) s = reaped;
      return;
    }
    batch_.Run(c, keys, values, statuses);
  }
  Status Scan(Ctx& c, const ScanRange<KV>& range, size_t count,
              std::vector<LeafEntry<KV>>* out) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return scanner_.Scan(c, range, count, out);
  }
  Status BulkLoad(Ctx& c, std::span<const LeafEntry<KV>> sorted) const {
    DMX_RETURN_IF_ERROR(c.ReapPosted());
    return loader_.Load(c, sorted);
  }

  TreeStats Stats() const;
  // Counters by property name beyond TreeStats: dmindex.locks.takeovers (locks taken over
  // from holders whose lease expired), dmindex.locks.repairs (of them, with a half-done write
  // finished from its redo record).
  void AddProperties(std::vector<std::pair<std::string, uint64_t>>* out) const {
    out->push_back({"dmindex.locks.takeovers", shared_.lock.takeovers()});
    out->push_back({"dmindex.locks.repairs", shared_.lock.repairs()});
  }
  const TreeOptions& options() const { return shared_.options; }
  const NodeLayout<KV>& layout() const { return shared_.layout; }
  // The pieces, for designs that add an operation of their own on top of them.
  const TreeShared<KV>& shared() const { return shared_; }
  const TreeReader<KV>& reader() const { return reader_; }
  const StructureModifier<KV>& modifier() const { return smo_; }

 private:
  RemoteTree(fabric::Fabric& fabric, const TreeOptions& options, const NodeLayout<KV>& layout,
             GlobalAddress root_word, const TreeHooks<KV>& hooks, std::unique_ptr<lease::Lease> lease);

  TreeShared<KV> shared_;
  std::vector<std::unique_ptr<ComputeNodeState<KV>>> compute_nodes_;
  TreeReader<KV> reader_;
  LeafScanner<KV> scanner_;
  BatchLookup<KV> batch_;
  CoveringLocker<KV> locker_;
  StructureModifier<KV> smo_;
  TreeWriter<KV> writer_;
  BulkLoader<KV> loader_;
};

}  // namespace dmindex::tree
