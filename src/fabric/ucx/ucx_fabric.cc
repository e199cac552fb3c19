#include "fabric/ucx/ucx_fabric.h"

#include "fabric/ucx/bootstrap.h"
#include "fabric/ucx/ucx_endpoint.h"

namespace dmindex::fabric::ucx {

Result<std::unique_ptr<UcxFabric>> UcxFabric::Create(std::string_view servers,
                                                     const UcxOptions& options) {
  auto list = ParseHostPortList(servers);
  if (!list.ok()) return list.status();
  return Create(std::move(list).value(), options);
}

Result<std::unique_ptr<UcxFabric>> UcxFabric::Create(std::vector<HostPort> servers,
                                                     const UcxOptions& options) {
  if (servers.empty()) return Status::InvalidArgument("no memory servers given");
  if (servers.size() > UINT16_MAX) return Status::InvalidArgument("too many memory servers");
  if (options.connect_timeout.count() <= 0 || options.op_timeout.count() <= 0)
    return Status::InvalidArgument("UCX timeouts must be positive");
  auto key = ClusterKey::Load(options.cluster_key_file);
  if (!key.ok()) return key.status();
  std::unique_ptr<UcxFabric> f(new UcxFabric(options, std::move(key).value()));

  UcxContextOptions co;
  co.transport = options.transport;
  co.net_devices = options.net_devices;
  bool all_loopback = true;
  for (const HostPort& s : servers) all_loopback = all_loopback && IsLoopbackHost(s.host);
  if (co.net_devices.empty() && options.transport == UcxTransport::kTcp && all_loopback)
    co.net_devices = "lo";
  auto ctx = UcxContext::Create(co);
  if (!ctx.ok()) return ctx.status();
  f->context_ = std::move(ctx).value();

  // One monitor connection per server: proves it is there, speaks our transport and agrees
  // to be memory node i now (rather than at the first Connect), tells the pool size, then
  // watches for its death.
  std::vector<LivenessMonitor::Watched> watched;
  for (uint16_t i = 0; i < servers.size(); ++i) {
    const HostPort& s = servers[i];
    auto welcome = Handshake(s, f->key_, i, wire::ConnectionKind::kMonitor, options.transport, {},
                             options.connect_timeout);
    if (!welcome.ok()) return welcome.status();
    f->servers_.push_back({s, welcome->pool_bytes, welcome->pool, welcome->persistent});
    watched.push_back({std::move(welcome->socket), welcome->persistent, f->ServerName(i)});
  }
  UcxFabric* self = f.get();
  f->monitor_ = std::make_unique<LivenessMonitor>(
      std::move(watched), [self](uint16_t node) { return self->Reconnect(node); },
      options.restart_wait);
  return f;
}

std::string UcxFabric::ServerName(uint16_t node) const {
  return "memory server " + server(node).ToString() + " (memory node " + std::to_string(node) + ")";
}

LivenessMonitor::Attempt UcxFabric::Reconnect(uint16_t node) const {
  // A short wait per attempt: while the server is down the port refuses at once; a server
  // that accepts but is slow to answer is tried again on the next attempt.
  const auto timeout = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
  auto welcome = Handshake(server(node), key_, node, wire::ConnectionKind::kMonitor,
                           options_.transport, {}, timeout);
  LivenessMonitor::Attempt a;
  if (!welcome.ok()) {
    // Not there yet, or not answering yet; a refusal (another cluster key, another numbering)
    // will not go away by waiting.
    if (!welcome.status().IsUnavailable())
      a.lost = Status::Unavailable(ServerName(node) + " came back but refuses this process: " +
                                   welcome.status().ToString());
    return a;
  }
  if (welcome->pool != pool_identity(node) || welcome->pool_bytes != pool_bytes(node)) {
    a.lost = Status::Unavailable(ServerName(node) + " restarted with another pool: it now serves " +
                                 welcome->pool.ToString() + ", this process was using " +
                                 pool_identity(node).ToString() + "; every index it held is lost");
    return a;
  }
  a.socket = std::move(welcome->socket);
  return a;
}

UcxFabric::~UcxFabric() {
  monitor_.reset();
  context_.reset();
}

Status UcxFabric::NodeDownError(uint16_t node) const {
  if (Status lost = LostPool(); !lost.ok()) return lost;
  return Status::Unavailable(ServerName(node) + " is down; its pool is persistent and this "
                             "process reconnects when it is back (an operation in flight now "
                             "may or may not have taken effect)");
}

const char* UcxFabric::backend_name() const {
  return options_.transport == UcxTransport::kShm ? "ucx-shm" : "ucx-tcp";
}

Result<std::unique_ptr<Endpoint>> UcxFabric::DoConnect() {
  auto ep = UcxEndpoint::Connect(*this);
  if (!ep.ok()) return ep.status();
  return std::unique_ptr<Endpoint>(std::move(ep).value());
}

}  // namespace dmindex::fabric::ucx
