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

double SimNetwork::Engine::Serve(double now, double messages) {
  if (messages <= 0) return now;
  free_at = std::max(free_at, now) + messages * seconds_per_message;
  return free_at;
}

Status SimNetwork::Post(std::span<const Verb> verbs, fabric::Ordering ordering,
                        const std::function<Status()>& land) {
  (void)ordering;  // one batch lands at one instant, in posting order: both orderings hold
  runtime_.Enter(CallKind::kVerb);
  sg::Host* me = runtime_.host();
  const double header = platform_.verb_header_bytes;
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
  Transfer(platform_, me, legs, true);
  // The NICs serve what arrived; no simulation call between queueing and sleeping, so the
  // engines' order is the order of arrival.
  const double now = sg::Engine::get_clock();
  double served = now;
  for (const Leg& l : legs) {
    Nic& nic = nics_[l.node];
    served = std::max({served, nic.messages.Serve(now, l.messages), nic.atomics.Serve(now, l.atomics),
                       nic.device_atomics.Serve(now, l.device_atomics)});
  }
  if (served > now) sg::this_actor::sleep_until(served);
  Status s = land();
  Transfer(platform_, me, legs, false);
  runtime_.Resume();
  return s;
}

Status SimNetwork::Call(uint16_t node, size_t request_bytes, const fabric::RpcReply* reply,
                        const std::function<Status()>& serve) {
  runtime_.Enter(CallKind::kRpc);
  sg::Host* me = runtime_.host();
  const MemoryServer& m = platform_.memory[node];
  const double header = platform_.verb_header_bytes;
  sg::Comm::sendto(me, m.host, static_cast<uint64_t>(header + request_bytes));
  const double now = sg::Engine::get_clock();
  const double received = nics_[node].messages.Serve(now, 1);
  if (received > now) sg::this_actor::sleep_until(received);
  runtime_.BeginServe(m.host, m.rpc_cycles);
  Status s = serve();
  runtime_.EndServe();
  sg::Comm::sendto(m.host, me, static_cast<uint64_t>(header + reply->size()));
  runtime_.Resume();
  return s;
}

}  // namespace dmindex::sim
