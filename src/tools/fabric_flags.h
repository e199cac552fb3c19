// The flags that choose and shape a fabric, shared by every subcommand that needs one
// (fabric-bench, bench): the embedded in-process cluster by default, running memory servers
// with --memservers, or memory servers this process starts itself (ucx-shm, ucx-tcp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dmindex/cluster.h"
#include "dmindex/status.h"
#include "fabric/fabric.h"
#include "fabric/inproc/inproc_fabric.h"

namespace CLI {
class App;
}

namespace dmindex::tools {

// --cluster-key FILE, for every command that runs or reaches memory servers.
void AddClusterKeyFlag(CLI::App& cmd, std::string* file);

struct FabricFlags {
  std::string memservers;        // "HOST:PORT,..." of running `dmindex memserver`s
  std::string transport = "shm";  // with --memservers: shm | tcp (must match the servers)
  std::string cluster_key;       // UCX: the cluster key's file; empty = the default
  uint16_t memory_nodes = 2;     // in-process / self-started servers
  std::string pool_size = "2G";  // per memory node, in-process / self-started servers
  // In-process: modelled round trip. A command sets its default before AddTo; only an
  // explicit --latency-us is an error with --memservers.
  double latency_us = 0;
  double bandwidth_gbps = 0;     // in-process: modelled bandwidth, 0 = unlimited
  fabric::FaultOptions faults;   // in-process only; set by commands that inject faults
  bool latency_given = false;    // --latency-us was on the command line

  void AddTo(CLI::App& cmd);
  // backend: "inproc", "ucx-shm" or "ucx-tcp" (self-started local servers), or "" for what
  // the flags say (--memservers given: those servers; else inproc).
  Result<std::unique_ptr<fabric::Fabric>> Open(const std::string& backend = "") const;
  // The same fabric as a Cluster, for opening indexes through the public API (Index::Open).
  Result<std::shared_ptr<Cluster>> OpenCluster(const std::string& backend = "") const;
};

}  // namespace dmindex::tools
