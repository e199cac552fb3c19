// Finding and locking the node at a given level that covers a key: locate it through its
// parent (cached or read), lock it and read it (one round trip with command combination),
// then check its fences under the lock: move right along the sibling link if the key is at
// or beyond the high fence, restart if the node is stale. Shared by leaf writes and by
// separator insertion.
#pragma once

#include "tree/tree_reader.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class CoveringLocker {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Ctx = TreeContext<KV>;

  CoveringLocker(const TreeShared<KV>& tree, const TreeReader<KV>& reader)
      : t_(tree), reader_(reader) {}

  enum class Outcome {
    kLocked,     // *addr is locked (guard holds it) and read into c.node(); *h is its header
    kEmpty,      // the tree has no root
    kRootBelow,  // the tree has no node at `level` yet (its top level is lower)
  };
  Status Lock(Ctx& c, KeyRef key, uint8_t level, NodeLockGuard& guard, GlobalAddress* addr,
              NodeHeader<KV>* h, Outcome* outcome) const;

 private:
  const TreeShared<KV>& t_;
  const TreeReader<KV>& reader_;
};

}  // namespace dmindex::tree
