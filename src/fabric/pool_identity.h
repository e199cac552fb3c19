// Which incarnation of a memory node's pool this is. A volatile pool (the default) is new on
// every server start: a memory server that restarts starts with an empty, zeroed pool, and
// every index that was in it is gone. A persistent pool (`memserver --data-dir`) keeps its
// bytes, and with them its identity, across restarts. A random id written at pool creation
// (pool_layout.h) and reported in the UCX handshake lets a client tell "the server I was
// using came back with my pool" from "it came back with another one", and lets an error
// about a missing index say how young the pool it looked in is.
#pragma once

#include <cstdint>
#include <string>

#include "dmindex/status.h"

namespace dmindex::fabric {

class Endpoint;

struct PoolIdentity {
  uint64_t id = 0;               // random, never 0 for a real pool
  uint64_t created_unix_ms = 0;  // wall-clock time of creation

  // A fresh identity, created now.
  static PoolIdentity New();
  // "pool 3fa2c1d09b7e4410, created 2025-01-02 10:11:12 UTC (42 s ago)".
  std::string ToString() const;
  friend bool operator==(const PoolIdentity&, const PoolIdentity&) = default;
};

// The record at kPoolIdentityOffset of every pool. Clients read its first three words;
// the rest is the memory server's own: what the pool was created as (checked when a
// persistent pool is restored) and its chunk allocator's state, kept in the pool so that a
// persistent pool's allocator survives the server process with the chunks it handed out.
struct PoolIdentityRecord {
  // Layout 2 ("MXPOOL02"): lock words name leases, and each lock table's last 4 K words are
  // XStore's memory servers' (wire.h's protocol 04). A pool of layout 1 is refused, not
  // served: processes of that layout lock anywhere in the table.
  static constexpr uint64_t kMagic = 0x32304c4f4f50584dull;    // "MXPOOL02"
  static constexpr uint64_t kMagicV1 = 0x31304c4f4f50584dull;  // "MXPOOL01"
  uint64_t magic;
  uint64_t id;
  uint64_t created_unix_ms;
  uint64_t pool_bytes;     // as created
  uint64_t chunk_bytes;    // as created
  uint64_t next_chunk;     // bump pointer into the chunk area
  uint64_t free_head;      // first freed chunk (0: none); each holds the next in its word 0
  uint64_t chunks_in_use;
};

// Writes `identity` into a pool whose offset 0 is at `pool` (MemoryNode, at creation).
void WritePoolIdentity(std::byte* pool, const PoolIdentity& identity);
// The identity of a pool restored from a file (`memserver --data-dir`), checked against what
// the server is asked to serve: InvalidArgument for another size or chunk size, Corruption
// for a record that is not a pool identity. `where` names the file for the message.
Result<PoolIdentity> CheckRestoredPool(const std::byte* pool, uint64_t pool_bytes,
                                       uint64_t chunk_bytes, const std::string& where);
// Reads memory node `node`'s pool identity with one READ; Corruption if there is none.
Result<PoolIdentity> ReadPoolIdentity(Endpoint& ep, uint16_t node);

}  // namespace dmindex::fabric
