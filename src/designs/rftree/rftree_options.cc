#include "designs/rftree/rftree_options.h"

#include <sstream>

#include "common/knobs.h"

namespace dmindex::designs::rftree {

Result<RfTreeOptions> ResolveRfTreeOptions(const IndexOptions& index) {
  RfTreeOptions o;
  IndexOptions core = index;  // the core sees only the knobs RF-tree does not handle
  core.knobs.clear();
  for (const auto& [knob, v] : index.knobs) {
    uint64_t n = 0;
    if (knob == "slc") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.slc));
    } else if (knob == "slc_chunk_kb") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 1u << 20, &n));
      o.slc_chunk_bytes = static_cast<uint32_t>(n << 10);
    } else if (knob == "refresh_hops") {
      o.refresh_auto = v == "auto";
      o.refresh_hops = 0;
      if (!o.refresh_auto && v != "off")
        DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, uint64_t{1} << 40, &o.refresh_hops));
    } else if (knob == "refresh_min_us") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, uint64_t{60} * 1000 * 1000, &o.refresh_min_us));
    } else if (knob == "lock") {
      if (v != "inline" && v != "table") return BadKnob(knob, v, "inline or table");
      o.lock = v == "inline" ? LockMode::kInline : LockMode::kTable;
    } else if (knob == "unlock") {
      if (v != "after" && v != "with_node") return BadKnob(knob, v, "after or with_node");
      o.unlock = v == "after" ? UnlockMode::kAfterNode : UnlockMode::kWithNode;
    } else if (knob == "scan_batch") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.scan_batch));
    } else {
      core.knobs[knob] = v;
    }
  }
  tree::TreeOptions defaults;
  defaults.cache_bytes = 1;  // on: sized by IndexOptions::cache_bytes (the SLC's budget)
  auto resolved = tree::ResolveTreeOptions(core, defaults);
  if (!resolved.ok()) return resolved.status();
  o.tree = *resolved;
  if (o.tree.cache_bytes == 0) o.slc = false;
  if (o.lock == LockMode::kInline && (o.tree.two_level || o.tree.hocl || o.tree.combine))
    return Status::InvalidArgument(
        "rftree: two_level, hocl and combine work on the core's lock table; with lock=inline "
        "leaves are sorted, written whole and locked by their own last word (use lock=table)");
  // Leaves carry their lock word (lock=inline) in their last 8 bytes: every node keeps the
  // trailer, so both lock modes have one layout and can be compared on it.
  o.tree.node_trailer = true;
  return o;
}

std::string RfTreeOptions::ToString() const {
  std::ostringstream s;
  s << tree.ToString() << " slc=" << (slc ? "on" : "off") << " slc_chunk_kb=" << (slc_chunk_bytes >> 10)
    << " refresh_hops=" << (refresh_auto ? "auto" : refresh_hops == 0 ? "off" : std::to_string(refresh_hops))
    << " refresh_min_us=" << refresh_min_us << " lock=" << (lock == LockMode::kInline ? "inline" : "table")
    << " unlock=" << (unlock == UnlockMode::kAfterNode ? "after" : "with_node")
    << " scan_batch=" << (scan_batch ? "on" : "off");
  return s.str();
}

}  // namespace dmindex::designs::rftree
