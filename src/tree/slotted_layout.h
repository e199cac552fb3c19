// Byte layout of a slotted node (BytesKV: byte-string keys and values), the format studied
// from LeanStore's BTreeNode, here with every byte a lock-free reader relies on covered by a
// check word bound to the node version (docs/SYNCHRONIZATION.md, "Slotted nodes").
//
//   +0   check       hash of bytes [8, slots_off): the fixed header, the fences, padding
//   +8   version     stamp of the last whole-node write (fresh random value per write)
//   +16  meta        level (8) | flags (8) | count (16) | low fence length (16) |
//                    stored high fence length (16)
//   +24  sibling     right sibling at the same level (B-link), null for the rightmost node
//   +32  leftmost    internal nodes: child left of the first separator; leaves: the
//                    incarnation (node_layout.h)
//   +40  body_check  internal nodes: hash of the slot array and the key heap; leaves: 0
//   +48  fence word  prefix length (16) | 0 (16) | internal nodes: key heap start (32)
//   +56  fences      the low fence's bytes, then the high fence's bytes after the prefix it
//                    shares with the low fence; the high fence is +inf if flagged
//                    (kFlagHighInf: no bytes, prefix 0)
//   slots_off = round8(56 + fence bytes): `count` slots of 16 bytes
//   ... free ...
//   heap: records / key bytes, growing down from the end of the node's content (the node's
//   end, or its trailer: NodeTrailer, node_layout.h)
//
// Prefix truncation: every key of a node lies in [low, high) and therefore starts with the
// fences' common prefix (`prefix` bytes); slots and heap store keys without it. A stored key
// is its first 4 bytes in the slot (the key head, big-endian, zero-padded: comparisons
// mostly end there) and the rest in the heap.
//
// Slot word (both kinds): offset (16) | stored key length (16) | key head (32).
//   Leaf slot:     [slot word | check]; the record at `offset` is
//                  [value length (16) | key bytes after the head | value bytes], or for a
//                  value out of line (length's top bit) [... | block address | value
//                  length (32)] (value_block.h);
//                  check = RecordCheck(slot word, record, version, slot index, tombstone)
//                  with its low bit the tombstone flag. An empty slot is all zero but its
//                  check. Unsorted leaves (two_level) reserve empty slots at each whole
//                  write, so an entry write never changes the header (slotted_leaf.h).
//   Internal slot: [slot word | child]; the key bytes after the head at `offset` (0 when
//                  there are none); one body check covers slots and heap.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tree/node_layout.h"
#include "tree/tree_options.h"

namespace dmindex::tree {

struct SlottedLayout : NodeTrailer {
  static constexpr uint32_t kCheckOff = 0;
  static constexpr uint32_t kVersionOff = 8;
  static constexpr uint32_t kMetaOff = 16;
  static constexpr uint32_t kSiblingOff = 24;
  static constexpr uint32_t kLeftmostOff = 32;
  static constexpr uint32_t kBodyCheckOff = 40;
  static constexpr uint32_t kFenceWordOff = 48;
  static constexpr uint32_t kFencesOff = 56;
  static constexpr uint32_t kSlotBytes = 16;
  static constexpr uint32_t kKeyHeadBytes = 4;
  static constexpr uint32_t kValueLenBytes = 2;  // a leaf record's value length
  static constexpr uint32_t kMaxInlineValue = 0x7fff;
  // The value-length field's top bit: the value is out of line, and the record holds its
  // block's address and the value's length (value_block.h) instead of its bytes.
  static constexpr uint16_t kBlockFlag = 0x8000;
  static constexpr uint32_t kBlockRefBytes = 12;

  uint32_t max_key_bytes = 0;
  uint32_t inline_value_bytes = 0;
  bool suffix_truncation = true;  // TreeOptions::suffix_truncation

  static constexpr uint32_t Round8(uint64_t n) { return static_cast<uint32_t>((n + 7) / 8 * 8); }
  // Key bytes a stored key keeps in the heap (those after its head).
  static constexpr uint32_t RestBytes(uint64_t stored_len) {
    return stored_len > kKeyHeadBytes ? static_cast<uint32_t>(stored_len - kKeyHeadBytes) : 0;
  }
  // Where the slot array starts for fences of these lengths (the high one without the prefix).
  static constexpr uint32_t SlotsOffset(uint64_t low_len, uint64_t high_stored_len) {
    return Round8(kFencesOff + low_len + high_stored_len);
  }
  // Bytes a leaf entry takes (slot and record) when its node's keys omit `prefix` bytes.
  static constexpr uint32_t LeafEntryBytes(uint64_t key_len, uint64_t value_len, uint64_t prefix) {
    return static_cast<uint32_t>(kSlotBytes + kValueLenBytes + RestBytes(key_len - prefix) + value_len);
  }
  static constexpr uint32_t InternalEntryBytes(uint64_t key_len, uint64_t prefix) {
    return kSlotBytes + RestBytes(key_len - prefix);
  }

  // The smallest node in which every split of an overfull node yields two halves that fit,
  // whatever the keys (up to max_key bytes, as fences too) and inline values: a node's
  // content (C bytes: node_bytes, less a trailer) held at most C - 56 bytes of entries, one
  // more entry makes T <= C - 56 + e (e: the largest entry); a split at the first entry that
  // takes the left half past T/2 leaves each half at most T/2 + e, and a half has
  // C - Round8(56 + 2 max_key) for entries. So C >= 2 Round8(56 + 2 max_key) - 56 + 3 e;
  // rounded up to a multiple of 64 with the trailer.
  static uint32_t MinNodeBytes(uint32_t max_key, uint32_t inline_value, bool trailer = false);

  static Result<SlottedLayout> For(uint32_t node_bytes, uint32_t max_key_bytes,
                                   uint32_t inline_value_bytes, bool trailer = false);
  // With values out of line possible (max_value_bytes > inline_value_bytes) a record may
  // hold a block reference instead, so its value part is at least kBlockRefBytes.
  static Result<SlottedLayout> For(const TreeOptions& o) {
    const bool refs = o.max_value_bytes > o.inline_value_bytes;
    auto l = For(o.node_bytes, o.max_key_bytes,
                 refs ? std::max(o.inline_value_bytes, kBlockRefBytes) : o.inline_value_bytes,
                 o.node_trailer);
    if (l.ok()) {
      l->inline_value_bytes = o.inline_value_bytes;
      l->suffix_truncation = o.suffix_truncation;
    }
    return l;
  }
};

}  // namespace dmindex::tree
