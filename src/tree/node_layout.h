// What every node format shares (the decoded header, entries, word access), and the byte
// layout of the fixed-size format (U64BytesKV) in remote memory, shared by every B+-tree design.
// The slotted format of byte-string keys is slotted_layout.h.
//
// A fixed-format node is `node_bytes` (1 KB by default) and starts with a header:
//
//   +0   check      hash of header bytes [8, header_bytes): detects a torn or foreign header
//   +8   version    stamp of the last whole-node write (fresh random value per write)
//   +16  meta       level (8 bits) | flags (8 bits) | count (16 bits)
//   +24  sibling    right sibling at the same level (B-link), null for the rightmost node
//   +32  leftmost   internal nodes: child left of the first separator; leaves: the incarnation
//   +40  body_check internal nodes: hash of the used entries and the version; leaves: 0
//   +48  low fence  (key, inclusive)
//   +..  high fence (key, exclusive)
//
// Leaves follow with `leaf_capacity` slots of [key | value | check]; a slot's check word is a
// hash of (key, value, node version, slot index, tombstone flag) with the flag in its low bit,
// so a reader can validate every slot it relies on, and an entry-level write-back (Sherman's
// two-level version) rewrites one slot without touching the header (leaf_node.h). Internal nodes follow with sorted [key | child] entries covered
// by body_check, because they are only ever written whole. See docs/SYNCHRONIZATION.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/option_checks.h"
#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "tree/key_traits.h"
#include "tree/tree_options.h"

namespace dmindex::tree {

template <typename T>
inline T LoadAt(const std::byte* image, uint32_t offset) {
  T v;
  std::memcpy(&v, image + offset, sizeof(T));
  return v;
}
template <typename T>
inline void StoreAt(std::byte* image, uint32_t offset, const T& v) {
  std::memcpy(image + offset, &v, sizeof(T));
}

// Header flags.
inline constexpr uint8_t kFlagUnsortedLeaf = 1;  // every slot encoded; entries in any slot
inline constexpr uint8_t kFlagDead = 2;          // node left the tree; readers must restart
inline constexpr uint8_t kFlagHighInf = 4;       // slotted format: the high fence is +inf

template <KeyValueTraits KV>
struct LeafEntry {
  typename KV::Key key;
  typename KV::Value value;
  // Formats with value blocks (KV::kValueBlocks): where an out-of-line value lives. Entries
  // the codecs collect from a leaf carry the reference with an empty value (the tree logic
  // moves references, it does not fetch the bytes to rewrite a leaf); entries a read
  // returns have their value fetched and no reference.
  ValueBlockRef block{};
};

template <KeyValueTraits KV>
struct InternalEntry {
  typename KV::Key key;
  GlobalAddress child;
};

// A node's header as the codecs decode it.
template <KeyValueTraits KV>
struct NodeHeader {
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  uint64_t version = 0;
  uint8_t level = 0;  // 0 = leaf
  uint8_t flags = 0;
  uint16_t count = 0;  // internal: separators; sorted leaf: entries; unsorted leaf: unused
  GlobalAddress sibling;
  GlobalAddress leftmost;  // internal nodes only
  // Leaves only, in the word internal nodes keep `leftmost` in: how often the leaf split. A
  // split raises it in the left half (which keeps the address) and starts the right half at
  // 0; no other write changes it, so a copy of it taken with the leaf's address says whether
  // the leaf has split since (XStore's translation tables, docs/XSTORE.md). It may wrap: it
  // is a hint, the fences are what readers rely on.
  uint64_t incarnation = 0;
  uint64_t body_check = 0;
  Key low = KV::kNegInf;
  Key high = KV::kPosInf;
  // Slotted format only (0 in the fixed one), derived by the header codec: where the slot
  // array starts, how many leading bytes every key of the node shares with both fences (and
  // is stored without: prefix truncation), and where an internal node's key heap starts.
  uint16_t slots_off = 0;
  uint16_t prefix = 0;
  uint32_t heap_off = 0;

  bool is_leaf() const { return level == 0; }
  bool dead() const { return (flags & kFlagDead) != 0; }
  bool unsorted() const { return (flags & kFlagUnsortedLeaf) != 0; }
  // B-link: a key at or beyond the high fence lives further right.
  bool BeyondHigh(KeyRef k) const { return !KV::Below(k, high); }
  bool Covers(KeyRef k) const { return !(k < low) && KV::Below(k, high); }
};

// What every node format shares at its end: `node_bytes` in all, of which the last 8 may be a
// *trailer* - outside every check word, written with the node's version by every whole-node
// write. RF-tree's leaves lock there (the version, its low bit set while a writer holds it:
// TreeOptions::trailer_lock); other designs have no trailer. A format lays its content out in
// [0, ContentEnd()) only, so the trailer is one rule for both formats, not a layout of its own.
struct NodeTrailer {
  static constexpr uint32_t kTrailerBytes = 8;

  uint32_t node_bytes = 0;
  bool trailer = false;

  uint32_t TrailerBytes() const { return trailer ? kTrailerBytes : 0; }
  // Where the node's content ends: the trailer, or the end of the node.
  uint32_t ContentEnd() const { return node_bytes - TrailerBytes(); }
  uint32_t TrailerOffset() const { return node_bytes - kTrailerBytes; }
  // Writes the trailer of a whole-node image of version `version` (no-op without one).
  void StoreTrailer(std::byte* image, uint64_t version) const {
    if (trailer) StoreAt(image, TrailerOffset(), version);
  }
};

template <typename KV>
struct FixedLayout : NodeTrailer {
  using Key = typename KV::Key;
  using Value = typename KV::Value;

  static_assert(std::is_trivially_copyable_v<Key>, "the fixed format copies keys byte-wise into slots");
  // Integer values fill the value word; byte values keep up to 8 bytes there (leaf_node.h).
  static constexpr bool kBytesValues = !std::is_integral_v<Value>;

  static constexpr uint32_t Round8(size_t n) { return static_cast<uint32_t>((n + 7) / 8 * 8); }
  static constexpr uint32_t kKeyBytes = Round8(sizeof(Key));
  static constexpr uint32_t kValueBytes = kBytesValues ? 8 : Round8(sizeof(Value));

  static constexpr uint32_t kCheckOff = 0;
  static constexpr uint32_t kVersionOff = 8;
  static constexpr uint32_t kMetaOff = 16;
  static constexpr uint32_t kSiblingOff = 24;
  static constexpr uint32_t kLeftmostOff = 32;
  static constexpr uint32_t kBodyCheckOff = 40;
  static constexpr uint32_t kLowOff = 48;
  static constexpr uint32_t kHighOff = kLowOff + kKeyBytes;
  static constexpr uint32_t kHeaderBytes = kHighOff + kKeyBytes;

  static constexpr uint32_t kSlotBytes = kKeyBytes + kValueBytes + 8;  // leaf: key, value, check
  static constexpr uint32_t kSlotCheckOff = kKeyBytes + kValueBytes;
  static constexpr uint32_t kEntryBytes = kKeyBytes + 8;               // internal: key, child

  // Splits need at least two entries on each side; count is 16 bits.
  static constexpr uint32_t kMinCapacity = 4;

  // The smallest node with room for kMinCapacity entries of either kind.
  static constexpr uint32_t MinNodeBytes() {
    return kHeaderBytes + kMinCapacity * (kSlotBytes > kEntryBytes ? kSlotBytes : kEntryBytes);
  }

  uint32_t leaf_capacity = 0;
  uint32_t internal_capacity = 0;

  static Result<FixedLayout> For(uint32_t node_bytes, bool trailer = false) {
    FixedLayout l;
    l.node_bytes = node_bytes;
    l.trailer = trailer;
    DMX_RETURN_IF_ERROR(CheckNodeBytes(node_bytes, MinNodeBytes() + l.TrailerBytes()));
    const uint32_t body = l.ContentEnd() - kHeaderBytes;
    l.leaf_capacity = body / kSlotBytes;
    l.internal_capacity = body / kEntryBytes;
    return l;
  }

  // The layout of a tree with these options (its node size and whether nodes end in a trailer).
  static Result<FixedLayout> For(const TreeOptions& o) { return For(o.node_bytes, o.node_trailer); }

  uint32_t SlotOffset(uint32_t i) const { return kHeaderBytes + i * kSlotBytes; }
  uint32_t EntryOffset(uint32_t i) const { return kHeaderBytes + i * kEntryBytes; }
};

// The layout of a traits type's nodes.
template <KeyValueTraits KV>
using NodeLayout = typename KV::Layout;

}  // namespace dmindex::tree
