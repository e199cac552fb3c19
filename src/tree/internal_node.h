// Fixed-format internal node codec (U64BytesKV): `count` sorted [separator | child] entries after
// the header, plus the header's leftmost child. Child i covers [key_i, key_{i+1}); leftmost
// covers [low, key_0). Internal nodes are only written whole, so one body check (bound to the
// node version) covers all used entries.
//
// The members are the internal codec interface every format implements (the slotted one:
// slotted_internal.h); KeyAt(image, i) and capacity() are this format's own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "tree/header_codec.h"
#include "tree/split.h"

namespace dmindex::tree {

template <typename KV>
class FixedInternalCodec {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Entry = InternalEntry<KV>;
  using L = FixedLayout<KV>;

  explicit FixedInternalCodec(const L& layout) : l_(layout) {}
  uint32_t capacity() const { return l_.internal_capacity; }

  // True if the used entries match the header's body check.
  bool ValidBody(const std::byte* image, const NodeHeader<KV>& h) const;
  bool ValidBody(const std::byte* image, const NodeHeader<KV>& h, bool validate) const {
    return !validate || ValidBody(image, h);
  }

  Key KeyAt(const std::byte* image, uint32_t i) const {
    return LoadAt<Key>(image, l_.EntryOffset(i));
  }
  // Separator i (< Count(h)).
  Key KeyAt(const std::byte* image, const NodeHeader<KV>& h, uint32_t i) const { return KeyAt(image, i); }
  GlobalAddress ChildAt(const std::byte* image, uint32_t i) const {
    return GlobalAddress::FromRaw(LoadAt<uint64_t>(image, l_.EntryOffset(i) + L::kKeyBytes));
  }

  // Index of the child covering `key`: -1 for leftmost, else the entry index.
  int ChildIndexFor(const std::byte* image, const NodeHeader<KV>& h, KeyRef key) const;
  GlobalAddress ChildFor(const std::byte* image, const NodeHeader<KV>& h, KeyRef key) const;
  // Child by index as returned by ChildIndexFor (-1 = leftmost).
  GlobalAddress ChildByIndex(const std::byte* image, const NodeHeader<KV>& h, int i) const {
    return i < 0 ? h.leftmost : ChildAt(image, static_cast<uint32_t>(i));
  }
  uint32_t Count(const NodeHeader<KV>& h) const {
    return h.count < l_.internal_capacity ? h.count : l_.internal_capacity;
  }
  // True if `key` is one of the separators.
  bool HasSeparator(const std::byte* image, const NodeHeader<KV>& h, KeyRef key) const;
  void Collect(const std::byte* image, const NodeHeader<KV>& h, std::vector<Entry>* out) const;

  // True if `sorted` fits into one internal node with header h's fences.
  bool Fits(const NodeHeader<KV>& h, std::span<const Entry> sorted) const {
    return sorted.size() <= l_.internal_capacity;
  }
  // How full the node is, in the format's units (here separators; the slotted format counts
  // bytes), and whether one more separator of any length the tree may hold fits.
  uint32_t Used(const NodeHeader<KV>& h) const { return Count(h); }
  uint32_t Capacity(const NodeHeader<KV>& h) const { return l_.internal_capacity; }
  bool HasRoom(const NodeHeader<KV>& h) const { return h.count < l_.internal_capacity; }
  // Writes a whole internal node image: header `h` (leftmost and version set by the caller;
  // count and body check set here) and `sorted` entries. False (image untouched) if they do
  // not fit.
  bool Build(std::byte* image, NodeHeader<KV> h, std::span<const Entry> sorted) const;
  // How an overfull internal node with header h divides (at least 3 entries).
  InternalSplit<KV> Split(const NodeHeader<KV>& h, std::span<const Entry> sorted) const {
    return SplitInternal<KV>(sorted);
  }
  // Bulk load: the runs of children (given their low fences, `lows`) that make the nodes of
  // one level (start of each, then lows.size()): evenly spread, fill * (capacity + 1) each.
  std::vector<size_t> PlanRuns(std::span<const Key> lows, double fill) const {
    return EvenRuns(lows.size(),
                    std::max<size_t>(2, static_cast<size_t>((l_.internal_capacity + 1) * fill)));
  }

 private:
  L l_;
};

// The internal codec of a traits type's nodes.
template <KeyValueTraits KV>
using InternalCodec = typename KV::InternalCodec;

}  // namespace dmindex::tree
