#include "common/option_checks.h"

#include <algorithm>
#include <string>

namespace dmindex {

Status CheckNodeBytes(uint32_t node_bytes, uint32_t min_bytes) {
  const uint32_t min = std::max<uint32_t>(64, (min_bytes + 63) / 64 * 64);
  if (node_bytes % 64 == 0 && node_bytes >= min && node_bytes <= kMaxNodeBytes) return Status::Ok();
  return Status::InvalidArgument("node_bytes " + std::to_string(node_bytes) + ": expected a multiple of 64 in [" +
                                 std::to_string(min) + ", " + std::to_string(kMaxNodeBytes) + "]");
}

Status CheckIndexOptions(const IndexOptions& options, uint32_t min_node_bytes,
                         const std::vector<std::string>& known_knobs) {
  DMX_RETURN_IF_ERROR(CheckNodeBytes(options.node_bytes, min_node_bytes));
  if (!(options.bulk_fill > 0.0 && options.bulk_fill <= 1.0))
    return Status::InvalidArgument("bulk_fill " + std::to_string(options.bulk_fill) +
                                   " outside (0, 1]");
  if (options.compute_nodes == 0) return Status::InvalidArgument("compute_nodes must be >= 1");
  for (const auto& [name, value] : options.knobs) {
    if (std::find(known_knobs.begin(), known_knobs.end(), name) == known_knobs.end()) {
      std::string known;
      for (const std::string& k : known_knobs) known += (known.empty() ? "" : ", ") + k;
      return Status::InvalidArgument("unknown knob '" + name + "' (known: " +
                                     (known.empty() ? "none" : known) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace dmindex
