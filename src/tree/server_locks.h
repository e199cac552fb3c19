// The locks of a memory server's own tree (XStore's server-side writes, docs/XSTORE.md), and
// what a restarted server does about those its killed predecessor held (docs/LOCK_TAKEOVER.md,
// "A memory server's own locks").
//
// The server's tree holds lock-table words under lease::Lease::OfMemoryServer: a word names
// lease::MemoryServerHolder(the server's incarnation on its pool) and the redo block of the
// server's session, and every write under it is recorded first, as any holder's (lock_word.h,
// redo_log.h). Only the pool's own server writes such words, one server runs on a pool at a
// time, and nobody else frees them (observers never fence a memory server). So when
// incarnation i starts, a word naming another incarnation was left by a dead process: the
// start finishes the write it may have left half done from its record, as a takeover does,
// and frees the word - before the node serves anyone.
#pragma once

#include <cstdint>

#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "lease/lease_table.h"

namespace dmindex::tree {

struct ServerLockRecovery {
  uint64_t freed = 0;     // lock words of earlier incarnations freed
  uint64_t replayed = 0;  // of them, with a half-done write finished from its redo record
};

// Frees every word of memory node `node`'s lock table that names a memory-server holder other
// than `current`, replaying its redo record first. `ep` reaches `node`. Only before the node
// serves anyone (fabric::MemoryNode::OnIdKnown): its words may change under no one else.
Result<ServerLockRecovery> FreeLocksOfEarlierIncarnations(fabric::Endpoint& ep, uint16_t node,
                                                          lease::HolderId current);

}  // namespace dmindex::tree
