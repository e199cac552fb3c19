#include "designs/input_checks.h"

#include <algorithm>

namespace dmindex::designs {

Status CheckKey(Key key) {
  if (IsValidKey(key)) return Status::Ok();
  return Status::InvalidArgument("key " + std::to_string(key) +
                                 " is reserved (valid keys are 1 .. 2^64-2)");
}

Status CheckBulkInput(std::span<const KeyValue> sorted) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    DMX_RETURN_IF_ERROR(CheckKey(sorted[i].key));
    if (i > 0 && sorted[i].key <= sorted[i - 1].key)
      return Status::InvalidArgument("BulkLoad input not sorted and unique at position " +
                                     std::to_string(i) + " (key " + std::to_string(sorted[i].key) +
                                     " after " + std::to_string(sorted[i - 1].key) + ")");
  }
  return Status::Ok();
}

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

Status CheckComputeNode(const IndexOptions& options, uint32_t compute_node) {
  if (compute_node < options.compute_nodes) return Status::Ok();
  return Status::InvalidArgument("compute node " + std::to_string(compute_node) +
                                 " does not exist (compute_nodes = " +
                                 std::to_string(options.compute_nodes) + ")");
}

}  // namespace dmindex::designs
