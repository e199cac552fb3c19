// Cluster::Open: the embedded in-process cluster, or running memory servers over UCX (when the
// program links dmindex::ucx: ucx_component.h).
#include "dmindex/cluster.h"

#include <cmath>

#include "api/cluster_access.h"
#include "api/ucx_component.h"

#include "designs/registry.h"
#include "fabric/fabric.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/pool_layout.h"

namespace dmindex {

struct Cluster::Connection {
  std::shared_ptr<fabric::Fabric> fabric;
};

Cluster::Cluster(std::unique_ptr<Connection> connection) : connection_(std::move(connection)) {}

Cluster::~Cluster() = default;

std::shared_ptr<Cluster> internal::ClusterAccess::Over(std::shared_ptr<fabric::Fabric> fabric) {
  return std::shared_ptr<Cluster>(new Cluster(std::make_unique<Cluster::Connection>(std::move(fabric))));
}

fabric::Fabric& internal::ClusterAccess::FabricOf(const Cluster& cluster) { return *cluster.connection_->fabric; }

uint16_t Cluster::memory_nodes() const { return connection_->fabric->memory_nodes(); }

std::string Cluster::backend() const { return connection_->fabric->backend_name(); }

namespace {

std::vector<std::pair<std::string, uint64_t>> FabricProperties(const fabric::Fabric& f) {
  const fabric::VerbCounts v = f.TotalCounts();
  return {{"dmindex.fabric.reads", v.reads},
          {"dmindex.fabric.writes", v.writes},
          {"dmindex.fabric.atomics", v.atomics()},
          {"dmindex.fabric.rpcs", v.rpcs},
          {"dmindex.fabric.round-trips", v.round_trips},
          {"dmindex.fabric.bytes", v.bytes()}};
}

}  // namespace

std::optional<uint64_t> Cluster::GetIntProperty(std::string_view name) const {
  for (const auto& [n, v] : FabricProperties(*connection_->fabric))
    if (n == name) return v;
  return std::nullopt;
}

std::vector<std::string> Cluster::PropertyNames() const {
  std::vector<std::string> names;
  for (auto& [n, v] : FabricProperties(*connection_->fabric)) names.push_back(std::move(n));
  return names;
}

Result<std::shared_ptr<Cluster>> Cluster::Open(const EmbeddedCluster& embedded) {
  if (embedded.memory_nodes == 0) return Status::InvalidArgument("an embedded cluster needs memory nodes");
  if (embedded.pool_bytes < fabric::kMinPoolBytes)
    return Status::InvalidArgument("pool_bytes " + std::to_string(embedded.pool_bytes) +
                                   " is below the minimum of " + std::to_string(fabric::kMinPoolBytes));
  if (!(std::isfinite(embedded.round_trip_us) && embedded.round_trip_us >= 0) ||
      !(std::isfinite(embedded.bandwidth_gbps) && embedded.bandwidth_gbps >= 0))
    return Status::InvalidArgument("round_trip_us and bandwidth_gbps must be finite and >= 0");
  fabric::InProcOptions o;
  o.memory_nodes = embedded.memory_nodes;
  o.pool_bytes = embedded.pool_bytes;
  o.round_trip_ns = static_cast<uint64_t>(embedded.round_trip_us * 1000);
  o.prepare_node = designs::RegisterMemoryNodeHandlers;
  o.bandwidth_gbps = embedded.bandwidth_gbps;
  auto f = fabric::InProcFabric::Create(o);
  if (!f.ok()) return f.status();
  return ClusterOver(std::shared_ptr<fabric::Fabric>(std::move(f).value()));
}

Result<std::shared_ptr<Cluster>> Cluster::Open(const MemoryServers& servers) {
  if (dmindex_ucx_component == nullptr)
    return Status::NotSupported("memory servers are reached over UCX, which is not linked into this program; "
                                "link dmindex::ucx");
  auto f = dmindex_ucx_component()->connect(servers);
  if (!f.ok()) return f.status();
  return ClusterOver(std::move(f).value());
}

}  // namespace dmindex
