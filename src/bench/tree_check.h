// The check after every run: a full scan of the index must return exactly the keys the
// driver loaded and inserted, in ascending order, each with a value written to that key.
#pragma once

#include <span>

#include "bench/key_space.h"
#include "dmindex/index.h"

namespace dmindex::bench {

// `expected` is sorted. Scans in batches of `batch` pairs until a scan comes back empty.
// OK, or Corruption describing the first disagreement.
Status CheckFullScan(Session& session, std::span<const Key> expected, size_t batch = 1000);

}  // namespace dmindex::bench
