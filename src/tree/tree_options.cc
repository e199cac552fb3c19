#include "tree/tree_options.h"

#include "tree/tree_knobs.h"
#include "tree/value_block.h"

namespace dmindex::tree {
namespace {

using Table = KnobTable<TreeOptions>;

Table::Row CacheKnob() {
  return Table::Custom(
      {"cache_mb", KnobKind::kCount, 0, uint64_t{1} << 30, {}, "on|off", "",
       "compute-side cache of internal nodes, MiB; on: IndexOptions::cache_bytes"},
      [](const KnobValue& v, TreeOptions& o) {
        if (v.word.empty()) o.cache_bytes = v.count << 20;
        else if (v.word == "off") o.cache_bytes = 0;
        else o.cache_bytes = v.index != nullptr ? v.index->cache_bytes : 1;  // 1: on, sized later
        return Status::Ok();
      },
      [](const TreeOptions& o) {
        return o.cache_bytes == 0 ? std::string("off") : o.cache_bytes == 1 ? std::string("on") : std::to_string(o.cache_bytes >> 20);
      });
}

Table::Row LeaseKnob() {
  return Table::Custom(
      {"lease_ms", KnobKind::kCount, 0, 40'950, {}, "", "",
       "the lease locks are held under: a holder silent this long + 1/4 is taken over; 0: no lease"},
      [](const KnobValue& v, TreeOptions& o) {
        o.lease = std::chrono::milliseconds(v.count);
        return Status::Ok();
      },
      [](const TreeOptions& o) { return std::to_string(o.lease.count()); });
}

}  // namespace

const KnobTable<TreeOptions>& TreeKnobs() {
  static const Table table({
      CacheKnob(),
      Table::Switch("hocl", &TreeOptions::hocl,
                    "hierarchical on-chip lock: a local lock table with hand-over before the global lock words"),
      Table::Count("handover", 0, 1u << 20, &TreeOptions::handover_max,
                   "hocl: the most consecutive local hand-overs of one lock (fairness bound)"),
      Table::Switch("combine", &TreeOptions::combine,
                    "command combination: lock CAS + READ, and write-back + unlock, each one in-order batch"),
      Table::Switch("two_level", &TreeOptions::two_level, "unsorted leaves with entry-level write-back"),
      LeaseKnob(),
      Table::Switch("validation", &TreeOptions::validate,
                    "off accepts node images unchecked (only to show the checks are needed)"),
  });
  return table;
}

Result<TreeOptions> ResolveTreeOptions(const IndexOptions& index, TreeOptions defaults) {
  TreeOptions o = defaults;
  o.node_bytes = index.node_bytes;
  if (!(index.bulk_fill > 0.0 && index.bulk_fill <= 1.0))
    return Status::InvalidArgument("bulk_fill must be in (0, 1], got " +
                                   std::to_string(index.bulk_fill));
  o.bulk_fill = index.bulk_fill;
  if (index.compute_nodes == 0) return Status::InvalidArgument("compute_nodes must be >= 1");
  o.compute_nodes = index.compute_nodes;
  o.max_key_bytes = index.max_key_bytes;
  o.inline_value_bytes = index.inline_value_bytes;
  if (index.max_value_bytes > value_block::MaxValueBytes())
    return Status::InvalidArgument("max_value_bytes " + std::to_string(index.max_value_bytes) +
                                   " is larger than a value block holds (" +
                                   std::to_string(value_block::MaxValueBytes()) + ")");
  o.max_value_bytes = index.max_value_bytes;
  // A design whose default has the cache on sizes it from the index options.
  if (o.cache_bytes != 0) o.cache_bytes = index.cache_bytes;
  DMX_RETURN_IF_ERROR(TreeKnobs().ApplyAll(index.knobs, &index, &o));
  return o;
}

}  // namespace dmindex::tree
