// Lookups of several keys that share round trips (Session::MultiGet). Every key walks down
// the tree as a Lookup does, but the walks advance together: each round READs the next node
// of every walk still under way in one unordered batch, each distinct node once. With the
// internal-node cache warm that is one round trip for all the keys' leaves; without it, one
// per tree level. A walk that meets anything but a plain step (an image that does not
// validate, a stale node, too many hops) is finished alone by TreeReader::Lookup, which knows
// how to wait, retry and report; so the batch adds no protocol of its own.
#pragma once

#include <span>

#include "tree/tree_reader.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class BatchLookup {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Value = typename KV::Value;
  using Ctx = TreeContext<KV>;

  BatchLookup(const TreeShared<KV>& tree, const TreeReader<KV>& reader) : t_(tree), reader_(reader) {}

  // statuses[i]: OK with values[i], NotFound, or the error of keys[i]'s lookup.
  void Run(Ctx& c, std::span<const KeyRef> keys, std::span<Value> values,
           std::span<Status> statuses) const;

 private:
  const TreeShared<KV>& t_;
  const TreeReader<KV>& reader_;
};

}  // namespace dmindex::tree
