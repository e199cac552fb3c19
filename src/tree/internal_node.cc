#include "tree/internal_node.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
bool InternalCodec<KV>::ValidBody(const std::byte* image, const NodeHeader<KV>& h) const {
  if (h.count > l_.internal_capacity) return false;
  return h.body_check ==
         BodyCheck(image + L::kHeaderBytes, size_t{h.count} * L::kEntryBytes, h.version);
}

template <KeyValueTraits KV>
int InternalCodec<KV>::ChildIndexFor(const std::byte* image, const NodeHeader<KV>& h,
                                     const Key& key) const {
  // Last separator <= key, by binary search.
  uint32_t lo = 0, hi = Count(h);
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (key < KeyAt(image, mid)) hi = mid; else lo = mid + 1;
  }
  return static_cast<int>(lo) - 1;
}

template <KeyValueTraits KV>
GlobalAddress InternalCodec<KV>::ChildFor(const std::byte* image, const NodeHeader<KV>& h,
                                          const Key& key) const {
  return ChildByIndex(image, h, ChildIndexFor(image, h, key));
}

template <KeyValueTraits KV>
bool InternalCodec<KV>::HasSeparator(const std::byte* image, const NodeHeader<KV>& h,
                                     const Key& key) const {
  int i = ChildIndexFor(image, h, key);
  return i >= 0 && KeyAt(image, static_cast<uint32_t>(i)) == key;
}

template <KeyValueTraits KV>
void InternalCodec<KV>::Collect(const std::byte* image, const NodeHeader<KV>& h,
                                std::vector<Entry>* out) const {
  const uint32_t n = Count(h);
  for (uint32_t i = 0; i < n; ++i) out->push_back({KeyAt(image, i), ChildAt(image, i)});
}

template <KeyValueTraits KV>
void InternalCodec<KV>::Build(std::byte* image, NodeHeader<KV> h,
                              std::span<const Entry> sorted) const {
  std::memset(image, 0, l_.node_bytes);
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    StoreAt(image, l_.EntryOffset(i), sorted[i].key);
    StoreAt(image, l_.EntryOffset(i) + L::kKeyBytes, sorted[i].child.raw());
  }
  h.count = static_cast<uint16_t>(sorted.size());
  h.flags = static_cast<uint8_t>(h.flags & ~kFlagUnsortedLeaf);
  h.body_check = BodyCheck(image + L::kHeaderBytes, sorted.size() * L::kEntryBytes, h.version);
  HeaderCodec<KV>::Write(h, image);
}

template class InternalCodec<U64KV>;

}  // namespace dmindex::tree
