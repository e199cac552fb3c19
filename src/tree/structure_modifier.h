// Structure modifications of the remote B-link tree: leaf and internal splits, separator
// insertion into the parent level, root growth, and the first root of an empty tree.
//
// Rules that keep concurrent inserts into a small (even empty) tree correct (Sherman issue
// #26 was a tree that broke exactly there):
//  * a split writes the new right node first, then the left node with its new high fence and
//    sibling link, so the right half is reachable (via the sibling) before anything points
//    at it from above; the left write and the unlock share one in-order batch;
//  * the lock of the split node is released before the separator goes up: a thread holds at
//    most one lock, and the separator insertion is idempotent (a separator is its child's
//    low fence, which never changes);
//  * when a separator must go one level above the root, any thread may grow the root: it
//    builds a new root over the whole current chain of the root level and CASes the root
//    word; losers free their node and insert normally into the winner's root.
#pragma once

#include <span>

#include "tree/covering_lock.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class StructureModifier {
 public:
  using Key = typename KV::Key;
  using Ctx = TreeContext<KV>;

  StructureModifier(const TreeShared<KV>& tree, const TreeReader<KV>& reader,
                    const CoveringLocker<KV>& locker)
      : t_(tree), reader_(reader), locker_(locker) {}

  // The two halves of a leaf with header `h` whose new content `sorted` no longer fits: a
  // block for the right half (placed at level 0), its image in c.sibling() (its sibling is
  // h's), the left half's image in c.node() (new version, high fence = the separator,
  // sibling = the right half). Nothing is written.
  struct LeafSplitImages {
    GlobalAddress right;
    Key separator;
  };
  Status BuildLeafSplit(Ctx& c, const NodeHeader<KV>& h, std::span<const LeafEntry<KV>> sorted,
                        LeafSplitImages* out) const;
  // Splits the locked leaf at `addr` (header h) whose new content `sorted` no longer fits,
  // releases its lock and inserts the separator into the parent level.
  Status SplitLeaf(Ctx& c, NodeLockGuard& guard, GlobalAddress addr, const NodeHeader<KV>& h,
                   std::span<const LeafEntry<KV>> sorted) const;
  // Releases a splitting node's lock (`held`, at `node`) with `writes` - a trailer holding
  // with `trailer_release` as its last write - and, when the compute node's cache names the
  // node at `level` covering `separator` on the same memory node, tries that node's lock and
  // READs it into c.scratch() at the end of the same batch: *up then holds it, for
  // InsertSeparator (docs/SYNCHRONIZATION_DETAIL.md, "The parent's lock in a split's batch").
  Status ReleaseTryingParent(Ctx& c, NodeLock::Held* held, std::span<fabric::Verb> writes,
                             GlobalAddress node, const Key& separator, uint8_t level, NodeLockGuard* up,
                             const fabric::Verb* trailer_release = nullptr) const;
  // Makes `child` (low fence `separator`, at level - 1) reachable from level `level`.
  // `locked`, if it holds a lock: the node its split's batch locked for the separator, read
  // into c.scratch() (used if it still covers the separator at `level`, else released).
  Status InsertSeparator(Ctx& c, uint8_t level, Key separator, GlobalAddress child,
                         NodeLockGuard* locked = nullptr) const;
  // Gives the tree a root above `child_level` if its root is on that level.
  Status GrowRoot(Ctx& c, uint8_t child_level) const;
  // Installs an empty leaf as the root of an empty tree (no-op if another thread did).
  Status CreateRoot(Ctx& c) const;

 private:
  // The node at `level` covering `separator` by this compute node's cache, if a split's
  // batch may try its lock (same memory node as the splitting node at `child`); null otherwise.
  GlobalAddress ParentToTry(Ctx& c, GlobalAddress child, const Key& separator, uint8_t level) const;
  // Whether the node `locked` holds (read into c.scratch()) is the live node at `level`
  // covering `separator`: then its image and header go to c.node() and *h. Otherwise it is
  // released.
  Status TakeLockedParent(Ctx& c, uint8_t level, const Key& separator, NodeLockGuard& locked,
                          NodeHeader<KV>* h, bool* usable) const;
  // Puts an internal node image this thread just wrote into its compute node's cache, so
  // its own next traversal does not start from the outdated copy.
  void CacheWritten(Ctx& c, GlobalAddress addr, const std::byte* image) const;
  // CASes the root word from `expected` to `fresh` (a fully written node at `level`); gives
  // `fresh` back if another thread changed the root first.
  Status PublishRoot(Ctx& c, GlobalAddress expected, GlobalAddress fresh, uint8_t level) const;

  const TreeShared<KV>& t_;
  const TreeReader<KV>& reader_;
  const CoveringLocker<KV>& locker_;
};

}  // namespace dmindex::tree
