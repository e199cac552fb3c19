// dmindex::ucx: Cluster::Open(MemoryServers) over the UCX fabric (src/api/ucx_component.h).
#include "api/ucx_component.h"

#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_fabric.h"

namespace dmindex::internal {
namespace {

Result<std::shared_ptr<fabric::Fabric>> ConnectMemoryServers(const MemoryServers& servers) {
  std::vector<fabric::ucx::HostPort> list;
  for (const std::string& address : servers.addresses) {
    auto hp = fabric::ucx::ParseHostPort(address);
    if (!hp.ok()) return hp.status();
    list.push_back(std::move(hp).value());
  }
  fabric::ucx::UcxOptions o;
  o.transport = servers.transport == Transport::kTcp ? fabric::ucx::UcxTransport::kTcp
                                                     : fabric::ucx::UcxTransport::kShm;
  o.cluster_key_file = servers.cluster_key_file;
  o.connect_timeout = servers.connect_timeout;
  o.op_timeout = servers.op_timeout;
  auto f = fabric::ucx::UcxFabric::Create(std::move(list), o);
  if (!f.ok()) return f.status();
  return std::shared_ptr<fabric::Fabric>(std::move(f).value());
}

}  // namespace
}  // namespace dmindex::internal

extern "C" const dmindex::internal::UcxComponent* dmindex_ucx_component() {
  static const dmindex::internal::UcxComponent component{.connect = dmindex::internal::ConnectMemoryServers};
  return &component;
}
