// Client side of the out-of-band handshake with a memory server (wire.h): connect over TCP,
// answer the server's challenge with a Hello signed by the cluster key saying which
// transport, which memory node the server is in our list and (for endpoint connections)
// which UCP worker to reply to; receive the pool's base, size, identity, remote key and the
// server's worker address, signed by the server. The socket stays open afterwards: its
// closing is how each side learns that the other is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "dmindex/status.h"
#include "fabric/pool_identity.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {

struct ServerWelcome {
  Socket socket;
  uint32_t connection_id = 0;
  uint64_t connection_token = 0;          // sent with every RPC and verb message
  uint64_t pool_base = 0;
  uint64_t pool_bytes = 0;
  PoolIdentity pool;                      // changes when a volatile pool's server restarts
  bool persistent = false;                // the pool survives its server (--data-dir)
  std::vector<std::byte> rkey;            // packed; unpack per endpoint
  std::vector<std::byte> worker_address;  // the server's UCP worker
};

// Unavailable if the server cannot be reached or does not answer within `timeout`; the
// server's own refusal (another cluster key, a transport mismatch, another client numbering
// it differently) comes back with its code and message; a welcome not signed with `key` is
// Unavailable, and nothing of it reaches UCX.
Result<ServerWelcome> Handshake(const HostPort& server, const ClusterKey& key, uint16_t memory_node,
                                wire::ConnectionKind kind, UcxTransport transport,
                                std::span<const std::byte> worker_address,
                                std::chrono::milliseconds timeout);

}  // namespace dmindex::fabric::ucx
