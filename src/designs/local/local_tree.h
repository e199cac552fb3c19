// LocalTree: a concurrent in-memory B+-tree with optimistic lock coupling (OLC), the
// "non-distributed B+-tree on one compute server" that DEX (VLDB'24, Fig. 11) measures the
// disaggregated designs against.
//
// Concurrency: readers descend without locks, validating each node's version after reading
// it and restarting on a change (LeanStore / Leis et al. DaMoN'16). Writers lock only the
// leaf they change; inserts split full nodes eagerly on the way down, so a split locks just
// the node and its parent and never propagates upwards. Leaves carry right-sibling pointers
// so scans walk the leaf level without going back to the root.
//
// Deletes shrink leaves but never merge them (as in Sherman): nodes are therefore never
// unlinked, an optimistic reader can never touch freed memory, and keys only ever move
// rightwards (into a new right sibling) - which is what lets a scan re-read a leaf that
// changed under it instead of restarting. All nodes are freed when the tree is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "designs/local/local_node.h"
#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::designs::local {

class LocalTree {
 public:
  // node_bytes must leave room for at least four entries (see MinNodeBytes()).
  explicit LocalTree(uint32_t node_bytes);
  ~LocalTree();
  LocalTree(const LocalTree&) = delete;
  LocalTree& operator=(const LocalTree&) = delete;

  static constexpr uint32_t MinNodeBytes() { return Node::kHeaderBytes + 8 + 16 * 4; }

  // Keys must be valid (IsValidKey); callers check. NotFound if absent; Busy only if an
  // operation restarts more often than retry_limits::kLocalTreeRestarts allows (each restart
  // means another thread changed the nodes on its path, so that is a bug, not contention).
  Status Lookup(Key key, Value* value);
  Status Upsert(Key key, Value value);
  Status Update(Key key, Value value);
  Status Delete(Key key);
  // Up to `count` pairs of `range`, ascending, replacing *out.
  Status Scan(const KeyRange& range, size_t count, std::vector<KeyValue>* out);

  // Builds the tree bottom-up from sorted unique pairs, leaves filled to `fill` of capacity.
  // The tree must be empty and no other operation may run concurrently.
  Status BulkLoad(std::span<const KeyValue> sorted, double fill);

  uint64_t node_count() const { return node_count_.load(std::memory_order_relaxed); }
  uint64_t restarts() const { return restarts_.load(std::memory_order_relaxed); }
  uint32_t node_bytes() const { return node_bytes_; }

 private:
  Node* NewNode(uint16_t level);
  // Optimistic descent to the leaf responsible for `key`; false if the caller must restart.
  bool FindLeaf(Key key, Node** leaf, uint64_t* version) const;
  bool TryUpsert(Key key, Value value);
  // Update and Delete: applies change(leaf, position) to the leaf holding `key`, under its
  // lock; false if the key is absent.
  template <typename Change>
  Status ChangeExisting(const char* operation, Key key, Change change);
  // Splits `node` (read at `version`, child of `parent` read at `parent_version`, or the
  // root if parent is null). Gives up silently if either changed; the caller restarts anyway.
  void SplitLocked(Node* parent, uint64_t parent_version, Node* node, uint64_t version);
  Node* SplitOff(Node* node, Key* separator);  // moves the upper half into a new right node
  // The restarts of one operation: counted (restarts()), bounded, backed off.
  class Restarts;
  // Runs attempt() (an engaged std::optional<Status>: done) until it is done, restarting.
  template <typename Attempt>
  Status WithRestarts(const char* operation, Key key, Attempt attempt);
  // Bulk load: one level of parents over `children` (whose smallest keys are `min_keys`).
  void BuildParents(std::vector<Node*>* children, std::vector<Key>* min_keys, double fill);

  const uint32_t node_bytes_;
  std::atomic<Node*> root_;
  std::atomic<uint64_t> node_count_{0};
  std::atomic<uint64_t> restarts_{0};
};

}  // namespace dmindex::designs::local
