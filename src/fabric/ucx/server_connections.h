// The memory server's side of the out-of-band channel (wire.h): accepts TCP connections,
// runs each handshake as a small non-blocking state machine (so a silent or garbage-sending
// peer never stalls the server), checks it is signed with the cluster key before anything
// in it is used, creates the UCP endpoint that RPC replies go out on, and tears it down
// when the client's socket closes. Runs on the progress thread only.
#pragma once

#include <poll.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fabric/memory_node.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {

// What every client is told about this server's pool.
struct PoolExport {
  uint64_t base = 0;  // virtual address of pool offset 0 in the server
  uint64_t bytes = 0;
  std::vector<std::byte> rkey;
  PoolIdentity identity;
  bool persistent = false;  // kept in a file (--data-dir): it survives a restart
};

class ServerConnections {
 public:
  // `node` learns its id from the clients' handshakes (MemoryNode::AssignId); only
  // handshakes signed with `key` are served.
  ServerConnections(Socket listener, const UcxContext& context, UcxWorker& worker,
                    MemoryNode& node, PoolExport pool, ClusterKey key, std::string log_prefix);
  ~ServerConnections();  // closes every client's endpoint
  ServerConnections(const ServerConnections&) = delete;
  ServerConnections& operator=(const ServerConnections&) = delete;

  // The listener and every connection, for poll(); pass the polled entries to Service().
  void AppendPollFds(std::vector<pollfd>* fds) const;
  // Accepts, advances handshakes, drops departed, misbehaving or too-slow peers.
  void Service(std::span<const pollfd> polled);
  // The endpoint RPC replies for `connection_id` go out on; null once that client is gone.
  ucp_ep_h ReplyEndpoint(uint32_t connection_id) const;
  // Whether a request naming `connection_id` and `token` comes from the signed client of a
  // live connection (its Welcome's token): anything else on UCX's port is not served.
  bool Authentic(uint32_t connection_id, uint64_t token) const;
  size_t size() const { return connections_.size(); }

 private:
  struct Connection;
  enum class Step { kKeep, kDrop };

  void Accept();
  void DropOldestPendingIfFull();
  Step Receive(Connection& c);
  Step TryHandshake(Connection& c);
  Step SendWelcome(Connection& c, const wire::Hello& hello);
  Status AssignNodeId(const Connection& c, uint32_t memory_node);
  Step Refuse(Connection& c, const Status& why);
  void Drop(Connection& c);
  void Log(const std::string& message) const;
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);

  Socket listener_;
  const UcxContext& context_;
  UcxWorker& worker_;
  MemoryNode& node_;
  const PoolExport pool_;
  const ClusterKey key_;
  const std::string log_prefix_;
  uint32_t next_id_ = 1;
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace dmindex::fabric::ucx
