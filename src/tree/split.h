// How a full node divides: what a split yields, and the fixed format's rule (halves by
// count, the right half's first key as separator). Pure functions on sorted entry lists,
// shared by every B+-tree design so all of them split the same way; the slotted format
// splits by bytes with shortest separators (slotted_leaf.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "tree/node_layout.h"

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

// Bulk load's evenly spread runs (fixed format): n items into `parts` runs whose sizes differ
// by at most one; start of run j.
inline size_t RunStart(size_t n, size_t parts, size_t j) { return n / parts * j + std::min(j, n % parts); }
// Run starts of n items spread evenly over as few runs as hold `per_run` each.
inline std::vector<size_t> EvenRuns(size_t n, size_t per_run) {
  const size_t parts = std::max<size_t>(1, (n + per_run - 1) / per_run);
  std::vector<size_t> starts;
  for (size_t j = 0; j <= parts; ++j) starts.push_back(RunStart(n, parts, j));
  return starts;
}

}  // namespace dmindex::tree
