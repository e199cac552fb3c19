// Tests of the u64 key format speak integers: keys and 8-byte values as numbers, converted
// to and from the public byte strings here (dmindex::U64Key). Session's integer calls
// (Lookup/Insert/Update/Delete on uint64_t) do the same for point operations.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/u64.h"
#include "dmindex/index.h"

namespace dmindex::testing {

// The default options with the u64 key format (the API's default is bytes).
inline IndexOptions U64Options() {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  return o;
}

using U64Pair = u64::KeyValue;

inline std::vector<KeyValue> EncodePairs(std::span<const U64Pair> pairs) {
  std::vector<KeyValue> out;
  out.reserve(pairs.size());
  for (const U64Pair& p : pairs) out.push_back({u64::Encode(p.key), u64::Encode(p.value)});
  return out;
}

// Pairs of a u64-format index as integers (every key and value has 8 bytes there).
inline std::vector<U64Pair> DecodePairs(const std::vector<KeyValue>& pairs) {
  std::vector<U64Pair> out;
  out.reserve(pairs.size());
  for (const KeyValue& p : pairs) out.push_back({u64::Decode(p.key), u64::Decode(p.value)});
  return out;
}

inline Status BulkLoadU64(Index& index, std::span<const U64Pair> sorted) {
  return index.BulkLoad(EncodePairs(sorted));
}

// Session::Scan from an integer key, answered in integers.
inline Status ScanU64(Session& session, uint64_t start, size_t count, std::vector<U64Pair>* out) {
  std::vector<KeyValue> pairs;
  Status s = session.Scan(U64Key(start), count, &pairs);
  *out = DecodePairs(pairs);
  return s;
}

// Partitioning::RouteKey of an integer key, in integers.
struct U64Route {
  uint32_t compute_node = 0;
  uint64_t begin = 0;
  std::optional<uint64_t> end;
  bool hosted = true;
  bool Contains(uint64_t k) const { return k >= begin && (!end || k < *end); }
};
inline U64Route RouteU64(const Partitioning& parts, uint64_t key) {
  const Route r = parts.RouteKey(U64Key(key));
  U64Route out{r.compute_node, r.begin.empty() ? 0 : u64::Decode(r.begin), std::nullopt, r.hosted};
  if (r.end) out.end = u64::Decode(*r.end);
  return out;
}
inline Result<double> RepartitionU64(Partitioning& parts, const std::vector<uint64_t>& boundaries) {
  std::vector<std::string> encoded;
  for (uint64_t b : boundaries) encoded.push_back(u64::Encode(b));
  return parts.Repartition(std::move(encoded));
}

// Every pair of a u64-format index through an iterator reading `readahead` pairs per batch.
inline std::vector<U64Pair> IterateU64(Session& session, size_t readahead, Status* status) {
  std::vector<U64Pair> all;
  ReadOptions ro;
  ro.readahead = readahead;
  Iterator it = session.NewIterator(ro);
  for (it.SeekToFirst(); it.Valid(); it.Next()) all.push_back({u64::Decode(it.key()), u64::Decode(it.value())});
  *status = it.status();
  return all;
}

}  // namespace dmindex::testing
