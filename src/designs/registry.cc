#include "designs/registry.h"

#include <algorithm>
#include <iterator>

#include "designs/dex/dex_index.h"
#include "designs/dex/dex_options.h"
#include "designs/dex/offload.h"
#include "designs/local/local_index.h"
#include "designs/naive/naive.h"
#include "designs/registry_entry.h"
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

std::vector<KnobDoc> NaiveKnobDocs() { return tree::TreeKnobs().Describe(tree::TreeOptions{}); }
std::vector<KnobDoc> ShermanKnobDocs() { return tree::TreeKnobs().Describe(ShermanDefaults()); }

// The designs of dmindex::core: those living in the cluster's memory (and `local`), which
// need nothing beyond the C++ runtime. One line per design, in the order benchmarks list them.
std::vector<Entry> CoreTable() {
  return {
      {.name = "local", .make = MakeLocalIndex, .home = Home::kProcess,
       .not_shared_because = "the index lives in the memory of the process that opens it"},
      {.name = "naive", .make = MakeNaive, .knobs = NaiveKnobDocs},
      {.name = "sherman", .make = MakeSherman, .knobs = ShermanKnobDocs},
      {.name = "rftree", .make = MakeRfTree, .knobs = rftree::RfTreeKnobDocs},
      // processes host disjoint compute nodes; keys route to theirs
      {.name = "dex", .make = MakeDex, .register_memory_side = dex::RegisterOffloadHandler, .knobs = dex::DexKnobDocs},
      {.name = "xstore", .make = xstore::MakeXStore, .register_memory_side = xstore::RegisterXStoreHandlers,
       .knobs = xstore::XStoreKnobDocs},
  };
}

// The designs of dmindex::baselines (src/designs/baselines/), named here so that a program
// linking dmindex::core alone is told which target brings one, not that it does not exist.
constexpr std::string_view kBaselineDesigns[] = {"absl", "indexy", "rocksdb", "lmdb", "btree-disk"};

// Every design linked into this program: the core's, then dmindex::baselines' if linked.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = [] {
    std::vector<Entry> all = CoreTable();
    if (dmindex_baseline_designs != nullptr) {
      const std::vector<Entry>& baselines = *dmindex_baseline_designs();
      all.insert(all.end(), baselines.begin(), baselines.end());
    }
    return all;
  }();
  return table;
}

const Entry* Find(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name) return &e;
  return nullptr;
}

// Why `design` is not in Table(): a baseline of a target this program does not link
// (NotSupported), or no design at all (InvalidArgument, listing the known ones).
Status NotInTable(std::string_view design) {
  const std::string name(design);
  if (std::find(std::begin(kBaselineDesigns), std::end(kBaselineDesigns), design) != std::end(kBaselineDesigns))
    return Status::NotSupported("design " + name + " is not linked into this program; link dmindex::baselines");
  std::string known;
  for (const Entry& e : Table()) known += std::string(known.empty() ? "" : ", ") + e.name;
  return Status::InvalidArgument("unknown design '" + name + "' (known: " + known + ")");
}

}  // namespace

std::vector<std::string> DesignNames() {
  std::vector<std::string> names;
  for (const Entry& e : Table()) names.emplace_back(e.name);
  return names;
}

std::vector<std::string> BaselineDesigns() {
  return std::vector<std::string>(std::begin(kBaselineDesigns), std::end(kBaselineDesigns));
}

std::vector<std::string> MemoryLimitedDesigns() {
  std::vector<std::string> names;
  for (const Entry& e : Table())
    if (e.memory_limit) names.emplace_back(e.name);
  return names;
}

Result<std::vector<KnobDoc>> DesignKnobs(std::string_view design) {
  const Entry* e = Find(design);
  if (e == nullptr) return NotInTable(design);
  return e->knobs == nullptr ? std::vector<KnobDoc>{} : e->knobs();
}

std::string DesignNote(std::string_view design) {
  const Entry* e = Find(design);
  return e != nullptr && e->baseline != nullptr ? e->baseline : "";
}

Status SharedAcrossProcesses(std::string_view design) {
  const Entry* e = Find(design);
  if (e == nullptr) return NotInTable(design);
  return e->not_shared_because == nullptr ? Status::Ok()
                                          : Status::NotSupported("design " + std::string(design) +
                                                                 " cannot be shared by processes: " +
                                                                 e->not_shared_because);
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
  const Entry* e = Find(design);
  if (e == nullptr) return NotInTable(design);
  DMX_RETURN_IF_ERROR(CheckHome(*e, named));
  return e->make(fabric, named);
}

bool IssuesVerbs(std::string_view design) {
  const Entry* e = Find(design);
  return e != nullptr && e->home == Home::kPool;
}

Status RegisterMemoryNodeHandlers(fabric::MemoryNode& node) {
  for (const Entry& e : Table())
    if (e.register_memory_side != nullptr) DMX_RETURN_IF_ERROR(e.register_memory_side(node));
  return Status::Ok();
}

}  // namespace dmindex::designs
