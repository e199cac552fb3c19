#include "tree/leaf_node.h"

#include <algorithm>
#include <cstring>

namespace dmindex::tree {

template <typename KV>
uint32_t FixedLeafCodec<KV>::UsedSlots(const NodeHeader<KV>& h) const {
  // Clamped: with validation off a torn count must not make a reader run off the image.
  return h.unsorted() ? l_.leaf_capacity : std::min<uint32_t>(h.count, l_.leaf_capacity);
}

template <typename KV>
uint64_t FixedLeafCodec<KV>::CheckWord(const std::byte* s, SlotSeed seed, uint32_t slot, uint64_t flags) {
  if constexpr (!kBytesValues)
    return (SlotCheck(s, L::kSlotCheckOff, seed, slot, (flags & kTombBit) != 0) & ~kTombBit) | flags;
  else
    return (SlotCheckWithFlags(s, L::kSlotCheckOff, seed, slot, flags) & ~kFlagBits) | flags;
}

template <typename KV>
bool FixedLeafCodec<KV>::ValidSlot(const std::byte* image, SlotSeed seed, uint32_t slot) const {
  const std::byte* s = image + l_.SlotOffset(slot);
  const uint64_t check = LoadAt<uint64_t>(s, L::kSlotCheckOff);
  return check == CheckWord(s, seed, slot, check & kFlagBits);
}

template <typename KV>
bool FixedLeafCodec<KV>::ValidSlots(const std::byte* image, const NodeHeader<KV>& h) const {
  if (!h.unsorted() && h.count > l_.leaf_capacity) return false;
  const uint32_t n = UsedSlots(h);
  const SlotSeed seed = SlotSeedFor(h.version);
  for (uint32_t i = 0; i < n; ++i)
    if (!ValidSlot(image, seed, i)) return false;
  return true;
}

template <typename KV>
typename FixedLeafCodec<KV>::Value FixedLeafCodec<KV>::ValueAt(const std::byte* image, uint32_t slot) const {
  const uint32_t at = l_.SlotOffset(slot) + L::kKeyBytes;
  if constexpr (!kBytesValues) {
    return LoadAt<Value>(image, at);
  } else {
    const uint64_t flags = FlagsAt(image, slot);
    if (flags & kBlockBit) return Value();
    // Clamped: with validation off a torn length must not read past the value word.
    const size_t len = std::min<size_t>(flags >> kLenShift, 8);
    return Value(reinterpret_cast<const char*>(image + at), len);
  }
}

template <typename KV>
ValueBlockRef FixedLeafCodec<KV>::BlockAt(const std::byte* image, const NodeHeader<KV>& h,
                                          uint32_t slot) const {
  if constexpr (!kBytesValues) {
    return {};
  } else {
    if (!(FlagsAt(image, slot) & kBlockBit)) return {};
    const uint64_t word = LoadAt<uint64_t>(image, l_.SlotOffset(slot) + L::kKeyBytes);
    return {GlobalAddress::FromRaw(word & ~uint64_t{value_block::kClassMask}),
            value_block::ClassBytes(static_cast<uint32_t>(word & value_block::kClassMask))};
  }
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
  int slot = -1;
  SearchSorted(image, UsedSlots(h), key, [](uint32_t) { return true; }, &slot);
  return slot;
}

template <typename KV>
template <typename Readable>
bool FixedLeafCodec<KV>::SearchSorted(const std::byte* image, uint32_t n, KeyRef key, const Readable& readable,
                                      int* slot) const {
  uint32_t lo = 0, hi = n;  // binary search over the sorted prefix
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (!readable(mid)) return false;
    if (KeyAt(image, mid) < key) lo = mid + 1; else hi = mid;
  }
  if (lo < n && !readable(lo)) return false;
  *slot = lo < n && KeyAt(image, lo) == key ? static_cast<int>(lo) : -1;
  return true;
}

template <typename KV>
bool FixedLeafCodec<KV>::FindValidated(const std::byte* image, const NodeHeader<KV>& h, KeyRef key,
                                       bool validate, int* slot) const {
  if (!validate || h.unsorted()) {
    if (!ValidBody(image, h, validate)) return false;
    *slot = Find(image, h, key);
    return true;
  }
  if (h.count > l_.leaf_capacity) return false;
  const SlotSeed seed = SlotSeedFor(h.version);
  return SearchSorted(image, h.count, key, [&](uint32_t i) { return ValidSlot(image, seed, i); }, slot);
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
    if (LiveAt(image, i)) out->push_back({KeyAt(image, i), ValueAt(image, i), BlockAt(image, h, i)});
  if (h.unsorted())
    std::sort(out->begin() + first, out->end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
}

template <typename KV>
void FixedLeafCodec<KV>::ValueWord(const Entry& e, uint64_t* word, uint64_t* flags) {
  *word = 0;
  *flags = 0;
  if constexpr (!kBytesValues) {
    std::memcpy(word, &e.value, sizeof(Value));
  } else if (!e.block.is_null()) {
    *word = e.block.addr.raw() | value_block::ClassFor(e.block.read_bytes);
    *flags = kBlockBit;
  } else {
    std::memcpy(word, e.value.data(), std::min<size_t>(e.value.size(), 8));
    *flags = uint64_t{std::min<size_t>(e.value.size(), 8)} << kLenShift;
  }
}

template <typename KV>
void FixedLeafCodec<KV>::Encode(std::byte* image, uint32_t slot, const Key& key, uint64_t value_word,
                                uint64_t version, uint64_t flags) const {
  std::byte* s = image + l_.SlotOffset(slot);
  std::memset(s, 0, L::kSlotCheckOff);
  StoreAt(s, 0, key);
  StoreAt(s, L::kKeyBytes, value_word);
  StoreAt(s, L::kSlotCheckOff, CheckWord(s, version, slot, flags));
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeEntry(std::byte* image, uint32_t slot, const Entry& e,
                                     uint64_t version) const {
  uint64_t word, flags;
  ValueWord(e, &word, &flags);
  Encode(image, slot, e.key, word, version, flags);
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeSlot(std::byte* image, uint32_t slot, const Key& key,
                                    const Value& value, uint64_t version) const {
  EncodeEntry(image, slot, Entry{key, value, {}}, version);
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeTomb(std::byte* image, uint32_t slot, const Key& key,
                                    uint64_t version) const {
  Encode(image, slot, key, 0, version, kTombBit);
}

template <typename KV>
void FixedLeafCodec<KV>::EncodeEmptySlot(std::byte* image, uint32_t slot, uint64_t version) const {
  Encode(image, slot, KV::kNegInf, 0, version, 0);
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
      EncodeEntry(image, i, sorted[i], h.version);
    else
      EncodeEmptySlot(image, i, h.version);
  }
  l_.StoreTrailer(image, h.version);
  return true;
}

template <typename KV>
void FixedLeafCodec<KV>::Restamp(std::byte* image, NodeHeader<KV> h, uint64_t version) const {
  h.version = version;
  FixedHeaderCodec<KV>::Write(h, image);
  const uint32_t n = UsedSlots(h);
  const SlotSeed seed = SlotSeedFor(version);
  for (uint32_t i = 0; i < l_.leaf_capacity; ++i) {
    if (i >= n) {
      EncodeEmptySlot(image, i, version);
      continue;
    }
    std::byte* s = image + l_.SlotOffset(i);
    StoreAt(s, L::kSlotCheckOff, CheckWord(s, seed, i, LoadAt<uint64_t>(s, L::kSlotCheckOff) & kFlagBits));
  }
  l_.StoreTrailer(image, version);
}

template <typename KV>
EntryWrite FixedLeafCodec<KV>::WriteEntry(std::byte* image, const NodeHeader<KV>& h, WriteOp op,
                                          KeyRef key, const Entry& e) const {
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
    EncodeEntry(image, i, e, h.version);
  w.outcome = EntryWrite::Outcome::kWritten;
  w.Add(l_.SlotOffset(i), L::kSlotBytes);
  return w;
}

template <typename KV>
std::vector<size_t> FixedLeafCodec<KV>::PlanRuns(std::span<const Entry> sorted, double fill) const {
  return EvenRuns(sorted.size(), EntriesPerLeaf(fill));
}

template class FixedLeafCodec<U64BytesKV>;
template class FixedLeafCodec<U64KV>;

}  // namespace dmindex::tree
