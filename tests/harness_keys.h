// Keys and values of the correctness harness (index_harness_test.cc) and the local tree's
// byte-key tests, in either key format: numbered keys and values naming their write, so a
// stale, lost or torn one is recognised.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "dmindex/types.h"

namespace dmindex::testing {

// Bytes-format key number n (n >= 1) for keys of up to `max_key` bytes: short keys of decimal
// digits (n % 4 == 0: up to 8 bytes, where designs may keep a whole key in a word), and keys
// behind a 40-byte shared prefix - some extended by a zero byte, some padded with bytes of
// every value to the longest allowed length. "P..2" < "P..2\0" < "P..20" < "P..26": many
// keys are prefixes of others. Distinct numbers give distinct keys.
inline std::string ByteKeyOf(uint64_t n, uint32_t max_key = kMaxKeyBytes) {
  std::string digits = std::to_string(n);
  if (n % 4 == 0) return digits;
  std::string k = std::string(38, 'P') + "/\x01" + digits;
  if (n % 4 == 1) k.push_back('\0');
  if (n % 4 == 3 && k.size() < max_key) {
    // Pseudo-random bytes of every value, eight at a time (cheap under the sanitizers).
    size_t at = k.size();
    k.resize(max_key);
    for (uint64_t x = n * 0x9E3779B97F4A7C15ull; at < max_key; at += 8, x = x * 6364136223846793005ull + 1)
      std::memcpy(&k[at], &x, std::min<size_t>(8, max_key - at));
  }
  return k;
}

// A value of `size` bytes naming (key, version) in its first bytes and its fill byte.
inline std::string NamedValue(uint64_t key, uint64_t version, size_t size) {
  std::string v(size, static_cast<char>((key * 131 + version * 7) % 251));
  const std::string id = std::to_string(key) + "/" + std::to_string(version) + ";";
  v.replace(0, std::min(size, id.size()), id.substr(0, std::min(size, id.size())));
  return v;
}

// The harness's keys and values in the format under test.
class HarnessKeys {
 public:
  explicit HarnessKeys(KeyFormat format) : format_(format) {}
  KeyFormat format() const { return format_; }

  // Key number n >= 1: u64, the integer (numeric order); bytes, ByteKeyOf(n).
  std::string Key(uint64_t n) const { return format_ == KeyFormat::kU64 ? U64Key(n).str() : ByteKeyOf(n); }
  // The value of write `id` to key number n: u64, the 8-byte id (what every design stores
  // there); bytes, 0 .. 2000 bytes and every 499th write 100 KB, the empty value included.
  std::string Value(uint64_t n, uint64_t id) const {
    if (format_ == KeyFormat::kU64) return U64Key(id).str();
    static constexpr size_t kSizes[] = {0, 3, 8, 24, 100, 700, 2000, 0, 9};
    const size_t size = id % 499 == 0 ? 100'000 + id % 13 : kSizes[(id * 7 + n) % std::size(kSizes)];
    return NamedValue(n, id, size);
  }

 private:
  KeyFormat format_;
};

}  // namespace dmindex::testing
