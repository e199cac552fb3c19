// Encoding and validation of the fixed-format node header (layout in node_layout.h).
#pragma once

#include <cstddef>

#include "tree/node_check.h"
#include "tree/node_layout.h"

namespace dmindex::tree {

template <typename KV>
struct FixedHeaderCodec {
  using L = FixedLayout<KV>;

  FixedHeaderCodec() = default;
  explicit FixedHeaderCodec(const L&) {}

  // Writes `h` into the first header_bytes of `image`, check word included.
  static void Write(const NodeHeader<KV>& h, std::byte* image) {
    std::memset(image, 0, L::kHeaderBytes);
    StoreAt(image, L::kVersionOff, h.version);
    uint64_t meta = uint64_t{h.level} | (uint64_t{h.flags} << 8) | (uint64_t{h.count} << 16);
    StoreAt(image, L::kMetaOff, meta);
    StoreAt(image, L::kSiblingOff, h.sibling.raw());
    StoreAt(image, L::kLeftmostOff, h.is_leaf() ? h.incarnation : h.leftmost.raw());
    StoreAt(image, L::kBodyCheckOff, h.body_check);
    StoreAt(image, L::kLowOff, h.low);
    StoreAt(image, L::kHighOff, h.high);
    StoreAt(image, L::kCheckOff, HeaderCheck(image + 8, L::kHeaderBytes - 8));
  }

  // True if the header's check word matches its content.
  static bool Valid(const std::byte* image) {
    return LoadAt<uint64_t>(image, L::kCheckOff) == HeaderCheck(image + 8, L::kHeaderBytes - 8);
  }

  // Decodes the header; false if validation is on and the header is torn or not a node.
  static bool Read(const std::byte* image, NodeHeader<KV>* h, bool validate) {
    if (validate && !Valid(image)) return false;
    Decode([image](uint32_t off) { return LoadAt<uint64_t>(image, off); },
           [image](uint32_t off) { return LoadAt<typename KV::Key>(image, off); }, h);
    return true;
  }
  // Decodes the header from its words, wherever they are: `word(off)` / `key(off)` load the
  // word / key at a header offset (Read: a private image; DEX's hit path: a cached page by
  // atomic loads, node_pages.h). Field extraction only, so a torn image decodes harmlessly.
  template <typename LoadWord, typename LoadKey>
  static void Decode(const LoadWord& word, const LoadKey& key, NodeHeader<KV>* h) {
    h->version = word(L::kVersionOff);
    const uint64_t meta = word(L::kMetaOff);
    h->level = static_cast<uint8_t>(meta);
    h->flags = static_cast<uint8_t>(meta >> 8);
    h->count = static_cast<uint16_t>(meta >> 16);
    h->sibling = GlobalAddress::FromRaw(word(L::kSiblingOff));
    const uint64_t leftmost = word(L::kLeftmostOff);
    h->leftmost = h->is_leaf() ? GlobalAddress::Null() : GlobalAddress::FromRaw(leftmost);
    h->incarnation = h->is_leaf() ? leftmost : 0;
    h->body_check = word(L::kBodyCheckOff);
    h->low = key(L::kLowOff);
    h->high = key(L::kHighOff);
  }
};

// The header codec of a traits type's nodes.
template <KeyValueTraits KV>
using HeaderCodec = typename KV::HeaderCodec;

}  // namespace dmindex::tree
