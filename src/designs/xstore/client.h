// The compute-node half of XStore (the paper's client with its XCache; docs/XSTORE.md):
// lookups and scans one-sided through the learned models (point_reader.h, range_reader.h),
// inserts, updates and deletes by RPC to the partition's memory server (server.h).
//
// Why a lookup or scan is linearizable (scans: correct in the core's sense): it answers only
// from validated leaf images whose fences cover the keys, which is the tree core's read
// (docs/SYNCHRONIZATION.md, "Why an accepted image never lies"); the models only choose which
// leaves to READ. A stale model costs round trips, never an answer: leaves never merge or
// move, so the leaf a key had at training still exists and reaches the key's present leaf
// along sibling links; and "absent" is said only by a leaf whose fences cover the key (the
// paper's leaves have no fences and would answer absent for a key inserted after training
// into a leaf just outside the prediction).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "designs/xstore/client_state.h"
#include "designs/xstore/point_reader.h"
#include "designs/xstore/range_reader.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
class Client {
 public:
  using State = ClientState<KV>;
  using Session = typename State::Session;
  using Partition = typename State::Partition;
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Value = typename KV::Value;

  static Result<std::unique_ptr<Client>> Make(fabric::Fabric& fabric, const XStoreOptions& options,
                                              std::vector<Partition> partitions);
  Result<std::unique_ptr<Session>> NewSession(uint32_t compute_node);

  Status Lookup(Session& s, KeyRef key, Value* value) { return points_.Lookup(s, key, value); }
  Status Scan(Session& s, const tree::ScanRange<KV>& range, size_t count, std::vector<tree::LeafEntry<KV>>* out) {
    return ranges_.Scan(s, range, count, out);
  }
  // By RPC to the key's partition; NotFound for an update or delete of an absent key.
  Status Write(Session& s, wire::WriteKind kind, KeyRef key, ValueRef value);
  // Sets `key` to `desired` if its value is `expected`, compared by the partition's server
  // under the leaf's lock; *current: the value found when it was not.
  Status CompareAndSwap(Session& s, KeyRef key, ValueRef expected, ValueRef desired, bool* swapped,
                        std::string* current);

  // Sorted entries into empty partitions: each partition's share bulk-loaded from here by
  // the tree core (every node and value block on its memory node), then trained there.
  Status BulkLoad(Session& s, std::span<const tree::LeafEntry<KV>> sorted);
  // Waits until every partition's background training is done (Index::Close).
  Status Quiesce(Session& s);

  const std::vector<Partition>& partitions() const { return state_.partitions; }
  uint64_t CacheBytes() const;
  uint64_t Retries() const { return state_.tree->Stats().retries; }
  // The memory servers' pool chunks for this index (trees and models, from the descriptors).
  uint64_t PoolBytes() const;
  // dmindex.xstore.*: the compute side's counters summed over compute nodes and partitions,
  // the memory servers' from the descriptors.
  void AddProperties(std::vector<std::pair<std::string, uint64_t>>* out) const;

 private:
  Client(fabric::Fabric& fabric, const XStoreOptions& options, std::vector<Partition> partitions)
      : state_(fabric, options, std::move(partitions)), points_(state_), ranges_(state_) {}
  // Every partition's descriptor (counters, model word) in one batch.
  Status ReadDescriptors(std::vector<std::array<uint64_t, 8>>* out) const;

  State state_;
  PointReader<KV> points_;
  RangeReader<KV> ranges_;
};

}  // namespace dmindex::designs::xstore
