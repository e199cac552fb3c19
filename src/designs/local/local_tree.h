// LocalTree: a concurrent in-memory B+-tree with optimistic lock coupling (OLC), the
// "non-distributed B+-tree on one compute server" that DEX (VLDB'24, Fig. 11) measures the
// disaggregated designs against. One implementation for both key formats, a template over
// the format's policy (key_formats.h): LocalTree<U64Keys> keeps integer keys and 8-byte
// values in atomic words (the benchmarks' fast path); LocalTree<ByteKeys> takes keys of
// 1 .. 1 KiB bytes. Values of any size in both: up to 7 bytes inline in the value word
// (u64: exactly 8 bytes raw), longer ones in blobs (blob.h).
//
// Concurrency: readers descend without locks, validating each node's version after reading
// it and restarting on a change (LeanStore / Leis et al. DaMoN'16). Writers lock only the
// leaf they change; inserts split full nodes eagerly on the way down, so a split locks just
// the node and its parent and never propagates upwards. Leaves carry right-sibling pointers
// so scans walk the leaf level without going back to the root.
//
// Deletes shrink leaves but never merge them (as in Sherman): nodes are never unlinked, so a
// reader never touches a freed node, and keys only ever move rightwards (into a new right
// sibling) - which is what lets a scan re-read a leaf that changed under it instead of
// restarting. Blobs are unlinked (a value replaced, an entry deleted): they are retired to the
// tree's epochs (common/epoch.h) and freed once no operation that could have loaded their
// pointer is running. Each thread brings a Worker (its epoch participant); a bytes-format
// operation runs inside an epoch, a u64-format one only where it reads a value blob.
//
// Memory: bytes() counts every node and blob allocated and not yet freed, exactly.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/epoch.h"
#include "common/retry.h"
#include "common/runtime.h"
#include "designs/local/local_node.h"
#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::designs::local {

template <class F>
class LocalTree {
 public:
  using NodeT = Node<F>;

  // One thread's handle on the tree: its epoch participant. Destroy workers before the tree.
  class Worker {
   public:
    explicit Worker(LocalTree& tree) : participant_(tree.epochs_.Join()) {}
    EpochManager::Participant& epoch() { return *participant_; }

    // True with probability 2^-shift (the tiered tree's sampled counters; xorshift).
    bool Sample(uint32_t shift) {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      return (rng_ & ((uint64_t{1} << shift) - 1)) == 0;
    }

   private:
    friend class LocalTree;
    template <class>
    friend class TieredTree;
    std::unique_ptr<EpochManager::Participant> participant_;
    uint64_t retired_since_reclaim_ = 0;  // bytes
    // Seeded by the runtime, not by the address: a simulated run is a function of its seed.
    uint64_t rng_ = runtime::Entropy() | 1;
  };

  // node_bytes must be at least MinNodeBytes().
  explicit LocalTree(uint32_t node_bytes);
  // Frees every node and blob. No worker may be inside an operation.
  ~LocalTree();
  LocalTree(const LocalTree&) = delete;
  LocalTree& operator=(const LocalTree&) = delete;

  static constexpr uint32_t MinNodeBytes() { return NodeT::MinNodeBytes(); }

  // Keys are valid keys of the format (Session checked them); scan positions have the
  // format's shape (8 bytes for u64). NotFound if absent; Busy only if an operation restarts
  // more often than retry_limits::kLocalTreeRestarts allows (each restart means another
  // thread changed the nodes on its path, so that is a bug, not contention).
  Status Lookup(Worker& w, Slice key, std::string* value);
  Status Upsert(Worker& w, Slice key, Slice value);
  Status Update(Worker& w, Slice key, Slice value);
  Status Delete(Worker& w, Slice key);
  // Up to `count` pairs of `range`, ascending, replacing *out.
  Status Scan(Worker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out);

  // Builds the tree bottom-up from sorted unique pairs, leaves filled to `fill` of capacity.
  // The tree must be empty and no other operation may run concurrently.
  Status BulkLoad(std::span<const KeyValue> sorted, double fill);

  // Nodes and blobs allocated and not yet freed, retired ones included.
  uint64_t bytes() const { return static_cast<uint64_t>(bytes_.load(std::memory_order_relaxed)); }
  // Of which retired blobs, waiting for the epochs.
  uint64_t retired_bytes() const { return epochs_.pending_bytes(); }
  // Nodes and blobs reachable from the root, added up by a walk: bytes() - retired_bytes()
  // on a quiescent tree (tests check the accounting with it).
  uint64_t ReachableBytes() const;
  uint64_t node_count() const { return node_count_.load(std::memory_order_relaxed); }
  uint64_t restarts() const { return restarts_.load(std::memory_order_relaxed); }
  uint32_t node_bytes() const { return node_bytes_; }

 protected:
  // The tiered tree (tiered_tree.h) extends this one with IndeXY's operations.
  using Probe = typename F::Probe;
  static constexpr uint32_t kKeyWords = F::kKeyWords;
  // A worker reclaims once it retired this many bytes since it last did (the epochs' own
  // trigger counts objects; values of up to 1 MiB need a bound in bytes).
  static constexpr uint64_t kReclaimBytes = 256 << 10;

  // A value as a leaf stores it: raw 8 bytes (u64 format, boxed false) or a value_word.
  struct StoredValue {
    uint64_t word = 0;
    bool boxed = false;
  };
  // A key's words made for an insert, before the leaf is locked (a blob for long keys).
  struct NewKey {
    uint64_t words[kKeyWords] = {};
    bool made = false;
  };
  class Restarts;
  class OpScope;
  // What one attempt of an operation came to.
  enum class Outcome : uint8_t { kOk, kNotFound, kRestart };

  NodeT* NewNode(uint16_t level);
  StoredValue MakeValue(Slice value);
  // For words no reader can have seen (an insert that did not happen; the destructor).
  void FreeUnpublished(const StoredValue& v);
  // The value's bytes. A blob's reader is inside an epoch that began while it was linked.
  static void ReadValue(const StoredValue& v, std::string* out) {
    if (!v.boxed) {
      *out = U64Keys::Encode(v.word);  // a short string moved in: cheaper than assign()
      return;
    }
    value_word::Read(v.word, out);
  }
  // u64 format: a Lookup that found a value blob outside an epoch reads it here (restart
  // if the leaf changed). Out of line: the fast path of 8-byte values stays small.
  [[gnu::noinline]] Outcome ReadBlobLate(Worker& w, NodeT* leaf, uint64_t version, uint64_t word,
                                                       std::string* value);
  void RetireValue(Worker& w, const StoredValue& v);
  void RetireKey(Worker& w, const uint64_t* words);
  void RetireBlob(Worker& w, const Blob* blob);

  // Prefetches the node `parent` (at level >= 1) leads to (NodeT::Prefetch).
  void PrefetchChild(const NodeT* parent, const NodeT* child) const {
    NodeT::Prefetch(child, parent->level() == 1 ? leaf_lines_ : search_lines_);
  }
  // Optimistic descent to the leaf responsible for `key`; false if the caller must restart.
  bool FindLeaf(const Probe& key, NodeT** leaf, uint64_t* version) const;
  // One attempt of an upsert; false: restart. *old: the value it replaced, if any.
  bool TryUpsert(const Probe& key, const StoredValue& value, NewKey* new_key, std::optional<StoredValue>* old);
  // Update and Delete: applies change(leaf, position) to the leaf holding `key`, under its
  // lock; NotFound if the key is absent.
  template <typename Change>
  Status ChangeExisting(const char* operation, const Probe& key, Change change);
  // Splits `node` (read at `version`, child number `child_pos` of `parent` read at
  // `parent_version`, or the root if parent is null). Gives up silently if either changed;
  // the caller restarts anyway.
  void SplitLocked(NodeT* parent, uint64_t parent_version, uint32_t child_pos, NodeT* node, uint64_t version);
  // Moves the upper half of `node` into a new right sibling; *separator: its key in the parent.
  NodeT* SplitOff(NodeT* node, uint64_t* separator);
  // Runs attempt() until its outcome is other than kRestart, restarting.
  template <typename Attempt>
  Status WithRestarts(const char* operation, const Probe& key, Attempt attempt);
  // Bulk load: one level of parents over `children`, whose smallest and largest keys are
  // first[i] and last[i] (words borrowed from the leaves).
  using KeyWords = std::array<uint64_t, kKeyWords>;
  void BuildParents(std::vector<NodeT*>* children, std::vector<KeyWords>* first,
                    std::vector<KeyWords>* last, double fill);
  // Every node, level by level from the root (quiescent tree only).
  template <typename Visit>
  void ForEachNode(Visit visit) const;

  const uint32_t node_bytes_;
  // What a descent prefetches of the next node (NodeT::Prefetch): its search lines, or all
  // of a leaf (the value sits past the keys), at most kMaxPrefetchLines.
  const uint32_t search_lines_;
  const uint32_t leaf_lines_;
  std::atomic<NodeT*> root_;
  std::atomic<uint64_t> node_count_{0};
  std::atomic<uint64_t> restarts_{0};
  ByteCount bytes_{0};
  // Declared last: destroyed first, freeing what is still retired while bytes_ exists.
  EpochManager epochs_;
};

// Members the tiered tree (tiered_tree.h) uses as well.

// One operation's epoch: entered for formats whose readers follow pointers (F::kEpochPerOp);
// on the way out, a worker that retired many bytes reclaims (outside any epoch of its own).
template <class F>
class LocalTree<F>::OpScope {
 public:
  OpScope(Worker& w, bool enter) : w_(w), entered_(enter) {
    if (!entered_) return;
    w_.epoch().Enter();
    // Orders the announcement (a store) before this operation's loads of key tags and value
    // words. The announced epoch may already be stale (read before advances that did not
    // see this slot yet); then everything retired in it was unlinked before those advances,
    // and this fence pairs with RetireBlob's so the loads below see the unlinks. (x86's
    // seq_cst store is a full barrier already; the C++ model needs the fence.)
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  ~OpScope() {
    if (entered_) w_.epoch().Exit();
    if (w_.retired_since_reclaim_ >= kReclaimBytes && !w_.epoch().inside()) {
      w_.epoch().Reclaim();
      w_.retired_since_reclaim_ = 0;
    }
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Worker& w_;
  const bool entered_;
};

template <class F>
class LocalTree<F>::Restarts {
 public:
  Restarts(LocalTree& tree, const char* operation, const Probe& key)
      : tree_(tree), budget_(retry_limits::kLocalTreeRestarts, operation), key_(key) {}
  Status Next() {
    tree_.restarts_.fetch_add(1, std::memory_order_relaxed);
    if (!budget_.Spend()) return budget_.Exhausted("of key " + F::Text(key_));
    // Whoever made us restart may be descheduled while holding a lock; on few cores give
    // it the CPU rather than spinning.
    backoff_.Pause();
    return Status::Ok();
  }

 private:
  LocalTree& tree_;
  RetryBudget budget_;
  Backoff backoff_{backoff::kRestart};
  const Probe& key_;
};

template <class F>
template <typename Attempt>
Status LocalTree<F>::WithRestarts(const char* operation, const Probe& key, Attempt attempt) {
  Restarts restarts(*this, operation, key);
  for (;;) {
    // The Status is made here, at the return: handing one out of the attempt would move its
    // message string (an out-of-line call, 2 of them were 88 instructions a lookup).
    switch (attempt()) {
      case Outcome::kOk: return Status::Ok();
      case Outcome::kNotFound: return Status::NotFound();
      case Outcome::kRestart: break;
    }
    DMX_RETURN_IF_ERROR(restarts.Next());
  }
}

extern template class LocalTree<U64Keys>;
extern template class LocalTree<ByteKeys>;
extern template class LocalTree<Tiered<U64Keys>>;
extern template class LocalTree<Tiered<ByteKeys>>;

}  // namespace dmindex::designs::local
