#include "bench/key_space.h"

#include <string>

#include "bench/random.h"

namespace dmindex::bench {
namespace {

constexpr uint64_t kMask62 = kMaxRecords - 1;

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

Result<InsertOrder> ParseInsertOrder(std::string_view name) {
  if (name == "hashed") return InsertOrder::kHashed;
  if (name == "ordered") return InsertOrder::kOrdered;
  return Status::InvalidArgument("insertorder must be hashed or ordered, got '" +
                                 std::string(name) + "'");
}

const char* InsertOrderName(InsertOrder order) {
  return order == InsertOrder::kHashed ? "hashed" : "ordered";
}

Key KeyOfRecord(uint64_t record, InsertOrder order) {
  return (order == InsertOrder::kHashed ? Permute62(record) : (record & kMask62)) + 1;
}

Value MakeValue(Key key, uint32_t stamp) {
  return (static_cast<uint64_t>(stamp) << 32) | Fingerprint(key);
}

bool ValueMatchesKey(Key key, Value value) {
  return static_cast<uint32_t>(value) == Fingerprint(key);
}

}  // namespace dmindex::bench
