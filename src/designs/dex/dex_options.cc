#include "designs/dex/dex_options.h"

#include <algorithm>
#include <sstream>

#include "common/knobs.h"
#include "designs/dex/partition_map.h"

namespace dmindex::designs::dex {
namespace {

Status ParseKeys(const std::string& knob, const std::string& v, std::vector<Key>* out) {
  std::stringstream in(v);
  std::string part;
  out->clear();
  while (std::getline(in, part, ',')) {
    uint64_t k = 0;
    DMX_RETURN_IF_ERROR(KnobCount(knob, part, kMinKey, kMaxKey, &k));
    if (!IsValidKey(k) || (!out->empty() && k <= out->back()))
      return BadKnob(knob, v, "ascending valid keys separated by commas");
    out->push_back(k);
  }
  return Status::Ok();
}

}  // namespace

Result<DexOptions> ResolveDexOptions(const IndexOptions& index) {
  DexOptions o;
  o.cache_bytes = index.cache_bytes;
  o.compute_nodes = index.compute_nodes;
  IndexOptions core = index;  // the core sees only the knobs DEX does not handle
  core.knobs.clear();
  for (const auto& [knob, v] : index.knobs) {
    uint64_t n = 0;
    if (knob == "partition") DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.partition));
    else if (knob == "offload") DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.offload));
    else if (knob == "merge") DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.merge));
    else if (knob == "admission") DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 1}, &o.leaf_admission));
    else if (knob == "explore") DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 1}, &o.explore));
    else if (knob == "cost_factor") DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 1000}, &o.cost_factor));
    else if (knob == "boundaries") DMX_RETURN_IF_ERROR(ParseKeys(knob, v, &o.boundaries));
    else if (knob == "cache_mb") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, uint64_t{1} << 30, &n));
      o.cache_bytes = n << 20;
    } else if (knob == "offload_level") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, 32, &n));
      o.offload_level = static_cast<uint32_t>(n);
    } else if (knob == "partitions") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 1u << 20, &n));
      o.partitions = static_cast<uint32_t>(n);
    } else if (knob == "first_node") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, 1u << 20, &n));
      o.first_node = static_cast<int64_t>(n);
    } else if (knob == "key_space") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, kMinKey, kMaxKey, &n));
      o.key_space = n;
    } else {
      core.knobs[knob] = v;
    }
  }
  if (o.partitions > PartitionMap::kMaxParts || o.compute_nodes == 0 ||
      o.compute_nodes > PartitionMap::kMaxParts)
    return Status::InvalidArgument("dex: compute nodes (knob partitions, IndexOptions::compute_nodes) "
                                   "must be in [1, " + std::to_string(PartitionMap::kMaxParts) + "]");
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
  // Shared nodes go through the core's remote protocol: its own internal-node cache is off
  // (DEX caches), leaves stay sorted (DEX rewrites them whole), Sherman's lock techniques on.
  tree::TreeOptions defaults;
  defaults.cache_bytes = 0;
  defaults.hocl = true;
  defaults.combine = true;
  defaults.two_level = false;
  auto t = tree::ResolveTreeOptions(core, defaults);
  if (!t.ok()) return t.status();
  if (t->two_level || t->cache_bytes != 0)
    return Status::InvalidArgument("dex: knobs two_level and the core's cache do not apply");
  o.tree = *t;
  // Subtrees rooted at level M sit on one memory server, so offloads stay local (§3).
  o.tree.colocate_level = static_cast<int>(o.offload_level);
  o.tree.unlocked_writers = true;  // owned nodes are written back from the cache, unlocked
  return o;
}

}  // namespace dmindex::designs::dex
