#include "designs/xstore/xstore_options.h"

#include "common/knobs.h"
#include "tree/node_layout.h"
#include "tree/tree_knobs.h"

namespace dmindex::designs::xstore {

uint32_t U64LeafBytes(uint32_t slots) {
  using L = tree::FixedLayout<tree::U64BytesKV>;
  const uint32_t bytes = L::kHeaderBytes + slots * L::kSlotBytes;
  return (bytes + 63) / 64 * 64;
}

namespace {

using Table = KnobTable<XStoreOptions>;

// A count that also takes `off` for 0 (expand_at, speculate).
Table::Row OffOrCount(std::string name, uint64_t min, uint64_t max, uint32_t XStoreOptions::*field, std::string doc) {
  Table::Row row = Table::Count(std::move(name), min, max, field, std::move(doc));
  row.spec.words = "off";
  row.set = [field](const KnobValue& v, XStoreOptions& o) {
    o.*field = v.word.empty() ? static_cast<uint32_t>(v.count) : 0;
    return Status::Ok();
  };
  row.show = [field](const XStoreOptions& o) { return o.*field == 0 ? std::string("off") : std::to_string(o.*field); };
  return row;
}

std::vector<Table::Row> XStoreRows() {
  Table::Row partitions = Table::Count("partitions", 1, 65535, &XStoreOptions::partitions,
                                       "key-range partitions, partition p on memory node p (at most the memory nodes)");
  partitions.show = [](const XStoreOptions& o) {
    return o.partitions == 0 ? std::string("memory nodes") : std::to_string(o.partitions);
  };
  std::vector<Table::Row> rows = {
      Table::Count("leaf_slots", 4, 1024, &XStoreOptions::leaf_slots,
                   "u64 format: entries per leaf (64 + 24 x leaf_slots bytes); bytes: node_bytes sizes leaves"),
      std::move(partitions),
      Table::Count("keys_per_model", 1, 1u << 20, &XStoreOptions::keys_per_model, "keys per sub-model when a model set is trained"),
      Table::Count("top_segments", 1, 4096, &XStoreOptions::top_segments,
                   "pieces of the top model's piecewise-linear CDF (1: one line, closest to the paper's)"),
      OffOrCount("expand_at", 1, 1u << 24, &XStoreOptions::expand_at,
                 "train a model set with twice the sub-models when keys per sub-model exceed this"),
      Table::Switch("retrain", &XStoreOptions::retrain, "a leaf split queues retraining of its sub-models on the server"),
      Table::Count("train_threads", 1, 16, &XStoreOptions::train_threads, "background training threads per partition"),
      OffOrCount("speculate", 0, 64, &XStoreOptions::speculate,
                 "sibling links a lookup follows from a leaf split since training before asking the server"),
      Table::Switch("slot_read", &XStoreOptions::slot_read,
                    "u64 format: a lookup reads the leaf header and the predicted slots only; off: whole leaves"),
      Table::Count("max_read_leaves", 1, 64, &XStoreOptions::max_read_leaves,
                   "a lookup whose prediction spans more leaves asks the server instead"),
      Table::Switch("prefetch", &XStoreOptions::prefetch,
                    "fetch a partition's whole model set on first use; off: each sub-model when needed"),
      Table::Custom({"lease_ms", KnobKind::kCount, 0, 40'950, {}, "", "",
                     "the lease a handle registers as a holder of the index under (a drop is refused while it "
                     "renews); 0: none, a drop does not see the handle"},
                    [](const KnobValue& v, XStoreOptions& o) {
                      o.tree.lease = std::chrono::milliseconds(v.count);
                      return Status::Ok();
                    },
                    [](const XStoreOptions& o) { return std::to_string(o.tree.lease.count()); }),
  };
  // XStore's clients cache models, not nodes, and its writes run on the memory server: of the
  // core's knobs only validation applies.
  for (auto& row : tree::TreeKnobs().Lifted(&XStoreOptions::tree, {"cache_mb", "hocl", "handover", "combine", "two_level", "lease_ms"}))
    rows.push_back(std::move(row));
  return rows;
}

const Table& XStoreKnobs() {
  static const Table table(XStoreRows(),
                           "the tree core's cache and lock knobs do not apply: XStore's clients cache models, and its "
                           "writes run on the memory server");
  return table;
}

tree::TreeOptions CoreDefaults() {
  tree::TreeOptions defaults;
  defaults.combine = true;      // lock + READ and WRITE + unlock in one batch (local anyway)
  defaults.two_level = false;   // sorted leaves, always written whole by the server
  return defaults;
}

}  // namespace

Result<XStoreOptions> ResolveXStoreOptions(const IndexOptions& index, uint16_t memory_nodes) {
  XStoreOptions o;
  o.format = index.key_format;
  IndexOptions core = index;  // the core's checks of the index options; knobs come below
  core.knobs.clear();
  auto resolved = tree::ResolveTreeOptions(core, CoreDefaults());
  if (!resolved.ok()) return resolved.status();
  o.tree = *resolved;
  DMX_RETURN_IF_ERROR(XStoreKnobs().ApplyAll(index.knobs, &index, &o));
  if (o.partitions > memory_nodes)
    return BadKnob("partitions", index.knobs.at("partitions"),
                   "a whole number in [1, " + std::to_string(memory_nodes) + "]");
  if (o.format == KeyFormat::kBytes && index.knobs.count("leaf_slots") != 0)
    return Status::InvalidArgument("knob leaf_slots: the bytes format's leaves are slotted nodes of "
                                   "IndexOptions::node_bytes (--node-size); leaf_slots sizes u64 leaves");
  if (o.format == KeyFormat::kBytes && o.slot_read)
    return Status::InvalidArgument("knob slot_read: u64 format only (a slotted leaf keeps each entry's "
                                   "record apart from its slot, a second READ)");
  if (o.format == KeyFormat::kU64) o.tree.node_bytes = U64LeafBytes(o.leaf_slots);
  o.tree.cache_bytes = 0;  // no internal-node cache: clients never read internal nodes
  if (o.partitions == 0) o.partitions = memory_nodes;
  return o;
}

std::vector<KnobDoc> XStoreKnobDocs() {
  XStoreOptions defaults;
  defaults.tree = CoreDefaults();
  return XStoreKnobs().Describe(defaults);
}

}  // namespace dmindex::designs::xstore
