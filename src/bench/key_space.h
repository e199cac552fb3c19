// How the benchmark names its records: record numbers 0, 1, 2, ... map to index keys, and
// every value written carries a fingerprint of its key so that a read or a full scan can tell
// a value that belongs to another key (a misdirected write, a torn node) from a good one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/u64.h"
#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// The benchmark's records are integers (the u64 key format); the runner and the executor
// encode them at the public API.
using u64::Key;
using u64::Value;
using u64::kMinKey;
using u64::kMaxKey;
using RecordPair = u64::KeyValue;

// YCSB's `insertorder`: hashed scatters consecutive records over the key space (so inserts
// land all over the tree, YCSB's default); ordered names record r "user" + r zero-padded to
// `zeropadding` digits, and YCSB's keys are strings: with the default padding of 1,
// user100000 sorts between user10000 and user10001, among the loaded keys, not after them.
// Beyond YCSB (bench --key-dist, for learned indexes: XStore's Table 2 shapes): sequential
// keys (record + 1, XStore's "L"), noised linear (64 keys apart, each moved by a hash within
// its 64: "NL"), and lognormal (the record's lognormal draw quantized to 28 bits above its 34
// low bits: a lognormal CDF with a uniform fine structure). Each is a bijection of records
// below 2^34 to valid keys.
enum class InsertOrder : uint8_t { kHashed, kOrdered, kSequential, kNoisedLinear, kLognormal };
const char* InsertOrderName(InsertOrder order);
// The order of a --key-dist name (hashed, ordered, sequential, noised-linear, lognormal).
bool ParseKeyDistribution(std::string_view name, InsertOrder* out);

// Record numbers must stay below this so that both orders give distinct valid keys (ordered
// keys have at most 18 digits, see KeyOfRecord).
inline constexpr uint64_t kMaxRecords = 1'000'000'000'000'000'000;

// Distinct records always get distinct keys, and no key is one of the reserved fence keys.
// hashed: a bijection on [0, 2^62), plus one. ordered: the zero-padded decimal digits of the
// record, as an integer that sorts as the string does (digit d at position i weighs
// (d + 1) * 11^(17 - i), a shorter string weighs 0 beyond its end), so integer key order is
// YCSB's string order (a padding beyond 18 digits orders records below 10^18 as 18 does).
// These are the u64 format's keys; byte-string runs name records with YcsbKeyName.
Key KeyOfRecord(uint64_t record, InsertOrder order, uint32_t zero_padding = 1);
// YCSB 0.17.0's key of a record, as CoreWorkload.buildKeyName builds it: "user" + the record
// number - hashed: Utils.hash of it (FnvHash64, printed as Java prints the signed long);
// any other order: the number itself - left-padded with zeros to `zero_padding` characters.
std::string YcsbKeyName(uint64_t record, InsertOrder order, uint32_t zero_padding);

// value = stamp << 32 | fingerprint(key). The stamp says who wrote it (0 = bulk load).
Value MakeValue(Key key, uint32_t stamp);
bool ValueMatchesKey(Key key, Value value);

}  // namespace dmindex::bench
