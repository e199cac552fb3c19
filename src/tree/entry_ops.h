// What a write does to a node's entries, once for every design: a point write applied to a
// leaf's sorted entries, and a separator inserted into an internal node's. The tree core's
// writer and structure modifier, DEX's cached writes and splits and its memory-side offload
// handler all change entries through these, so they cannot disagree on what an update of an
// absent key or a separator that is already there means.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "dmindex/status.h"
#include "tree/node_layout.h"
#include "tree/write_op.h"

namespace dmindex::tree {

// Applies `op` to sorted leaf entries (which may grow past a node's capacity: the caller
// splits). NotFound, with the entries unchanged, for an Update or Delete of an absent key.
// `block`: the value's block if it is out of line (then `value` is empty; value_block.h).
template <KeyValueTraits KV>
Status ApplyToSorted(std::vector<LeafEntry<KV>>& entries, WriteOp op, typename KV::KeyRef key,
                     typename KV::ValueRef value, ValueBlockRef block = {}) {
  using KeyRef = typename KV::KeyRef;
  auto pos = std::lower_bound(entries.begin(), entries.end(), key,
                              [](const LeafEntry<KV>& e, KeyRef k) { return e.key < k; });
  const bool found = pos != entries.end() && key == pos->key;
  if (!found && op != WriteOp::kUpsert) return Status::NotFound();
  if (op == WriteOp::kDelete)
    entries.erase(pos);
  else if (found)
    *pos = {pos->key, typename KV::Value(value), block};
  else
    entries.insert(pos, {typename KV::Key(key), typename KV::Value(value), block});
  return Status::Ok();
}

// Where `separator` goes into sorted internal entries, or nullopt if it is there already
// (a split somebody else linked first).
template <KeyValueTraits KV>
std::optional<size_t> SeparatorSlot(const std::vector<InternalEntry<KV>>& entries,
                                    const typename KV::Key& separator) {
  auto pos = std::lower_bound(entries.begin(), entries.end(), separator,
                              [](const InternalEntry<KV>& e, const typename KV::Key& k) { return e.key < k; });
  if (pos != entries.end() && pos->key == separator) return std::nullopt;
  return static_cast<size_t>(pos - entries.begin());
}

// Inserts (separator, child) into sorted internal entries (which may grow past a node's
// capacity: the caller splits). Returns the index it took, or nullopt, with nothing
// inserted, if the separator is there already.
template <KeyValueTraits KV>
std::optional<size_t> InsertSeparator(std::vector<InternalEntry<KV>>& entries,
                                      const typename KV::Key& separator, GlobalAddress child) {
  const std::optional<size_t> slot = SeparatorSlot<KV>(entries, separator);
  if (slot) entries.insert(entries.begin() + static_cast<ptrdiff_t>(*slot), {separator, child});
  return slot;
}

}  // namespace dmindex::tree
