// XStore's scan (§5.2.2, §5.5): the first leaf by prediction and the next ones by the
// translation table's entry counts, READ in one unordered batch; taken while each image links
// to the next (the sibling pointer, and fences that continue the cursor), continued along
// sibling links after a split, predicted again from the cursor when a batch runs out, and
// into the next partition (memory server) at its boundary. Out-of-line values are fetched at
// the end in one batch. The guarantees are the tree core's scan's (docs/SYNCHRONIZATION.md,
// "Scans"): every taken image is validated and continues the previous one's high fence.
#pragma once

#include <vector>

#include "designs/xstore/client_state.h"
#include "tree/scan_range.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
class RangeReader {
 public:
  using State = ClientState<KV>;
  using Session = typename State::Session;
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;

  explicit RangeReader(const State& state) : c_(state) {}

  // Up to `count` entries of `range`, ascending, values fetched (*out replaced).
  Status Scan(Session& s, const tree::ScanRange<KV>& range, size_t count, std::vector<tree::LeafEntry<KV>>* out) const;

 private:
  // The entries of `range` within partition p, appended (out-of-line values as references).
  Status ScanPartition(Session& s, size_t p, const tree::ScanRange<KV>& range, size_t count,
                       std::vector<tree::LeafEntry<KV>>* out) const;
  // The leaves to READ from `cursor`: the predicted ones and the next ones of the translation
  // table until they hold about `want` entries (empty: the partition's tree is empty).
  Status PredictRun(Session& s, size_t p, KeyRef cursor, size_t want, std::vector<GlobalAddress>* run) const;

  const State& c_;
};

}  // namespace dmindex::designs::xstore
