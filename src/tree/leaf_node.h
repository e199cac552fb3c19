// Leaf node codec: slots of [key | value | check] after the header (node_layout.h).
//
// Two formats share one layout. A sorted leaf keeps its entries in slots [0, count) in key
// order and is always written whole. An unsorted leaf (Sherman's two-level version) may hold
// an entry in any slot, marks empty slots with the kNegInf key, and can be changed one slot
// at a time; readers then rely on (and validate) every slot. Whole-leaf writes encode every
// slot in both formats, so either format is a valid image of the other's slots.
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

  // Slot holding `key`, or -1.
  int Find(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  // An empty slot of an unsorted leaf, or -1 if the leaf is full.
  int FreeSlot(const std::byte* image, const NodeHeader<KV>& h) const;
  // Every entry, in key order, appended to *out.
  void Collect(const std::byte* image, const NodeHeader<KV>& h, std::vector<Entry>* out) const;

  // Encodes one slot (with its check word for node version `version`) into the image.
  void EncodeSlot(std::byte* image, uint32_t slot, const Key& key, const Value& value,
                  uint64_t version) const;
  void EncodeEmptySlot(std::byte* image, uint32_t slot, uint64_t version) const;
  // Writes a whole leaf image: `h` (count and format flag set here), `sorted` entries in
  // slots [0, n), every other slot empty. sorted.size() must be <= capacity().
  void Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted,
             bool unsorted) const;

 private:
  L l_;
};

}  // namespace dmindex::tree
