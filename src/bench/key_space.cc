#include "bench/key_space.h"

#include <algorithm>
#include <string>

#include "bench/random.h"

namespace dmindex::bench {
namespace {

constexpr uint64_t kMask62 = (uint64_t{1} << 62) - 1;

// Each step is a bijection on 62-bit words: x ^= x >> k (k > 0) is invertible, and so is
// multiplication by an odd constant modulo 2^62.
uint64_t Permute62(uint64_t x) {
  x &= kMask62;
  x ^= x >> 31;
  x = (x * 0x7FB5D329728EA185ull) & kMask62;
  x ^= x >> 27;
  x = (x * 0x81DADEF4BC2DD44Dull) & kMask62;
  x ^= x >> 33;
  return x;
}

uint32_t Fingerprint(Key key) { return static_cast<uint32_t>(Mix64(key) >> 32); }

}  // namespace

const char* InsertOrderName(InsertOrder order) {
  return order == InsertOrder::kHashed ? "hashed" : "ordered";
}

namespace {

std::string Padded(uint64_t record, uint32_t zero_padding) {
  std::string digits = std::to_string(record);
  if (digits.size() < zero_padding) digits.insert(0, zero_padding - digits.size(), '0');
  return digits;
}

}  // namespace

Key KeyOfRecord(uint64_t record, InsertOrder order, uint32_t zero_padding) {
  if (order == InsertOrder::kHashed) return Permute62(record) + 1;
  const std::string digits = Padded(record, std::min(zero_padding, kMaxZeroPadding));
  Key key = 0, weight = 1;
  for (int i = 0; i < 17; ++i) weight *= 11;
  for (char c : digits) {
    key += static_cast<Key>(c - '0' + 1) * weight;
    weight /= 11;
  }
  return key;
}

std::string YcsbKeyName(uint64_t record, InsertOrder order, uint32_t zero_padding) {
  if (order == InsertOrder::kHashed) return "user" + std::to_string(Permute62(record));
  return "user" + Padded(record, zero_padding);
}

Value MakeValue(Key key, uint32_t stamp) {
  return (static_cast<uint64_t>(stamp) << 32) | Fingerprint(key);
}

bool ValueMatchesKey(Key key, Value value) {
  return static_cast<uint32_t>(value) == Fingerprint(key);
}

}  // namespace dmindex::bench
