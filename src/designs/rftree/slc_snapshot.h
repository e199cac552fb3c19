// One immutable copy of RF-tree's search layer on a compute node: the images of the
// search-layer log's segments as one refresh read them, each block validated on its own,
// and the root word read with the log's directory. Walked as a local B-link tree: move right
// while the key is at or beyond a node's high fence and its sibling is in the copy, descend
// while the child is. The copy is no consistent cut (its images are from different instants
// of the refresh), which B-link rules tolerate: low fences never change and nodes never
// merge, so any image's child pointer leads at or left of the key, and whatever is missing
// (a node appended after its segment was read, a torn block) ends the local walk early - a
// partial hit from which the core continues remotely.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tree/node_validation.h"
#include "tree/routing_cache.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
class SlcSnapshot {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Hit = typename tree::RoutingCache<KV>::Hit;
  using Header = tree::NodeHeader<KV>;

  // One segment of the log as read: `blocks` images of `block_bytes` from `base`.
  struct Segment {
    GlobalAddress base;
    uint64_t blocks = 0;
    std::unique_ptr<std::byte[]> images;
    std::vector<Header> headers;  // decoded, for valid blocks
    std::vector<uint8_t> valid;   // 1: a validated internal node
  };

  SlcSnapshot(const tree::NodeLayout<KV>& layout, GlobalAddress root, std::vector<Segment> segments);

  // The lowest node of the copy at a level >= min_level covering `key` on the walk from the
  // root, and its child toward `key`. *missing: levels between the hit and min_level the
  // caller must read remotely (a partial hit); 0 for a full one.
  bool FindChild(KeyRef key, uint8_t min_level, Hit* hit, uint32_t* missing) const;
  // The level-1 node covering `key` and the leaves it lists from key's on (at most `max`,
  // none at or past `end`): what a batched scan READs.
  bool FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                   std::vector<GlobalAddress>* leaves) const;

  GlobalAddress root() const { return root_; }
  // The level of the root node in the copy; -1 if the copy lacks it (an empty tree, a root
  // that was a leaf, or one appended after the log's directory was read).
  int root_level() const;
  uint64_t nodes() const { return nodes_; }
  uint64_t bytes() const { return bytes_; }  // images, headers and flags held

  // Set when a walk from this copy met a node off its key's path: the copy is no longer
  // used (every lookup misses) until a refresh replaces it.
  void Poison() const { poisoned_.store(true, std::memory_order_relaxed); }
  bool poisoned() const { return poisoned_.load(std::memory_order_relaxed); }

 private:
  struct Node {
    GlobalAddress addr;
    const Header* h = nullptr;
    const std::byte* image = nullptr;
  };
  bool Find(GlobalAddress addr, Node* out) const;
  // Walks from the root toward `key` down to `min_level` (or as far as the copy reaches).
  bool Walk(KeyRef key, uint8_t min_level, Node* at) const;

  const tree::InternalCodec<KV> codec_;
  const uint32_t block_bytes_;
  const GlobalAddress root_;
  const std::vector<Segment> segments_;
  uint64_t nodes_ = 0;
  uint64_t bytes_ = 0;
  mutable std::atomic<bool> poisoned_{false};
};

}  // namespace dmindex::designs::rftree
