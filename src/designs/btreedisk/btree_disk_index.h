// The `btree-disk` design (docs/INDEXY.md): a B+-tree on disk paged through the buffer
// manager of src/cache - the paper's B+-B+ system, its stand-in for LeanStore. It lives in the
// opening process (pages in a file of a fresh directory, removed on Close unless y_keep) and
// issues no verbs.
//
// Knobs: limit_mb (real > 0; default IndexOptions::cache_bytes) the buffer pool, allocated up
// front; page_kb (default: the larger of IndexOptions::node_bytes and 4 KiB) the page size;
// y_dir, y_keep as the cold stores'.
#pragma once

#include <memory>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeBtreeDiskIndex(fabric::Fabric& fabric, const IndexOptions& options);
// Its knobs with their defaults (`dmindex knobs`, docs/INDEXY.md).
std::vector<KnobDoc> BtreeDiskKnobDocs();

}  // namespace dmindex::designs
