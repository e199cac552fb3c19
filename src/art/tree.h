// Tree: a concurrent adaptive radix tree over byte-string keys (Leis et al., ICDE'13: node
// types 4/16/48/256, path compression, lazy expansion), synchronised by optimistic lock
// coupling with epoch-based reclamation (Leis et al., DaMoN'16; common/version_lock.h, common/epoch.h).
// Keys are ordered by unsigned bytes; a key may be a prefix of another (node.h's terminal
// slot). It is IndeXY's in-memory index X (docs/INDEXY.md), so beyond a map it keeps:
//   * per entry: the leaf flags of leaf.h (dirty, in-Y, tombstone, cleaning, obsolete);
//   * per node up to `track_depth` hops below the root: sampled access and insert counters and
//     the hot bits of node.h, maintained by the operations passing through;
//   * exact accounting of its own bytes: every node and leaf allocation and free, in bytes();
//   * subtree detachment for release (subtree.cc) and the walks the background needs.
//
// Readers take no locks: Lookup and Scan validate node versions and restart on a change.
// Writers lock the one node they change (and its parent when a node is replaced). The root is
// a fixed N256 with no prefix: it is never replaced, so every operation can start there.
//
// Every call must run inside an epoch of its Worker (an EpochGuard), and leaf pointers it hands
// out stay readable until that epoch ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/function_ref.h"
#include "art/leaf.h"
#include "art/node.h"
#include "common/epoch.h"
#include "dmindex/status.h"

namespace dmindex::art {

struct TreeOptions {
  // Nodes at most this many hops below the root keep counters and hot bits (the root is 0).
  uint32_t track_depth = 2;
  // One in 2^sample_shift passes updates the counters (each by 2^sample_shift, so they
  // estimate the true counts); 0 counts every pass.
  uint32_t sample_shift = 4;
};
inline constexpr uint32_t kMaxTrackDepth = 8;

class Tree;

// One thread's handle on the tree: its epoch participant and its sampling random stream.
class Worker {
 public:
  explicit Worker(Tree& tree);
  EpochManager::Participant& epoch() { return *participant_; }
  // True with probability 2^-sample_shift.
  bool Sample() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return (rng_ & sample_mask_) == 0;
  }

 private:
  std::unique_ptr<EpochManager::Participant> participant_;
  uint64_t rng_;
  uint64_t sample_mask_;
};

// What Modify's callback asks for.
enum class Action : uint8_t { kKeep, kPut, kRemove };
struct Decision {
  Action action = Action::kKeep;
  std::string_view value;  // kPut: the new leaf's value (copied)
  uint32_t flags = 0;      // kPut: the new leaf's flags
  // kRemove: the key moves to the cold store (its dirty value was just written there), so the
  // node that held it becomes a mount point, under the same lock as the unlink.
  bool mount = false;
  static Decision Keep() { return {}; }
  static Decision Put(std::string_view v, uint32_t f) { return {Action::kPut, v, f}; }
  static Decision Remove() { return {Action::kRemove, {}, 0}; }
  static Decision RemoveToColdStore() { return {Action::kRemove, {}, 0, true}; }
};

// The leaf for a key, if X has one, and whether a node whose range holds the key is mounted
// (keys of its range may be in Y only).
struct Probe {
  const Leaf* leaf = nullptr;
  bool mounted = false;
};

class Tree {
 public:
  explicit Tree(const TreeOptions& options = {});
  // Frees every node and leaf. No worker may be inside an operation.
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  const TreeOptions& options() const { return options_; }
  EpochManager& epochs() { return epochs_; }

  // Busy only if the path kept changing beyond retry_limits::kArtRestarts.
  Result<Probe> Lookup(std::string_view key, Worker& w);

  // Finds the key's slot, locks the node holding it and calls
  //   decide(current leaf or null, its flags, mounted)
  // under that lock; then applies the decision: kPut publishes a new leaf (replacing the current
  // one), kRemove unlinks the current one, kKeep changes nothing. A replaced or removed leaf is
  // marked obsolete by CAS from the flags decide saw, so a concurrent flag change makes decide
  // run again with the new flags. decide may run several times (restarts); it must not block.
  using DecideFn = FunctionRef<Decision(const Leaf*, uint32_t, bool)>;
  Status Modify(std::string_view key, Worker& w, DecideFn decide);

  // Visits leaves in key order from `from` (inclusive or not) until visit returns false or the
  // tree ends. Each leaf was in the tree at some instant of the call, each key not visited in
  // the covered range was absent at some instant (restarts continue after the last visited).
  Status Scan(std::string_view from, bool inclusive, Worker& w, FunctionRef<bool(const Leaf*)> visit);

  // ---- accounting (exact) ----
  // Bytes of every node and leaf allocated and not yet freed (retired ones included).
  uint64_t bytes() const { return static_cast<uint64_t>(bytes_.load(std::memory_order_relaxed)); }
  // Of which retired, waiting for the epochs.
  uint64_t retired_bytes() const { return epochs_.pending_bytes(); }
  uint64_t entries() const { return static_cast<uint64_t>(entries_.load(std::memory_order_relaxed)); }
  uint64_t nodes() const { return static_cast<uint64_t>(nodes_.load(std::memory_order_relaxed)); }
  uint64_t restarts() const { return restarts_.load(std::memory_order_relaxed); }

  // ---- for subtree.cc and the background (node.h's counters and bits) ----
  Node* root() const { return root_; }
  Leaf* NewLeaf(std::string_view key, std::string_view value, uint32_t flags);
  Node* NewNode(NodeType type, uint32_t prefix_capacity);
  Node* CopyNode(const Node& from, NodeType type);
  // Unlinked objects go to the worker's epoch list; their bytes stay counted until freed.
  void RetireLeaf(Leaf* leaf, Worker& w);
  void RetireNode(Node* node, Worker& w);
  void CountRestart() { restarts_.fetch_add(1, std::memory_order_relaxed); }
  void AddEntries(int64_t n) { entries_.fetch_add(n, std::memory_order_relaxed); }

 private:
  class Restarts;
  struct Path;
  // One attempt of Modify; false: restart.
  bool TryModify(std::string_view key, Worker& w, DecideFn& decide, Status* done);
  // Counters and bits of the tracked nodes an operation passed (after it succeeded).
  void Track(const Path& path, Worker& w, bool access, int64_t insert_delta, bool dirty);

  const TreeOptions options_;
  // Declared before epochs_, which frees retired objects (and updates these) as it goes.
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> entries_{0};
  std::atomic<int64_t> nodes_{0};
  std::atomic<uint64_t> restarts_{0};
  EpochManager epochs_;
  Node* root_;
};

}  // namespace dmindex::art
