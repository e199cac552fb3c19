#include "designs/registry.h"

#include <functional>

#include "designs/absl/absl_index.h"
#include "designs/btreedisk/btree_disk_index.h"
#include "designs/dex/dex_index.h"
#include "designs/dex/offload.h"
#include "designs/indexy/indexy_index.h"
#include "designs/kvstore/store_index.h"
#include "designs/local/local_index.h"
#include "designs/naive/naive.h"
#include "designs/rftree/rftree_index.h"
#include "designs/sherman/sherman.h"
#include "designs/xstore/server.h"
#include "designs/xstore/xstore_index.h"

namespace dmindex::designs {
namespace {

using Factory = std::function<Result<std::unique_ptr<Index>>(fabric::Fabric&, const IndexOptions&)>;

struct Entry {
  const char* name;
  Factory make;
  const char* not_shared_because = nullptr;  // null: SharedAcrossProcesses (registry.h)
  // The design's memory-side RPC handlers, registered on a memory node before it serves.
  Status (*register_memory_side)(fabric::MemoryNode&) = nullptr;
  bool memory_limit = false;  // takes the knob limit_mb (MemoryLimitedDesigns)
  const char* baseline = nullptr;  // non-null: a yardstick, not a design; what it is (DesignNote)
};

// One line per design, in the order benchmarks list them.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {"local", MakeLocalIndex, "the index lives in the memory of the process that opens it"},
      {"absl", MakeAbslIndex, "the map lives in the memory of the process that opens it", nullptr, false,
       "a baseline, not a design: absl::btree_map behind one shared mutex (docs/LOCAL.md)"},
      {"naive", MakeNaive},
      {"sherman", MakeSherman},
      {"rftree", MakeRfTree},
      // processes host disjoint compute nodes; keys route to theirs
      {"dex", MakeDex, nullptr, dex::RegisterOffloadHandler},
      {"xstore", xstore::MakeXStore, nullptr, xstore::RegisterXStoreHandlers},
      {"indexy", MakeIndexyIndex, "X lives in the memory of the process that opens it, Y in a directory of its own",
       nullptr, true},
      {"rocksdb", MakeRocksDbIndex, "the store lives in a directory of the process that opens it", nullptr, true},
      {"lmdb", MakeLmdbIndex, "the store lives in a directory of the process that opens it", nullptr, true},
      {"btree-disk", MakeBtreeDiskIndex, "the tree lives in a file and a buffer pool of the process that opens it",
       nullptr, true},
  };
  return table;
}

}  // namespace

std::vector<std::string> DesignNames() {
  std::vector<std::string> names;
  for (const Entry& e : Table()) names.emplace_back(e.name);
  return names;
}

std::vector<std::string> MemoryLimitedDesigns() {
  std::vector<std::string> names;
  for (const Entry& e : Table())
    if (e.memory_limit) names.emplace_back(e.name);
  return names;
}

std::string DesignNote(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name && e.baseline != nullptr) return e.baseline;
  return "";
}

Status SharedAcrossProcesses(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name)
      return e.not_shared_because == nullptr
                 ? Status::Ok()
                 : Status::NotSupported("design " + std::string(design) +
                                        " cannot be shared by processes: " + e.not_shared_because);
  return Status::InvalidArgument("unknown design '" + std::string(design) + "'");
}

Result<std::unique_ptr<Index>> MakeIndex(std::string_view design, fabric::Fabric& fabric,
                                         const IndexOptions& options) {
  IndexOptions named = options;
  named.design = std::string(design);
  for (const Entry& e : Table())
    if (design == e.name) return e.make(fabric, named);
  std::string known;
  for (const Entry& e : Table()) known += std::string(known.empty() ? "" : ", ") + e.name;
  return Status::InvalidArgument("unknown design '" + std::string(design) + "' (known: " + known + ")");
}

Status RegisterMemoryNodeHandlers(fabric::MemoryNode& node) {
  for (const Entry& e : Table())
    if (e.register_memory_side != nullptr) DMX_RETURN_IF_ERROR(e.register_memory_side(node));
  return Status::Ok();
}

}  // namespace dmindex::designs
