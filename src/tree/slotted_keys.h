// Byte-string keys in slotted nodes: the slot word, key heads, comparing a stored (prefix-
// truncated) key with a search key without copying it, and shortest separators.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tree/slotted_layout.h"

namespace dmindex::tree::slotted {

// The first word of a slot (slotted_layout.h): offset | stored key length | key head.
struct SlotWord {
  uint32_t offset = 0;
  uint32_t len = 0;
  uint32_t head = 0;

  static SlotWord Unpack(uint64_t w) {
    return {static_cast<uint32_t>(w & 0xffff), static_cast<uint32_t>((w >> 16) & 0xffff),
            static_cast<uint32_t>(w >> 32)};
  }
  uint64_t Pack() const { return uint64_t{offset} | (uint64_t{len} << 16) | (uint64_t{head} << 32); }
  uint32_t rest() const { return SlottedLayout::RestBytes(len); }
};

// The first 4 bytes of a stored key, zero-padded, as a big-endian number: heads compare as
// the bytes do.
inline uint32_t HeadOf(std::string_view stored) {
  uint32_t h = 0;
  for (size_t i = 0; i < SlottedLayout::kKeyHeadBytes; ++i)
    h = (h << 8) | (i < stored.size() ? static_cast<unsigned char>(stored[i]) : 0u);
  return h;
}

// A stored key's bytes as a string (head, then `rest` bytes at `rest_bytes`).
inline void AppendStored(std::string* out, SlotWord s, const std::byte* rest_bytes) {
  const uint32_t head_len = std::min(s.len, SlottedLayout::kKeyHeadBytes);
  for (uint32_t i = 0; i < head_len; ++i) out->push_back(static_cast<char>(s.head >> (24 - 8 * i)));
  out->append(reinterpret_cast<const char*>(rest_bytes), s.rest());
}

// Three-way comparison of a stored key (slot word s, its rest at `rest_bytes`) with `q`.
// Equal heads mean equal first min(len, 4) bytes (zero padding aside, which the lengths
// settle), so the rest decides, then the lengths.
inline int CompareStored(SlotWord s, const std::byte* rest_bytes, std::string_view q, uint32_t q_head) {
  if (s.head != q_head) return s.head < q_head ? -1 : 1;
  const size_t n = std::min<size_t>(s.len, q.size());
  if (n > SlottedLayout::kKeyHeadBytes) {
    const int c = std::memcmp(rest_bytes, q.data() + SlottedLayout::kKeyHeadBytes, n - SlottedLayout::kKeyHeadBytes);
    if (c != 0) return c;
  }
  return s.len < q.size() ? -1 : (s.len > q.size() ? 1 : 0);
}

inline bool EqualsStored(SlotWord s, const std::byte* rest_bytes, std::string_view q, uint32_t q_head) {
  return s.len == q.size() && s.head == q_head &&
         std::memcmp(rest_bytes, q.data() + std::min<size_t>(q.size(), SlottedLayout::kKeyHeadBytes),
                     s.rest()) == 0;
}

inline size_t CommonPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The shortest key s with left < s <= right (left < right): right cut after the first byte
// where they differ (suffix truncation). Any shorter string is <= left or > right: it is
// either a prefix of left or differs from both within their common prefix.
inline std::string_view ShortestSeparator(std::string_view left, std::string_view right) {
  return right.substr(0, CommonPrefix(left, right) + 1);
}

// The bytes every key in [low, high) starts with (high empty: +inf, none).
inline size_t FencePrefix(std::string_view low, std::string_view high) {
  return high.empty() ? 0 : CommonPrefix(low, high);
}

// True if `key` starts with the node's prefix (the first `prefix` bytes of its low fence).
inline bool HasPrefix(std::string_view key, std::string_view low, size_t prefix) {
  // prefix 0 is common (low = -inf, an empty view whose data() may be null): memcmp on a
  // null pointer is undefined even for 0 bytes.
  return prefix == 0 || (key.size() >= prefix && std::memcmp(key.data(), low.data(), prefix) == 0);
}

}  // namespace dmindex::tree::slotted
