// Point writes on leaves: upsert, update, delete. The leaf is located through its parent
// (cached or read), locked and read in one round trip (command combination), changed, and
// written back with the unlock in one more round trip:
//   two_level on and an unsorted leaf: only the changed slot is written (entry-level
//     write-back; the slot's check word binds it to the unchanged node version);
//   otherwise: the whole leaf is rewritten with a new version (a sorted leaf is converted to
//     the unsorted format by that one whole write when two_level is on).
// In an unsorted leaf a delete leaves a tombstone that only the same key may take back until
// the next whole-leaf write (leaf_node.h); an insert that finds no empty slot but tombstones
// of other keys rewrites the leaf whole, which frees them. Leaves never merge (lazy deletion,
// docs/SYNCHRONIZATION.md).
#pragma once

#include "tree/entry_ops.h"
#include "tree/structure_modifier.h"
#include "tree/value_store.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class TreeWriter {
 public:
  using Key = typename KV::Key;
  using Value = typename KV::Value;
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Ctx = TreeContext<KV>;

  TreeWriter(const TreeShared<KV>& tree, const CoveringLocker<KV>& locker,
             const StructureModifier<KV>& smo)
      : t_(tree), locker_(locker), smo_(smo), values_(tree) {}

  // NotFound for an update or delete of an absent key. With `cas` (a kUpdate only), the
  // update is applied only if the key's value is cas->expected, checked under the lock.
  Status Write(Ctx& c, WriteOp op, KeyRef key, ValueRef value, const CompareValue* cas = nullptr) const;

 private:
  Status ApplyLocked(Ctx& c, WriteOp op, KeyRef key, ValueRef value,
                     NodeLockGuard& guard, GlobalAddress addr, const NodeHeader<KV>& h) const;
  // The compare of a CompareAndSwap on the locked leaf image: OK and *equal, or NotFound,
  // or Retry (its value block did not validate: read the leaf again).
  Status CompareLocked(Ctx& c, KeyRef key, const NodeHeader<KV>& h, const CompareValue& cas,
                       bool* equal) const;

  const TreeShared<KV>& t_;
  const CoveringLocker<KV>& locker_;
  const StructureModifier<KV>& smo_;
  const ValueStore<KV> values_;
};

}  // namespace dmindex::tree
