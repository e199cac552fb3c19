// What a held node-lock word says (docs/SYNCHRONIZATION.md, "Lock takeover and repair"):
//
//   bits  0..33  the holder's lease (lease::HolderId: slot, epoch)
//   bits 34..63  the holder's redo block on the lock word's memory node, in 64-byte units
//
// So a process that finds the lock held can ask the lease table whether the holder is dead
// (lease::LeaseObserver) and, after taking the word over by CAS, find the record of the write
// the holder may have left half done (redo_log.h). 0 is the free word; a lease epoch is never
// 0, so a held word never is.
#pragma once

#include <cstdint>

#include "dmindex/global_address.h"
#include "lease/lease.h"

namespace dmindex::tree {

// Who takes a lock: the lease it is held under and the value the lock word gets. A null lease
// (tests of the bare lock, DEX until it holds leases) writes `word` as given: no holder check,
// no takeover, no redo record.
struct LockOwner {
  lease::Lease* lease = nullptr;
  uint64_t word = 0;  // non-zero
};

inline constexpr int kRedoUnitShift = 6;
inline constexpr uint64_t kRedoUnitsLimit = uint64_t{1} << (64 - lease::HolderId::kBits);

// Redo blocks must lie below 64 GiB of their pool to be named in 30 bits.
inline bool RedoBlockNameable(GlobalAddress block) {
  return block.offset() % (uint64_t{1} << kRedoUnitShift) == 0 &&
         (block.offset() >> kRedoUnitShift) < kRedoUnitsLimit;
}

inline uint64_t EncodeLockWord(lease::HolderId holder, GlobalAddress redo_block) {
  return holder.Pack() | ((redo_block.offset() >> kRedoUnitShift) << lease::HolderId::kBits);
}
inline lease::HolderId LockWordHolder(uint64_t word) {
  return lease::HolderId::Unpack(word & ((uint64_t{1} << lease::HolderId::kBits) - 1));
}
// The redo block a held word names, on the word's memory node (null if it names none).
inline GlobalAddress LockWordRedoBlock(uint64_t word, uint16_t memory_node) {
  const uint64_t units = word >> lease::HolderId::kBits;
  return units == 0 ? GlobalAddress() : GlobalAddress(memory_node, units << kRedoUnitShift);
}

}  // namespace dmindex::tree
