// Fabrics the backend-independent tests run on. Each name makes a fresh cluster of two
// memory nodes; tests parameterised over these names check that every backend keeps the
// same contract.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fabric/fabric.h"

namespace dmindex::testing {

// Names of the fabrics available in this build ("inproc", and the UCX ones).
std::vector<std::string> TestFabricNames();

// A live fabric with two memory nodes of `pool_bytes` each (plus whatever keeps it alive,
// e.g. memory-server processes, owned by the returned object).
std::unique_ptr<fabric::Fabric> MakeTestFabric(const std::string& name,
                                               uint64_t pool_bytes = 64ull << 20);

}  // namespace dmindex::testing
