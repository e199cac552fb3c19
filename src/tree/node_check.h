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
// The part of a slot's check seed that depends on the node version alone: computed once per
// image where every slot is checked against one version (a leaf's validation, its restamp).
struct SlotSeed {
  uint64_t mixed;
};
SlotSeed SlotSeedFor(uint64_t version);
// Hash of one leaf slot's key and value bytes, for the node version of `seed`, slot `slot`
// and whether the slot is a tombstone (leaf_node.h).
uint64_t SlotCheck(const std::byte* key_and_value, size_t len, SlotSeed seed, uint32_t slot, bool tomb);
// The same with a slot's flags (tombstone, out-of-line value, inline length; leaf_node.h)
// in the seed instead of the tombstone flag alone: fixed slots holding byte values.
uint64_t SlotCheckWithFlags(const std::byte* key_and_value, size_t len, SlotSeed seed, uint32_t slot,
                            uint64_t flags);
// Hash of an internal node's used entries for node version `version`.
uint64_t BodyCheck(const std::byte* entries, size_t len, uint64_t version);

// Slotted format (slotted_leaf.h, slotted_internal.h).
// A leaf slot: its slot word (offset, key length, key head) and the record it points to (key
// bytes and value), for node version `version`, slot `slot` and the tombstone flag.
uint64_t RecordCheck(uint64_t slot_word, const std::byte* record, size_t len, uint64_t version,
                     uint32_t slot, bool tomb);
// An internal node's slot array and key heap, for node version `version`.
uint64_t SlottedBodyCheck(const std::byte* slots, size_t slots_len, const std::byte* heap,
                          size_t heap_len, uint64_t version);

}  // namespace dmindex::tree
