#include "designs/registry.h"

#include <algorithm>
#include <functional>

#include "designs/absl/absl_index.h"
#include "designs/btreedisk/btree_disk_index.h"
#include "designs/dex/dex_index.h"
#include "designs/dex/dex_options.h"
#include "designs/dex/offload.h"
#include "designs/indexy/indexy_index.h"
#include "designs/indexy/indexy_options.h"
#include "designs/kvstore/store_index.h"
#include "designs/local/local_index.h"
#include "designs/naive/naive.h"
#include "designs/rftree/rftree_index.h"
#include "designs/rftree/rftree_options.h"
#include "designs/sherman/sherman.h"
#include "designs/xstore/server.h"
#include "designs/xstore/xstore_index.h"
#include "designs/xstore/xstore_options.h"
#include "tree/slotted_layout.h"
#include "tree/tree_knobs.h"

namespace dmindex::designs {
namespace {

using Factory = std::function<Result<std::unique_ptr<Index>>(fabric::Fabric&, const IndexOptions&)>;

// Where a design keeps an index, which decides what IndexOptions::name, create_if_missing and
// directory mean for it (options.h).
enum class Home {
  kPool,       // the cluster's pool: found by name in the catalog; no directory
  kProcess,    // this process, for the Index object's life: nothing to reopen; no directory
  kDirectory,  // <directory>/<name> when a directory is given, else a temporary folder
};

struct Entry {
  const char* name;
  Factory make;
  Home home = Home::kPool;
  const char* not_shared_because = nullptr;  // null: SharedAcrossProcesses (registry.h)
  // The design's memory-side RPC handlers, registered on a memory node before it serves.
  Status (*register_memory_side)(fabric::MemoryNode&) = nullptr;
  bool memory_limit = false;  // takes the knob limit_mb (MemoryLimitedDesigns)
  const char* baseline = nullptr;  // non-null: a yardstick, not a design; what it is (DesignNote)
  // Its knob table's rows with their defaults (DesignKnobs); null: it takes no knobs.
  std::vector<KnobDoc> (*knobs)() = nullptr;
};

std::vector<KnobDoc> NaiveKnobDocs() { return tree::TreeKnobs().Describe(tree::TreeOptions{}); }
std::vector<KnobDoc> ShermanKnobDocs() { return tree::TreeKnobs().Describe(ShermanDefaults()); }

// One line per design, in the order benchmarks list them.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {.name = "local", .make = MakeLocalIndex, .home = Home::kProcess,
       .not_shared_because = "the index lives in the memory of the process that opens it"},
      {.name = "absl", .make = MakeAbslIndex, .home = Home::kProcess,
       .not_shared_because = "the map lives in the memory of the process that opens it",
       .baseline = "a baseline, not a design: absl::btree_map behind one shared mutex (docs/LOCAL.md)"},
      {.name = "naive", .make = MakeNaive, .knobs = NaiveKnobDocs},
      {.name = "sherman", .make = MakeSherman, .knobs = ShermanKnobDocs},
      {.name = "rftree", .make = MakeRfTree, .knobs = rftree::RfTreeKnobDocs},
      // processes host disjoint compute nodes; keys route to theirs
      {.name = "dex", .make = MakeDex, .register_memory_side = dex::RegisterOffloadHandler, .knobs = dex::DexKnobDocs},
      {.name = "xstore", .make = xstore::MakeXStore, .register_memory_side = xstore::RegisterXStoreHandlers,
       .knobs = xstore::XStoreKnobDocs},
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

Result<std::vector<KnobDoc>> DesignKnobs(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name) return e.knobs == nullptr ? std::vector<KnobDoc>{} : e.knobs();
  return Status::InvalidArgument("unknown design '" + std::string(design) + "'");
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

namespace {

// What name, create_if_missing and directory mean for a design living at `home`, or why it
// cannot honour them.
Status CheckHome(const Entry& e, const IndexOptions& o) {
  const std::string design = e.name;
  if (!o.directory.empty() && e.home != Home::kDirectory)
    return Status::InvalidArgument(
        design + " does not keep an index in a directory (IndexOptions::directory '" + o.directory + "'): " +
        (e.home == Home::kPool ? "it lives in the cluster's memory pool, found there by name"
                               : std::string(e.not_shared_because) + ", for as long as its Index object") +
        "; rocksdb and lmdb persist under a directory");
  if (!o.create_if_missing && e.home == Home::kProcess)
    return Status::InvalidArgument(design + " cannot open an existing index (create_if_missing = false): " +
                                   e.not_shared_because + ", and none outlives its Index object");
  if (!o.create_if_missing && e.home == Home::kDirectory && o.directory.empty())
    return Status::InvalidArgument(design + " without IndexOptions::directory keeps its index in a temporary "
                                            "folder removed at Close, so there is none to open with "
                                            "create_if_missing = false: name a directory");
  return Status::Ok();
}

}  // namespace

uint32_t NodeBytesFor(const IndexOptions& options) {
  if (options.node_bytes != kAutoNodeBytes) return options.node_bytes;
  constexpr uint32_t kDefault = 1024;
  if (options.key_format == KeyFormat::kU64) return kDefault;
  // The slotted trees' rule with a node trailer (rftree's lock word), the largest of the
  // designs' minimums, so one size fits whichever design opens the index.
  const uint32_t need = tree::SlottedLayout::MinNodeBytes(
      std::clamp<uint32_t>(options.max_key_bytes, 1, kMaxKeyBytes),
      std::min<uint32_t>(options.inline_value_bytes, tree::SlottedLayout::kMaxInlineValue), /*trailer=*/true);
  return std::min(kMaxNodeBytes, std::max(kDefault, need));
}

Result<std::unique_ptr<Index>> MakeIndex(std::string_view design, fabric::Fabric& fabric,
                                         const IndexOptions& options) {
  IndexOptions named = options;
  named.design = std::string(design);
  named.node_bytes = NodeBytesFor(options);
  for (const Entry& e : Table()) {
    if (design != e.name) continue;
    DMX_RETURN_IF_ERROR(CheckHome(e, named));
    return e.make(fabric, named);
  }
  std::string known;
  for (const Entry& e : Table()) known += std::string(known.empty() ? "" : ", ") + e.name;
  return Status::InvalidArgument("unknown design '" + std::string(design) + "' (known: " + known + ")");
}

bool IssuesVerbs(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name) return e.home == Home::kPool;
  return false;
}

Status RegisterMemoryNodeHandlers(fabric::MemoryNode& node) {
  for (const Entry& e : Table())
    if (e.register_memory_side != nullptr) DMX_RETURN_IF_ERROR(e.register_memory_side(node));
  return Status::Ok();
}

}  // namespace dmindex::designs
