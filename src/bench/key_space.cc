#include "bench/key_space.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "bench/random.h"
#include "bench/zipfian.h"

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
  switch (order) {
    case InsertOrder::kHashed: return "hashed";
    case InsertOrder::kOrdered: return "ordered";
    case InsertOrder::kSequential: return "sequential";
    case InsertOrder::kNoisedLinear: return "noised-linear";
    case InsertOrder::kLognormal: return "lognormal";
  }
  return "?";
}

bool ParseKeyDistribution(std::string_view name, InsertOrder* out) {
  for (InsertOrder o : {InsertOrder::kHashed, InsertOrder::kOrdered, InsertOrder::kSequential,
                        InsertOrder::kNoisedLinear, InsertOrder::kLognormal})
    if (name == InsertOrderName(o)) {
      *out = o;
      return true;
    }
  return false;
}

namespace {

// YCSB's zeropadding: zeros in front of the digits up to `width` characters.
std::string Padded(std::string digits, uint32_t width) {
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// A lognormal draw (mu 0, sigma 1) of the record, quantized to 28 bits: exp(z) * 2^20,
// capped (z from two hashed uniforms, Box-Muller).
uint64_t LognormalBucket(uint64_t record) {
  const double u1 = (static_cast<double>(Mix64(record * 2 + 1) >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = static_cast<double>(Mix64(record * 2 + 2) >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return static_cast<uint64_t>(std::min(std::exp(z) * (1 << 20), static_cast<double>((1u << 28) - 1)));
}

}  // namespace

Key KeyOfRecord(uint64_t record, InsertOrder order, uint32_t zero_padding) {
  constexpr uint64_t kLow = uint64_t{1} << 34;
  switch (order) {
    case InsertOrder::kHashed: return Permute62(record) + 1;
    case InsertOrder::kSequential: return record + 1;
    case InsertOrder::kNoisedLinear: return record * 64 + Mix64(record) % 64 + 1;
    case InsertOrder::kLognormal: return (LognormalBucket(record) << 34 | (record % kLow)) + 1;
    case InsertOrder::kOrdered: break;
  }
  // Records below 10^18 padded to 18 digits all have 18: wider padding keeps their order.
  const std::string digits = Padded(std::to_string(record), std::min(zero_padding, 18u));
  Key key = 0, weight = 1;
  for (int i = 0; i < 17; ++i) weight *= 11;
  for (char c : digits) {
    key += static_cast<Key>(c - '0' + 1) * weight;
    weight /= 11;
  }
  return key;
}

std::string YcsbKeyName(uint64_t record, InsertOrder order, uint32_t zero_padding) {
  if (order != InsertOrder::kHashed) return "user" + Padded(std::to_string(record), zero_padding);
  // Math.abs(Long.MIN_VALUE) stays negative in Java, and Long.toString prints its sign.
  return "user" + Padded(std::to_string(static_cast<int64_t>(FnvHash64(record))), zero_padding);
}

Value MakeValue(Key key, uint32_t stamp) {
  return (static_cast<uint64_t>(stamp) << 32) | Fingerprint(key);
}

bool ValueMatchesKey(Key key, Value value) {
  return static_cast<uint32_t>(value) == Fingerprint(key);
}

}  // namespace dmindex::bench
