// `dmindex fabric-bench`: latency and throughput of the fabric's verbs, per backend.
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "bench/verb_bench.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"

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
  AddCount(*cmd, "--ops", &flags->bench.latency_ops, 100, 100'000'000,
           "Operations timed one by one per verb (default " +
               std::to_string(flags->bench.latency_ops) + ")");
  AddDuration(*cmd, "--seconds", &flags->bench.throughput_seconds, 1.0, {0.01, 600},
              "Seconds of the throughput run per verb (default " +
                  FormatNumber(flags->bench.throughput_seconds) + ")");
  AddCount(*cmd, "--threads", &flags->bench.threads, 1, 1024,
           "Threads of the throughput run (default " + std::to_string(flags->bench.threads) + ")");
  AddCount(*cmd, "--node-size", &flags->bench.node_bytes, 8, 1u << 20,
           "Bytes of the node-sized READs/WRITEs (default " + std::to_string(flags->bench.node_bytes) + ")");
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
