// The public face of dmindex: an ordered key-value index living in disaggregated memory.
//
// An Index is one tree in the memory pool of a Cluster, opened by one compute process (which
// may host several logical compute nodes, each with its own cache). Threads each open a
// Session and issue operations through it; sessions are not thread-safe, the Index is.
// Contracts of every call: docs/API.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dmindex/cluster.h"
#include "dmindex/iterator.h"
#include "dmindex/options.h"
#include "dmindex/partitioning.h"
#include "dmindex/status.h"
#include "dmindex/types.h"
#include "dmindex/write_batch.h"

namespace dmindex {

namespace internal {
class IndexHandle;    // what Index::Open returns around a design (src/api/handles.h)
class SessionHandle;  // its sessions
}  // namespace internal

// The rules a session checks keys and values against: the index's key format and limits.
struct KeyRules {
  KeyFormat format = KeyFormat::kU64;
  uint32_t max_key_bytes = kU64KeyBytes;
  uint32_t max_value_bytes = 1u << 20;
  // OK, or InvalidArgument naming the rule a key or value breaks (and the limit).
  Status CheckKey(Slice key) const;
  Status CheckValue(Slice value) const;
};

// One thread's handle. Point operations are linearizable; Scan is not a snapshot (below).
// The public calls check their arguments once, here, and call the design's Do* functions.
class Session {
 public:
  virtual ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // NotFound if absent.
  Status Lookup(Slice key, std::string* value);
  // Inserts, or overwrites the value of an existing key (upsert).
  Status Insert(Slice key, Slice value);
  // Overwrites an existing key's value; NotFound if absent.
  Status Update(Slice key, Slice value);
  // NotFound if absent.
  Status Delete(Slice key);
  // Up to `count` pairs with key >= start, in ascending key order, replacing *out. Not a
  // snapshot: each returned value was current at some instant during the scan, and every
  // key present for the whole scan (within the range it covered) is returned.
  // NotOwner (partitioned designs): the range runs into a partition another process serves;
  // *out holds the pairs found before it, to be continued there (Partitioning::RouteKey).
  // To read on from where a scan stopped, use an iterator.
  Status Scan(Slice start, size_t count, std::vector<KeyValue>* out);
  // An iterator over this session's index (iterator.h). ReadOptions::upper_bound limits
  // the range; readahead sets how many pairs it reads per batch.
  Iterator NewIterator(const ReadOptions& options = {});
  // Looks up every key; returns a Status per key (OK, NotFound, ...) and puts the values
  // found into (*values)[i]. Designs that can issue the READs of several lookups in one round
  // trip do so (naive, sherman: one batch per tree level); each key's answer is linearizable
  // within the call, as a Lookup's.
  std::vector<Status> MultiGet(std::span<const Slice> keys, std::vector<std::string>* values);

  // Sets the value of `key` to `desired` if it is `expected`, atomically (linearizable with
  // every other point operation): *swapped says whether it did; when it did not, *current
  // (if given) receives the value found. NotFound if the key is absent. The designs in the
  // pool compare where they write: naive, sherman and xstore (in its memory server) under the
  // leaf's lock, rftree on the leaf image its inline lock is conditioned on, dex under its
  // cached leaf's latch or its shared leaf's lock; the designs that live in this process
  // (local, absl, indexy, btree-disk, rocksdb, lmdb) under a per-key lock every write of the
  // index takes (docs/API.md).
  Status CompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                        std::string* current = nullptr);
  // Deletes every key in [begin, end), one Delete each (a key inserted into the range while
  // it runs may stay); *deleted (if given) counts the keys it removed. Costs a scan of the
  // range and a Delete per key present.
  Status DeleteRange(Slice begin, Slice end, uint64_t* deleted = nullptr);
  // Applies the batch's writes in order (write_batch.h: atomic per write, not per batch).
  // Every key and value is checked first: an invalid one is InvalidArgument and changes
  // nothing. *applied (if given) counts the writes applied (all of them when OK).
  Status Write(const WriteBatch& batch, size_t* applied = nullptr);

  // Integer convenience for the u64 format: the key is U64Key(key), the value the 8-byte
  // big-endian encoding of the integer (a stored value of another size is InvalidArgument
  // for the integer Lookup).
  Status Lookup(uint64_t key, uint64_t* value);
  Status Insert(uint64_t key, uint64_t value);
  Status Update(uint64_t key, uint64_t value);
  Status Delete(uint64_t key);

  // The key format and limits this session's calls are checked against.
  const KeyRules& rules() const { return rules_; }

 protected:
  Session() = default;
  // For sessions that wrap another (recorders, tracers): `inner`'s design scan of `range`,
  // as an iterator of `inner` would run it (arguments checked, restarts kept internal).
  static Status ScanRangeOf(Session& inner, const KeyRange& range, size_t count,
                            std::vector<KeyValue>* out);
  static Status ScanReverseOf(Session& inner, const ReverseRange& range, size_t count,
                              std::vector<KeyValue>* out);
  // A wrapper checks what its inner session checks.
  void AdoptRules(const Session& inner) { rules_ = inner.rules_; }

 private:
  friend class Index;
  friend class Iterator;
  // Keys and values reach the design checked against rules().
  virtual Status DoLookup(Slice key, std::string* value) = 0;
  virtual Status DoInsert(Slice key, Slice value) = 0;
  virtual Status DoUpdate(Slice key, Slice value) = 0;
  virtual Status DoDelete(Slice key) = 0;
  // Up to `count` pairs of `range` (never empty, keys valid), ascending, appended to the
  // empty *out. Fewer than `count` only when the range holds no more (or NotOwner, above).
  virtual Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) = 0;
  // Up to `count` pairs of `range` (never empty, positions valid), descending from its end,
  // appended to the empty *out. The default (reverse_scan.cc) reads forward with DoScan over
  // windows that widen below the end; its cost is in docs/API.md.
  virtual Status DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out);
  // CompareAndSwap on a valid key and values. The default is NotSupported.
  virtual Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                                  std::string* current);
  // Fills values[i] and statuses[i] for keys[i] (valid keys). The default looks each key up.
  virtual void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                          std::span<Status> statuses);

  friend class internal::SessionHandle;

  KeyRules rules_;
  // The index's count of open sessions (Close refuses while sessions are open).
  std::shared_ptr<std::atomic<uint32_t>> open_sessions_;
  // False once the session is destroyed: its iterators check it before they read.
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
};

// Counters every design keeps besides the fabric's verb counts. Design-specific counters
// are properties (Index::GetIntProperty).
struct IndexStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_bytes = 0;  // compute-side memory used by caches, all compute nodes
  uint64_t pool_bytes = 0;   // remote memory allocated to the index
  uint64_t retries = 0;      // optimistic reads or lock attempts that had to be redone
};

class Index {
 public:
  // Opens the index `options.name` of design `options.design` on `cluster`, creating it if
  // the catalog has none of that name (and options.create_if_missing). A null cluster: a
  // new embedded cluster of the defaults, owned by this index. The index keeps its cluster
  // alive. InvalidArgument for an unknown design, knob or bad option; NotSupported for a
  // design of dmindex::baselines in a program that does not link it (docs/C_API.md).
  static Result<std::unique_ptr<Index>> Open(const IndexOptions& options,
                                             std::shared_ptr<Cluster> cluster = nullptr);
  // The designs Open knows (those linked into this program), in the order benchmarks list them.
  static std::vector<std::string> Designs();

  // Closes the index if Close was not called, ignoring its errors: call Close to see them.
  virtual ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  const std::string& design() const { return design_; }
  const IndexOptions& options() const { return options_; }
  // The key format and limits every session of this index checks (from options()).
  const KeyRules& rules() const { return rules_; }
  // The cluster the index lives on (its verb counters: Cluster::GetIntProperty).
  const std::shared_ptr<Cluster>& cluster() const { return cluster_; }

  // Loads sorted, unique, valid keys and values into an empty index, bottom-up at
  // options.bulk_fill.
  Status BulkLoad(std::span<const KeyValue> sorted);
  // A session on logical compute node `compute_node` (< options().compute_nodes).
  Result<std::unique_ptr<Session>> OpenSession(uint32_t compute_node = 0);

  // After Close: the counters as Close found them.
  IndexStats Stats() const;
  // Counters by name, RocksDB-style: "dmindex.cache.hits", "dmindex.dex.offloads", ...
  // PropertyNames() lists the ones this index has; any other name has no value. After
  // Close: the values as Close found them.
  std::optional<uint64_t> GetIntProperty(std::string_view name) const;
  std::vector<std::string> PropertyNames() const;

  // Routing and repartitioning, for designs with logical partitions (dex); null for the
  // others, where every compute node serves every key.
  Partitioning* partitioning() { return DoPartitioning(); }
  const Partitioning* partitioning() const { return const_cast<Index*>(this)->DoPartitioning(); }

  // Finishes the index's work in this process and reports what failed: DEX writes its dirty
  // cached pages back and gives back its compute nodes' host leases. Every session must be
  // destroyed first (InvalidArgument otherwise, and the index stays open). Afterwards
  // OpenSession and BulkLoad are InvalidArgument; a second Close is OK.
  //
  // Destroying an index (from Index::Open) with sessions still open is allowed: those
  // sessions (and their iterators) answer InvalidArgument from then on, and can be destroyed.
  Status Close();

  // Closes the index and deletes it: its nodes go back to the pool (Stats().pool_bytes and
  // the cluster's memory return to what they were before it was created) and its name leaves
  // the catalog (rocksdb, lmdb: its folder is removed). Every session must be destroyed
  // first (InvalidArgument otherwise, and nothing is dropped). Busy, naming them, while other
  // handles (other processes', or this one's) have the index open: nothing is dropped and
  // this handle stays open and working, so the drop can be tried again once they closed
  // (`options.force`: handles of dead processes do not count, DropOptions). NotSupported for
  // designs that cannot free their memory (the message says which). Otherwise the index is
  // closed afterwards, even if freeing its memory failed (a later Drop finishes it).
  Status Drop(const DropOptions& options = {});

 protected:
  using Properties = std::vector<std::pair<std::string, uint64_t>>;
  Index(std::string design, IndexOptions options);
  // A design's destructor calls this first if it must stop work before its members go.
  void CloseForDestructor();

 private:
  virtual Status DoBulkLoad(std::span<const KeyValue> sorted) = 0;
  virtual Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) = 0;
  virtual IndexStats DoStats() const = 0;
  virtual void AddProperties(Properties* out) const { (void)out; }
  virtual Partitioning* DoPartitioning() { return nullptr; }
  virtual Status DoClose() { return Status::Ok(); }
  // Drop's first step, while the index is still open: decides whether the drop may go on
  // (pool designs: alloc::Catalog::PrepareDrop, which commits it). Busy leaves the index
  // open. Default Ok (nothing outside this handle to ask).
  virtual Status DoPrepareDrop(const DropOptions& options) {
    (void)options;
    return Status::Ok();
  }
  // After DoClose: gives the index's memory back and removes its name. Default NotSupported.
  virtual Status DoDrop(const DropOptions& options);
  Properties AllProperties() const;
  friend class internal::IndexHandle;

  const std::string design_;
  const IndexOptions options_;
  const KeyRules rules_;
  std::shared_ptr<Cluster> cluster_;  // set by Open; null for indexes built on a bare fabric
  std::shared_ptr<std::atomic<uint32_t>> open_sessions_;
  bool closed_ = false;
  Properties final_properties_;  // what Stats and properties answer after Close
  IndexStats final_stats_;
};

}  // namespace dmindex
