// DEX's tree (designs/dex/dex_tree.h) in the u64 key format, spoken in integers by the DEX
// tests that reach below the public API: keys are the tree's u64 keys, values 8-byte
// big-endian strings there (u64_api.h).
#pragma once

#include <string>
#include <vector>

#include "designs/dex/dex_tree.h"
#include "u64_api.h"

namespace dmindex::testing {

using U64DexTree = designs::dex::DexTree<designs::dex::U64Format>;
using U64Workers = designs::dex::WorkerSet<designs::dex::U64Format>;
using U64Range = tree::ScanRange<designs::dex::U64Format>;

inline Status U64Lookup(U64DexTree& t, U64Workers& ws, uint64_t key, uint64_t* value) {
  std::string v;
  Status s = t.Lookup(ws, key, &v);
  if (!s.ok()) return s;
  if (v.size() != 8) return Status::Corruption("value of " + std::to_string(v.size()) + " bytes");
  *value = u64::Decode(v);
  return s;
}

inline Status U64Write(U64DexTree& t, U64Workers& ws, designs::dex::WriteOp op, uint64_t key, uint64_t value) {
  const std::string v = u64::Encode(value);
  return t.Write(ws, op, key, op == designs::dex::WriteOp::kDelete ? std::string_view() : std::string_view(v));
}

inline Status U64ScanLeaf(U64DexTree& t, U64Workers& ws, const U64Range& range, uint64_t cursor, size_t limit,
                          std::vector<U64Pair>* out, uint64_t* next) {
  std::vector<tree::LeafEntry<designs::dex::U64Format>> entries;
  Status s = t.ScanLeaf(ws, range, cursor, limit > out->size() ? limit - out->size() : 0, &entries, next);
  for (const auto& e : entries) out->push_back({e.key, u64::Decode(e.value)});
  return s;
}

inline Status U64BulkLoad(U64DexTree& t, designs::dex::DexWorker<designs::dex::U64Format>& w,
                          const std::vector<U64Pair>& sorted) {
  std::vector<tree::LeafEntry<designs::dex::U64Format>> entries;
  for (const U64Pair& p : sorted) entries.push_back({p.key, u64::Encode(p.value), {}});
  return t.BulkLoad(w, entries);
}

}  // namespace dmindex::testing
