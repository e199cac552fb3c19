// When DEX merges nodes (dex_merge.cc, and the offload handler's report of a delete): a node
// is underfull below a quarter of its capacity, and two siblings merge only if the result
// holds at most three quarters of a node (or one of them is empty), so that splits and
// merges do not ping-pong. Used and capacity are in the node codec's units (Used/Capacity:
// entries in the fixed format, bytes in the slotted one), so both formats follow one rule.
#pragma once

#include <cstdint>

namespace dmindex::designs::dex {

inline bool Underfull(uint32_t used, uint32_t capacity) { return used < capacity / 4; }

inline bool MergeLeavesRoom(uint32_t used, uint32_t capacity, bool one_side_empty) {
  return used <= capacity && (used <= capacity * 3 / 4 || one_side_empty);
}

}  // namespace dmindex::designs::dex
