// Where an index lives: a cluster of memory nodes. Either an embedded cluster inside this
// process (memory nodes are regions of its memory: the default, to try dmindex and to test
// with) or running `dmindex memserver` processes reached over UCX.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmindex/status.h"

namespace dmindex {

namespace internal {
struct ClusterAccess;  // dmindex's own layers reach the connection through it (src/api)
}

struct EmbeddedCluster {
  uint16_t memory_nodes = 2;
  uint64_t pool_bytes = 1ull << 30;  // per memory node; reserved, touched only as used
  // A modelled network: every round trip costs this much (0: the raw in-process cost), and
  // bytes move at this bandwidth (0: unlimited).
  double round_trip_us = 0;
  double bandwidth_gbps = 0;
};

enum class Transport {
  kShm,  // UCX shared memory: servers on this machine
  kTcp,  // UCX over TCP
};

struct MemoryServers {
  // "HOST:PORT" of each `dmindex memserver`; memory node i is the i-th.
  std::vector<std::string> addresses;
  Transport transport = Transport::kShm;  // must be the servers' --transport
  // The cluster's key file (the servers' --cluster-key); empty: ~/.dmindex/cluster-key.
  std::string cluster_key_file;
  std::chrono::milliseconds connect_timeout{5000};
  // Longest wait for any verb or RPC before it is Unavailable.
  std::chrono::milliseconds op_timeout{10000};
};

// A connection to a cluster. Indexes opened on it keep it alive (shared_ptr); one cluster
// can hold many indexes, each by its own name.
class Cluster {
 public:
  static Result<std::shared_ptr<Cluster>> Open(const EmbeddedCluster& embedded = {});
  // Unavailable if a server cannot be reached (within connect_timeout) or refuses us;
  // NotSupported if the program does not link dmindex::ucx (docs/C_API.md, "What a program links").
  static Result<std::shared_ptr<Cluster>> Open(const MemoryServers& servers);

  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  uint16_t memory_nodes() const;
  // "inproc", "ucx-shm" or "ucx-tcp".
  std::string backend() const;
  // Verbs issued over this connection so far, by every index and session on it (exact
  // counts): "dmindex.fabric.reads", ".writes", ".atomics", ".rpcs", ".round-trips",
  // ".bytes" (payload moved, both ways). PropertyNames() lists them.
  std::optional<uint64_t> GetIntProperty(std::string_view name) const;
  std::vector<std::string> PropertyNames() const;

 private:
  friend struct internal::ClusterAccess;
  struct Connection;  // the internal connection to the memory nodes
  explicit Cluster(std::unique_ptr<Connection> connection);

  std::unique_ptr<Connection> connection_;
};

}  // namespace dmindex
