// Key/value traits of the tree core. The tree logic (reader, scanner, writer, structure
// modifier, bulk loader, caches) is written once against a traits type; a traits type names
// its key and value types and the codecs that lay them out in a node. Two exist:
//   U64KV    8-byte integer keys and values in fixed-size slots (node_layout.h, leaf_node.h,
//            internal_node.h): the fast path of the u64 key format;
//   BytesKV  byte-string keys and values in slotted nodes (slotted_layout.h, slotted_leaf.h,
//            slotted_internal.h): prefix truncation by the fences, shortest separators.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/key_text.h"
#include "common/u64.h"

namespace dmindex::tree {

// The codecs the traits name (defined in their own headers; the tree logic only sees them
// through KV::Layout, KV::HeaderCodec, KV::LeafCodec and KV::InternalCodec).
template <typename KV> struct FixedLayout;
template <typename KV> struct FixedHeaderCodec;
template <typename KV> class FixedLeafCodec;
template <typename KV> class FixedInternalCodec;
struct SlottedLayout;
class SlottedHeaderCodec;
class SlottedLeafCodec;
class SlottedInternalCodec;

// A traits type names:
//  * Key, Value: what the tree stores and returns (copied out of node images by the codecs);
//    KeyRef, ValueRef: how a key or value is passed in (a view where a copy would cost);
//  * kNegInf: the low fence of the leftmost node, below every user key; kPosInf: the high
//    fence of the rightmost node. The tree compares with a high fence or a scan's end only
//    through Below(k, bound), which says what kPosInf means, so a format without a largest
//    key (byte strings) can give it its own meaning;
//  * keys totally ordered by operator< and operator==, also between KeyRef and Key;
//  * the node layout and codecs.
template <typename T>
concept KeyValueTraits = requires(const typename T::Key& a, const typename T::Key& b,
                                  typename T::KeyRef r) {
  typename T::Key;
  typename T::Value;
  typename T::KeyRef;
  typename T::ValueRef;
  typename T::Layout;
  typename T::HeaderCodec;
  typename T::LeafCodec;
  typename T::InternalCodec;
  { T::kNegInf } -> std::convertible_to<typename T::Key>;
  { T::kPosInf } -> std::convertible_to<typename T::Key>;
  { a < b } -> std::convertible_to<bool>;
  { a == b } -> std::convertible_to<bool>;
  { r < a } -> std::convertible_to<bool>;
  { r == a } -> std::convertible_to<bool>;
  { T::Below(r, b) } -> std::convertible_to<bool>;
  { T::IsUserKey(r) } -> std::convertible_to<bool>;
};

// 8-byte integer keys and values: the u64 key format (common/u64.h). Its reserved keys 0
// and 2^64-1 are exactly the fences.
struct U64KV {
  using Key = u64::Key;
  using Value = u64::Value;
  using KeyRef = Key;
  using ValueRef = Value;
  using Layout = FixedLayout<U64KV>;
  using HeaderCodec = FixedHeaderCodec<U64KV>;
  using LeafCodec = FixedLeafCodec<U64KV>;
  using InternalCodec = FixedInternalCodec<U64KV>;
  static constexpr Key kNegInf = 0;
  static constexpr Key kPosInf = std::numeric_limits<Key>::max();
  // No user key is kPosInf, so "below +inf" is plain order.
  static bool Below(KeyRef k, const Key& bound) { return k < bound; }
  static bool IsUserKey(KeyRef k) { return kNegInf < k && k < kPosInf; }
};

// Byte-string keys and values, ordered by unsigned byte comparison (std::string's order).
// User keys are non-empty. Every byte string is a possible user key, so no string can stand
// above all of them: the empty string is both fences, -inf as a low fence (it is below every
// key) and +inf as a high fence or a scan's end (Below says so). A real high fence is a
// separator, never empty.
struct BytesKV {
  using Key = std::string;
  using Value = std::string;
  using KeyRef = std::string_view;
  using ValueRef = std::string_view;
  using Layout = SlottedLayout;
  using HeaderCodec = SlottedHeaderCodec;
  using LeafCodec = SlottedLeafCodec;
  using InternalCodec = SlottedInternalCodec;
  static inline const Key kNegInf{};
  static inline const Key kPosInf{};
  static bool Below(KeyRef k, const Key& bound) { return bound.empty() || k < KeyRef(bound); }
  static bool IsUserKey(KeyRef k) { return !k.empty(); }
};

// A key as status messages show it (common/key_text.h: printable bytes as text, the rest
// escaped).
inline std::string DescribeKey(uint64_t key) { return "key " + std::to_string(key); }
inline std::string DescribeKey(std::string_view key) { return "key " + KeyText(key); }

}  // namespace dmindex::tree
