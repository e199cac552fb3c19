// `dmindex bench --fabric sim` (docs/SIMULATION.md) runs every registered design on both
// shipped platforms: the platform's client threads (144 on the DEX testbed, 176 on Sherman's),
// one compute node per compute server, writes and scans as well as lookups, and each design's
// results check out (the bench's own checks of every value read and the final full scan).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "designs/registry.h"
#include "sim_test_bed.h"
#include "test_fabrics.h"

namespace dmindex::testing {
namespace {

struct PlatformCase {
  std::string name;
  uint32_t threads;  // the platform's client threads
  uint32_t compute_servers;
};
void PrintTo(const PlatformCase& p, std::ostream* os) { *os << p.name; }

class SimBenchTest : public ::testing::TestWithParam<PlatformCase> {};

TEST_P(SimBenchTest, EveryRegisteredDesignRunsOnThePlatform) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  const PlatformCase& p = GetParam();
  const std::string json = ::testing::TempDir() + "/sim-bench-" + p.name + "-" + std::to_string(getpid()) + ".json";
  // No --design: every registered design. dex-wi: lookups and updates; dex-si: scans and inserts.
  // 1 GiB pools (mapped lazily): every compute node that writes takes a 32 MiB chunk on each
  // memory node for its sessions' redo blocks (tree/redo_log.h), 8 on sherman-sigmod22.
  ToolRun run = RunTool("bench --fabric sim --platform " + PlatformFile(p.name) +
                        " --compute modelled --keys 4000 --warmup-ops 300 --ops 1200 --workload dex-wi,dex-si "
                        "--pool-size 1G --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("simulated ops per real second"), std::string::npos) << run.output;
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json));
  std::filesystem::remove(json);
  std::map<std::string, int> runs;
  for (const auto& r : all) {
    const std::string label = r["design"].get<std::string>() + " " + r["workload"].get<std::string>();
    ++runs[r["design"].get<std::string>()];
    EXPECT_TRUE(r["error"].is_null() || r["error"].get<std::string>().empty()) << label << ": " << r["error"];
    EXPECT_EQ(r["threads"].get<uint32_t>(), p.threads) << label;
    EXPECT_EQ(r["compute_nodes"].get<uint32_t>(), p.compute_servers) << label;
    EXPECT_EQ(r["ops"].get<uint64_t>(), 1200u) << label;
    // Simulated time: positive, and far below what the real run took (2-core machine, ~10^5 ops/s).
    EXPECT_GT(r["seconds"].get<double>(), 0.0) << label;
    EXPECT_LT(r["seconds"].get<double>(), 0.1) << label;
    EXPECT_GT(r["sim_real_seconds"].get<double>(), 0.0) << label;
    EXPECT_EQ(r["verify_error"].get<std::string>(), "") << label;
    EXPECT_TRUE(r["verified"].get<bool>()) << label;
    // Designs in the pool make round trips; those living in this process (local, indexy,
    // the store baselines, btree-disk) none.
    if (designs::SharedAcrossProcesses(r["design"].get<std::string>()).ok()) {
      EXPECT_GT(r["round_trips_per_op"].get<double>(), 0.0) << label;
    }
  }
  for (const std::string& design : designs::DesignNames()) EXPECT_EQ(runs[design], 2) << design << " did not run both workloads";
}

INSTANTIATE_TEST_SUITE_P(ShippedPlatforms, SimBenchTest,
                         ::testing::Values(PlatformCase{"dex-vldb24", 144, 4}, PlatformCase{"sherman-sigmod22", 176, 8}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace dmindex::testing
