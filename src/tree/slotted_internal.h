// Slotted internal node codec (BytesKV): `count` sorted [slot word | child] slots after the
// header, the separators' bytes after their heads in a heap at the end (slotted_layout.h),
// plus the header's leftmost child. Child i covers [key_i, key_{i+1}); leftmost covers
// [low, key_0). Separators are stored without the fences' common prefix and are the
// shortest separators leaf splits chose, so fan-out stays high with long keys. Internal nodes
// are only written whole; one body check (bound to the node version) covers the slots and
// the heap, and every slot's offset is bounds-checked before its bytes are touched.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tree/slotted_header.h"
#include "tree/slotted_keys.h"
#include "tree/split.h"

namespace dmindex::tree {

class SlottedInternalCodec {
 public:
  using KV = BytesKV;
  using Key = std::string;
  using KeyRef = std::string_view;
  using Entry = InternalEntry<BytesKV>;
  using Header = NodeHeader<BytesKV>;
  using L = SlottedLayout;

  explicit SlottedInternalCodec(const L& layout) : l_(layout) {}

  // --- The internal codec interface (internal_node.h) ---
  bool ValidBody(const std::byte* image, const Header& h, bool validate) const;
  Key KeyAt(const std::byte* image, const Header& h, uint32_t i) const;
  GlobalAddress ChildAt(const std::byte* image, const Header& h, uint32_t i) const {
    return GlobalAddress::FromRaw(LoadAt<uint64_t>(image, SlotOff(h, i) + 8));
  }
  int ChildIndexFor(const std::byte* image, const Header& h, KeyRef key) const;
  GlobalAddress ChildFor(const std::byte* image, const Header& h, KeyRef key) const {
    return ChildByIndex(image, h, ChildIndexFor(image, h, key));
  }
  GlobalAddress ChildByIndex(const std::byte* image, const Header& h, int i) const {
    return i < 0 ? h.leftmost : ChildAt(image, h, static_cast<uint32_t>(i));
  }
  uint32_t Count(const Header& h) const { return h.count; }
  bool HasSeparator(const std::byte* image, const Header& h, KeyRef key) const;
  void Collect(const std::byte* image, const Header& h, std::vector<Entry>* out) const;
  bool Fits(const Header& h, std::span<const Entry> sorted) const {
    return FitsBetween(h.low, h.high, sorted);
  }
  // How full the node is in bytes (slots and key heap, from the header alone), what it has
  // between header and fences and the end of its content, and whether a separator of the
  // longest key fits.
  uint32_t Used(const Header& h) const { return h.count * L::kSlotBytes + (l_.ContentEnd() - h.heap_off); }
  uint32_t Capacity(const Header& h) const { return l_.ContentEnd() - h.slots_off; }
  bool HasRoom(const Header& h) const {
    return Capacity(h) >= Used(h) + L::InternalEntryBytes(l_.max_key_bytes, h.prefix);
  }
  bool Build(std::byte* image, Header h, std::span<const Entry> sorted) const;
  // Divides by bytes: the separator whose removal leaves the halves most balanced moves up.
  InternalSplit<KV> Split(const Header& h, std::span<const Entry> sorted) const;
  // Bulk load: greedy runs of at least two children, each node's separators taking about
  // `fill` of the bytes it has.
  std::vector<size_t> PlanRuns(std::span<const Key> lows, double fill) const;

  bool FitsBetween(std::string_view low, std::string_view high, std::span<const Entry> sorted) const;

 private:
  static uint32_t SlotOff(const Header& h, uint32_t i) { return h.slots_off + i * L::kSlotBytes; }
  slotted::SlotWord WordAt(const std::byte* image, const Header& h, uint32_t i) const {
    return slotted::SlotWord::Unpack(LoadAt<uint64_t>(image, SlotOff(h, i)));
  }

  L l_;
};

}  // namespace dmindex::tree
