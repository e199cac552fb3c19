#include "designs/dex/dex_options.h"

#include <algorithm>
#include <sstream>

#include "common/knobs.h"
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

}  // namespace

Result<DexOptions> ResolveDexOptions(const IndexOptions& index) {
  DexOptions o;
  o.cache_bytes = index.cache_bytes;
  o.key_format = index.key_format;
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
    else if (knob == "durability") {
      if (v != "log" && v != "none") return BadKnob(knob, v, "log or none");
      o.durable = v == "log";
    } else if (knob == "boundaries") DMX_RETURN_IF_ERROR(ParseBoundaries(index, knob, v, &o.boundaries));
    else if (knob == "cache_mb") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, uint64_t{1} << 30, &n));
      o.cache_bytes = n << 20;
    } else if (knob == "log_kb") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 4, uint64_t{1} << 21, &n));
      o.log_bytes = n << 10;
    } else if (knob == "writeback_ms") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, uint64_t{1} << 32, &n));
      o.writeback_ms = n;
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
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, u64::kMinKey, u64::kMaxKey, &n));
      o.key_space = n;
    } else {
      core.knobs[knob] = v;
    }
  }
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
