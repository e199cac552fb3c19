// Encoding and validation of the slotted node header with its variable-length fences
// (layout in slotted_layout.h).
#pragma once

#include <cstddef>

#include "tree/slotted_layout.h"

namespace dmindex::tree {

class SlottedHeaderCodec {
 public:
  using Header = NodeHeader<BytesKV>;
  using L = SlottedLayout;

  explicit SlottedHeaderCodec(const L& layout) : content_end_(layout.ContentEnd()) {}

  // Sets h's derived fields from its fences: the prefix stored keys omit and where the slot
  // array starts (count and heap_off are the caller's).
  static void Place(Header* h);
  // Writes the header of `h` (Place'd) into image[0, h.slots_off), check word included; the
  // bytes between the fences and the slots are zeroed.
  static void Write(const Header& h, std::byte* image);
  // Decodes the header; false if it is torn, not a node, or (validate or not) its lengths
  // would place fences or slots outside the node's content.
  bool Read(const std::byte* image, Header* h, bool validate) const;

 private:
  uint32_t content_end_;  // the node's bytes before its trailer (all of them without one)
};

}  // namespace dmindex::tree
