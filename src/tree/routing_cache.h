// What the tree core asks of a compute node's cache of internal nodes: where to start a walk
// toward a key, which leaves a scan will visit, and what a walk from a cached node found.
// Two caches implement it: Sherman's InternalCache (internal_cache.h: nodes cached one by one
// as traversals read them, dropped when found outdated) and RF-tree's search-layer cache
// (designs/rftree: the whole search layer read in chunks, published as immutable snapshots
// and refreshed as a whole). The core never needs to know which one it has: a cached node
// only routes, and every node a walk reads remotely is checked against its fences (B-link),
// so an outdated cache costs extra READs, never a wrong answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tree/node_layout.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class RoutingCache {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;

  struct Hit {
    GlobalAddress node;   // the cached internal node
    uint8_t level = 0;    // its level
    GlobalAddress child;  // its child covering the key (at level - 1)
  };

  virtual ~RoutingCache() = default;

  // The lowest cached node at a level >= min_level (>= 1) covering `key`, and its child
  // toward `key`. False: nothing cached helps; walk from the root.
  virtual bool FindChild(KeyRef key, uint8_t min_level, Hit* hit) = 0;
  // The cached level-1 node covering `key`: its child covering `key` and the children right
  // of it, at most `max`, none starting at or after `end` - the leaves a scan from `key`
  // visits if none split since. False: the scan follows sibling links leaf by leaf.
  virtual bool FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                           std::vector<GlobalAddress>* leaves) = 0;
  // A validated internal node image this compute node read or wrote.
  virtual void Insert(GlobalAddress addr, const NodeHeader<KV>& h, const std::byte* image) = 0;

  // What a walk from `hit` toward `key` met at the hit's child level:
  // `hops` > 0 sibling links followed (the cached node is older than a split below it);
  virtual void MovedRight(const Hit& hit, KeyRef key, uint32_t hops) = 0;
  // a node that is not on key's path at all (dead, reused, of another level, left of key).
  virtual void Stale(const Hit& hit, KeyRef key) = 0;

  virtual uint64_t hits() const = 0;
  virtual uint64_t misses() const = 0;
  virtual uint64_t bytes() const = 0;  // compute-side memory it holds
};

}  // namespace dmindex::tree
