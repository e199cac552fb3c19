#include "designs/input_checks.h"

#include <algorithm>

namespace dmindex::designs {

Status CheckIndexOptions(const IndexOptions& options, uint32_t min_node_bytes,
                         const std::vector<std::string>& known_knobs) {
  constexpr uint32_t kMaxNodeBytes = 1u << 20;
  if (options.node_bytes < min_node_bytes || options.node_bytes > kMaxNodeBytes)
    return Status::InvalidArgument("node_bytes " + std::to_string(options.node_bytes) +
                                   " outside [" + std::to_string(min_node_bytes) + ", " +
                                   std::to_string(kMaxNodeBytes) + "]");
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

}  // namespace dmindex::designs
