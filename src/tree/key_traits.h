// Key/value traits of the tree core. The tree logic (reader, scanner, writer, structure
// modifier, bulk loader, caches) is written once against a traits type; a traits type names
// its key and value types and the codecs that lay them out in a node:
//   U64BytesKV  8-byte integer keys in fixed-size slots (node_layout.h, leaf_node.h,
//               internal_node.h), byte-string values: the u64 key format of every design
//               built on the core (naive, sherman, rftree, dex);
//   U64KV       the same with 8-byte integer values (the core's own tests of the format);
//   BytesKV     byte-string keys and values in slotted nodes (slotted_layout.h, slotted_leaf.h,
//               slotted_internal.h): prefix truncation by the fences, shortest separators.
// Values longer than a leaf keeps inline live in value blocks (value_block.h).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/key_text.h"
#include "common/u64.h"
#include "tree/value_block.h"

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
//  * Keys: the key half (U64Keys, BytesKeys): Key (what the tree stores), KeyRef (how a key
//    is passed in: a view where a copy would cost), the fences kNegInf (the leftmost node's
//    low fence, below every user key) and kPosInf (the rightmost node's high fence), Below
//    (the only comparison with a high fence or a scan's end, so a format without a largest
//    key, byte strings, can say what kPosInf means), IsUserKey, and Owner (the hash of a key
//    its out-of-line value blocks carry, value_block.h); Key and KeyRef are ordered by
//    operator< and operator==, also with each other. The traits repeat these names;
//  * Value, ValueRef; kValueBlocks: values are byte strings, those longer than the leaf's
//    inline limit out of line in value blocks (false: 8-byte integers in the slot);
//  * the node layout and codecs.
template <typename T>
concept KeyValueTraits = requires(const typename T::Key& a, const typename T::Key& b,
                                  typename T::KeyRef r) {
  typename T::Keys;
  typename T::Key;
  typename T::Value;
  typename T::KeyRef;
  typename T::ValueRef;
  typename T::Layout;
  typename T::HeaderCodec;
  typename T::LeafCodec;
  typename T::InternalCodec;
  { T::kValueBlocks } -> std::convertible_to<bool>;
  { T::kNegInf } -> std::convertible_to<typename T::Key>;
  { T::kPosInf } -> std::convertible_to<typename T::Key>;
  { a < b } -> std::convertible_to<bool>;
  { a == b } -> std::convertible_to<bool>;
  { r < a } -> std::convertible_to<bool>;
  { r == a } -> std::convertible_to<bool>;
  { T::Below(r, b) } -> std::convertible_to<bool>;
  { T::IsUserKey(r) } -> std::convertible_to<bool>;
  { T::Owner(r) } -> std::convertible_to<uint64_t>;
};

// 8-byte integer keys: the u64 key format (common/u64.h). Its reserved keys 0 and 2^64-1
// are exactly the fences.
struct U64Keys {
  using Key = u64::Key;
  using KeyRef = Key;
  static constexpr Key kNegInf = 0;
  static constexpr Key kPosInf = std::numeric_limits<Key>::max();
  // No user key is kPosInf, so "below +inf" is plain order.
  static bool Below(KeyRef k, const Key& bound) { return k < bound; }
  static bool IsUserKey(KeyRef k) { return kNegInf < k && k < kPosInf; }
  static uint64_t Owner(KeyRef k) { return value_block::OwnerOf(k); }
};

// Byte-string keys, ordered by unsigned byte comparison (std::string's order). User keys
// are non-empty. Every byte string is a possible user key, so no string can stand above all
// of them: the empty string is both fences, -inf as a low fence (it is below every key) and
// +inf as a high fence or a scan's end (Below says so). A real high fence is a separator,
// never empty.
struct BytesKeys {
  using Key = std::string;
  using KeyRef = std::string_view;
  static inline const Key kNegInf{};
  static inline const Key kPosInf{};
  static bool Below(KeyRef k, const Key& bound) { return bound.empty() || k < KeyRef(bound); }
  static bool IsUserKey(KeyRef k) { return !k.empty(); }
  static uint64_t Owner(KeyRef k) { return value_block::OwnerOf(k); }
};

// The u64 key format with byte-string values: fixed 24-byte slots (key | value word |
// check), values of up to 8 bytes in the value word (their length and the out-of-line flag
// in spare low bits of the check word), longer ones out of line.
struct U64BytesKV : U64Keys {
  using Keys = U64Keys;
  using Value = std::string;
  using ValueRef = std::string_view;
  using Layout = FixedLayout<U64BytesKV>;
  using HeaderCodec = FixedHeaderCodec<U64BytesKV>;
  using LeafCodec = FixedLeafCodec<U64BytesKV>;
  using InternalCodec = FixedInternalCodec<U64BytesKV>;
  static constexpr bool kValueBlocks = true;
};

// The u64 key format with 8-byte integer values in the slot, the layout of U64BytesKV; no
// design stores integer values any more (issue 12), the core's tests of the format do.
struct U64KV : U64Keys {
  using Keys = U64Keys;
  using Value = u64::Value;
  using ValueRef = Value;
  using Layout = FixedLayout<U64KV>;
  using HeaderCodec = FixedHeaderCodec<U64KV>;
  using LeafCodec = FixedLeafCodec<U64KV>;
  using InternalCodec = FixedInternalCodec<U64KV>;
  static constexpr bool kValueBlocks = false;
};

// Byte-string keys and values in slotted nodes; values longer than the index's inline limit
// out of line.
struct BytesKV : BytesKeys {
  using Keys = BytesKeys;
  using Value = std::string;
  using ValueRef = std::string_view;
  using Layout = SlottedLayout;
  using HeaderCodec = SlottedHeaderCodec;
  using LeafCodec = SlottedLeafCodec;
  using InternalCodec = SlottedInternalCodec;
  static constexpr bool kValueBlocks = true;
};

// A key as status messages show it (common/key_text.h: printable bytes as text, the rest
// escaped).
inline std::string DescribeKey(uint64_t key) { return "key " + std::to_string(key); }
inline std::string DescribeKey(std::string_view key) { return "key " + KeyText(key); }

}  // namespace dmindex::tree
