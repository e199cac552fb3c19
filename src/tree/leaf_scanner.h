// Range scans. With the internal-node cache on, the cached level-1 node covering the start
// key lists the leaves the scan will visit, so they are READ in one doorbell batch (one round
// trip, as Sherman's range query does) instead of one round trip per sibling link. The batch
// is trusted only as far as each leaf's image links to the next one (sibling pointer and
// fences); past a split or a stale cache entry the scan continues along sibling links.
#pragma once

#include <vector>

#include "tree/tree_reader.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class LeafScanner {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Ctx = TreeContext<KV>;

  LeafScanner(const TreeShared<KV>& tree, const TreeReader<KV>& reader)
      : t_(tree), reader_(reader) {}

  // Up to `count` entries of `range`, ascending, replacing *out, out-of-line values fetched
  // (one more round trip for all of them; a block that does not validate in the lease
  // repeats the scan). Not a snapshot: see docs/SYNCHRONIZATION.md (Scans).
  Status Scan(Ctx& c, const ScanRange<KV>& range, size_t count, std::vector<LeafEntry<KV>>* out) const;

 private:
  // The entries, out-of-line values as references.
  Status ScanLeaves(Ctx& c, const ScanRange<KV>& range, size_t count, std::vector<LeafEntry<KV>>* out) const;
  // Leaves to fetch in one batch for `count` entries: enough at bulk-load fill when the scan
  // starts at the end of its first leaf.
  size_t LeavesFor(const Ctx& c, size_t count) const;

  const TreeShared<KV>& t_;
  const TreeReader<KV>& reader_;
};

}  // namespace dmindex::tree
