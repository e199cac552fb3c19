// Internal node codec: `count` sorted [separator | child] entries after the header, plus the
// header's leftmost child. Child i covers [key_i, key_{i+1}); leftmost covers [low, key_0).
// Internal nodes are only written whole, so one body check (bound to the node version) covers
// all used entries.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tree/header_codec.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
struct InternalEntry {
  typename KV::Key key;
  GlobalAddress child;
};

template <KeyValueTraits KV>
class InternalCodec {
 public:
  using Key = typename KV::Key;
  using Entry = InternalEntry<KV>;
  using L = NodeLayout<KV>;

  explicit InternalCodec(const L& layout) : l_(layout) {}
  uint32_t capacity() const { return l_.internal_capacity; }

  // True if the used entries match the header's body check.
  bool ValidBody(const std::byte* image, const NodeHeader<KV>& h) const;

  Key KeyAt(const std::byte* image, uint32_t i) const {
    return LoadAt<Key>(image, l_.EntryOffset(i));
  }
  GlobalAddress ChildAt(const std::byte* image, uint32_t i) const {
    return GlobalAddress::FromRaw(LoadAt<uint64_t>(image, l_.EntryOffset(i) + L::kKeyBytes));
  }

  // Index of the child covering `key`: -1 for leftmost, else the entry index.
  int ChildIndexFor(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  GlobalAddress ChildFor(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  // Child by index as returned by ChildIndexFor (-1 = leftmost).
  GlobalAddress ChildByIndex(const std::byte* image, const NodeHeader<KV>& h, int i) const {
    return i < 0 ? h.leftmost : ChildAt(image, static_cast<uint32_t>(i));
  }
  uint32_t Count(const NodeHeader<KV>& h) const {
    return h.count < l_.internal_capacity ? h.count : l_.internal_capacity;
  }
  // True if `key` is one of the separators.
  bool HasSeparator(const std::byte* image, const NodeHeader<KV>& h, const Key& key) const;
  void Collect(const std::byte* image, const NodeHeader<KV>& h, std::vector<Entry>* out) const;

  // Writes a whole internal node image: header `h` (leftmost and version set by the caller;
  // count and body check set here) and `sorted` entries (at most capacity()).
  void Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted) const;

 private:
  L l_;
};

}  // namespace dmindex::tree
