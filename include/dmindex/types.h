// Keys and values. In this version both are 8-byte unsigned integers ordered numerically;
// byte-string keys replace them later, so code outside the index never does arithmetic on a
// key (no `key + 1` to continue a scan: iterators continue where they stopped).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

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

// A range of keys as a scan covers it: from `start` (or from just after it, for a scan that
// continues after the last key it returned - no key arithmetic), up to `end` exclusive.
struct KeyRange {
  Key start = kMinKey;
  bool after_start = false;  // exclude `start` itself
  std::optional<Key> end;    // exclusive; none: to the end of the key space

  bool Contains(Key k) const {
    return (after_start ? k > start : k >= start) && (!end || k < *end);
  }
  // No key is in the range, whatever the index holds.
  bool Empty() const { return end && (after_start ? *end <= start + 1 : *end <= start); }
};

}  // namespace dmindex
