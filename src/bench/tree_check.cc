#include "bench/tree_check.h"

#include <optional>
#include <string>
#include <vector>

#include "bench/key_space.h"

namespace dmindex::bench {

Status CheckFullScan(Session& session, std::span<const Key> expected, size_t batch) {
  size_t seen = 0;  // keys of the iteration matched so far, in order
  ReadOptions ro;
  ro.readahead = batch;
  Iterator it = session.NewIterator(ro);
  std::optional<Key> last;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    if (it.key().size() != 8 || it.value().size() != 8)
      return Status::Corruption("full scan: a pair of " + std::to_string(it.key().size()) + "+" +
                                std::to_string(it.value().size()) + " bytes in a u64 index");
    const Key key = u64::Decode(it.key());
    const Value value = u64::Decode(it.value());
    if (last && key <= *last)
      return Status::Corruption("full scan: key " + std::to_string(key) + " after key " +
                                std::to_string(*last) + " (out of order)");
    last = key;
    if (seen == expected.size() || key < expected[seen])
      return Status::Corruption("full scan: unexpected key " + std::to_string(key) +
                                " (never loaded or inserted, or returned twice)");
    if (key > expected[seen])
      return Status::Corruption("full scan: key " + std::to_string(expected[seen]) +
                                " is missing (next key returned: " + std::to_string(key) + ")");
    if (!ValueMatchesKey(key, value))
      return Status::Corruption("full scan: key " + std::to_string(key) + " holds value " +
                                std::to_string(value) + ", never written to it");
    ++seen;
  }
  if (!it.status().ok())
    return Status::Corruption("full scan failed after " + std::to_string(seen) +
                              " keys: " + it.status().ToString());
  if (seen != expected.size())
    return Status::Corruption("full scan returned " + std::to_string(seen) + " keys, expected " +
                              std::to_string(expected.size()) + "; first missing key " +
                              std::to_string(expected[seen]));
  return Status::Ok();
}

}  // namespace dmindex::bench
