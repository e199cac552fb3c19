// The lease table: one 64-byte slot per compute process, in memory node 0's pool at
// fabric::kLeaseTableOffset (pool_layout.h). Node 0 because it already holds the catalog
// (every process reaches it, and an index is unusable without it), so one table costs each
// process one renewal verb per period, not one per memory node.
//
//   word 0  state: epoch (24 bits) | lease length in 10 ms units (12) | beat (26) | phase (2)
//   word 1  the holder's pid            } written after the claim, for listings only
//   word 2  the claim's wall clock, ms  } (dmindex indexes --locks); never decide anything
//   word 3  the last renewal's, ms      }
//
// Everything that decides is in word 0, changed only by CAS: a claim (free/revoked -> held,
// epoch + 1), a renewal (held beat b -> b + 1, by the holder only), a release (held -> free),
// a revocation (held -> revoked, by a process that watched the beat stand still for the
// holder's lease length plus the margin; docs/SYNCHRONIZATION.md "Leases"). A holder's
// renewal expects its own last state word, so once revoked (or reclaimed by a later epoch) it
// can never renew again: it is fenced for good.
#pragma once

#include <chrono>
#include <cstdint>

#include "dmindex/global_address.h"
#include "fabric/pool_layout.h"

namespace dmindex::lease {

inline constexpr uint32_t kSlots = static_cast<uint32_t>(fabric::kLeaseTableBytes / 64);
inline constexpr uint64_t kSlotBytes = 64;
// The last slot is never claimed: a holder naming it is a memory server's own tree (XStore's
// server-side writes), whose epoch is the server's incarnation on its pool
// (fabric::MemoryNode::incarnation), not a lease in this table. Nobody fences it; the next
// incarnation frees its lock words at start (tree/server_locks.h).
inline constexpr uint32_t kMemoryServerSlot = kSlots - 1;

// Which process held a lock: its lease slot and that slot's epoch when it held it. Packs into
// 34 bits (Pack), so a lock word can name its holder and keep 30 bits for itself.
struct HolderId {
  uint32_t slot = 0;   // < kSlots
  uint32_t epoch = 0;  // 24 bits; 0 never names a live lease (claims start at 1)

  static constexpr int kBits = 34;
  uint64_t Pack() const { return (uint64_t{epoch} << 10) | slot; }
  static HolderId Unpack(uint64_t bits) {
    return {static_cast<uint32_t>(bits & (kSlots - 1)), static_cast<uint32_t>((bits >> 10) & 0xffffff)};
  }
  bool valid() const { return epoch != 0; }
  bool memory_server() const { return valid() && slot == kMemoryServerSlot; }
  friend bool operator==(HolderId, HolderId) = default;
};

// The holder a memory server's tree names in its lock words during its `incarnation`-th start
// on its pool (1, 2, ...): epochs wrap over 24 bits and skip 0. A wrapped epoch never meets a
// word of its namesake: every start frees the words of all other incarnations first.
inline HolderId MemoryServerHolder(uint64_t incarnation) {
  return {kMemoryServerSlot, static_cast<uint32_t>((incarnation - 1) % 0xffffff + 1)};
}

enum class Phase : uint8_t { kFree = 0, kHeld = 1, kRevoked = 2 };

// Word 0 of a slot, decoded.
struct SlotState {
  uint32_t epoch = 0;        // 24 bits
  uint32_t length_10ms = 0;  // 12 bits: the holder's lease length (observers use the holder's)
  uint32_t beat = 0;         // 26 bits: renewals since the claim (wraps; only change matters)
  Phase phase = Phase::kFree;

  static SlotState Decode(uint64_t w) {
    return {static_cast<uint32_t>(w >> 40), static_cast<uint32_t>((w >> 28) & 0xfff),
            static_cast<uint32_t>((w >> 2) & 0x3ffffff), static_cast<Phase>(w & 3)};
  }
  uint64_t Encode() const {
    return (uint64_t{epoch & 0xffffff} << 40) | (uint64_t{length_10ms & 0xfff} << 28) |
           (uint64_t{beat & 0x3ffffff} << 2) | static_cast<uint64_t>(phase);
  }
  std::chrono::milliseconds length() const { return std::chrono::milliseconds(10 * length_10ms); }
};

inline GlobalAddress SlotAddress(uint32_t slot) {
  return GlobalAddress(0, fabric::kLeaseTableOffset + kSlotBytes * slot);
}

}  // namespace dmindex::lease
