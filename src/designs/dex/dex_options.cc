#include "designs/dex/dex_options.h"

#include <algorithm>
#include <sstream>

#include "common/knobs.h"
#include "tree/tree_knobs.h"
#include "designs/dex/partition_store.h"

namespace dmindex::designs::dex {
namespace {

// Boundaries as public keys: integers in the u64 format, the keys' bytes in the bytes format;
// ascending and each a key of the index.
Status ParseBoundaries(const IndexOptions& index, const std::string& knob, const std::string& v,
                       std::vector<std::string>* out) {
  std::stringstream in(v);
  std::string part;
  out->clear();
  while (std::getline(in, part, ',')) {
    std::string key = part;
    if (index.key_format == KeyFormat::kU64) {
      uint64_t k = 0;
      DMX_RETURN_IF_ERROR(KnobCount(knob, part, u64::kMinKey, u64::kMaxKey, &k));
      key = u64::Encode(k);
    } else if (part.empty() || part.size() > index.max_key_bytes) {
      return BadKnob(knob, v, "keys of 1 to " + std::to_string(index.max_key_bytes) + " bytes separated by commas");
    }
    if (!out->empty() && key <= out->back())
      return BadKnob(knob, v, "ascending keys separated by commas");
    out->push_back(std::move(key));
  }
  return Status::Ok();
}

using Table = KnobTable<DexOptions>;

Table::Row BoundariesKnob() {
  return Table::Custom(
      {"boundaries", KnobKind::kText, 0, 0, {}, "", "k1,k2,...",
       "partition boundaries: integers (u64 format) or the keys' bytes without commas (bytes format)"},
      [](const KnobValue& v, DexOptions& o) {
        IndexOptions index;
        if (v.index != nullptr) index = *v.index;
        index.key_format = o.key_format;
        return ParseBoundaries(index, std::string(v.name), std::string(v.text), &o.boundaries);
      },
      [](const DexOptions& o) {
        return o.boundaries.empty() ? std::string("equal widths") : std::to_string(o.boundaries.size()) + " keys";
      });
}

// A count whose field holds a "not given" value shown as `unset` (partitions 0, first_node -1).
template <class T>
Table::Row Optional(std::string name, uint64_t min, uint64_t max, T DexOptions::*field, T unset_value, std::string unset,
                    std::string doc) {
  Table::Row row = Table::Count(std::move(name), min, max, field, std::move(doc));
  row.show = [field, unset_value, unset](const DexOptions& o) {
    return o.*field == unset_value ? unset : std::to_string(o.*field);
  };
  return row;
}

// log_kb: 0 (the default) sizes the ring to the compute node's cache (dex_durability.cc).
Table::Row LogKbKnob() {
  Table::Row row = Table::Count("log_kb", 4, uint64_t{1} << 20, &DexOptions::log_bytes,
                                "the redo log's ring per compute node, KiB (fixed when the log is made)", 10);
  row.show = [](const DexOptions& o) {
    return o.log_bytes == 0 ? std::string("cache_mb, at least 256 KiB") : std::to_string(o.log_bytes >> 10);
  };
  return row;
}

std::vector<Table::Row> DexRows() {
  std::vector<Table::Row> rows = {
      Table::Switch("partition", &DexOptions::partition,
                    "logical partitioning; off: every node is shared (remote locks, no cached leaves)"),
      Table::Switch("offload", &DexOptions::offload, "opportunistic offloading of subtree traversals"),
      Table::Switch("merge", &DexOptions::merge, "merge underfull owned nodes after deletes; off: lazy deletion"),
      Table::Real("admission", {0, 1}, &DexOptions::leaf_admission,
                  "P_A, the chance a missed leaf is admitted to the cache (policy=random; with lfu 0 is never, 1 always, and between the sketch decides)"),
      Table::Choice("policy", "lfu|random",
           "lfu: a missed leaf is admitted when its sampled access frequency beats the eviction victim's, cooling takes the "
           "least frequent of eight samples; random: the paper's P_A draw and random-sampling cooling",
           [](DexOptions& o, std::string_view w) { o.frequency = w == "lfu"; },
           [](const DexOptions& o) { return std::string(o.frequency ? "lfu" : "random"); }),
      Table::Count("cache_mb", 0, uint64_t{1} << 30, &DexOptions::cache_bytes,
                   "cache per compute node, MiB (default IndexOptions::cache_bytes; floor: 64 nodes)", 20),
      Table::Count("offload_level", 0, 32, &DexOptions::offload_level,
                   "M: subtrees rooted at level M live on one memory server; misses at levels <= M are offloaded"),
      Table::Real("explore", {0, 1}, &DexOptions::explore, "q, the chance of the costlier choice (keeps estimates fresh)"),
      Table::Real("cost_factor", {0, 1e12}, &DexOptions::cost_factor, "c in (L+1) x (READ + local search) x c; 1e12 offloads every miss it may"),
      BoundariesKnob(),
      Table::Count("key_space", u64::kMinKey, u64::kMaxKey, &DexOptions::key_space,
                   "u64 format without boundaries: equal-width partitions of [1, key_space]"),
      Optional("partitions", 1, 1u << 20, &DexOptions::partitions, 0u, "as stored",
               "compute nodes in the whole cluster (new index: IndexOptions::compute_nodes)"),
      Optional("first_node", 0, 1u << 20, &DexOptions::first_node, int64_t{-1}, "first free",
               "this process hosts compute nodes first_node .. first_node + IndexOptions::compute_nodes - 1"),
      Table::Choice("durability", "log|none",
           "log: a write is acknowledged once its record is in the compute node's redo log; none: the paper's",
           [](DexOptions& o, std::string_view w) { o.durable = w == "log"; },
           [](const DexOptions& o) { return std::string(o.durable ? "log" : "none"); }),
      LogKbKnob(),
      Table::Count("writeback_ms", 0, uint64_t{1} << 32, &DexOptions::writeback_ms,
                   "a background thread writes dirty pages back this often; 0: never"),
      Table::Count("lease_ms", 10, 40'950, &DexOptions::lease_ms,
                   "this process's lease; an opener takes over compute nodes whose host went lease_ms + 1/4 unrenewed"),
  };
  // The core's knobs act on the shared (remote) nodes; DEX's own cache_mb and lease_ms replace
  // the core's.
  for (auto& row : tree::TreeKnobs().Lifted(&DexOptions::tree, {"cache_mb", "lease_ms"})) rows.push_back(std::move(row));
  return rows;
}

const Table& DexKnobs() {
  static const Table table(DexRows());
  return table;
}

// Shared nodes go through the core's remote protocol: its own internal-node cache is off
// (DEX caches), leaves stay sorted (DEX rewrites them whole), Sherman's lock techniques on.
tree::TreeOptions CoreDefaults() {
  tree::TreeOptions defaults;
  defaults.cache_bytes = 0;
  defaults.hocl = true;
  defaults.combine = true;
  defaults.two_level = false;
  return defaults;
}

}  // namespace

Result<DexOptions> ResolveDexOptions(const IndexOptions& index) {
  DexOptions o;
  o.cache_bytes = index.cache_bytes;
  o.key_format = index.key_format;
  o.compute_nodes = index.compute_nodes;
  IndexOptions core = index;  // the core's checks of the index options; knobs come below
  core.knobs.clear();
  auto t = tree::ResolveTreeOptions(core, CoreDefaults());
  if (!t.ok()) return t.status();
  o.tree = *t;
  DMX_RETURN_IF_ERROR(DexKnobs().ApplyAll(index.knobs, &index, &o));
  if (o.partitions > PartitionStore::kMaxParts || o.compute_nodes == 0 ||
      o.compute_nodes > PartitionStore::kMaxParts)
    return Status::InvalidArgument("dex: compute nodes (knob partitions, IndexOptions::compute_nodes) "
                                   "must be in [1, " + std::to_string(PartitionStore::kMaxParts) + "]");
  const uint64_t parts = o.partitions != 0 ? o.partitions : o.compute_nodes;
  if (o.partitions != 0 && std::max<int64_t>(o.first_node, 0) + o.compute_nodes > o.partitions)
    return Status::InvalidArgument(
        "dex: this process would host compute nodes " + std::to_string(std::max<int64_t>(o.first_node, 0)) +
        ".." + std::to_string(std::max<int64_t>(o.first_node, 0) + o.compute_nodes - 1) +
        " (knob first_node, IndexOptions::compute_nodes) of " + std::to_string(o.partitions) +
        " (knob partitions)");
  if (!o.boundaries.empty() && o.boundaries.size() + 1 != parts)
    return Status::InvalidArgument("knob boundaries: " + std::to_string(parts) +
                                   " compute nodes need " + std::to_string(parts - 1) + " boundaries");
  if (o.tree.two_level)
    return Status::InvalidArgument("dex: knobs two_level and the core's cache do not apply");
  // Subtrees rooted at level M sit on one memory server, so offloads stay local (§3).
  o.tree.colocate_level = static_cast<int>(o.offload_level);
  o.tree.unlocked_writers = true;  // owned nodes are written back from the cache, unlocked
  return o;
}

std::vector<KnobDoc> DexKnobDocs() {
  DexOptions defaults;
  defaults.tree = CoreDefaults();
  return DexKnobs().Describe(defaults);
}

std::vector<std::string> InitialBoundaries(const DexOptions& o, uint32_t parts) {
  if (!o.boundaries.empty()) return o.boundaries;
  std::vector<std::string> b;
  if (o.key_format == KeyFormat::kU64) {
    const uint64_t width = std::max<uint64_t>(1, o.key_space / parts);
    uint64_t last = 0;
    for (uint32_t i = 1; i < parts; ++i) {
      last = std::max(std::min(u64::kMaxKey, u64::kMinKey + width * i), last + 1);
      b.push_back(u64::Encode(std::min(last, u64::kMaxKey)));
    }
  } else {
    for (uint32_t i = 1; i < parts; ++i) b.push_back(std::string(1, static_cast<char>(256 * i / parts)));
  }
  return b;
}

}  // namespace dmindex::designs::dex
