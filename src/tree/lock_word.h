// What a held node-lock word says (docs/SYNCHRONIZATION.md, "Lock takeover and repair"):
//
//   bits  0..33  the holder's lease (lease::HolderId: slot, epoch)
//   bits 34..62  the holder's redo block on the lock word's memory node, in 64-byte units
//   bit  63      0, so that the word shifted left by one still holds it all (below)
//
// So a process that finds the lock held can ask the lease table whether the holder is dead
// (lease::LeaseObserver) and, after taking the word over by CAS, find the record of the write
// the holder may have left half done (redo_log.h). 0 is the free word; a lease epoch is never
// 0, so a held word never is.
#pragma once

#include <cstdint>

#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "lease/lease.h"

namespace dmindex::tree {

// Who takes a lock: the lease it is held under and the value the lock word gets. A null lease
// (tests of the bare lock, DEX until it holds leases) writes `word` as given: no holder check,
// no takeover, no redo record.
// Redo blocks larger than an owner's own, for the rare takeover that must carry a dead holder's
// record of a bigger node: lock words are shared by every index of a pool, so the holder may
// have written an index of larger nodes than the taker's (docs/LOCK_TAKEOVER.md, "Other
// indexes"). Kept by the owner and reused, so a taker allocates at most one per memory node.
class LargeRedoBlocks {
 public:
  virtual ~LargeRedoBlocks() = default;
  // A block on `memory_node` whose payload holds at least `payload_bytes` (after the 64-byte
  // header), nameable in a lock word (RedoBlockNameable).
  virtual Result<GlobalAddress> Get(uint16_t memory_node, uint32_t payload_bytes) = 0;
};

struct LockOwner {
  lease::Lease* lease = nullptr;
  uint64_t word = 0;  // non-zero
  // Where a takeover carries a record larger than `word`'s block holds. Null: such a record
  // is not carried, and its word is not taken over (left to a taker that can).
  LargeRedoBlocks* large_blocks = nullptr;
};

inline constexpr int kRedoUnitShift = 6;
inline constexpr uint64_t kRedoUnitsLimit = uint64_t{1} << (63 - lease::HolderId::kBits);

// Redo blocks must lie below 32 GiB of their pool to be named in 29 bits.
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

// A lock kept in a node's own trailer (TreeOptions::trailer_lock: RF-tree's inline leaf locks)
// shares its 8 bytes with the node's version: even is the version of the last whole write
// (free), odd is held. A holder with a lease writes its lock word shifted left by one, low bit
// set, so the trailer names the same lease and redo block as a lock-table word would (bit 63
// is free for this). Without a lease it is the session's owner tag, whose epoch bits are 0:
// never taken over, as before leases. Versions are fresh random stamps and every release
// writes one, so a held trailer never reads as a version a writer saw before.
inline uint64_t EncodeTrailerLock(uint64_t lock_word) { return (lock_word << 1) | 1; }
// The lock word a held trailer names (0: a trailer held without a lease, or free).
inline uint64_t TrailerLockWord(uint64_t trailer) {
  const uint64_t word = trailer >> 1;
  return (trailer & 1) != 0 && LockWordHolder(word).valid() ? word : 0;
}

}  // namespace dmindex::tree
