// The in-memory index X as IndeXY's core sees it (docs/INDEXY.md): an ordered map of entries
// that carry IndeXY's per-entry state, read and changed under X's own synchronisation, plus
// the subtree operations the background needs. Two implementations: an adaptive radix tree
// (x_art.h, over src/art) and the local B+-tree (x_btree.h, over designs/local).
//
// Entry state (XFlags): dirty (X's value or deletion is not yet in Y), in-Y (Y may hold a copy
// of the key, possibly older; clear: Y certainly has none) and tombstone (the key is deleted;
// kept until Y has the deletion). A region of X whose keys may be in Y without being in X is
// "mounted" (the paper's mount point): a miss there must ask Y.
//
// The core keeps two rules the implementations make possible (docs/INDEXY.md, "Why it is
// linearizable"): an entry is clean only while Y holds exactly its value (or, for a
// tombstone, nothing); and an entry with in-Y set leaves X only after Y holds its value, with
// YSink::BeforeUnlink called between the two (the removal sequence admissions check).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/function_ref.h"
#include "dmindex/status.h"
#include "dmindex/types.h"
#include "tiering/cold_store.h"

namespace dmindex::designs::indexy {

namespace xflags {
inline constexpr uint32_t kDirty = 1;
inline constexpr uint32_t kInY = 2;
inline constexpr uint32_t kTombstone = 4;
inline constexpr uint32_t kState = kDirty | kInY | kTombstone;
}  // namespace xflags

// Hot bits of a unit (the paper's D and C bits, and the clock policy's reference bit).
namespace unit_bits {
inline constexpr uint8_t kDirty = 1;
inline constexpr uint8_t kCandidate = 2;
inline constexpr uint8_t kAccessed = 4;
}  // namespace unit_bits

// A point read of X.
struct XRead {
  bool found = false;
  uint32_t flags = 0;  // xflags of the entry found
  std::string value;   // its value (empty for a tombstone)
  bool mounted = false;
};

// What Modify's callback sees: the key's entry if X holds one, and whether its region is
// mounted.
struct XCurrent {
  bool present = false;
  uint32_t flags = 0;
  std::string_view value;
  bool mounted = false;
};

struct XDecision {
  enum class Kind : uint8_t { kKeep, kPut, kRemove };
  Kind kind = Kind::kKeep;
  std::string_view value;  // kPut: the new entry's value (copied)
  uint32_t flags = 0;      // kPut: its xflags
  static XDecision Keep() { return {}; }
  static XDecision Put(std::string_view v, uint32_t f) { return {Kind::kPut, v, f}; }
  static XDecision Remove() { return {Kind::kRemove, {}, 0}; }
};

// May run several times (restarts, flags changed by a cleaner); must not block. The decision
// is applied atomically with what the last call saw.
using XDecideFn = FunctionRef<XDecision(const XCurrent&)>;

struct XEntryView {
  std::string_view key;
  std::string_view value;
  uint32_t flags = 0;
};

// A subtree of X that the background cleans or releases as one piece, named so that it can be
// found again after X changed: the ART's path prefix, the B+-tree's first key. `handle` and the
// bit calls are valid only inside the callback that handed the unit out.
struct XUnit {
  std::string id;
  std::string end;          // B+-tree: the id of the range after it ("": none)
  bool single = false;      // one entry: no counters, no bits
  bool bottom = false;      // at the unit depth: its children are no units (not split further)
  uint32_t depth = 0;       // below X's root (ART hops, B+-tree levels from the top)
  uint32_t level = 0;       // B+-tree: the node's level above the leaves
  uint8_t bits = 0;         // unit_bits when listed
  uint64_t accesses = 0;    // sampled estimates
  uint64_t entries = 0;
  void* handle = nullptr;
};

// Where the background's writes go: the cold store, and the removal sequence.
class YSink {
 public:
  virtual ~YSink() = default;
  virtual Status Write(const tiering::ColdBatch& batch) = 0;
  // Called after Y took an entry's value and before X unlinks the entry (release, tombstones
  // dropped after cleaning), under X's lock of the entry.
  virtual void BeforeUnlink() = 0;
};

struct XReleased {
  uint64_t entries = 0;  // entries unlinked
  uint64_t bytes = 0;    // X bytes unlinked (freed once the epochs allow)
  uint64_t written = 0;  // dirty entries written to Y first
};

// One thread's handle on X (a session's or the background's).
class XWorker {
 public:
  virtual ~XWorker() = default;

  // Brackets an operation that holds pointers into X (nestable). Point calls enter by
  // themselves; a scan's callback runs inside.
  virtual void Enter() = 0;
  virtual void Exit() = 0;

  virtual Status Read(Slice key, XRead* out) = 0;
  virtual Status Modify(Slice key, XDecideFn decide) = 0;
  // Entries (tombstones included) with key >= from (> if !inclusive) in order, until visit
  // returns false. Each entry was in X at some instant of the call, and each key skipped in
  // the covered range was absent at some instant.
  virtual Status Scan(Slice from, bool inclusive, FunctionRef<bool(const XEntryView&)> visit) = 0;

  // ---- the background (one thread at a time) ----
  // The units after `after` (empty: from the start), in key order, until visit returns false.
  virtual Status ForEachUnit(std::string_view after, FunctionRef<bool(XUnit&)> visit) = 0;
  // Sets and clears hot bits of a unit handed to a ForEachUnit callback, inside it.
  virtual void ChangeBits(XUnit& unit, uint8_t set, uint8_t clear) = 0;
  // The units one level below `unit` (for X's root: an empty id and depth 0), with counters.
  virtual Status Children(const XUnit& unit, std::vector<XUnit>* out) = 0;
  // Writes the units' dirty entries to Y in one batch and marks them clean; tombstones Y
  // took are dropped from X. Returns how many entries were written.
  virtual Result<uint64_t> Clean(std::span<const XUnit> units, YSink& y) = 0;
  // Writes the unit's dirty entries to Y, then unlinks the whole unit and mounts its region.
  // NotFound if X no longer holds anything there.
  virtual Result<XReleased> Release(const XUnit& unit, YSink& y) = 0;
  // Halves the sampled access counters of the units down to the unit depth.
  virtual void DecayAccesses() = 0;
  // Frees what this worker retired and the epochs allow (outside Enter/Exit); returns how
  // many of its retired objects still wait.
  virtual size_t Reclaim() = 0;
};

struct XBytes {
  uint64_t total = 0;    // every node, entry and value allocated and not yet freed
  uint64_t retired = 0;  // of which unlinked, waiting for the epochs
};

class XTree {
 public:
  virtual ~XTree() = default;
  virtual std::unique_ptr<XWorker> NewWorker() = 0;
  virtual XBytes Bytes() const = 0;
  virtual uint64_t entries() const = 0;
  virtual uint64_t restarts() const = 0;
  // The deepest unit level (units of cleaning and release; counters down to it).
  virtual uint32_t unit_depth() const = 0;
  // Marks all of X mounted: any key may be in Y (a bulk load wrote Y directly). No operation
  // may run concurrently.
  virtual void MountAll() = 0;
};

}  // namespace dmindex::designs::indexy
