// The registry's second table (registry_entry.h): the designs that need a disk store or a
// library beyond the C++ runtime - IndeXY and the baselines - which a program gets by linking
// dmindex::baselines (docs/C_API.md, "What a program links").
#include "designs/absl/absl_index.h"
#include "designs/btreedisk/btree_disk_index.h"
#include "designs/indexy/indexy_index.h"
#include "designs/indexy/indexy_options.h"
#include "designs/kvstore/store_index.h"
#include "designs/registry_entry.h"

namespace dmindex::designs {
namespace {

const std::vector<Entry>& BaselineTable() {
  // In the order benchmarks list them, after the in-memory designs (registry.cc). The names
  // are also registry.cc's kBaselineDesigns (RegistrySplit.BaselinesAreTheNamesCoreKnows).
  static const std::vector<Entry> table = {
      {.name = "absl", .make = MakeAbslIndex, .home = Home::kProcess,
       .not_shared_because = "the map lives in the memory of the process that opens it",
       .baseline = "a baseline, not a design: absl::btree_map behind one shared mutex (docs/LOCAL.md)"},
      {.name = "indexy", .make = MakeIndexyIndex, .home = Home::kProcess,
       .not_shared_because = "X lives in the memory of the process that opens it, Y in a directory of its own",
       .memory_limit = true, .knobs = indexy::IndexyKnobDocs},
      {.name = "rocksdb", .make = MakeRocksDbIndex, .home = Home::kDirectory,
       .not_shared_because = "the store lives in a directory of the process that opens it", .memory_limit = true,
       .knobs = StoreKnobDocs},
      {.name = "lmdb", .make = MakeLmdbIndex, .home = Home::kDirectory,
       .not_shared_because = "the store lives in a directory of the process that opens it", .memory_limit = true,
       .knobs = StoreKnobDocs},
      {.name = "btree-disk", .make = MakeBtreeDiskIndex, .home = Home::kProcess,
       .not_shared_because = "the tree lives in a file and a buffer pool of the process that opens it",
       .memory_limit = true, .knobs = BtreeDiskKnobDocs},
  };
  return table;
}

}  // namespace
}  // namespace dmindex::designs

extern "C" const std::vector<dmindex::designs::Entry>* dmindex_baseline_designs() {
  return &dmindex::designs::BaselineTable();
}
