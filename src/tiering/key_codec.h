// Keys of the 8-byte integer API as byte strings whose unsigned byte order is their numeric
// order (big-endian), so the stores' default comparator orders them correctly and no custom
// comparator is needed (digest trap R9). Values are stored the same way.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dmindex::tiering {

inline constexpr size_t kU64Bytes = 8;

inline void EncodeU64(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

inline std::string EncodeU64(uint64_t v) {
  std::string s(kU64Bytes, '\0');
  EncodeU64(v, s.data());
  return s;
}

// `bytes` must hold exactly 8 bytes (callers check the size first).
inline uint64_t DecodeU64(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < kU64Bytes; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

}  // namespace dmindex::tiering
