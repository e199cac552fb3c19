#include "tree/leaf_node.h"

#include <algorithm>

namespace dmindex::tree {

template <typename KV>
uint32_t FixedLeafCodec<KV>::UsedSlots(const NodeHeader<KV>& h) const {
  // Clamped: with validation off a torn count must not make a reader run off the image.
  return h.unsorted() ? l_.leaf_capacity : std::min<uint32_t>(h.count, l_.leaf_capacity);
}

template <typename KV>
uint64_t FixedLeafCodec<KV>::CheckWord(const std::byte* s, uint64_t version, uint32_t slot, bool tomb) {
  return (SlotCheck(s, L::kSlotCheckOff, version, slot, tomb) & ~kTombBit) | (tomb ? kTombBit : 0);
}

template <typename KV>
bool FixedLeafCodec<KV>::ValidSlot(const std::byte* image, uint64_t version, uint32_t slot) const {
  const std::byte* s = image + l_.SlotOffset(slot);
  const uint64_t check = LoadAt<uint64_t>(s, L::kSlotCheckOff);
  return check == CheckWord(s, version, slot, (check & kTombBit) != 0);
}

template <typename KV>
bool FixedLeafCodec<KV>::ValidSlots(const std::byte* image, const NodeHeader<KV>& h) const {
  if (!h.unsorted() && h.count > l_.leaf_capacity) return false;
  const uint32_t n = UsedSlots(h);
  for (uint32_t i = 0; i < n; ++i)
    if (!ValidSlot(image, h.version, i)) return false;
  return true;
}

template <typename KV>
int FixedLeafCodec<KV>::BoundSlot(const std::byte* image, const Key& key) const {
  for (uint32_t i = 0; i < l_.leaf_capacity; ++i)
    if (KeyAt(image, i) == key) return static_cast<int>(i);
  return -1;
}

template <typename KV>
int FixedLeafCodec<KV>::Find(const std::byte* image, const NodeHeader<KV>& h, KeyRef key) const {
  if (h.unsorted()) {  // the key has at most one slot in this version: live or not
    const int i = BoundSlot(image, key);
    return i >= 0 && !TombAt(image, static_cast<uint32_t>(i)) ? i : -1;
  }
  const uint32_t n = UsedSlots(h);
  uint32_t lo = 0, hi = n;  // binary search over the sorted prefix
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (KeyAt(image, mid) < key) lo = mid + 1; else hi = mid;
  }
  return lo < n && KeyAt(image, lo) == key ? static_cast<int>(lo) : -1;
}

template <typename KV>
int FixedLeafCodec<KV>::InsertSlot(const std::byte* image, const NodeHeader<KV>& h,
                              const Key& key) const {
  if (!h.unsorted()) return -1;
  const int bound = BoundSlot(image, key);
  return bound >= 0 ? bound : BoundSlot(image, KV::kNegInf);
}

template <typename KV>
void FixedLeafCodec<KV>::Collect(const std::byte* image, const NodeHeader<KV>& h,
                            std::vector<Entry>* out) const {
  const size_t first = out->size();
  const uint32_t n = UsedSlots(h);
  for (uint32_t i = 0; i < n; ++i)
    if (LiveAt(image, i)) out->push_back({KeyAt(image, i), ValueAt(image, i)});
  if (h.unsorted())
    std::sort(out->begin() + first, out->end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
}

template <typename KV>
void FixedLeafCodec<KV>::Encode(std::byte* image, uint32_t slot, const Key& key, const Value& value,
                           uint64_t version, bool tomb) const {
  std::byte* s = image + l_.SlotOffset(slot);
  std::memset(s, 0, L::kSlotCheckOff);
  StoreAt(s, 0, key);
  StoreAt(s, L::kKeyBytes, value);
  StoreAt(s, L::kSlotCheckOff, CheckWord(s, version, slot, tomb));
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeSlot(std::byte* image, uint32_t slot, const Key& key,
                               const Value& value, uint64_t version) const {
  Encode(image, slot, key, value, version, false);
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeTomb(std::byte* image, uint32_t slot, const Key& key,
                               uint64_t version) const {
  Value zero;
  std::memset(&zero, 0, sizeof(zero));
  Encode(image, slot, key, zero, version, true);
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeEmptySlot(std::byte* image, uint32_t slot, uint64_t version) const {
  Value zero;
  std::memset(&zero, 0, sizeof(zero));
  Encode(image, slot, KV::kNegInf, zero, version, false);
}

template <typename KV>
bool FixedLeafCodec<KV>::Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted,
                               bool unsorted) const {
  if (sorted.size() > l_.leaf_capacity) return false;
  std::memset(image, 0, l_.node_bytes);
  h.count = static_cast<uint16_t>(sorted.size());
  h.flags = static_cast<uint8_t>((h.flags & ~kFlagUnsortedLeaf) | (unsorted ? kFlagUnsortedLeaf : 0));
  h.level = 0;
  h.leftmost = GlobalAddress::Null();
  h.body_check = 0;
  FixedHeaderCodec<KV>::Write(h, image);
  for (uint32_t i = 0; i < l_.leaf_capacity; ++i) {
    if (i < sorted.size())
      EncodeSlot(image, i, sorted[i].key, sorted[i].value, h.version);
    else
      EncodeEmptySlot(image, i, h.version);
  }
  l_.StoreTrailer(image, h.version);
  return true;
}

template <typename KV>
EntryWrite FixedLeafCodec<KV>::WriteEntry(std::byte* image, const NodeHeader<KV>& h, WriteOp op,
                                          KeyRef key, ValueRef value) const {
  EntryWrite w;
  if (!h.unsorted()) return w;  // kWhole
  int slot = Find(image, h, key);
  if (slot < 0 && op != WriteOp::kUpsert) {
    w.outcome = EntryWrite::Outcome::kNotFound;
    return w;
  }
  // A new key goes back to its own tombstone, else to an empty slot, never to another
  // key's tombstone: within a version a key keeps one slot.
  if (slot < 0) slot = InsertSlot(image, h, key);
  if (slot < 0) return w;  // kWhole: the rewrite drops the tombstones
  const auto i = static_cast<uint32_t>(slot);
  if (op == WriteOp::kDelete)
    EncodeTomb(image, i, key, h.version);
  else
    EncodeSlot(image, i, key, value, h.version);
  w.outcome = EntryWrite::Outcome::kWritten;
  w.Add(l_.SlotOffset(i), L::kSlotBytes);
  return w;
}

template <typename KV>
std::vector<size_t> FixedLeafCodec<KV>::PlanRuns(std::span<const Entry> sorted, double fill) const {
  return EvenRuns(sorted.size(), EntriesPerLeaf(fill));
}

template class FixedLeafCodec<U64KV>;

}  // namespace dmindex::tree
