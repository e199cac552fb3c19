#include "tree/tree_options.h"

#include <sstream>

#include "common/knobs.h"
#include "tree/value_block.h"

namespace dmindex::tree {
namespace {

// The core's knobs, one line each; the list of known knobs in errors comes from here.
struct Knob {
  const char* name;
  Status (*apply)(const std::string& knob, const std::string& v, uint64_t index_cache_bytes, TreeOptions* o);
};

const Knob kKnobs[] = {
    {"cache_mb",
     [](const std::string& knob, const std::string& v, uint64_t index_cache_bytes, TreeOptions* o) {
       if (v == "on") {
         o->cache_bytes = index_cache_bytes;
         return Status::Ok();
       }
       if (v == "off") {
         o->cache_bytes = 0;
         return Status::Ok();
       }
       uint64_t mb = 0;
       DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, uint64_t{1} << 30, &mb));
       o->cache_bytes = mb << 20;
       return Status::Ok();
     }},
    {"hocl", [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) { return KnobSwitch(k, v, &o->hocl); }},
    {"handover",
     [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) {
       uint64_t n = 0;
       DMX_RETURN_IF_ERROR(KnobCount(k, v, 0, 1u << 20, &n));
       o->handover_max = static_cast<uint32_t>(n);
       return Status::Ok();
     }},
    {"combine", [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) { return KnobSwitch(k, v, &o->combine); }},
    {"two_level", [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) { return KnobSwitch(k, v, &o->two_level); }},
    {"lease_ms",
     [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) {
       uint64_t ms = 0;
       DMX_RETURN_IF_ERROR(KnobCount(k, v, 0, 40'950, &ms));
       o->lease = std::chrono::milliseconds(ms);
       return Status::Ok();
     }},
    {"validation", [](const std::string& k, const std::string& v, uint64_t, TreeOptions* o) { return KnobSwitch(k, v, &o->validate); }},
};

Status ApplyKnob(const std::string& knob, const std::string& v, uint64_t index_cache_bytes,
                 TreeOptions* o) {
  for (const Knob& k : kKnobs)
    if (knob == k.name) return k.apply(knob, v, index_cache_bytes, o);
  std::string known;
  for (const Knob& k : kKnobs) known.append(known.empty() ? "" : ", ").append(k.name);
  return Status::InvalidArgument("unknown knob '" + knob + "' (known: " + known + ")");
}

}  // namespace

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
  for (const auto& [knob, value] : index.knobs)
    DMX_RETURN_IF_ERROR(ApplyKnob(knob, value, index.cache_bytes, &o));
  return o;
}

std::string TreeOptions::ToString() const {
  auto onoff = [](bool b) { return b ? "on" : "off"; };
  std::ostringstream s;
  s << "node_bytes=" << node_bytes << " cache_mb=" << (cache_bytes >> 20)
    << " hocl=" << onoff(hocl) << " handover=" << handover_max << " combine=" << onoff(combine)
    << " two_level=" << onoff(two_level) << " validation=" << onoff(validate);
  return s.str();
}

}  // namespace dmindex::tree
