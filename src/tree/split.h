// How a full node divides. Pure functions on sorted entry lists, shared by every B+-tree
// design so all of them split the same way.
#pragma once

#include <cstddef>
#include <span>

#include "tree/internal_node.h"
#include "tree/leaf_node.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
struct LeafSplit {
  std::span<const LeafEntry<KV>> left, right;
  typename KV::Key separator;  // first key of the right half = its low fence
};

// Halves an overfull sorted leaf (at least 2 entries).
template <KeyValueTraits KV>
LeafSplit<KV> SplitLeaf(std::span<const LeafEntry<KV>> sorted) {
  size_t mid = sorted.size() / 2;
  return {sorted.first(mid), sorted.subspan(mid), sorted[mid].key};
}

template <KeyValueTraits KV>
struct InternalSplit {
  std::span<const InternalEntry<KV>> left, right;
  typename KV::Key separator;  // pushed up: the right node's low fence
  GlobalAddress right_leftmost;
};

// Splits an overfull sorted internal node (at least 3 entries): the middle separator moves
// up, its child becomes the right node's leftmost child.
template <KeyValueTraits KV>
InternalSplit<KV> SplitInternal(std::span<const InternalEntry<KV>> sorted) {
  size_t mid = sorted.size() / 2;
  return {sorted.first(mid), sorted.subspan(mid + 1), sorted[mid].key, sorted[mid].child};
}

}  // namespace dmindex::tree
