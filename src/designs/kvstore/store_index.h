// The store baselines of IndeXY's experiments (docs/INDEXY.md): `rocksdb` and `lmdb`, a cold
// store (tiering/) alone as the whole index - the paper's "RocksDB" system of Table I, and LMDB
// as a B+-tree on disk. Like `local` and `indexy` they live in the opening process and issue no
// verbs: in <IndexOptions::directory>/<name>, reopened by name (store_home.h), or without a
// directory in a fresh one of their own, removed on Close unless y_keep.
//
// Knobs: limit_mb (real > 0) splits a memory budget over the store's own memory - RocksDB: a
// quarter to the memtables (two of limit/8), half to a row cache (the paper's RocksDB ran with
// its row cache on), a quarter to the block cache; LMDB has no cache of its own (it reads
// through the OS page cache, which the knob cannot bound: docs/INDEXY.md) - and the y_* knobs
// of tiering/cold_store_options.h, which override the split.
#pragma once

#include <memory>
#include <string_view>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeRocksDbIndex(fabric::Fabric& fabric, const IndexOptions& options);
Result<std::unique_ptr<Index>> MakeLmdbIndex(fabric::Fabric& fabric, const IndexOptions& options);
// The knobs of both, with their defaults (`dmindex knobs`, docs/INDEXY.md).
std::vector<KnobDoc> StoreKnobDocs();

}  // namespace dmindex::designs
