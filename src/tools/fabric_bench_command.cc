// `dmindex fabric-bench`: latency and throughput of the fabric's verbs, per backend.
#include <CLI/CLI.hpp>

#include <iostream>

#include "bench/verb_bench.h"
#include "fabric/inproc/inproc_fabric.h"
#include "tools/commands.h"

namespace dmindex::tools {

void AddFabricBenchCommand(CLI::App& app) {
  struct Flags {
    bench::VerbBenchOptions bench;
    double latency_us = 0;
    double bandwidth_gbps = 0;
    uint16_t memory_nodes = 2;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "fabric-bench", "Latency (p50, p99) and throughput of each verb, a batch of 4 READs and an RPC");
  cmd->add_option("--ops", flags->bench.latency_ops, "Operations timed one by one per verb")
      ->check(CLI::Range(100u, 100000000u));
  cmd->add_option("--seconds", flags->bench.throughput_seconds, "Seconds of the throughput run per verb")
      ->check(CLI::Range(0.01, 600.0));
  cmd->add_option("--threads", flags->bench.threads, "Threads of the throughput run")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--node-size", flags->bench.node_bytes, "Bytes of the node-sized READs/WRITEs")
      ->check(CLI::Range(8u, 1u << 20));
  cmd->add_option("--memory-nodes", flags->memory_nodes, "In-process memory nodes")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--latency-us", flags->latency_us, "In-process: modelled cost of a round trip")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--bandwidth-gbps", flags->bandwidth_gbps, "In-process: modelled bandwidth (0 = unlimited)")
      ->check(CLI::Range(0.0, 1e4));
  cmd->callback([flags] {
    fabric::InProcOptions o;
    o.memory_nodes = flags->memory_nodes;
    o.pool_bytes = 1ull << 30;
    o.round_trip_ns = static_cast<uint64_t>(flags->latency_us * 1000);
    o.bandwidth_gbps = flags->bandwidth_gbps;
    auto fabric = fabric::InProcFabric::Create(o);
    if (!fabric.ok()) {
      std::cerr << "fabric-bench: " << fabric.status().ToString() << "\n";
      throw CLI::RuntimeError(1);
    }
    auto rows = bench::RunVerbBench(**fabric, flags->bench);
    if (!rows.ok()) {
      std::cerr << "fabric-bench: " << rows.status().ToString() << "\n";
      throw CLI::RuntimeError(1);
    }
    std::cout << bench::FormatVerbBenchTable(*rows, flags->bench.threads);
  });
}

}  // namespace dmindex::tools
