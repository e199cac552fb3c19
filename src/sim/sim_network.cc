#include "sim/sim_network.h"

#include <simgrid/s4u.hpp>

#include <algorithm>

#include "fabric/pool_layout.h"

namespace dmindex::sim {
namespace {

namespace sg = simgrid::s4u;
using fabric::Verb;
using fabric::VerbKind;

// What one batch asks of one memory server.
struct Leg {
  uint16_t node = 0;
  double request_bytes = 0, response_bytes = 0;
  double messages = 0, atomics = 0, device_atomics = 0;
};

bool OnDevice(const Verb& v) {
  return v.remote.offset() >= fabric::kLockTableOffset && v.remote.offset() < fabric::kChunkAreaOffset;
}

// One transfer per leg, all at once, between the caller's host and the legs' memory servers;
// waits for all.
void Transfer(const Platform& platform, sg::Host* me, const std::vector<Leg>& legs, bool to_server) {
  auto send = [&](const Leg& l, bool async) {
    sg::Host* server = platform.memory[l.node].host;
    const auto bytes = static_cast<uint64_t>(to_server ? l.request_bytes : l.response_bytes);
    sg::Host* from = to_server ? me : server;
    sg::Host* to = to_server ? server : me;
    if (!async) {
      sg::Comm::sendto(from, to, bytes);
      return sg::CommPtr();
    }
    return sg::Comm::sendto_async(from, to, bytes);
  };
  if (legs.size() == 1) {
    send(legs[0], false);
    return;
  }
  std::vector<sg::CommPtr> comms;
  for (const Leg& l : legs) comms.push_back(send(l, true));
  sg::Comm::wait_all(comms);
}

}  // namespace

SimNetwork::SimNetwork(const Platform& platform, SimRuntime& runtime) : platform_(platform), runtime_(runtime) {
  for (const MemoryServer& m : platform_.memory) {
    Nic nic;
    nic.messages.seconds_per_message = 1 / m.messages_per_s;
    nic.atomics.seconds_per_message = 1 / m.atomics_per_s;
    nic.device_atomics.seconds_per_message = 1 / m.device_atomics_per_s;
    nics_.push_back(nic);
  }
}

const SimNetwork::Route& SimNetwork::RouteOf(sg::Host* from, sg::Host* to) {
  auto [it, fresh] = routes_.try_emplace({from, to});
  if (fresh) {
    std::vector<sg::Link*> links;
    from->route_to(to, links, &it->second.latency);
    it->second.bandwidth = 1e300;
    for (const sg::Link* l : links) it->second.bandwidth = std::min(it->second.bandwidth, l->get_bandwidth());
  }
  return it->second;
}

double SimNetwork::Engine::Serve(double now, double messages) {
  if (messages <= 0) return now;
  free_at = std::max(free_at, now) + messages * seconds_per_message;
  return free_at;
}

// The legs of a batch: what it asks of each memory server it reaches.
static std::vector<Leg> LegsOf(std::span<const Verb> verbs, double header) {
  std::vector<Leg> legs;
  for (const Verb& v : verbs) {
    Leg* leg = nullptr;
    for (Leg& l : legs)
      if (l.node == v.remote.node()) leg = &l;
    if (leg == nullptr) leg = &legs.emplace_back(Leg{v.remote.node()});
    leg->request_bytes += header;
    leg->response_bytes += header;
    switch (v.kind) {
      case VerbKind::kRead:
        leg->response_bytes += v.length;
        leg->messages += 1;
        break;
      case VerbKind::kWrite:
        leg->request_bytes += v.length;
        leg->messages += 1;
        break;
      case VerbKind::kCas:
      case VerbKind::kFaa:
        leg->request_bytes += v.kind == VerbKind::kCas ? 16 : 8;  // compare and swap words / addend
        leg->response_bytes += 8;                                 // the old word
        (OnDevice(v) ? leg->device_atomics : leg->atomics) += 1;
        break;
    }
  }
  return legs;
}

Status SimNetwork::PostUnwaited(std::span<const Verb> verbs, fabric::Ordering ordering,
                                const std::function<Status()>& land) {
  (void)ordering;
  // The caller goes on at once: the batch's requests still take their NICs' time (queued
  // as they arrive, computed as for a small request), so the verbs behind them wait for it,
  // but nobody sleeps. The verbs land now rather than at their arrival - a simulation of the
  // batch in flight would need an actor of its own.
  runtime_.Enter(CallKind::kVerb);
  sg::Host* me = runtime_.host();
  const double now = sg::Engine::get_clock();
  for (const Leg& l : LegsOf(verbs, platform_.verb_header_bytes)) {
    const double arrival = now + RouteOf(me, platform_.memory[l.node].host).Seconds(l.request_bytes);
    Nic& nic = nics_[l.node];
    nic.messages.Serve(arrival, l.messages);
    nic.atomics.Serve(arrival, l.atomics);
    nic.device_atomics.Serve(arrival, l.device_atomics);
  }
  Status s = land();
  runtime_.Resume();
  return s;
}

Status SimNetwork::Post(std::span<const Verb> verbs, fabric::Ordering ordering,
                        const std::function<Status()>& land) {
  (void)ordering;  // one batch lands at one instant, in posting order: both orderings hold
  runtime_.Enter(CallKind::kVerb);
  sg::Host* me = runtime_.host();
  const std::vector<Leg> legs = LegsOf(verbs, platform_.verb_header_bytes);
  auto small = [&](bool request) {
    return std::all_of(legs.begin(), legs.end(), [&](const Leg& l) {
      return (request ? l.request_bytes : l.response_bytes) <= kSmallMessageBytes;
    });
  };
  // 1. The requests: computed when small, else transferred (then all arrived by now).
  const bool small_requests = small(true);
  if (!small_requests) Transfer(platform_, me, legs, true);
  const double now = sg::Engine::get_clock();
  // 2. The NICs serve what arrives, in the order it is queued: no simulation call between
  // queueing and sleeping, and every request of a route takes the same time to arrive.
  double served = now;
  for (const Leg& l : legs) {
    const double arrival = small_requests ? now + RouteOf(me, platform_.memory[l.node].host).Seconds(l.request_bytes) : now;
    Nic& nic = nics_[l.node];
    served = std::max({served, arrival, nic.messages.Serve(arrival, l.messages), nic.atomics.Serve(arrival, l.atomics),
                       nic.device_atomics.Serve(arrival, l.device_atomics)});
  }
  if (served > now) sg::this_actor::sleep_until(served);
  // 3. The verbs land.
  Status s = land();
  // 4. The responses.
  if (small(false)) {
    double back = 0;
    for (const Leg& l : legs) back = std::max(back, RouteOf(platform_.memory[l.node].host, me).Seconds(l.response_bytes));
    sg::this_actor::sleep_for(back);
  } else {
    Transfer(platform_, me, legs, false);
  }
  runtime_.Resume();
  return s;
}

Status SimNetwork::Call(uint16_t node, size_t request_bytes, const fabric::RpcReply* reply,
                        const std::function<Status()>& serve) {
  runtime_.Enter(CallKind::kRpc);
  sg::Host* me = runtime_.host();
  const MemoryServer& m = platform_.memory[node];
  const double header = platform_.verb_header_bytes;
  const double request = header + static_cast<double>(request_bytes);
  double arrival = sg::Engine::get_clock();
  if (request <= kSmallMessageBytes)
    arrival += RouteOf(me, m.host).Seconds(request);
  else
    sg::Comm::sendto(me, m.host, static_cast<uint64_t>(request));
  const double received = nics_[node].messages.Serve(arrival, 1);
  if (received > sg::Engine::get_clock()) sg::this_actor::sleep_until(received);
  runtime_.BeginServe(m.host, m.rpc_cycles);
  Status s = serve();
  runtime_.EndServe();
  const double response = header + static_cast<double>(reply->size());
  if (response <= kSmallMessageBytes)
    sg::this_actor::sleep_for(RouteOf(m.host, me).Seconds(response));
  else
    sg::Comm::sendto(m.host, me, static_cast<uint64_t>(response));
  runtime_.Resume();
  return s;
}

}  // namespace dmindex::sim
