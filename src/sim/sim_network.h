// The simulated network: times the in-process fabric's verbs and RPCs on the platform
// (fabric/network_model.h), while the fabric keeps its regions, checks and accounting.
//
// A batch of verbs from a thread on compute server C to the memory servers it names:
//  1. request: one transfer C -> M per memory server M, carrying the WRITE payloads and a
//     header per verb, over the platform's route (its links' latency; bandwidth shared with
//     every concurrent transfer by SimGrid's flow model);
//  2. M's NIC: one message per READ/WRITE on the NIC's message engine, one per CAS/FAA on its
//     atomic engine (host memory) or device-atomic engine (the lock table, which stands for
//     the NIC's own memory). Each engine is a FIFO server at its platform rate: a message is
//     served when the engine is free, in arrival order, as a NIC pipeline serves requests, so
//     throughput saturates at the rate. (Not SimGrid's fair CPU sharing: that finishes
//     simultaneous arrivals simultaneously, keeping clients in lockstep with the engine idle
//     while they all travel - the real pipeline overlaps them.)
//  3. the verbs land (their memory effects, in posting order): all of one batch at one instant;
//  4. response: one transfer M -> C per memory server, carrying the READ payloads, 8 bytes
//     per atomic and a header per verb.
// The memory servers of an unordered batch are served concurrently (each phase overlaps across
// them); an in-order batch names one memory server and its verbs land in order.
//
// A message of at most kSmallMessageBytes (a READ request, an atomic, a small WRITE, their
// responses) takes its route's latency plus its size at the route's bandwidth, computed
// rather than simulated as a SimGrid transfer: it saves two thirds of the simulation events of
// a small verb, and its share of a link (a 256-byte message holds a 100 Gb/s port for 20 ns)
// is left out of the sharing among transfers. Larger ones are SimGrid transfers.
//
// An RPC: the request travels, M's NIC takes one message, the handler runs on M's cores (the
// memory node's bounded RPC threads, one per core) with the server's messaging work
// (dmindex.rpc-cycles), then the reply travels back.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "fabric/network_model.h"
#include "sim/platform.h"
#include "sim/sim_runtime.h"

namespace dmindex::sim {

class SimNetwork final : public fabric::NetworkModel {
 public:
  static constexpr double kSmallMessageBytes = 256;

  SimNetwork(const Platform& platform, SimRuntime& runtime);

  const char* name() const override { return "sim"; }
  Status Post(std::span<const fabric::Verb> verbs, fabric::Ordering ordering,
              const std::function<Status()>& land) override;
  Status PostUnwaited(std::span<const fabric::Verb> verbs, fabric::Ordering ordering,
                      const std::function<Status()>& land) override;
  Status Call(uint16_t node, size_t request_bytes, const fabric::RpcReply* reply,
              const std::function<Status()>& serve) override;

 private:
  // A FIFO engine of a NIC: when it is next free, and how long one message takes.
  struct Engine {
    double free_at = 0;
    double seconds_per_message = 0;
    // Queues `messages` arriving now; returns when the last is served.
    double Serve(double now, double messages);
  };
  struct Nic {
    Engine messages, atomics, device_atomics;
  };

  // A route's latency (seconds) and bottleneck bandwidth (bytes per second).
  struct Route {
    double latency = 0, bandwidth = 0;
    double Seconds(double bytes) const { return latency + bytes / bandwidth; }
  };
  const Route& RouteOf(simgrid::s4u::Host* from, simgrid::s4u::Host* to);

  const Platform& platform_;
  SimRuntime& runtime_;
  std::vector<Nic> nics_;  // per memory server; actors change them only between simulation calls
  std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, Route> routes_;
};

}  // namespace dmindex::sim
