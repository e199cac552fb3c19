// The flags that choose and shape a fabric, shared by every subcommand that needs one
// (fabric-bench, bench): the embedded in-process cluster by default, running memory servers
// with --memservers, or memory servers this process starts itself (ucx-shm, ucx-tcp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dmindex/cluster.h"
#include "dmindex/status.h"
#include "fabric/fabric.h"
#include "fabric/inproc/inproc_fabric.h"

namespace CLI {
class App;
}

namespace dmindex::sim {
class Simulation;
}

namespace dmindex::tools {

// --cluster-key FILE, for every command that runs or reaches memory servers.
void AddClusterKeyFlag(CLI::App& cmd, std::string* file);

struct FabricFlags {
  // inproc: the embedded cluster (or --memservers); sim: the embedded cluster timed by a
  // simulated platform (--platform, docs/SIMULATION.md).
  std::string fabric = "inproc";
  std::string platform;          // sim: SimGrid platform file (default: the DEX testbed's)
  std::string compute;           // sim: measured | modelled[:kind=cycles...]; a command's default
  std::string calibration;       // sim, modelled: per-design costs (default: the shipped file)
  std::string memservers;        // "HOST:PORT,..." of running `dmindex memserver`s
  std::string transport = "shm";  // with --memservers: shm | tcp (must match the servers)
  std::string cluster_key;       // UCX: the cluster key's file; empty = the default
  uint16_t memory_nodes = 2;     // in-process / self-started servers
  std::string pool_size = "2G";  // per memory node, in-process / self-started servers
  uint32_t rpc_threads = 1;      // in-process: RPC handlers a memory node runs at once
  // In-process: modelled round trip. A command sets its default before AddTo; only an
  // explicit --latency-us is an error with --memservers.
  double latency_us = 0;
  double bandwidth_gbps = 0;     // in-process: modelled bandwidth, 0 = unlimited
  fabric::FaultOptions faults;   // in-process only; set by commands that inject faults
  bool latency_given = false;    // --latency-us was on the command line
  bool memory_nodes_given = false;
  bool compute_given = false;
  // The simulation --fabric sim runs in (StartSimulation); not owned.
  sim::Simulation* simulation = nullptr;

  void AddTo(CLI::App& cmd);
  // backend: "inproc", "ucx-shm" or "ucx-tcp" (self-started local servers), or "" for what
  // the flags say (--memservers given: those servers; else inproc).
  Result<std::unique_ptr<fabric::Fabric>> Open(const std::string& backend = "") const;
  // The same fabric as a Cluster, for opening indexes through the public API (Index::Open).
  Result<std::shared_ptr<Cluster>> OpenCluster(const std::string& backend = "") const;

  // --fabric sim: the simulation the fabric lives in (one per process), for the caller to
  // keep (it must outlive every fabric opened from these flags) and to run in (RunOn);
  // otherwise null.
  Result<std::unique_ptr<sim::Simulation>> StartSimulation(uint64_t seed);
  // Runs `body` on this fabric: directly, or as the main thread of the simulation (exceptions
  // it throws, e.g. a command's CLI::RuntimeError, come out here). A simulation that fails
  // (deadlocks) is an error Status.
  Status RunOn(const std::function<void()>& body) const;
  // One line saying which fabric this is, for a command's header.
  std::string Describe() const;
};

}  // namespace dmindex::tools
