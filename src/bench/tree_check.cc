#include "bench/tree_check.h"

#include <string>
#include <vector>

#include "bench/key_space.h"

namespace dmindex::bench {

Status CheckFullScan(Session& session, std::span<const Key> expected, size_t batch) {
  std::vector<KeyValue> out;
  size_t seen = 0;  // keys of the scan matched so far, in order
  Key start = kMinKey;
  for (;;) {
    Status s = session.Scan(start, batch, &out);
    if (!s.ok()) return Status::Corruption("full scan from " + std::to_string(start) + " failed: " + s.ToString());
    if (out.empty()) break;
    for (const KeyValue& kv : out) {
      if (kv.key < start)
        return Status::Corruption("full scan: key " + std::to_string(kv.key) + " returned by a scan "
                                  "starting at " + std::to_string(start) + " (out of order)");
      if (seen == expected.size() || kv.key < expected[seen])
        return Status::Corruption("full scan: unexpected key " + std::to_string(kv.key) +
                                  " (never loaded or inserted, or returned twice)");
      if (kv.key > expected[seen])
        return Status::Corruption("full scan: key " + std::to_string(expected[seen]) +
                                  " is missing (next key returned: " + std::to_string(kv.key) + ")");
      if (!ValueMatchesKey(kv.key, kv.value))
        return Status::Corruption("full scan: key " + std::to_string(kv.key) + " holds value " +
                                  std::to_string(kv.value) + ", never written to it");
      ++seen;
      start = kv.key + 1;
    }
    if (start > kMaxKey) break;
  }
  if (seen != expected.size())
    return Status::Corruption("full scan returned " + std::to_string(seen) + " keys, expected " +
                              std::to_string(expected.size()) + "; first missing key " +
                              std::to_string(expected[seen]));
  return Status::Ok();
}

}  // namespace dmindex::bench
