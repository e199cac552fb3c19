// Which incarnation of a memory node's pool this is. Pools are volatile: a memory server
// that restarts starts with an empty, zeroed pool, and every index that was in it is gone.
// A random id written at pool creation (pool_layout.h) and reported in the UCX handshake
// lets a client tell "the server I was using restarted" from "nothing changed", and lets an
// error about a missing index say how young the pool it looked in is.
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

// The record at kPoolIdentityOffset of every pool.
struct PoolIdentityRecord {
  static constexpr uint64_t kMagic = 0x31304c4f4f50584dull;  // "MXPOOL01"
  uint64_t magic;
  uint64_t id;
  uint64_t created_unix_ms;
};

// Writes `identity` into a pool whose offset 0 is at `pool` (MemoryNode, at creation).
void WritePoolIdentity(std::byte* pool, const PoolIdentity& identity);
// Reads memory node `node`'s pool identity with one READ; Corruption if there is none.
Result<PoolIdentity> ReadPoolIdentity(Endpoint& ep, uint16_t node);

}  // namespace dmindex::fabric
