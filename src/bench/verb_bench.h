// Micro-benchmark of the fabric itself: latency and throughput of each verb, of a batch of
// 4 READs and of an RPC round trip, on whatever Fabric it is given. It is what the index
// designs' costs are built from, so it is measured per backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dmindex/status.h"
#include "fabric/fabric.h"

namespace dmindex::bench {

struct VerbBenchOptions {
  uint32_t latency_ops = 20000;     // timed one at a time, single thread
  double throughput_seconds = 1.0;  // per verb, with `threads` threads
  uint32_t threads = 2;
  uint32_t node_bytes = 1024;       // size of the "node" READs and WRITEs
};

struct VerbBenchRow {
  std::string backend;
  std::string op;
  double p50_us = 0;
  double p99_us = 0;
  double mops_1thread = 0;   // from the latency run: 1 / mean latency
  double mops_threads = 0;   // aggregate over `threads` threads
};

Result<std::vector<VerbBenchRow>> RunVerbBench(fabric::Fabric& fabric, const VerbBenchOptions& options);

std::string FormatVerbBenchTable(const std::vector<VerbBenchRow>& rows, uint32_t threads);

}  // namespace dmindex::bench
