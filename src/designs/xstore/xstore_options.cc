#include "designs/xstore/xstore_options.h"

#include <sstream>

#include "common/knobs.h"
#include "tree/node_layout.h"

namespace dmindex::designs::xstore {

uint32_t U64LeafBytes(uint32_t slots) {
  using L = tree::FixedLayout<tree::U64BytesKV>;
  const uint32_t bytes = L::kHeaderBytes + slots * L::kSlotBytes;
  return (bytes + 63) / 64 * 64;
}

Result<XStoreOptions> ResolveXStoreOptions(const IndexOptions& index, uint16_t memory_nodes) {
  XStoreOptions o;
  o.format = index.key_format;
  IndexOptions core = index;  // the core sees only the knobs XStore passes on
  core.knobs.clear();
  bool slots_given = false;
  for (const auto& [knob, v] : index.knobs) {
    uint64_t n = 0;
    if (knob == "leaf_slots") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 4, 1024, &n));
      o.leaf_slots = static_cast<uint32_t>(n);
      slots_given = true;
    } else if (knob == "partitions") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, memory_nodes, &n));
      o.partitions = static_cast<uint32_t>(n);
    } else if (knob == "keys_per_model") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 1u << 20, &n));
      o.keys_per_model = static_cast<uint32_t>(n);
    } else if (knob == "top_segments") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 4096, &n));
      o.top_segments = static_cast<uint32_t>(n);
    } else if (knob == "expand_at") {
      if (v == "off") {
        o.expand_at = 0;
      } else {
        DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 1u << 24, &n));
        o.expand_at = static_cast<uint32_t>(n);
      }
    } else if (knob == "retrain") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.retrain));
    } else if (knob == "train_threads") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 16, &n));
      o.train_threads = static_cast<uint32_t>(n);
    } else if (knob == "speculate") {
      if (v == "off") {
        o.speculate = 0;
      } else {
        DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, 64, &n));
        o.speculate = static_cast<uint32_t>(n);
      }
    } else if (knob == "slot_read") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.slot_read));
    } else if (knob == "max_read_leaves") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 64, &n));
      o.max_read_leaves = static_cast<uint32_t>(n);
    } else if (knob == "prefetch") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.prefetch));
    } else if (knob == "validation") {
      core.knobs[knob] = v;
    } else {
      return Status::InvalidArgument(
          "unknown knob '" + knob + "' for xstore (known: leaf_slots, partitions, keys_per_model, "
          "top_segments, expand_at, retrain, train_threads, speculate, slot_read, max_read_leaves, prefetch, "
          "validation; the tree core's cache and lock knobs do not apply: XStore's clients cache "
          "models, and its writes run on the memory server)");
    }
  }
  if (o.format == KeyFormat::kBytes && slots_given)
    return Status::InvalidArgument("knob leaf_slots: the bytes format's leaves are slotted nodes of "
                                   "IndexOptions::node_bytes (--node-size); leaf_slots sizes u64 leaves");
  if (o.format == KeyFormat::kBytes && o.slot_read)
    return Status::InvalidArgument("knob slot_read: u64 format only (a slotted leaf keeps each entry's "
                                   "record apart from its slot, a second READ)");
  if (o.format == KeyFormat::kU64) core.node_bytes = U64LeafBytes(o.leaf_slots);
  tree::TreeOptions defaults;
  defaults.combine = true;      // lock + READ and WRITE + unlock in one batch (local anyway)
  defaults.two_level = false;   // sorted leaves, always written whole by the server
  auto resolved = tree::ResolveTreeOptions(core, defaults);
  if (!resolved.ok()) return resolved.status();
  o.tree = *resolved;
  o.tree.cache_bytes = 0;  // no internal-node cache: clients never read internal nodes
  if (o.partitions == 0) o.partitions = memory_nodes;
  return o;
}

std::string XStoreOptions::ToString() const {
  std::ostringstream s;
  s << "node_bytes=" << tree.node_bytes << " leaf_slots=" << leaf_slots << " partitions=" << partitions
    << " keys_per_model=" << keys_per_model << " top_segments=" << top_segments << " expand_at=" << (expand_at == 0 ? std::string("off") : std::to_string(expand_at))
    << " retrain=" << (retrain ? "on" : "off") << " train_threads=" << train_threads
    << " speculate=" << speculate << " slot_read=" << (slot_read ? "on" : "off")
    << " max_read_leaves=" << max_read_leaves << " prefetch=" << (prefetch ? "on" : "off")
    << " validation=" << (tree.validate ? "on" : "off");
  return s.str();
}

}  // namespace dmindex::designs::xstore
