#include "test_fabrics.h"

#include <stdexcept>

#include "fabric/inproc/inproc_fabric.h"

namespace dmindex::testing {

std::vector<std::string> TestFabricNames() { return {"inproc"}; }

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
  throw std::invalid_argument("unknown test fabric " + name);
}

}  // namespace dmindex::testing
