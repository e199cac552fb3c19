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

}  // namespace dmindex
