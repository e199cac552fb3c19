// The `absl` baseline: absl::btree_map (Abseil, Debian's libabsl-dev) behind one shared mutex,
// in this process's memory. Not a design of the literature: the yardstick for `local`'s CPU per
// operation (docs/LOCAL.md) - what a well-kept single-threaded in-memory B-tree costs - shown
// in every default benchmark run. Lookups and scans share the mutex; writes take it alone, so
// it does not scale with threads (local's optimistic lock coupling does: docs/LOCAL.md).
//
// u64 format: btree_map<uint64_t, V>; bytes format: btree_map<std::string, V>; V holds an
// 8-byte value in place and any other in a std::string of its own. Stats().cache_bytes: the
// map's nodes plus the heap bytes of keys and values, exactly as requested from the allocator
// (the heap's own rounding not counted, as for `local`).
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

// Takes the fabric only for the uniform factory signature; never issues a verb on it. Every
// call creates a fresh, empty map; all compute nodes share it. Takes no knobs; node_bytes is
// ignored (abseil sizes its nodes itself: 256 bytes).
Result<std::unique_ptr<Index>> MakeAbslIndex(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
