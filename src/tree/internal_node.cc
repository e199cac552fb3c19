#include "tree/internal_node.h"

namespace dmindex::tree {

template <typename KV>
bool FixedInternalCodec<KV>::ValidBody(const std::byte* image, const NodeHeader<KV>& h) const {
  if (h.count > l_.internal_capacity) return false;
  return h.body_check ==
         BodyCheck(image + L::kHeaderBytes, size_t{h.count} * L::kEntryBytes, h.version);
}

template <typename KV>
int FixedInternalCodec<KV>::ChildIndexFor(const std::byte* image, const NodeHeader<KV>& h,
                                     KeyRef key) const {
  // Last separator <= key, by binary search.
  uint32_t lo = 0, hi = Count(h);
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (key < KeyAt(image, mid)) hi = mid; else lo = mid + 1;
  }
  return static_cast<int>(lo) - 1;
}

template <typename KV>
GlobalAddress FixedInternalCodec<KV>::ChildFor(const std::byte* image, const NodeHeader<KV>& h,
                                          KeyRef key) const {
  return ChildByIndex(image, h, ChildIndexFor(image, h, key));
}

template <typename KV>
bool FixedInternalCodec<KV>::HasSeparator(const std::byte* image, const NodeHeader<KV>& h,
                                     KeyRef key) const {
  int i = ChildIndexFor(image, h, key);
  return i >= 0 && KeyAt(image, static_cast<uint32_t>(i)) == key;
}

template <typename KV>
void FixedInternalCodec<KV>::Collect(const std::byte* image, const NodeHeader<KV>& h,
                                std::vector<Entry>* out) const {
  const uint32_t n = Count(h);
  for (uint32_t i = 0; i < n; ++i) out->push_back({KeyAt(image, i), ChildAt(image, i)});
}

template <typename KV>
bool FixedInternalCodec<KV>::Build(std::byte* image, NodeHeader<KV> h,
                                   std::span<const Entry> sorted) const {
  if (sorted.size() > l_.internal_capacity) return false;
  std::memset(image, 0, l_.node_bytes);
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    StoreAt(image, l_.EntryOffset(i), sorted[i].key);
    StoreAt(image, l_.EntryOffset(i) + L::kKeyBytes, sorted[i].child.raw());
  }
  h.count = static_cast<uint16_t>(sorted.size());
  h.flags = static_cast<uint8_t>(h.flags & ~kFlagUnsortedLeaf);
  h.body_check = BodyCheck(image + L::kHeaderBytes, sorted.size() * L::kEntryBytes, h.version);
  FixedHeaderCodec<KV>::Write(h, image);
  l_.StoreTrailer(image, h.version);
  return true;
}

template class FixedInternalCodec<U64BytesKV>;
template class FixedInternalCodec<U64KV>;

}  // namespace dmindex::tree
