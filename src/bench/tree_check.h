// The check after every run: a full iteration over the index must return exactly the keys the
// driver loaded and inserted, in ascending order, each with a value written to that key.
#pragma once

#include <span>

#include "bench/key_space.h"
#include "bench/record_shape.h"
#include "dmindex/index.h"

namespace dmindex::bench {

// `expected`: the integer keys present, as `codec` encodes them into the index. Iterates in
// batches of `batch` pairs. OK, or Corruption describing the first disagreement.
Status CheckFullScan(Session& session, const RecordCodec& codec, std::span<const Key> expected,
                     size_t batch = 1000);

}  // namespace dmindex::bench
