// `dmindex fabric-bench`: latency and throughput of the fabric's verbs, per backend.
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "bench/verb_bench.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"

namespace dmindex::tools {

void AddFabricBenchCommand(CLI::App& app) {
  struct Flags {
    bench::VerbBenchOptions bench;
    FabricFlags fabric;
    std::vector<std::string> backends;
  };
  auto flags = std::make_shared<Flags>();
  flags->fabric.pool_size = "1G";
  CLI::App* cmd = app.add_subcommand(
      "fabric-bench", "Latency (p50, p99) and throughput of each verb, a batch of 4 READs and an RPC");
  cmd->add_option("--ops", flags->bench.latency_ops, "Operations timed one by one per verb")
      ->check(CLI::Range(100u, 100000000u))
      ->capture_default_str();
  cmd->add_option("--seconds", flags->bench.throughput_seconds, "Seconds of the throughput run per verb")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  cmd->add_option("--threads", flags->bench.threads, "Threads of the throughput run")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--node-size", flags->bench.node_bytes, "Bytes of the node-sized READs/WRITEs")
      ->check(CLI::Range(8u, 1u << 20))
      ->capture_default_str();
  cmd->add_option("--backends", flags->backends,
                  "Backends to measure, in one run: inproc, ucx-shm, ucx-tcp (the UCX ones start "
                  "--memory-nodes local memory servers); default: inproc, or --memservers")
      ->delimiter(',')
      ->check(CLI::IsMember({"inproc", "ucx-shm", "ucx-tcp"}));
  flags->fabric.AddTo(*cmd);
  cmd->callback([flags] {
    std::vector<std::string> backends = flags->backends;
    if (backends.empty()) backends.push_back("");  // what --memservers says, else inproc
    std::vector<bench::VerbBenchRow> all;
    for (const std::string& b : backends) {
      auto fabric = flags->fabric.Open(b);
      Status s = fabric.status();
      if (fabric.ok()) {
        auto rows = bench::RunVerbBench(**fabric, flags->bench);
        s = rows.status();
        if (rows.ok()) all.insert(all.end(), rows->begin(), rows->end());
      }
      if (!s.ok()) {
        std::cerr << "fabric-bench " << (b.empty() ? "" : b + ": ") << s.ToString() << "\n";
        throw CLI::RuntimeError(1);
      }
    }
    std::cout << bench::FormatVerbBenchTable(all, flags->bench.threads);
  });
}

}  // namespace dmindex::tools
