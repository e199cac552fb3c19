// Keys and values: byte strings, ordered by unsigned byte comparison (memcmp order, shorter
// first on a common prefix), as std::string_view compares them.
//
// An index is created with a key format (IndexOptions::key_format):
//  * kBytes: keys of 1 .. max_key_bytes bytes (default 255, at most kMaxKeyBytes); every such
//    key is valid.
//  * kU64: keys of exactly 8 bytes holding an unsigned integer in big-endian order, so byte
//    order is numeric order (U64Key builds them); the integers 0 and 2^64-1 are reserved for
//    the tree's fences. The fast path of the fixed-size designs (Sherman's and DEX's 8-byte
//    keys), with integer convenience calls on Session.
// Values are byte strings in both formats (up to IndexOptions::max_value_bytes).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace dmindex {

// A borrowed byte string: a key or a value passed into a call. Valid for the call only.
using Slice = std::string_view;

struct KeyValue {
  std::string key;
  std::string value;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

enum class KeyFormat : uint8_t { kBytes = 0, kU64 = 1 };

// The largest IndexOptions::max_key_bytes of the bytes format.
inline constexpr uint32_t kMaxKeyBytes = 1024;

// --- The u64 format ---

inline constexpr uint32_t kU64KeyBytes = 8;
inline constexpr uint64_t kMinU64Key = 1;
inline constexpr uint64_t kMaxU64Key = std::numeric_limits<uint64_t>::max() - 1;

// An 8-byte big-endian encoding of an integer, usable wherever a Slice is (no allocation):
// session->Insert(U64Key(42), value). Also the encoding of the integer values of Session's
// integer calls.
class U64Key {
 public:
  explicit U64Key(uint64_t v) {
    for (int i = 7; i >= 0; --i, v >>= 8) bytes_[i] = static_cast<char>(v & 0xff);
  }
  operator Slice() const { return Slice(bytes_.data(), bytes_.size()); }  // NOLINT: implicit by design
  std::string str() const { return std::string(bytes_.data(), bytes_.size()); }

  // The integer of an 8-byte slice (the caller checks the size).
  static uint64_t Decode(Slice s) {
    uint64_t v = 0;
    for (size_t i = 0; i < kU64KeyBytes; ++i) v = v << 8 | static_cast<unsigned char>(s[i]);
    return v;
  }

 private:
  std::array<char, kU64KeyBytes> bytes_;
};

// --- Ranges ---

// A range of keys as a scan covers it: from `start` (or from just after it, for a scan that
// continues after the last key it returned - no key arithmetic), up to `end` exclusive.
struct KeyRange {
  std::string start;
  bool after_start = false;         // exclude `start` itself
  std::optional<std::string> end;   // exclusive; none: to the end of the key space

  bool Contains(Slice k) const {
    return (after_start ? k > Slice(start) : k >= Slice(start)) && (!end || k < Slice(*end));
  }
  // No key can be in the range.
  bool Empty() const { return end && Slice(*end) <= Slice(start); }
};

// A range as a reverse scan covers it: downwards from `end` (itself included when
// end_inclusive; none: from the last key of the index), down to `start`, inclusive.
struct ReverseRange {
  std::string start;
  std::optional<std::string> end;
  bool end_inclusive = false;

  bool Contains(Slice k) const {
    return k >= Slice(start) && (!end || (end_inclusive ? k <= Slice(*end) : k < Slice(*end)));
  }
  bool Empty() const { return end && (end_inclusive ? Slice(*end) < Slice(start) : Slice(*end) <= Slice(start)); }
};

}  // namespace dmindex
