// Lock-free reading of the remote B+-tree: validated node reads, the root pointer, traversal
// (internal-node cache, B-link moves right, stale-pointer restarts), lookup and scan.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/scan_range.h"
#include "tree/tree_state.h"
#include "tree/value_store.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class TreeReader {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Value = typename KV::Value;
  using Ctx = TreeContext<KV>;

  explicit TreeReader(const TreeShared<KV>& tree) : t_(tree), values_(tree) {}

  // READs a node into `buf` and validates it (NodeValidator). An image that does not validate
  // is read again while someone is visibly writing it - its lock's holder, or a write landing
  // between two READs - and reported otherwise: Corruption for zero memory (no node was ever
  // written there) and for an image that does not validate even read under the node's lock;
  // with TreeOptions::unlocked_writers the latter is Retry (a stalled unlocked write-back, the
  // design decides); with TreeShared::read_from_writer the writer reads it instead of the
  // reader taking the lock. The argument is at ReadTorn and in docs/SYNCHRONIZATION.md.
  Status Read(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const;

  // The root node's address: cached per compute node; RefreshRoot re-reads the root word.
  // Null when the tree is empty.
  Result<GlobalAddress> Root(Ctx& c) const;
  Result<GlobalAddress> RefreshRoot(Ctx& c) const;

  enum class Reach {
    kAtLevel,    // found the node at the asked level covering the key
    kRootBelow,  // the tree is lower than the asked level: the node found is on the root level
    kEmpty,      // there is no root
  };
  struct Found {
    GlobalAddress addr;
    NodeHeader<KV> h;
    Reach reach = Reach::kEmpty;
  };
  // Reads into `buf` the node at `level` whose fences cover `key`. `hint`: a cache hit the
  // caller already looked up for this key and level (saves a second cache probe).
  Status Descend(Ctx& c, KeyRef key, uint8_t level, std::byte* buf, Found* out,
                 const typename RoutingCache<KV>::Hit* hint = nullptr) const;

  // Where a writer should lock: the node at `level` covering `key` according to its parent
  // (cached or read into c.scratch()); not read itself. `hit` is the cache entry to tell
  // if the node turns out split or stale.
  struct Located {
    GlobalAddress addr;
    Reach reach = Reach::kEmpty;
    bool from_cache = false;
    typename RoutingCache<KV>::Hit hit;
  };
  Status Locate(Ctx& c, KeyRef key, uint8_t level, Located* out) const;
  // Tells the cache a Located came from that its node was found split (`hops` sibling links
  // followed to reach key's node) or stale (hops < 0).
  void TellCache(Ctx& c, const Located& loc, KeyRef key, int hops) const;

  // A value out of line costs one more READ (ValueStore): if its block does not validate or
  // was copied past the lease, the leaf is read again.
  Status Lookup(Ctx& c, KeyRef key, Value* value) const;
  const ValueStore<KV>& values() const { return values_; }
  // Up to `count` entries of `range`, ascending, following leaf sibling links (appended to
  // *out).
  Status Scan(Ctx& c, const ScanRange<KV>& range, size_t count, std::vector<LeafEntry<KV>>* out) const;
  // Appends the entries of `range` at or after *cursor of a validated leaf image to *out
  // (until out has `count`) and moves *cursor to the leaf's high fence. True when the scan is
  // complete (count reached, the range's end reached, or no leaf further right).
  bool TakeLeaf(Ctx& c, const std::byte* image, const NodeHeader<KV>& h, const ScanRange<KV>& range,
                Key* cursor, size_t count, std::vector<LeafEntry<KV>>* out) const;
  // Continues a scan at `next`, the sibling of the last leaf taken, for keys >= cursor.
  Status ScanFrom(Ctx& c, GlobalAddress next, const ScanRange<KV>& range, Key cursor, size_t count,
                  std::vector<LeafEntry<KV>>* out) const;

  // Where a walk toward `key` goes from a validated node image with header `h`, reached at
  // level `expect` (-1: unknown, e.g. from the root word) on its way down to `level`: the one
  // rule WalkDown and BatchLookup share.
  enum class Step {
    kStale,    // not a node on key's path (dead, reused, another level, key left of it)
    kRight,    // B-link: the node split after its parent was read; go to its sibling
    kDown,     // an internal node above `level`: go to the child covering key
    kArrived,  // the node at `level` (or the root level, below it) covering key
  };
  static Step NextStep(const NodeHeader<KV>& h, KeyRef key, int expect, uint8_t level) {
    if (h.dead() || (expect >= 0 && h.level != expect) || key < h.low) return Step::kStale;
    if (h.BeyondHigh(key)) return h.sibling.is_null() ? Step::kStale : Step::kRight;
    return h.level <= level ? Step::kArrived : Step::kDown;
  }

  // With TreeOptions::trailer_lock (RF-tree's inline leaf locks): if `trailer`, the odd value
  // seen in the trailer of the leaf at `addr`, names a holder whose lease expired, takes the
  // trailer over, finishes the holder's half-done write (NodeLock::TakeOverTrailerIfDead) and
  // releases the trailer with the version of the leaf as repaired. `buf` (node_bytes) gets
  // that image. *took: whether it did (the caller reads the leaf again).
  Status TakeOverDeadTrailer(Ctx& c, GlobalAddress addr, std::byte* buf, uint64_t trailer, bool* took) const;
  // Releases the trailer of the leaf at `addr`, held by `me` with nothing written under it, by
  // writing `version` into it (NodeLock::WriteAndReleaseTrailer: asked until it answers, or
  // left to a taker with the lease given up - never kept naming a live lease).
  Status ReleaseTrailer(Ctx& c, LockOwner me, GlobalAddress addr, const uint64_t& version) const;

 private:
  Status ReadTorn(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const;
  Status ReadFromWriter(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const;
  Status ReadUnderTrailer(Ctx& c, GlobalAddress addr, std::byte* buf, uint64_t trailer, LockOwner me,
                          uint64_t* holder) const;
  enum class Walk { kDone, kStale };
  // From `addr` (expected at level `expect`, -1 if unknown) down to `level`, moving right
  // along siblings. kStale: a node did not fit the path (reused, wrong level, key left of it).
  // *first_hops: the sibling links followed on the first level, before the first step down
  // (or arrival): how far the node at `addr` was from key's node.
  Status WalkDown(Ctx& c, KeyRef key, uint8_t level, GlobalAddress addr, int expect,
                  std::byte* buf, Found* out, Walk* walk, uint32_t* first_hops) const;

  const TreeShared<KV>& t_;
  const ValueStore<KV> values_;
};

}  // namespace dmindex::tree
