// The `indexy` design (docs/INDEXY.md): one index over an in-memory X (art or the local
// B+-tree) and an on-disk Y (RocksDB, LMDB, or an in-memory stand-in), with X's memory held
// to a limit by pre-cleaning and release in a background thread. Like `local`, it lives in
// the process that opens it and issues no verbs: every call creates a fresh, empty index (X
// is volatile and Y gets a new directory, removed on Close unless y_keep).
#pragma once

#include <memory>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeIndexyIndex(fabric::Fabric& fabric, const IndexOptions& options);

}  // namespace dmindex::designs
