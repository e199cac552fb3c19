// Where a node's lock word lives: in the lock table of the memory node that holds the node
// (pool_layout.h: it stands for the NIC's on-chip memory, as in Sherman's global lock
// table). Nodes hash onto the table's words; two nodes sharing a word only share contention,
// never correctness, because a thread holds at most one node lock at a time.
//
// Lock and node are on the same memory node, so "CAS lock, READ node" and "WRITE node,
// WRITE unlock" can each go in one in-order batch (command combination).
#pragma once

#include <cstdint>

#include "dmindex/global_address.h"
#include "fabric/pool_layout.h"

namespace dmindex::tree {

inline constexpr uint32_t kLockWordsPerMemoryNode =
    static_cast<uint32_t>(fabric::kLockTableBytes / 8);

// Index of the lock word guarding `node` within its memory node's lock table.
inline uint32_t LockIndexFor(GlobalAddress node) {
  // Node offsets are 64-byte aligned: drop those bits, then Fibonacci-hash.
  uint64_t h = (node.offset() >> 6) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(h >> 32) % kLockWordsPerMemoryNode;
}

inline GlobalAddress LockWordFor(GlobalAddress node) {
  return GlobalAddress(node.node(), fabric::kLockTableOffset + 8ull * LockIndexFor(node));
}

}  // namespace dmindex::tree
