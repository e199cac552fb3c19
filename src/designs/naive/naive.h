// The naive remote B+-tree (DEX §2.2, like FG): the same B-link tree as Sherman with every
// technique off: no compute-side cache (each level is a READ; only the root pointer is
// remembered), plain remote CAS locks, one round trip per verb, whole-node write-back of
// sorted leaves. The baseline the techniques are measured against.
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeNaive(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
