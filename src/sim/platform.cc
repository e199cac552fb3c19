#include "sim/platform.h"

#include <simgrid/s4u.hpp>

#include <algorithm>

#include "common/parse_values.h"

namespace dmindex::sim {
namespace {

namespace sg = simgrid::s4u;

std::string Prop(const sg::Host& h, const char* name) {
  const char* v = h.get_property(name);
  return v == nullptr ? std::string() : std::string(v);
}

Result<double> RealProp(const sg::Host& h, const char* name, double fallback) {
  const std::string text = Prop(h, name);
  if (text.empty()) return fallback;
  auto v = ParseReal(text, RealRange{0, 1e15});
  if (!v.ok()) return Status::InvalidArgument("host " + h.get_name() + ": " + name + ": " + v.status().message());
  return *v;
}

}  // namespace

uint32_t Platform::total_threads() const {
  uint32_t n = 0;
  for (const ComputeServer& c : compute) n += c.threads;
  return n;
}

Result<Platform> Platform::FromEngine(const sg::Engine& engine, std::string file) {
  Platform p;
  p.file = std::move(file);
  std::vector<sg::Host*> hosts = engine.get_all_hosts();
  // Natural order, so that cs10 comes after cs9.
  std::sort(hosts.begin(), hosts.end(), [](const sg::Host* a, const sg::Host* b) {
    const std::string &x = a->get_name(), &y = b->get_name();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  for (sg::Host* h : hosts) {
    const std::string role = Prop(*h, "dmindex.role");
    if (role == "compute") {
      auto threads = RealProp(*h, "dmindex.threads", h->get_core_count());
      if (!threads.ok()) return threads.status();
      if (*threads < 1 || *threads != static_cast<uint32_t>(*threads))
        return Status::InvalidArgument("compute server " + h->get_name() + ": dmindex.threads must be a whole number >= 1");
      p.compute.push_back({h, static_cast<uint32_t>(*threads)});
    } else if (role == "memory") {
      MemoryServer m;
      m.host = h;
      m.cores = static_cast<uint32_t>(h->get_core_count());
      auto messages = RealProp(*h, "dmindex.nic-messages-per-s", 0);
      auto atomics = RealProp(*h, "dmindex.nic-atomics-per-s", 0);
      auto rpc = RealProp(*h, "dmindex.rpc-cycles", 0);
      for (const Status& s : {messages.status(), atomics.status(), rpc.status()})
        if (!s.ok()) return s;
      auto device = RealProp(*h, "dmindex.nic-device-atomics-per-s", *atomics);
      if (!device.ok()) return device.status();
      if (*messages <= 0 || *atomics <= 0 || *device <= 0)
        return Status::InvalidArgument("memory server " + h->get_name() +
                                       ": dmindex.nic-messages-per-s and dmindex.nic-atomics-per-s must be > 0");
      m.messages_per_s = *messages;
      m.atomics_per_s = *atomics;
      m.device_atomics_per_s = *device;
      m.rpc_cycles = *rpc;
      p.memory.push_back(m);
    } else if (!role.empty()) {
      return Status::InvalidArgument("host " + h->get_name() + ": dmindex.role = " + role +
                                     " (expected compute or memory)");
    }
  }
  if (p.compute.empty() || p.memory.empty())
    return Status::InvalidArgument(p.file + " names no compute server or no memory server (hosts with "
                                   "dmindex.role = compute / memory)");
  for (const ComputeServer& c : p.compute)
    for (const MemoryServer& m : p.memory)
      for (auto [from, to] : {std::pair{c.host, m.host}, std::pair{m.host, c.host}}) {
        std::vector<sg::Link*> links;
        double latency = 0;
        try {
          from->route_to(to, links, &latency);
        } catch (const std::exception&) {
          links.clear();  // SimGrid throws on an unknown route
        }
        if (links.empty())
          return Status::InvalidArgument(p.file + ": no route from " + from->get_name() + " to " + to->get_name());
      }
  for (auto [name, into] : {std::pair{"dmindex.verb-header-bytes", &p.verb_header_bytes},
                            std::pair{"dmindex.round-trip-ns", &p.round_trip_ns}}) {
    const char* text = engine.get_netzone_root()->get_property(name);
    if (text == nullptr) continue;
    auto v = ParseReal(text, RealRange{0, 1e9});
    if (!v.ok()) return Status::InvalidArgument(p.file + ": " + name + ": " + v.status().message());
    *into = *v;
  }
  return p;
}

std::string Platform::Describe() const {
  return file + ": " + std::to_string(compute.size()) + " compute servers (" + std::to_string(total_threads()) +
         " threads), " + std::to_string(memory.size()) + " memory servers (" +
         std::to_string(memory.front().cores) + " cores each)";
}

}  // namespace dmindex::sim
