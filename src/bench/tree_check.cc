#include "bench/tree_check.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dmindex::bench {

Status CheckFullScan(Session& session, const RecordCodec& codec, std::span<const Key> expected,
                     size_t batch) {
  // The keys as the index orders them: bytes, which need not sort as their integers.
  std::vector<std::string> keys(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) codec.EncodeKey(expected[i], &keys[i]);
  if (!codec.integers()) std::sort(keys.begin(), keys.end());
  size_t seen = 0;  // keys of the iteration matched so far, in order
  ReadOptions ro;
  ro.readahead = batch;
  Iterator it = session.NewIterator(ro);
  std::string last;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const Slice key = it.key();
    if (seen > 0 && key <= Slice(last))
      return Status::Corruption("full scan: key " + codec.KeyText(key) + " after key " + codec.KeyText(last) +
                                " (out of order)");
    last = key;
    if (seen == keys.size() || key < Slice(keys[seen]))
      return Status::Corruption("full scan: unexpected key " + codec.KeyText(key) +
                                " (never loaded or inserted, or returned twice)");
    if (key > Slice(keys[seen]))
      return Status::Corruption("full scan: key " + codec.KeyText(keys[seen]) +
                                " is missing (next key returned: " + codec.KeyText(key) + ")");
    if (Status s = codec.Check(key, it.value()); !s.ok()) return Status::Corruption("full scan: " + s.message());
    ++seen;
  }
  if (!it.status().ok())
    return Status::Corruption("full scan failed after " + std::to_string(seen) + " keys: " + it.status().ToString());
  if (seen != keys.size())
    return Status::Corruption("full scan returned " + std::to_string(seen) + " keys, expected " +
                              std::to_string(keys.size()) + "; first missing key " + codec.KeyText(keys[seen]));
  return Status::Ok();
}

}  // namespace dmindex::bench
