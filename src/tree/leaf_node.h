// Fixed-format leaf codec (U64BytesKV, U64KV): slots of [key | value word | check] after the
// header (node_layout.h).
//
// Two formats share one layout. A sorted leaf keeps its entries in slots [0, count) in key
// order and is always written whole. An unsorted leaf (Sherman's two-level version) may hold
// an entry in any slot and can be changed one slot at a time (an entry write, bound to the
// unchanged node version); readers then rely on (and validate) every slot. Whole-leaf writes
// encode every slot in both formats, so either format is a valid image of the other's slots.
//
// A slot is empty (key kNegInf), live (key, value) or, in an unsorted leaf, a tombstone: the
// key of a deleted entry, flagged in the low bit of the slot's check word. Within one node
// version a slot that was given a key keeps that key: a delete leaves the key's tombstone,
// a re-insert of the key takes its tombstone back, and other keys only take empty slots. So
// in one version a key is bound to at most one slot, and no image of the leaf, whatever
// instants its slots were read at, shows a key twice (a delete and re-insert into another
// slot would let a READ spanning both see the key in both: docs/SYNCHRONIZATION.md). The
// next whole-leaf write, with a new version, drops the tombstones.
//
// Values: an integer value fills the value word (U64KV). A byte value (U64BytesKV) of up to 8
// bytes is kept in the value word, its length in bits 2..5 of the check word; a longer one
// lives in a value block (value_block.h) and the value word holds the block's address with
// its size class in the 6 low bits (blocks are 64-byte aligned), flagged by bit 1. The check
// word is the slot's hash with its low bits replaced by these flags (bit 0: tombstone), and
// the hash covers the flags too. The slot stays 24 bytes either way.
//
// The members from ValidBody on are the leaf codec interface every format implements (the
// slotted one: slotted_leaf.h); the tree logic uses only those.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "tree/header_codec.h"
#include "tree/split.h"
#include "tree/write_op.h"

namespace dmindex::tree {

template <typename KV>
class FixedLeafCodec {
 public:
  using Key = typename KV::Key;
  using Value = typename KV::Value;
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Entry = LeafEntry<KV>;
  using L = FixedLayout<KV>;
  static constexpr bool kBytesValues = L::kBytesValues;

  explicit FixedLeafCodec(const L& layout) : l_(layout) {}
  const L& layout() const { return l_; }
  uint32_t capacity() const { return l_.leaf_capacity; }

  // Slots a reader relies on: every slot of an unsorted leaf, the first `count` of a sorted one.
  uint32_t UsedSlots(const NodeHeader<KV>& h) const;

  // Validation against the header's version: one slot, or every slot a reader relies on.
  bool ValidSlot(const std::byte* image, uint64_t version, uint32_t slot) const {
    return ValidSlot(image, SlotSeedFor(version), slot);
  }
  bool ValidSlot(const std::byte* image, SlotSeed seed, uint32_t slot) const;
  bool ValidSlots(const std::byte* image, const NodeHeader<KV>& h) const;

  Key KeyAt(const std::byte* image, uint32_t slot) const {
    return LoadAt<Key>(image, l_.SlotOffset(slot));
  }
  // The value of a live slot (byte values: empty if it is out of line, see BlockAt).
  Value ValueAt(const std::byte* image, uint32_t slot) const;
  bool TombAt(const std::byte* image, uint32_t slot) const { return (FlagsAt(image, slot) & kTombBit) != 0; }
  bool LiveAt(const std::byte* image, uint32_t slot) const {
    return !(KeyAt(image, slot) == KV::kNegInf) && !TombAt(image, slot);
  }

  // Unsorted leaf: the slot an entry write may put `key` in, which is not live in the leaf:
  // its tombstone if it has one, else an empty slot; -1 if neither exists (or the leaf is
  // sorted): then the leaf must be rewritten whole, which frees the tombstones, or split.
  int InsertSlot(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;

  // Encode one slot (with its check word for node version `version`) into the image: a live
  // entry, a tombstone of `key` (unsorted leaves), or an empty slot.
  void EncodeSlot(std::byte* image, uint32_t slot, const Key& key, const Value& value,
                  uint64_t version) const;
  void EncodeEntry(std::byte* image, uint32_t slot, const Entry& e, uint64_t version) const;
  void EncodeTomb(std::byte* image, uint32_t slot, const Key& key, uint64_t version) const;
  void EncodeEmptySlot(std::byte* image, uint32_t slot, uint64_t version) const;

  // --- The leaf codec interface ---

  // Validates (validate) the slots a reader relies on, given a decoded header.
  bool ValidBody(const std::byte* image, const NodeHeader<KV>& h, bool validate) const {
    return !validate || ValidSlots(image, h);
  }
  // Slot holding `key` live, or -1.
  int Find(const std::byte* image, const NodeHeader<KV>& h, KeyRef key) const;
  // Find for a reader whose header validated but whose body did not yet (validate: false
  // accepts it unchecked). A sorted leaf validates only the slots the binary search reads,
  // each against the header's version: a sorted leaf changes only by whole writes with a
  // fresh version, so those slots are that version's content and the search answers as on
  // that version's image (XStore's point reader reads part of a leaf on the same argument).
  // An unsorted leaf is validated whole first: its entries may move between versions, and a
  // key is absent only if every slot read is one version's. False: torn; *slot as Find's.
  bool FindValidated(const std::byte* image, const NodeHeader<KV>& h, KeyRef key, bool validate,
                     int* slot) const;
  // The value of live slot `slot` (empty if out of line), and where an out-of-line value is.
  Value ValueAt(const std::byte* image, const NodeHeader<KV>& h, uint32_t slot) const {
    return ValueAt(image, slot);
  }
  ValueBlockRef BlockAt(const std::byte* image, const NodeHeader<KV>& h, uint32_t slot) const;
  // The reference a slot can hold to a block of `block_bytes` with a value of `length`:
  // the value word names the block's size class (its length is in the block).
  ValueBlockRef BlockRef(GlobalAddress addr, uint32_t block_bytes, uint32_t length) const {
    return {addr, block_bytes, false};
  }
  // Longest value kept in the leaf; longer ones go out of line (formats with value blocks).
  uint32_t InlineLimit() const { return kBytesValues ? 8 : 0; }
  // Every live entry, in key order, appended to *out (out-of-line values as references).
  void Collect(const std::byte* image, const NodeHeader<KV>& h, std::vector<Entry>* out) const;
  // True if `sorted` fits into one leaf with header h's fences.
  bool Fits(const NodeHeader<KV>& h, std::span<const Entry> sorted) const {
    return sorted.size() <= l_.leaf_capacity;
  }
  // How full a sorted leaf is, in the format's units (here entries; the slotted format counts
  // bytes): what its entries take and what it has for them. A design's merge policy compares
  // the two (DEX merges below a quarter); HasRoom: one more entry of any key and value the
  // tree may hold fits.
  uint32_t Used(const std::byte* image, const NodeHeader<KV>& h) const { return h.count; }
  uint32_t Capacity(const NodeHeader<KV>& h) const { return l_.leaf_capacity; }
  bool HasRoom(const std::byte* image, const NodeHeader<KV>& h) const { return h.count < l_.leaf_capacity; }
  // Writes a whole leaf image: `h` (count and format flag set here), `sorted` entries in
  // slots [0, n), every other slot empty. False (image untouched) if they do not fit.
  bool Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted,
             bool unsorted) const;
  // Turns the image of a sorted leaf (header h, its entries in slots [0, count)) into the one
  // Build makes of the same entries for version `version`: the header and every check word
  // re-encoded, keys and values left where they are. What DEX writes back a cached leaf with,
  // without collecting its entries.
  void Restamp(std::byte* image, NodeHeader<KV> h, uint64_t version) const;
  // How an overfull leaf with header h divides (at least 2 entries).
  LeafSplit<KV> Split(const NodeHeader<KV>& h, std::span<const Entry> sorted) const {
    return SplitLeaf<KV>(sorted);
  }
  // The separator between two neighbouring leaves: the right one's first key.
  Key Separator(const Key& left_last, const Key& right_first) const { return right_first; }
  // Applies `op` with the new entry `e` (its value inline or its block; ignored for a
  // delete) to one slot of an unsorted leaf in place (see EntryWrite).
  EntryWrite WriteEntry(std::byte* image, const NodeHeader<KV>& h, WriteOp op, KeyRef key,
                        const Entry& e) const;
  // Bulk load: the runs of `sorted` that make the leaves (start of each, then sorted.size()),
  // filled to `fill`: evenly spread over as few leaves as hold fill * capacity each.
  std::vector<size_t> PlanRuns(std::span<const Entry> sorted, double fill) const;
  // Entries a leaf holds at fill `fill` (scans size their leaf batches by it).
  size_t EntriesPerLeaf(double fill) const {
    return std::max<size_t>(1, static_cast<size_t>(l_.leaf_capacity * fill));
  }
  // Any key of the type fits.
  Status CheckEntry(KeyRef key, ValueRef value) const { return Status::Ok(); }

 private:
  // Low bits of the check word: the tombstone flag; byte values also the out-of-line flag
  // and the inline length.
  static constexpr uint64_t kTombBit = 1;
  static constexpr uint64_t kBlockBit = 2;
  static constexpr uint32_t kLenShift = 2;
  static constexpr uint64_t kFlagBits = kBytesValues ? 0x3f : kTombBit;
  uint64_t FlagsAt(const std::byte* image, uint32_t slot) const {
    return LoadAt<uint64_t>(image, l_.SlotOffset(slot) + L::kSlotCheckOff) & kFlagBits;
  }
  // The check word of slot bytes [key | value] at `s` with these flags: the hash (which
  // covers the flags) with its low bits replaced by them.
  static uint64_t CheckWord(const std::byte* s, SlotSeed seed, uint32_t slot, uint64_t flags);
  // The binary search of Find and FindValidated over slots [0, n) of a sorted leaf: each slot
  // is read only once `readable(slot)` holds; false (nothing found) as soon as it does not.
  template <typename Readable>
  bool SearchSorted(const std::byte* image, uint32_t n, KeyRef key, const Readable& readable, int* slot) const;
  static uint64_t CheckWord(const std::byte* s, uint64_t version, uint32_t slot, uint64_t flags) {
    return CheckWord(s, SlotSeedFor(version), slot, flags);
  }
  void Encode(std::byte* image, uint32_t slot, const Key& key, uint64_t value_word,
              uint64_t version, uint64_t flags) const;
  // The value word and flags of an entry.
  static void ValueWord(const Entry& e, uint64_t* word, uint64_t* flags);
  // Unsorted leaf: the slot whose key is `key`, live or tombstone, or -1.
  int BoundSlot(const std::byte* image, const Key& key) const;

  L l_;
};

// The leaf codec of a traits type's nodes.
template <KeyValueTraits KV>
using LeafCodec = typename KV::LeafCodec;

}  // namespace dmindex::tree
