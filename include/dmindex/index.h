// The public face of dmindex: an ordered key-value index living in disaggregated memory.
//
// An Index is one tree in the memory pool, opened by one compute process (which may host
// several logical compute nodes, each with its own cache). Threads each open a Session and
// issue operations through it; sessions are not thread-safe, the Index is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dmindex/status.h"

namespace dmindex {

using Key = uint64_t;
using Value = uint64_t;

// Keys 0 and 2^64-1 are reserved for the fence keys -inf/+inf; using them is
// InvalidArgument, never silent misbehaviour.
inline constexpr Key kMinKey = 1;
inline constexpr Key kMaxKey = std::numeric_limits<Key>::max() - 1;
inline bool IsValidKey(Key k) { return k >= kMinKey && k <= kMaxKey; }

struct KeyValue {
  Key key = 0;
  Value value = 0;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

struct IndexOptions {
  std::string name = "default";  // catalog entry, so several processes can open one index
  // Create the index if the catalog has none of this name (as RocksDB's option). Off: an
  // absent index is NotFound, e.g. one lost when its memory server restarted (pools are
  // volatile), instead of a new empty index.
  bool create_if_missing = true;
  uint32_t node_bytes = 1024;    // tree node size; fan-out follows from it
  uint64_t cache_bytes = 64ull << 20;  // per compute node, for designs that cache
  uint32_t compute_nodes = 1;    // logical compute nodes hosted by this process
  double bulk_fill = 0.8;        // leaf fill factor of BulkLoad
  // Design-specific switches by name, e.g. {"hocl","off"}, so benchmarks can ablate
  // techniques without recompiling. Unknown knobs are InvalidArgument.
  std::map<std::string, std::string> knobs;
};

// Counters a design keeps besides the fabric's verb counts.
struct IndexStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_bytes = 0;      // compute-side memory used by caches, all compute nodes
  uint64_t pool_bytes = 0;       // remote memory allocated to the index
  uint64_t retries = 0;          // optimistic reads or lock attempts that had to be redone
  uint64_t offloads = 0;         // operations finished by a memory server (DEX §6)
  uint64_t offload_fallbacks = 0;  // offloads the memory server refused (structure change...)
  uint64_t merges = 0;           // underfull nodes merged into a sibling after deletes (DEX §7)
};

// Which compute node serves a key (logical partitioning, DEX §4). Designs without
// partitions serve every key on every compute node.
struct Route {
  uint32_t compute_node = 0;  // cluster-wide id of the serving compute node
  Key low = kMinKey;          // its partition: keys [low, high]
  Key high = kMaxKey;
  bool hosted = true;         // by this process; otherwise sessions answer NotOwner
};

// One thread's handle. All calls are linearizable point operations, except Scan.
class Session {
 public:
  virtual ~Session() = default;
  // NotFound if absent.
  virtual Status Lookup(Key key, Value* value) = 0;
  // Inserts, or overwrites the value of an existing key (upsert).
  virtual Status Insert(Key key, Value value) = 0;
  // Overwrites an existing key's value; NotFound if absent.
  virtual Status Update(Key key, Value value) = 0;
  // NotFound if absent.
  virtual Status Delete(Key key) = 0;
  // Up to `count` pairs with key >= start, in ascending key order, replacing *out. Not a
  // snapshot: each returned value was current at some instant during the scan, and every
  // key present for the whole scan (within the range it covered) is returned.
  // NotOwner (partitioned designs): the range runs into a partition another process serves;
  // *out holds the pairs found before it, to be continued there (Index::RouteKey).
  virtual Status Scan(Key start, size_t count, std::vector<KeyValue>* out) = 0;
};

class Index {
 public:
  virtual ~Index() = default;
  virtual std::string design() const = 0;
  // Loads sorted, unique keys into an empty index, bottom-up at options.bulk_fill.
  virtual Status BulkLoad(std::span<const KeyValue> sorted) = 0;
  // A session on logical compute node `compute_node` (< options.compute_nodes).
  virtual Result<std::unique_ptr<Session>> OpenSession(uint32_t compute_node = 0) = 0;
  virtual IndexStats Stats() const = 0;

  // Routing, from this process's view of the partition map (a session that gets NotOwner
  // refreshes that view, so route again after one).
  virtual Route RouteKey(Key key) const {
    (void)key;
    return Route{};
  }
  // Logical repartitioning: compute node i serves [boundaries[i-1], boundaries[i]) (one
  // boundary fewer than compute nodes in the cluster). A range may only move away from a
  // compute node hosted by this process, which writes its dirty pages back first. Returns
  // the seconds it took.
  virtual Result<double> Repartition(std::vector<Key> boundaries) {
    (void)boundaries;
    return Status::NotSupported(design() + " has no logical partitions to move");
  }
};

}  // namespace dmindex
