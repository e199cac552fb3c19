// Key/value traits of the tree core. The core is written against a traits type, not against
// uint64_t, so byte-string keys can be added as another traits type (and one more explicit
// instantiation per tree file) without touching codecs or tree logic.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common/u64.h"

namespace dmindex::tree {

// A traits type names fixed-size, trivially copyable Key and Value types (they are copied
// byte-wise into node images), keys totally ordered by operator< and operator==, and two fence
// sentinels with kNegInf < k < kPosInf for every user key k. kNegInf doubles as the key of an
// empty leaf slot, so it must never be a user key.
template <typename T>
concept KeyValueTraits = requires(const typename T::Key& a, const typename T::Key& b) {
  typename T::Key;
  typename T::Value;
  { T::kNegInf } -> std::convertible_to<typename T::Key>;
  { T::kPosInf } -> std::convertible_to<typename T::Key>;
  { a < b } -> std::convertible_to<bool>;
  { a == b } -> std::convertible_to<bool>;
} && std::is_trivially_copyable_v<typename T::Key> && std::is_trivially_copyable_v<typename T::Value>;

// 8-byte integer keys and values: the u64 key format (common/u64.h). Its reserved keys 0
// and 2^64-1 are exactly the fences.
struct U64KV {
  using Key = u64::Key;
  using Value = u64::Value;
  static constexpr Key kNegInf = 0;
  static constexpr Key kPosInf = std::numeric_limits<Key>::max();
};

static_assert(KeyValueTraits<U64KV>);

// A key as status messages show it.
template <typename K>
std::string DescribeKey(const K& key) {
  if constexpr (std::is_integral_v<K>) return "key " + std::to_string(key);
  else return "a key";
}

}  // namespace dmindex::tree
