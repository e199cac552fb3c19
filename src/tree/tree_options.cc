#include "tree/tree_options.h"

#include <charconv>
#include <sstream>

namespace dmindex::tree {
namespace {

Status ParseBool(const std::string& knob, const std::string& v, bool* out) {
  if (v == "on" || v == "true" || v == "1") { *out = true; return Status::Ok(); }
  if (v == "off" || v == "false" || v == "0") { *out = false; return Status::Ok(); }
  return Status::InvalidArgument("knob " + knob + "=" + v + ": expected on or off");
}

Status ParseUint(const std::string& knob, const std::string& v, uint64_t max, uint64_t* out) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty() || n > max)
    return Status::InvalidArgument("knob " + knob + "=" + v + ": expected an integer in [0, " +
                                   std::to_string(max) + "]");
  *out = n;
  return Status::Ok();
}

Status ApplyKnob(const std::string& knob, const std::string& v, uint64_t index_cache_bytes,
                 TreeOptions* o) {
  if (knob == "cache_mb") {
    if (v == "on") { o->cache_bytes = index_cache_bytes; return Status::Ok(); }
    if (v == "off") { o->cache_bytes = 0; return Status::Ok(); }
    uint64_t mb = 0;
    DMX_RETURN_IF_ERROR(ParseUint(knob, v, uint64_t{1} << 30, &mb));
    o->cache_bytes = mb << 20;
    return Status::Ok();
  }
  if (knob == "hocl") return ParseBool(knob, v, &o->hocl);
  if (knob == "combine") return ParseBool(knob, v, &o->combine);
  if (knob == "two_level") return ParseBool(knob, v, &o->two_level);
  if (knob == "validation") return ParseBool(knob, v, &o->validate);
  if (knob == "handover") {
    uint64_t n = 0;
    DMX_RETURN_IF_ERROR(ParseUint(knob, v, 1u << 20, &n));
    o->handover_max = static_cast<uint32_t>(n);
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown knob '" + knob +
                                 "' (known: cache_mb, hocl, handover, combine, two_level, "
                                 "validation)");
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
