// RF-tree's leaf writes under the inline version lock (SPREAD section 3.3.4; docs/RFTREE.md
// gives the argument). A leaf's last 8 bytes - its trailer, outside every check word - hold
// the version of the last whole write; a writer locks the leaf by setting the low bit.
//
//   1. READ the leaf (through the search-layer cache, validated like any read, moving right
//      along siblings); apply the write to its sorted entries. Update or delete of an absent
//      key is NotFound here, with no lock: the validated image is the leaf at an instant of
//      the READ.
//   2. The image's trailer must equal its version v: the write of v finished (its trailer
//      lands last) and nobody holds the lock. Otherwise back off and READ again.
//   3. CAS the trailer from v to the session's lock word (odd: it names the lease and redo
//      block, tree/lock_word.h). Only the write of version v ever put v there and versions
//      are fresh random stamps, so at most one writer wins, and a win means nothing was
//      written since the image was read: the image is the leaf's content.
//   4. Build the whole leaf (or both halves of a split) with a fresh even version v' and
//      write its redo record, it, then its trailer v', in one in-order batch: the trailer -
//      the unlock - lands after every other word. (The paper writes node and unlocked trailer
//      in one WRITE, relying on in-order landing; unlock=with_node does that, to show what
//      breaks, and records nothing.)
//   A trailer whose holder's lease expired is taken over and its write finished from the
//   record (TreeReader::TakeOverDeadTrailer; docs/SYNCHRONIZATION.md, "Lock takeover and
//   repair").
//
// A split writes the new right leaf completely before the left one links it (one in-order
// batch if both are on one memory node, else two round trips), unlocks with the left
// leaf's trailer, then inserts the separator with the core (internal nodes lock in the
// core's lock table).
//
// Values longer than the leaf keeps inline go out of line as in the core's writer
// (tree/value_store.h): the block is written on the leaf's memory node at the head of the
// leaf's in-order batch (no extra round trip), so it has landed before the leaf that points
// at it; the block the key held before is retired once that batch has completed. Both key
// formats share this writer: the fixed layout of 8-byte keys and the slotted one of byte
// strings end in the same trailer (tree::NodeTrailer).
#pragma once

#include "designs/rftree/rftree_options.h"
#include "tree/entry_ops.h"
#include "tree/structure_modifier.h"
#include "tree/value_store.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
class InlineLockWriter {
 public:
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Ctx = tree::TreeContext<KV>;

  InlineLockWriter(const tree::TreeShared<KV>& tree, const tree::TreeReader<KV>& reader,
                   const tree::StructureModifier<KV>& smo, UnlockMode unlock)
      : t_(tree), reader_(reader), smo_(smo), values_(tree), unlock_(unlock) {}

  // NotFound for an update or delete of an absent key; InvalidArgument for a key or value
  // the node format cannot hold. With `cas` (a kUpdate only): CompareAndSwap, the update
  // applied only if the key's value is cas->expected. The compare is made on the validated
  // image the lock's CAS is conditioned on, so it is atomic with the write (docs/RFTREE.md,
  // "CompareAndSwap"); a value that differs is answered from the READ, with no lock.
  Status Write(Ctx& c, tree::WriteOp op, KeyRef key, ValueRef value,
               const tree::CompareValue* cas = nullptr) const;

 private:
  // With the leaf at `addr` locked (its trailer h.version|1) and its new content `entries`:
  // writes the new value block `block` (if not null: `block_write`) and the leaf (split if it
  // no longer fits), which releases the lock; then retires `old`, the block it unlinked.
  Status WriteLocked(Ctx& c, tree::LockOwner me, GlobalAddress addr, const tree::NodeHeader<KV>& h,
                     const std::vector<tree::LeafEntry<KV>>& entries, const tree::ValueBlockRef& block,
                     const fabric::Verb& block_write, const tree::ValueBlockRef& old) const;
  // The value of `entry` (an entry collected from a validated leaf image): inline, or its
  // block fetched as a lookup fetches it. *fetched false: the block was reused since the
  // READ (the leaf has changed): READ again.
  Status ValueOf(Ctx& c, KeyRef key, const tree::LeafEntry<KV>& entry, std::string* value, bool* fetched) const;
  // Releases the lock of a leaf nothing was written to: its version back in the trailer.
  void Unlock(Ctx& c, tree::LockOwner me, GlobalAddress addr, uint64_t version) const;
  // Posts `verbs` (fresh blocks: a value block, a split's right leaf), then the session's
  // image of the leaf at `addr` with its redo record (held under a lease: `me`), and last the
  // trailer, which releases the lock - one in-order batch on the leaf's memory node, posted
  // again while the trailer names us if it fails (NodeLock::WriteAndReleaseTrailer).
  // A split's (`separator` not null) ends the batch with the parent's lock attempt and READ
  // when the cache names the parent (StructureModifier::ReleaseTryingParent): *parent holds it.
  Status PostAndUnlock(Ctx& c, tree::LockOwner me, GlobalAddress addr, std::vector<fabric::Verb>* verbs,
                       const typename KV::Key* separator = nullptr, tree::NodeLockGuard* parent = nullptr) const;

  const tree::TreeShared<KV>& t_;
  const tree::TreeReader<KV>& reader_;
  const tree::StructureModifier<KV>& smo_;
  const tree::ValueStore<KV> values_;
  const UnlockMode unlock_;
};

}  // namespace dmindex::designs::rftree
