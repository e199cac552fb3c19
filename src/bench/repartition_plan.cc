#include "bench/repartition_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace dmindex::bench {
namespace {

// Where compute node i's range begins / ends (exclusive; the last one ends past kMaxKey).
Key Begin(const std::vector<Key>& b, uint32_t i) { return i == 0 ? kMinKey : b[i - 1]; }
Key End(const std::vector<Key>& b, uint32_t i) {
  return i < b.size() ? b[i] : std::numeric_limits<Key>::max();
}

// `to` gives its whole range to its neighbour `from`. The last compute node keeps the one
// key kMaxKey (a boundary cannot lie beyond the key space), which the bulk load never uses.
std::vector<Key> EmptyRange(std::vector<Key> b, uint32_t from, uint32_t to) {
  if (to == from + 1) b[from] = to < b.size() ? b[to] : kMaxKey;
  else b[to] = Begin(b, to);
  return b;
}

// The design's route of an integer key, in integers (the benchmark's indexes are u64).
struct IntRoute {
  uint32_t compute_node = 0;
  Key begin = kMinKey;
  std::optional<Key> end;
};
IntRoute RouteOf(const Partitioning& parts, Key key) {
  const Route r = parts.RouteKey(U64Key(key));
  IntRoute out{r.compute_node, r.begin.size() == kU64KeyBytes ? u64::Decode(r.begin) : kMinKey, {}};
  if (r.end) out.end = u64::Decode(*r.end);
  return out;
}

}  // namespace

Result<double> RepartitionTo(Index& index, const std::vector<Key>& boundaries) {
  std::vector<std::string> encoded;
  for (Key b : boundaries) encoded.push_back(u64::Encode(b));
  return index.partitioning()->Repartition(std::move(encoded));
}

Result<std::vector<Key>> RoutedBoundaries(const Index& index, uint32_t compute_nodes) {
  const Partitioning* parts = index.partitioning();
  if (parts == nullptr)
    return Status::NotSupported("design " + index.design() +
                                " serves every key on every compute node: it has no logical "
                                "partitions to repartition");
  std::vector<Key> b;  // b[i]: where node i's range ends and node i+1's begins
  for (Key key = kMinKey;;) {
    const IntRoute r = RouteOf(*parts, key);
    if (compute_nodes > 1 && b.empty() && r.begin == kMinKey && !r.end)
      return Status::NotSupported("design " + index.design() + " serves every key on one compute "
                                  "node: there is no neighbour to repartition with");
    if (r.begin != key || (r.end && *r.end <= r.begin) || r.compute_node >= compute_nodes ||
        r.compute_node < b.size())
      return Status::Corruption("design " + index.design() + " routes key " + std::to_string(key) +
                                " to compute node " + std::to_string(r.compute_node) +
                                ", partition [" + std::to_string(r.begin) + ", " +
                                (r.end ? std::to_string(*r.end) : "end") +
                                "): not the next partition in key order");
    while (b.size() < r.compute_node) b.push_back(r.begin);  // empty partitions before this one
    if (!r.end) break;
    b.push_back(*r.end);
    key = *r.end;
  }
  while (b.size() + 1 < compute_nodes) b.push_back(std::numeric_limits<Key>::max());
  return b;
}

Result<RepartitionMove> PrepareRepartition(Index& index, const RepartitionSpec& spec,
                                           uint32_t compute_nodes,
                                           std::span<const RecordPair> loaded) {
  if (spec.from >= compute_nodes || spec.to >= compute_nodes ||
      (spec.to != spec.from + 1 && spec.from != spec.to + 1))
    return Status::InvalidArgument("repartitioning needs two neighbouring compute nodes below " +
                                   std::to_string(compute_nodes));
  auto routed = RoutedBoundaries(index, compute_nodes);
  if (!routed.ok()) return routed.status();
  RepartitionMove move;
  move.initial = std::move(routed).value();
  if (spec.scale_out) {
    move.initial = EmptyRange(std::move(move.initial), spec.from, spec.to);
    auto took = RepartitionTo(index, move.initial);
    if (!took.ok()) return took.status();
  }
  const std::vector<Key>& b = move.initial;
  const auto by_key = [](const RecordPair& kv, Key k) { return kv.key < k; };
  const auto first = std::lower_bound(loaded.begin(), loaded.end(), Begin(b, spec.from), by_key);
  const auto last = End(b, spec.from) == std::numeric_limits<Key>::max()
                        ? loaded.end()
                        : std::lower_bound(first, loaded.end(), End(b, spec.from), by_key);
  move.from_keys = static_cast<uint64_t>(last - first);
  move.moved_keys = std::min<uint64_t>(
      move.from_keys, static_cast<uint64_t>(std::llround(spec.share * static_cast<double>(move.from_keys))));
  if (move.moved_keys == 0)
    return Status::InvalidArgument("a share of " + std::to_string(spec.share) + " of the " +
                                   std::to_string(move.from_keys) + " bulk-loaded keys of compute node " +
                                   std::to_string(spec.from) + " moves no key");
  move.after = b;
  if (spec.to == spec.from + 1) {
    // `to` takes the upper part: its range now begins at the first key handed over.
    move.after[spec.from] = (last - static_cast<ptrdiff_t>(move.moved_keys))->key;
  } else if (move.moved_keys < move.from_keys) {
    // `to` takes the lower part: `from` now begins at the first key it keeps.
    move.after[spec.to] = (first + static_cast<ptrdiff_t>(move.moved_keys))->key;
  } else {
    // `from` keeps no loaded key: it ends where it ended, or keeps only kMaxKey if it is the
    // last compute node (as EmptyRange).
    move.after[spec.to] = spec.from < b.size() ? b[spec.from] : kMaxKey;
  }
  return move;
}

}  // namespace dmindex::bench
