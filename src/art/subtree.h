// What IndeXY's background work (docs/INDEXY.md) does with subtrees of the ART: walk the
// units it cleans and releases in key order, list a node's children with their counters for
// the density policy, and detach a subtree once the cold store holds its dirty entries.
//
// A unit is named by its path: the key prefix that every key in its range starts with (a
// node's full path, or a leaf's key). Paths stay meaningful while the tree changes: a node's
// range never changes (a node that grows is copied with the same path; path compression
// inserts new nodes above, never changes a node's range).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "art/tree.h"

namespace dmindex::art {

struct UnitInfo {
  std::string path;
  // A subtree; may be replaced by the time it is used (a hint). Inside the walk's epoch its
  // hot bits and counters may be changed (they are racy by design).
  Node* node = nullptr;
  const Leaf* leaf = nullptr;  // or a single leaf
  uint32_t hop = 0;            // hops below the root
  uint8_t bits = 0;            // the node's hot bits (node.h); 0 for a leaf
  uint32_t accesses = 0;       // the node's sampled counters; 0 for a leaf
  int64_t inserts = 0;
};

// Visits, in key order, the units after `after` (exclusive, and skipping anything inside the
// range of `after`; empty: from the start): inner nodes `unit_hop` hops below the root, and
// the leaves hanging above that depth (a small tree has no nodes that deep). visit returns
// false to stop. Each unit comes from a validated snapshot of its parent.
Status ForEachUnit(Tree& tree, uint32_t unit_hop, std::string_view after, Worker& w,
                   FunctionRef<bool(const UnitInfo&)> visit);

// The children of the node whose full path is exactly `path` (the root: ""), with their
// counters; the node's terminal leaf first. NotFound if no node has that path now.
Status ChildUnits(Tree& tree, std::string_view path, Worker& w, std::vector<UnitInfo>* out);

struct Detached {
  uint64_t bytes = 0;   // nodes and leaves unlinked (freed through the epochs)
  uint64_t leaves = 0;
  uint64_t nodes = 0;
};

// Unlinks every entry whose key starts with `prefix`: finds the highest node or leaf whose
// range lies within it, locks its parent and then every node below it top-down (waiting for
// foreground writers to finish; background work only), and calls frozen(leaves) while nothing
// can change. Only if frozen succeeds (it must have made the cold store hold every dirty
// leaf), the parent is marked mounted and the unit unlinked and retired; otherwise everything
// is unlocked unchanged and frozen's error returned. The insert counters of the nodes above
// drop by the exact number of leaves. NotFound if X holds no key with that prefix.
// The caller must hold the range exclusively against other detachers and cleaners.
Result<Detached> Detach(Tree& tree, std::string_view prefix, Worker& w,
                        FunctionRef<Status(const std::vector<Leaf*>&)> frozen);

// Halves the access counters of every node at most `max_hop` hops below the root (IndeXY
// ages the densities after a release round, so old accesses count less than new ones).
Status DecayAccesses(Tree& tree, uint32_t max_hop, Worker& w);

}  // namespace dmindex::art
