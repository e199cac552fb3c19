// Redo records: how a lock holder's half-done write is finished by whoever takes its lock over
// (docs/SYNCHRONIZATION.md, "Lock takeover and repair").
//
// Every session has a redo block per memory node (64 bytes + node size), named in the lock
// words it holds (lock_word.h). A write under a lock goes out as one in-order batch on the
// node's memory node (one round trip with command combination):
//
//   [WRITE record header, WRITE record payload..., WRITE node pieces..., WRITE header word 0 := 0,
//    WRITE lock word := 0]
//
// The record holds exactly the bytes of the node pieces, so when a taker finds a record whose
// word 0 is the dead holder's lock word and whose checksum matches, it replays the pieces (the
// whole new image, or the changed entry) - they are idempotent - and when it finds none, the
// node write either never started (the record had not fully landed: in-order) or completed
// (the record was cleared after it).
//
// Header words: 0 the lock word of the holding (0: no write in flight), 1 checksum of the
// other words and the payload, 2 the lock word's address, 3 the node's address, 4 the number
// of pieces (<= 3), 5.. one per piece: offset in the node << 32 | length.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/verb.h"

namespace dmindex::tree {

inline constexpr uint32_t kRedoHeaderBytes = 64;
inline constexpr uint32_t kRedoMaxPieces = 3;
inline uint32_t RedoBlockBytes(uint32_t node_bytes) { return kRedoHeaderBytes + node_bytes; }

// The verbs that record `writes`' pieces inside [node, node + node_bytes) before they land,
// and the one that clears the record after. `header` is the caller's 64-byte buffer and must
// outlive the posting.
struct RedoRecord {
  std::vector<fabric::Verb> record;  // header + payload: post before the pieces
  fabric::Verb clear;                // post after them, before the unlock
  bool empty() const { return record.empty(); }
};
// Builds the record of the writes that fall in the node (none: empty). InvalidArgument if
// they are more than kRedoMaxPieces or outside the block.
Status BuildRedoRecord(GlobalAddress block, uint64_t lock_word, GlobalAddress lock_word_addr,
                       GlobalAddress node, uint32_t node_bytes, std::span<const fabric::Verb> writes,
                       uint64_t (&header)[8], RedoRecord* out);

// After taking over `dead_word` at `lock_word_addr` (the caller holds the lock now): finishes
// the write its holder may have left half done. *replayed: whether a record was replayed.
Status ReplayRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                        uint32_t node_bytes, bool* replayed);

}  // namespace dmindex::tree
