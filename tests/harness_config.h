// The settings of the correctness harness (index_harness_test.cc), shared with the tests that
// prove the harness can fail (checker_test.cc), so both run literally the same phase.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "check/workload.h"
#include "designs/registry.h"
#include "dmindex/index.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex::testing {

// DMINDEX_SOAK=<n> multiplies the harness's operation counts and rounds by n (default 1).
inline uint32_t SoakFactor() {
  const char* soak = std::getenv("DMINDEX_SOAK");
  if (soak == nullptr) return 1;
  const long n = std::strtol(soak, nullptr, 10);
  return n > 1 ? static_cast<uint32_t>(n) : 1;
}

// Small nodes, so a few thousand keys already make a tree of several levels and the hot key
// space of the concurrent phase spans several leaves that split while threads race; two
// compute nodes, so designs with per-compute-node caches and locks are exercised across them.
// The bytes format allows the longest keys of the API (kMaxKeyBytes): designs that keep keys
// inside their nodes need nodes that hold a few of them - raise node_bytes for the bytes
// format here when switching such a design on.
inline IndexOptions HarnessIndexOptions(const std::string& name, KeyFormat format = KeyFormat::kU64) {
  IndexOptions o;
  o.name = name;
  o.node_bytes = 512;
  o.compute_nodes = 2;
  o.key_format = format;
  if (format == KeyFormat::kBytes) o.max_key_bytes = kMaxKeyBytes;
  return o;
}

// Torn multi-cache-line READs/WRITEs and occasional delayed round trips: what makes
// unvalidated optimistic reads return garbage (DEX section 2.3; Ziegler et al. SIGMOD'23).
inline fabric::FaultOptions HarnessFaults() {
  fabric::FaultOptions f;
  f.tear = true;
  f.delay_probability = 0.01;
  f.delay_max_us = 50;
  return f;
}

// An in-process fabric of two memory nodes with `faults` switched on. `chunk_bytes`: what a
// memory node hands out at a time, also the largest block (a 1 MiB value's needs 1.25 MiB).
inline std::unique_ptr<fabric::InProcFabric> MakeHarnessFabric(const fabric::FaultOptions& faults,
                                                               uint64_t chunk_bytes = 1 << 20) {
  fabric::InProcOptions o;
  o.memory_nodes = 2;
  o.pool_bytes = 256ull << 20;  // reserved lazily: only what the test touches is used
  o.node.chunk_bytes = chunk_bytes;
  o.faults = faults;
  o.prepare_node = designs::RegisterMemoryNodeHandlers;
  auto f = fabric::InProcFabric::Create(o);
  if (!f.ok()) throw std::runtime_error(f.status().ToString());
  return std::move(f).value();
}

inline check::WorkloadOptions HarnessWorkload() {
  check::WorkloadOptions w;
  w.threads = 8;
  w.keys = 128;
  w.ops_per_thread = 1500;
  w.compute_nodes = 2;
  return w;
}

inline uint32_t HarnessRounds() { return 2 * SoakFactor(); }

}  // namespace dmindex::testing
