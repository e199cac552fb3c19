#include "test_fabrics.h"

#include <stdexcept>

#include "fabric/inproc/inproc_fabric.h"
#include "fabric/ucx/memserver_process.h"

namespace dmindex::testing {

std::vector<std::string> TestFabricNames() { return {"inproc", "ucx-shm", "ucx-tcp"}; }

std::unique_ptr<fabric::Fabric> MakeTestFabric(const std::string& name, uint64_t pool_bytes) {
  if (name == "inproc") {
    fabric::InProcOptions o;
    o.memory_nodes = 2;
    o.pool_bytes = pool_bytes;
    o.node.chunk_bytes = 1 << 20;
    auto f = fabric::InProcFabric::Create(o);
    if (!f.ok()) throw std::runtime_error(f.status().ToString());
    return std::move(f).value();
  }
  if (name == "ucx-shm" || name == "ucx-tcp") {
    // Two `dmindex memserver` processes on free ports; the fabric stops them when destroyed.
    fabric::ucx::MemserverSpec spec;
    spec.tool_path = DMINDEX_TOOL_PATH;
    spec.pool_bytes = pool_bytes;
    spec.chunk_bytes = 1 << 20;
    spec.transport = name == "ucx-shm" ? fabric::ucx::UcxTransport::kShm
                                       : fabric::ucx::UcxTransport::kTcp;
    fabric::ucx::UcxOptions client;
    client.transport = spec.transport;
    auto f = fabric::ucx::StartLocalUcxCluster(spec, 2, client);
    if (!f.ok()) throw std::runtime_error(f.status().ToString());
    return std::move(f).value();
  }
  throw std::invalid_argument("unknown test fabric " + name);
}

}  // namespace dmindex::testing
