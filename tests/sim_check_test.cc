// `dmindex check --fabric sim` (docs/SIMULATION.md, docs/CHECK.md): the correctness harness on
// the simulated cluster. In modelled compute mode a run is a function of its seed, so the same
// seed gives the identical history - a failing schedule is a reproducible bug - and another
// seed gives another schedule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim_test_bed.h"
#include "test_fabrics.h"

namespace dmindex::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SimCheckTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SimCheckTest, TheSameSeedGivesTheIdenticalHistory) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  const std::string design = GetParam();
  const std::string dir = ::testing::TempDir() + "/sim-check-" + design + "-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string histories[3];
  const uint64_t seeds[3] = {11, 11, 12};
  for (int i = 0; i < 3; ++i) {
    const std::string out = dir + "/h" + std::to_string(i) + ".json";
    ToolRun run = RunTool("check --fabric sim --design " + design + " --threads 32 --ops 200 --rounds 2 --seed " +
                          std::to_string(seeds[i]) + " --history-out " + out);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("dmindex check: OK"), std::string::npos) << run.output;
    histories[i] = ReadFile(out);
    ASSERT_GT(histories[i].size(), 1000u);
  }
  EXPECT_TRUE(histories[0] == histories[1]) << design << ": seed 11 gave two different histories";
  EXPECT_FALSE(histories[0] == histories[2]) << design << ": seeds 11 and 12 gave the same history";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, SimCheckTest, ::testing::Values("naive", "sherman", "dex", "local"));

TEST(SimCheckCli, BadSimulationFlagsAreRefusedNamingThem) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  ToolRun run = RunTool("check --fabric sim --platform /nonexistent.xml");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("/nonexistent.xml"), std::string::npos) << run.output;
  run = RunTool("check --fabric sim --compute modelled:verb=x");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("verb"), std::string::npos) << run.output;
  run = RunTool("check --platform " DMINDEX_PLATFORM_DIR "/dex-vldb24.xml");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--fabric sim"), std::string::npos) << run.output;
  run = RunTool("bench --fabric sim --memory-nodes 3 --ops 10");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--memory-nodes"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace dmindex::testing
