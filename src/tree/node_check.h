// Check words: the 64-bit hashes that let a lock-free reader tell a consistent node image from
// a torn one (see docs/SYNCHRONIZATION.md). Shared by every design built on the tree core.
//
// All three bind what they cover to the node version, so pieces of two different whole-node
// writes never validate together, and to the position (slot index), so an entry cannot pass
// for another slot's entry. A zero-filled (never written) node never validates: its check
// word 0 differs from the hash of zeros.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dmindex::tree {

// Hash of the header bytes after the check word.
uint64_t HeaderCheck(const std::byte* header_after_check, size_t len);
// Hash of one leaf slot's key and value bytes, for node version `version`, slot `slot` and
// whether the slot is a tombstone (leaf_node.h).
uint64_t SlotCheck(const std::byte* key_and_value, size_t len, uint64_t version, uint32_t slot,
                   bool tomb);
// Hash of an internal node's used entries for node version `version`.
uint64_t BodyCheck(const std::byte* entries, size_t len, uint64_t version);

}  // namespace dmindex::tree
