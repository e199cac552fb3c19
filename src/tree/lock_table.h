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

// Who holds the words of a tree, and so which part of the table its nodes hash onto. A memory
// server's own trees (XStore's server side, lease::Lease::OfMemoryServer) cannot take a word
// over (the lease table is on memory node 0, out of a server's reach), so they lock in a part
// of the table no compute process's tree hashes onto: a dead process's word never blocks a
// server's write, and a server's words are freed by its own unlock or its successor's start
// (tree/server_locks.h). The XStore clients' reader trees read the server's part too.
enum class LockArea : uint8_t { kProcesses, kMemoryServer };
inline constexpr uint32_t kMemoryServerLockWords = 4096;
inline constexpr uint32_t kProcessLockWords = kLockWordsPerMemoryNode - kMemoryServerLockWords;

// Index of the lock word guarding `node` within its memory node's lock table.
inline uint32_t LockIndexFor(GlobalAddress node, LockArea area) {
  // Node offsets are 64-byte aligned: drop those bits, then Fibonacci-hash.
  const uint64_t h = ((node.offset() >> 6) * 0x9E3779B97F4A7C15ull) >> 32;
  if (area == LockArea::kMemoryServer) return kProcessLockWords + static_cast<uint32_t>(h % kMemoryServerLockWords);
  return static_cast<uint32_t>(h % kProcessLockWords);
}

inline GlobalAddress LockWordFor(GlobalAddress node, LockArea area) {
  return GlobalAddress(node.node(), fabric::kLockTableOffset + 8ull * LockIndexFor(node, area));
}

}  // namespace dmindex::tree
