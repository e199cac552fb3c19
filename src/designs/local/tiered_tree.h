// TieredTree: the local B+-tree as IndeXY's X (designs/indexy/x_btree.h; the paper's B+-*
// systems). Same nodes, descent, splits and epochs as LocalTree, over a tiered key format
// (key_formats.h: Tiered<U64Keys>, Tiered<ByteKeys>), which adds
//   * per leaf entry, a flag byte (IndeXY's dirty / in-Y / tombstone), changed under the
//     leaf's lock - a cleaner locks the leaves it cleans for the length of its write to the
//     cold store, as the paper locks the subtree it cleans;
//   * per leaf, a mount bit (keys of its range may be in the cold store), inherited by both
//     halves of a split;
//   * per inner node, hot bits and sampled access and entry counters, updated by the
//     operations passing through;
//   * units: the inner nodes `unit_level` levels above the leaves (or the root, in a lower
//     tree), named by the lowest key of their range, walked in key order for cleaning and
//     release;
//   * release: a unit's subtree is locked top-down, its dirty entries handed to the cold
//     store, and then pruned to its leftmost path - every other node leaves the tree
//     (obsolete, freed through the epochs) and the leftmost leaf, emptied and mounted, covers
//     the unit's whole range, so the leaf chain and the parents' separators stay as they were.
// Every operation runs inside an epoch (nodes can be freed); a node found obsolete restarts it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/function_ref.h"
#include "designs/local/local_tree.h"

namespace dmindex::designs::local {

// An entry's flag byte (the same values as IndeXY's xflags).
namespace entry_flags {
inline constexpr uint8_t kDirty = 1;
inline constexpr uint8_t kInY = 2;
inline constexpr uint8_t kTombstone = 4;
}  // namespace entry_flags

struct TieredEntry {
  bool present = false;
  uint8_t flags = 0;
  std::string value;
  bool mounted = false;  // the leaf covering the key is mounted
};

struct TieredDecision {
  enum class Kind : uint8_t { kKeep, kPut, kRemove };
  Kind kind = Kind::kKeep;
  std::string_view value;
  uint8_t flags = 0;
};

// A unit: an inner node at the unit level (or the root of a lower tree), or, from Children,
// any node above it. `id` names it: "\x00" for the leftmost range, "\x01" + its lowest key
// otherwise (so ids sort as the ranges do); `end` is the id of the range after it ("" for
// none).
struct TieredUnit {
  std::string id;
  std::string end;
  uint16_t level = 0;
  uint32_t depth = 0;  // below the root
  bool bottom = false;  // at the unit level: its children are no units
  uint8_t bits = 0;
  uint64_t accesses = 0;
  uint64_t entries = 0;
  void* node = nullptr;  // valid only inside the callback that handed the unit out
};

// Where cleaning and release write: the cold store (entries with their flags; a tombstone is a
// deletion there), and the removal sequence (designs/indexy/x_index.h, YSink).
struct ColdEntry {
  std::string key;
  std::string value;
  bool tombstone = false;
};
class ColdSink {
 public:
  virtual ~ColdSink() = default;
  virtual Status Write(std::span<const ColdEntry> entries) = 0;
  virtual void BeforeUnlink() = 0;
};

struct TieredReleased {
  uint64_t entries = 0;
  uint64_t bytes = 0;  // nodes and blobs unlinked
  uint64_t written = 0;
};

template <class F>
class TieredTree : public LocalTree<F> {
 public:
  static_assert(F::kTiered, "a tiered key format (key_formats.h)");
  using Base = LocalTree<F>;
  using NodeT = typename Base::NodeT;
  using Worker = typename Base::Worker;
  using Probe = typename F::Probe;

  // Units `unit_level` levels above the leaves (>= 1); counters updated by one operation in
  // 2^sample_shift (scaled up, so they estimate the true counts); a thread frees what it
  // retired every `reclaim_bytes` (retired nodes count against IndeXY's limit until freed).
  TieredTree(uint32_t node_bytes, uint32_t unit_level, uint32_t sample_shift, uint64_t reclaim_bytes);

  Status Read(Worker& w, Slice key, TieredEntry* out);
  // decide(current) runs under the lock of the key's leaf (again after a restart).
  Status Modify(Worker& w, Slice key, FunctionRef<TieredDecision(const TieredEntry&)> decide);
  // Entries with key >= from (> if !inclusive), tombstones included, in order, until visit
  // returns false; each was in the tree at some instant of the call, and each key skipped in
  // the covered range was absent at some instant.
  Status ScanEntries(Worker& w, Slice from, bool inclusive,
                     FunctionRef<bool(std::string_view key, std::string_view value, uint8_t flags)> visit);

  // ---- the background (one thread) ----
  Status ForEachUnit(Worker& w, std::string_view after, FunctionRef<bool(TieredUnit&)> visit);
  // The units one level below `unit` (the root if unit.id is empty); none below the unit level.
  Status Children(Worker& w, const TieredUnit& unit, std::vector<TieredUnit>* out);
  // Locks the leaves of [id, end) left to right, hands their dirty entries to the sink, marks
  // them clean and in Y, and drops the tombstones; returns the entries written.
  Result<uint64_t> Clean(Worker& w, std::string_view id, std::string_view end, ColdSink& sink);
  // The release described above, of the unit at `level` whose range holds id's key.
  Result<TieredReleased> Release(Worker& w, std::string_view id, uint16_t level, ColdSink& sink);
  void DecayAccesses(Worker& w);
  // Every leaf mounted (nothing may run concurrently).
  void MountAll();

  uint64_t entries() const { return static_cast<uint64_t>(std::max<int64_t>(entries_.load(std::memory_order_relaxed), 0)); }
  uint32_t unit_level() const { return unit_level_; }

 private:
  static constexpr uint32_t kMaxHeight = 32;
  struct Path {
    NodeT* nodes[kMaxHeight];
    uint32_t count = 0;
  };
  enum class Outcome : uint8_t { kOk, kNotFound, kRestart };

  // Optimistic descent to the leaf for `key`, recording the inner nodes passed; with
  // `split_full`, a full inner node on the way is split first (and false returned).
  bool Descend(const Probe& key, bool split_full, Path* path, NodeT** leaf, uint64_t* version,
               NodeT** parent, uint64_t* parent_version, uint32_t* child_pos);
  // The node at `level` whose range holds `low` (none: the leftmost), validated and read-locked
  // at *version; path: the nodes above it.
  bool FindAtLevel(const std::string* low, uint16_t level, Path* path, NodeT** node, uint64_t* version);
  // Both: the node at `level` on the path of `key` (null: the leftmost path).
  bool Walk(const Probe* key, uint16_t level, bool split_full, Path* path, NodeT** out, uint64_t* version,
            NodeT** parent_out, uint64_t* parent_version, uint32_t* child_pos);
  Outcome TryModify(Worker& w, const Probe& key, Slice key_bytes,
                    FunctionRef<TieredDecision(const TieredEntry&)>& decide);
  void Track(Worker& w, const Path& path, int64_t entries_delta, bool dirty);
  // Release's steps (tiered_release.cc): lock a subtree top-down, listing its nodes (with the
  // versions before the locks) and its leaves in key order; retire the keys and values it
  // held; empty its leftmost leaf (mounted, linked to `after`) and drop the rest.
  using LockedNodes = std::vector<std::pair<NodeT*, uint64_t>>;
  void LockSubtree(NodeT* node, LockedNodes* nodes, std::vector<NodeT*>* leaves);
  void RetireReleased(Worker& w, const std::vector<NodeT*>& leaves, const LockedNodes& nodes, TieredReleased* r);
  void PruneToLeftmost(Worker& w, NodeT* unit, NodeT* after, const LockedNodes& nodes, TieredReleased* r);
  void RetireNode(Worker& w, NodeT* node);
  // Entry i of a leaf, as Y is to store it (the caller holds the leaf's lock).
  static void AppendEntry(NodeT* leaf, uint32_t i, std::vector<ColdEntry>* batch);
  // A unit's id <-> the lowest key of its range (none: the leftmost).
  static std::string IdOf(const std::string* low) { return low == nullptr ? std::string(1, '\0') : '\x01' + *low; }
  static bool LowOf(std::string_view id, std::string* low);
  TieredUnit UnitOf(NodeT* node, std::string id, std::string end, uint32_t depth) const;

  const uint32_t unit_level_;
  const uint32_t sample_shift_;
  std::atomic<int64_t> entries_{0};
};

extern template class TieredTree<Tiered<U64Keys>>;
extern template class TieredTree<Tiered<ByteKeys>>;

}  // namespace dmindex::designs::local
