// Leaf node codec: slots of [key | value | check] after the header (node_layout.h).
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
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tree/header_codec.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
struct LeafEntry {
  typename KV::Key key;
  typename KV::Value value;
};

template <KeyValueTraits KV>
class LeafCodec {
 public:
  using Key = typename KV::Key;
  using Value = typename KV::Value;
  using Entry = LeafEntry<KV>;
  using L = NodeLayout<KV>;

  explicit LeafCodec(const L& layout) : l_(layout) {}
  const L& layout() const { return l_; }
  uint32_t capacity() const { return l_.leaf_capacity; }

  // Slots a reader relies on: every slot of an unsorted leaf, the first `count` of a sorted one.
  uint32_t UsedSlots(const NodeHeader<KV>& h) const;

  // Validation against the header's version: one slot, or every slot a reader relies on.
  bool ValidSlot(const std::byte* image, uint64_t version, uint32_t slot) const;
  bool ValidSlots(const std::byte* image, const NodeHeader<KV>& h) const;

  Key KeyAt(const std::byte* image, uint32_t slot) const {
    return LoadAt<Key>(image, l_.SlotOffset(slot));
  }
  Value ValueAt(const std::byte* image, uint32_t slot) const {
    return LoadAt<Value>(image, l_.SlotOffset(slot) + L::kKeyBytes);
  }
  bool TombAt(const std::byte* image, uint32_t slot) const {
    return (LoadAt<uint64_t>(image, l_.SlotOffset(slot) + L::kSlotCheckOff) & kTombBit) != 0;
  }
  bool LiveAt(const std::byte* image, uint32_t slot) const {
    return !(KeyAt(image, slot) == KV::kNegInf) && !TombAt(image, slot);
  }

  // Slot holding `key` live, or -1.
  int Find(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  // Unsorted leaf: the slot an entry write may put `key` in, which is not live in the leaf:
  // its tombstone if it has one, else an empty slot; -1 if neither exists (or the leaf is
  // sorted): then the leaf must be rewritten whole, which frees the tombstones, or split.
  int InsertSlot(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  // Every live entry, in key order, appended to *out.
  void Collect(const std::byte* image, const NodeHeader<KV>& h, std::vector<Entry>* out) const;

  // Encode one slot (with its check word for node version `version`) into the image: a live
  // entry, a tombstone of `key` (unsorted leaves), or an empty slot.
  void EncodeSlot(std::byte* image, uint32_t slot, const Key& key, const Value& value,
                  uint64_t version) const;
  void EncodeTomb(std::byte* image, uint32_t slot, const Key& key, uint64_t version) const;
  void EncodeEmptySlot(std::byte* image, uint32_t slot, uint64_t version) const;
  // Writes a whole leaf image: `h` (count and format flag set here), `sorted` entries in
  // slots [0, n), every other slot empty. sorted.size() must be <= capacity().
  void Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted,
             bool unsorted) const;

 private:
  static constexpr uint64_t kTombBit = 1;
  // The check word of slot bytes [key | value] at `s`: the hash with its low bit replaced by
  // the tombstone flag (which the hash covers too).
  static uint64_t CheckWord(const std::byte* s, uint64_t version, uint32_t slot, bool tomb);
  void Encode(std::byte* image, uint32_t slot, const Key& key, const Value& value,
              uint64_t version, bool tomb) const;
  // Unsorted leaf: the slot whose key is `key`, live or tombstone, or -1.
  int BoundSlot(const std::byte* image, const Key& key) const;

  L l_;
};

}  // namespace dmindex::tree
