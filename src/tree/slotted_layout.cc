#include "tree/slotted_layout.h"

#include <algorithm>
#include <string>

#include "common/option_checks.h"

namespace dmindex::tree {
namespace {

// The longest keys any index may have (the public API's limit).
constexpr uint32_t kLongestKey = 1024;

}  // namespace

uint32_t SlottedLayout::MinNodeBytes(uint32_t max_key, uint32_t inline_value, bool trailer) {
  const uint64_t largest_entry = std::max<uint64_t>(LeafEntryBytes(max_key, inline_value, 0),
                                                    InternalEntryBytes(max_key, 0));
  const uint64_t fences = SlotsOffset(max_key, max_key);
  const uint64_t bytes = 2 * fences - kFencesOff + 3 * largest_entry + (trailer ? kTrailerBytes : 0);
  return static_cast<uint32_t>((bytes + 63) / 64 * 64);
}

Result<SlottedLayout> SlottedLayout::For(uint32_t node_bytes, uint32_t max_key_bytes,
                                         uint32_t inline_value_bytes, bool trailer) {
  if (max_key_bytes == 0 || max_key_bytes > kLongestKey)
    return Status::InvalidArgument("max_key_bytes " + std::to_string(max_key_bytes) +
                                   ": expected 1 to " + std::to_string(kLongestKey));
  if (inline_value_bytes > kMaxInlineValue)
    return Status::InvalidArgument("inline value limit " + std::to_string(inline_value_bytes) +
                                   ": expected at most " + std::to_string(kMaxInlineValue));
  const uint32_t min_bytes = MinNodeBytes(max_key_bytes, inline_value_bytes, trailer);
  if (min_bytes > node_bytes)
    return Status::InvalidArgument(
        "node_bytes " + std::to_string(node_bytes) + " is too small for keys of up to " +
        std::to_string(max_key_bytes) + " bytes and inline values of up to " +
        std::to_string(inline_value_bytes) + " bytes" + (trailer ? " and a node trailer" : "") +
        ": nodes must be at least " + std::to_string(min_bytes) +
        " bytes so every split yields two halves that fit");
  DMX_RETURN_IF_ERROR(CheckNodeBytes(node_bytes, min_bytes));
  SlottedLayout l;
  l.node_bytes = node_bytes;
  l.trailer = trailer;
  l.max_key_bytes = max_key_bytes;
  l.inline_value_bytes = inline_value_bytes;
  return l;
}

}  // namespace dmindex::tree
