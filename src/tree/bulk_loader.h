// Bottom-up bulk load of an empty tree: leaves filled to options.bulk_fill, then each
// internal level over the one below, written in batches of unordered WRITEs; the root goes
// live with one CAS of the root word (so a concurrent insert into the empty tree makes the
// bulk load fail cleanly instead of mixing two trees).
#pragma once

#include <span>

#include <vector>

#include "tree/tree_reader.h"
#include "tree/value_store.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class BulkLoader {
 public:
  using Ctx = TreeContext<KV>;

  BulkLoader(const TreeShared<KV>& tree, const TreeReader<KV>& reader)
      : t_(tree), reader_(reader), values_(tree) {}

  // `sorted`: strictly ascending user keys. InvalidArgument if unsorted, duplicate, a
  // reserved key, or the tree is not empty.
  Status Load(Ctx& c, std::span<const LeafEntry<KV>> sorted) const;

 private:
  // Writes a block for every value of `sorted` past the leaf's inline limit; *out: the
  // entries with those values replaced by their blocks (untouched if there are none), and
  // *blocks every block written.
  Status WriteBlocks(Ctx& c, std::span<const LeafEntry<KV>> sorted, std::vector<LeafEntry<KV>>* out,
                     std::vector<ValueBlockRef>* blocks) const;

  const TreeShared<KV>& t_;
  const TreeReader<KV>& reader_;
  const ValueStore<KV> values_;
};

}  // namespace dmindex::tree
