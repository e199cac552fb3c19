// Keys and values. In this version both are 8-byte unsigned integers ordered numerically;
// byte-string keys replace them later, so code outside the index never does arithmetic on a
// key (no `key + 1` to continue a scan: iterators continue where they stopped).
#pragma once

#include <cstdint>
#include <limits>

namespace dmindex {

using Key = uint64_t;
using Value = uint64_t;

// Keys 0 and 2^64-1 are reserved for the fence keys -inf/+inf; using them is
// InvalidArgument, never silent misbehaviour.
inline constexpr Key kMinKey = 1;
inline constexpr Key kMaxKey = std::numeric_limits<Key>::max() - 1;
inline bool IsValidKey(Key k) { return k >= kMinKey && k <= kMaxKey; }

struct KeyValue {
  Key key = 0;
  Value value = 0;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

}  // namespace dmindex
