// How the benchmark names its records: record numbers 0, 1, 2, ... map to index keys, and
// every value written carries a fingerprint of its key so that a read or a full scan can tell
// a value that belongs to another key (a misdirected write, a torn node) from a good one.
#pragma once

#include <cstdint>
#include <string_view>

#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// YCSB's `insertorder`: hashed scatters consecutive records over the key space (so inserts
// land all over the tree, YCSB's default); ordered makes key = record + 1 (appends).
enum class InsertOrder : uint8_t { kHashed, kOrdered };
Result<InsertOrder> ParseInsertOrder(std::string_view name);
const char* InsertOrderName(InsertOrder order);

// Record numbers must stay below this so that both orders give distinct valid keys.
inline constexpr uint64_t kMaxRecords = uint64_t{1} << 62;

// A bijection on [0, 2^62) plus one: distinct records always get distinct keys, and no key
// is one of the reserved fence keys.
Key KeyOfRecord(uint64_t record, InsertOrder order);

// value = stamp << 32 | fingerprint(key). The stamp says who wrote it (0 = bulk load).
Value MakeValue(Key key, uint32_t stamp);
bool ValueMatchesKey(Key key, Value value);

}  // namespace dmindex::bench
