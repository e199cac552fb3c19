// The production fabric: memory servers are `dmindex memserver` processes reached over UCX
// (shared memory or TCP here; the same code drives RDMA verbs on a cluster). Memory node i
// is the i-th server of the list. Each Endpoint owns one UCP worker (one per thread, as UCX
// scales that way) with an endpoint and an unpacked remote key per server.
//
// Failures come back as Status, never hangs: an unreachable server is Unavailable within
// connect_timeout, a server that dies makes verbs and RPCs to it Unavailable (liveness
// monitor, below), and every wait for a completion is bounded by op_timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/pool_identity.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/liveness_monitor.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"

namespace dmindex::fabric::ucx {

struct UcxOptions {
  UcxTransport transport = UcxTransport::kShm;  // must match the servers' --transport
  std::chrono::milliseconds connect_timeout{5000};
  // Longest wait for any verb batch or RPC before it is Unavailable (the server hangs, or
  // a persistent pool's server is restarting and not back yet).
  std::chrono::milliseconds op_timeout{10000};
  // How long a persistent pool's server may take to come back after it went away before
  // the fabric gives it up (and fails every operation); liveness_monitor.h.
  std::chrono::milliseconds restart_wait{60000};
  // UCX_NET_DEVICES for TCP; empty = "lo" when every server is on a loopback address.
  std::string net_devices;
  // The cluster key's file, the same the memory servers read (cluster_key.h); empty =
  // ~/.dmindex/cluster-key, created if absent.
  std::string cluster_key_file;
};

class UcxFabric final : public Fabric {
 public:
  // `servers`: "HOST:PORT,HOST:PORT,...".
  static Result<std::unique_ptr<UcxFabric>> Create(std::string_view servers,
                                                   const UcxOptions& options);
  static Result<std::unique_ptr<UcxFabric>> Create(std::vector<HostPort> servers,
                                                   const UcxOptions& options);
  ~UcxFabric() override;

  uint16_t memory_nodes() const override { return static_cast<uint16_t>(servers_.size()); }
  const char* backend_name() const override;

  const UcxOptions& options() const { return options_; }
  const HostPort& server(uint16_t node) const { return servers_[node].address; }
  uint64_t pool_bytes(uint16_t node) const { return servers_[node].pool_bytes; }
  // The pool this fabric found at Create. A volatile pool's server that restarts has a new
  // one, and none of the old one's contents: the fabric then fails every operation
  // (Unavailable, saying so). A persistent pool (--data-dir) comes back with its server.
  const PoolIdentity& pool_identity(uint16_t node) const { return servers_[node].pool; }
  bool pool_persistent(uint16_t node) const { return servers_[node].persistent; }
  // Whether the server's process is known to be gone (its socket closed) and not back.
  bool IsNodeDown(uint16_t node) const { return monitor_->IsDown(node); }
  // Unavailable, naming the server, for a node that IsNodeDown.
  Status NodeDownError(uint16_t node) const;
  // A memory node whose pool is lost (a volatile pool's server died, or came back with
  // another pool) loses every index with memory on it, and the fabric cannot tell which
  // indexes those are: from then on every operation fails with this Unavailable, naming the
  // node. OK while no pool is lost.
  Status LostPool() const { return monitor_->FirstLost(); }
  const LivenessMonitor& monitor() const { return *monitor_; }

  // Keeps `resource` alive until after this fabric has disconnected, e.g. the memory-server
  // processes a test or benchmark started for it (memserver_process.h).
  void Own(std::shared_ptr<void> resource) { owned_.push_back(std::move(resource)); }

 protected:
  Result<std::unique_ptr<Endpoint>> DoConnect() override;

 private:
  friend class UcxEndpoint;
  struct Server {
    HostPort address;
    uint64_t pool_bytes = 0;
    PoolIdentity pool;
    bool persistent = false;
  };
  // The monitor's reconnection attempt for a persistent pool's server (liveness_monitor.h).
  LivenessMonitor::Attempt Reconnect(uint16_t node) const;
  std::string ServerName(uint16_t node) const;
  UcxFabric(const UcxOptions& options, ClusterKey key) : options_(options), key_(std::move(key)) {}

  // Declared first, destroyed last: servers outlive every connection to them.
  std::vector<std::shared_ptr<void>> owned_;
  const UcxOptions options_;
  const ClusterKey key_;
  std::vector<Server> servers_;
  std::unique_ptr<UcxContext> context_;
  std::unique_ptr<LivenessMonitor> monitor_;
  std::atomic<bool> warned_emulated_{false};  // see UcxEndpoint::Connect
};

}  // namespace dmindex::fabric::ucx
