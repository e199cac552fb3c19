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

// A holding's record as read back by whoever takes its lock word over: its header and the
// bytes of its node pieces. `whole`: it is the record of that holding and its checksum
// matches, so its node write may have landed partly and the pieces finish it; otherwise no
// node piece started, or all landed (the record was cleared after them).
struct FoundRecord {
  uint64_t header[8] = {};
  std::vector<std::byte> payload;
  bool whole = false;
};
// Reads the record `dead_word` (a lock word's value) names for its holding of the word at
// `lock_word_addr`; pieces are bounded by `node_bytes` (a larger record reads as not whole).
Status ReadRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                      uint32_t node_bytes, FoundRecord* found);
// A taker's verbs for a whole `found` (docs/LOCK_TAKEOVER.md, "A taker that dies"):
//   adopt   the record copied into the taker's own redo `block` as its holding of the word,
//           re-stamped with its lock word `word`: posted in order before (in the batch of) the
//           CAS that makes the lock word `word`, so that a word naming the taker always finds
//           the write still to finish in the block it names;
//   finish  the node pieces, then the clear of `block`'s word 0: posted once the CAS won.
// `found` backs the verbs (its header is re-stamped): it must outlive their posting.
void AdoptRedoRecord(FoundRecord* found, GlobalAddress block, uint64_t word, std::vector<fabric::Verb>* adopt,
                     std::vector<fabric::Verb>* finish);

// For a taker that keeps the dead holder's word (a restarted memory server freeing an earlier
// incarnation's words, server_locks.h): reads the record `dead_word` names, writes its pieces
// and clears it in one in-order batch. Dying midway leaves the word and the record as they
// were: the next taker replays again (idempotent). *replayed: whether a record was replayed.
Status ReplayRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                        uint32_t node_bytes, bool* replayed);

}  // namespace dmindex::tree
