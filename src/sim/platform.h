// A simulated cluster as a SimGrid platform file describes it (platforms/*.xml; the format
// and every property are documented in docs/SIMULATION.md): compute servers, memory servers
// with their NICs' message rates, and the links and routes between them.
//
// Hosts say what they are with properties:
//   dmindex.role = compute   a compute server: its cores run client threads at its speed
//                            (cycles per second); dmindex.threads = client threads it runs
//                            (default: its cores)
//   dmindex.role = memory    a memory server: its cores run RPC handlers (at most one per
//                            core at once); dmindex.rpc-cycles = the CPU a two-sided message
//                            costs it besides the handler (receive, dispatch, reply). Its NIC's
//                            rates, each a FIFO engine: dmindex.nic-messages-per-s (READ, WRITE,
//                            SEND), dmindex.nic-atomics-per-s (CAS/FAA on host memory) and
//                            dmindex.nic-device-atomics-per-s (CAS/FAA on the lock table, which
//                            stands for the NIC's own memory; default: the host-memory rate)
// The zone's dmindex.verb-header-bytes is the header each verb, request and response adds on
// the wire; its dmindex.round-trip-ns is the round trip of a small READ on the idle platform
// that the platform's numbers were chosen to give (tests/sim_micro_test.cc checks it).
#pragma once

#include <string>
#include <vector>

#include "dmindex/status.h"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace dmindex::sim {

struct ComputeServer {
  simgrid::s4u::Host* host = nullptr;
  uint32_t threads = 0;
};

struct MemoryServer {
  simgrid::s4u::Host* host = nullptr;
  uint32_t cores = 0;
  double rpc_cycles = 0;
  double messages_per_s = 0;        // READ/WRITE/SEND messages its NIC serves
  double atomics_per_s = 0;         // CAS/FAA on host memory
  double device_atomics_per_s = 0;  // CAS/FAA on the lock table (the NIC's memory)
};

struct Platform {
  std::string file;
  std::vector<ComputeServer> compute;  // in host-name order (cs2 before cs10)
  std::vector<MemoryServer> memory;    // in host-name order: memory node i is memory[i]
  double verb_header_bytes = 0;
  double round_trip_ns = 0;  // 0: not stated

  uint32_t total_threads() const;
  // Reads the hosts of the engine's loaded platform; InvalidArgument naming the host and the
  // property when the file does not describe a usable cluster (no compute or memory server,
  // a missing NIC engine, no route between a compute and a memory server).
  static Result<Platform> FromEngine(const simgrid::s4u::Engine& engine, std::string file);
  // One line: "platforms/dex-vldb24.xml: 4 compute servers (144 threads), 4 memory servers".
  std::string Describe() const;
};

}  // namespace dmindex::sim
