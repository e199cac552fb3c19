// What an operator sees of a DEX index in the pool, and the two repairs a dead process may
// need (`dmindex indexes`): its host leases, and the partition map's change lock.
#pragma once

#include <cstdint>
#include <string>

#include "alloc/catalog.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::designs::dex {

// Lines describing the partition map (version, locked or not) and, per compute node, its
// keys and the token of the process hosting it.
Result<std::string> DescribeDexIndex(fabric::Endpoint& ep, const alloc::CatalogEntry& entry);
// Frees compute node `compute_node`'s lease if it still holds `token` (a process that died
// holding it; a live one would keep serving from its cache, so only for dead ones).
Status ReleaseDexHost(fabric::Endpoint& ep, const alloc::CatalogEntry& entry,
                      uint32_t compute_node, uint64_t token);
// Releases the map's change lock left by a process that died while repartitioning.
Status UnlockDexMap(fabric::Endpoint& ep, const alloc::CatalogEntry& entry);

}  // namespace dmindex::designs::dex
