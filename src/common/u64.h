// The u64 key format inside dmindex's layers: keys and values as the integers the fixed-size
// designs store (U64BytesKV trees, DEX's pages and wire formats, the local tree's slots, the
// benchmark's key space). The public API carries them as 8-byte big-endian strings
// (dmindex::U64Key); adapters convert at the boundary.
#pragma once

#include <cstdint>
#include <string>

#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex::u64 {

using Key = uint64_t;
using Value = uint64_t;
inline constexpr Key kMinKey = kMinU64Key;
inline constexpr Key kMaxKey = kMaxU64Key;
inline bool IsValidKey(Key k) { return k >= kMinKey && k <= kMaxKey; }

struct KeyValue {
  Key key = 0;
  Value value = 0;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

// The integer of an 8-byte key or value (callers have checked the size).
inline uint64_t Decode(Slice s) { return U64Key::Decode(s); }
inline std::string Encode(uint64_t v) { return U64Key(v).str(); }

// The integer of an 8-byte value. Designs built on 8-byte value slots (until the tree core's
// value slots take byte values of other sizes, issue 12) refuse any other size.
inline Status ValueOf(Slice value, Value* out, const char* design) {
  if (value.size() != 8)
    return Status::NotSupported(std::string(design) + " stores 8-byte values in a u64-format index "
                                "for now; this one has " + std::to_string(value.size()) + " bytes");
  *out = Decode(value);
  return Status::Ok();
}

}  // namespace dmindex::u64
