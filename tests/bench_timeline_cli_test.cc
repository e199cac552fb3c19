// `dmindex bench --timeline-ms` and `--repartition-at` as a user meets them: DEX (write-
// intensive, three compute nodes, a scale-out node joining mid-run) reports the expected
// intervals and the repartitioning and still passes the full-scan check; `dmindex plot`
// draws the timeline; bad values and designs without partitions are clear errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_fabrics.h"

namespace {

using dmindex::testing::RunTool;
using dmindex::testing::ToolRun;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmx_tl_cli_" + std::to_string(getpid()) + "_" + name)).string();
}

void ExpectError(const std::string& args, const std::string& message) {
  ToolRun r = RunTool(args);
  EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
}

TEST(BenchTimelineCli, HelpDocumentsTheFlags) {
  ToolRun r = RunTool("bench --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* flag : {"--timeline-ms", "--repartition-at", "--repartition-from", "--repartition-to",
                           "--repartition-share", "--scale-out"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

TEST(BenchTimelineCli, DexRepartitionsMidRunAndTheTreeStaysWhole) {
  const std::string json = TempPath("fig10.json"), csv = TempPath("fig10.csv"), png = TempPath("fig10.png");
  ToolRun r = RunTool("bench --design dex --workload dex-wi --keys 20000 --threads 3 --compute-nodes 3 "
                      "--warmup-ops 3000 --duration 1 --timeline-ms 200 --repartition-at 0.4 "
                      "--repartition-from 1 --scale-out --cache-pct 8 --json " + json + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("# throughput, round trips per operation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the index's memory over time, per 200 ms interval"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("to scale-out compute node 2"), std::string::npos) << r.output;
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(all.size(), 1u);
  const nlohmann::json& run = all[0];
  EXPECT_EQ(run["verified"], true) << run["verify_error"];
  EXPECT_EQ(run["error"], "");
  // 1 s in 200 ms intervals; the last one ends when the threads have stopped. How late the
  // sampler wakes is the scheduler's business (on a loaded machine it missed 0.6 and 0.8 s,
  // and its sample at 0.83 s closed one longer interval; tests/bench_timeline_test.cc pins
  // that rule down with given times): asserted here is only what holds whenever it wakes.
  const nlohmann::json& timeline = run["timeline"];
  ASSERT_GE(timeline.size(), 1u);
  ASSERT_LE(timeline.size(), 5u) << timeline.dump();
  uint64_t ops = 0;
  for (size_t i = 0; i < timeline.size(); ++i) {
    const double end_s = timeline[i]["end_s"].get<double>();
    EXPECT_DOUBLE_EQ(timeline[i]["start_s"].get<double>(), i ? timeline[i - 1]["end_s"].get<double>() : 0.0);
    if (i + 1 < timeline.size()) {
      EXPECT_GE(end_s, 0.2 * static_cast<double>(i + 1) - 1e-9) << i;  // never before its boundary
    } else {
      EXPECT_GE(end_s, 1.0 - 1e-9);  // the phase ran its whole second
    }
    ops += timeline[i]["ops"].get<uint64_t>();
  }
  EXPECT_EQ(ops, run["ops"].get<uint64_t>());
  const nlohmann::json& move = run["repartition"];
  ASSERT_TRUE(move.is_object()) << run.dump();
  EXPECT_EQ(move["ran"], true);
  EXPECT_EQ(move["from"], 1);
  EXPECT_EQ(move["to"], 2);
  EXPECT_GE(move["start_s"].get<double>(), 0.4);
  EXPECT_GE(move["end_s"].get<double>(), move["start_s"].get<double>());
  EXPECT_GT(move["moved_keys"].get<uint64_t>(), 0u);
  EXPECT_EQ(move["moved_keys"].get<uint64_t>() * 2, move["from_keys"].get<uint64_t>() + (move["from_keys"].get<uint64_t>() % 2));
  EXPECT_NE(move["boundaries_before"], move["boundaries_after"]);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("timeline_throughput_ops"), std::string::npos) << header;
  EXPECT_NE(header.find("repartition_end_s"), std::string::npos) << header;

  ToolRun plot = RunTool("plot " + json + " --out " + png);
  ASSERT_EQ(plot.exit_code, 0) << plot.output;
  EXPECT_GT(std::filesystem::file_size(png), 10'000u);
  for (const auto& f : {json, csv, png}) std::filesystem::remove(f);
}

TEST(BenchTimelineCli, TimelineWithoutRepartitioningWorksForAnyDesign) {
  const std::string json = TempPath("plain.json");
  ToolRun r = RunTool("bench --design sherman --workload ycsb-c --keys 5000 --threads 2 --warmup-ops 500 "
                      "--duration 0.5 --timeline-ms 100 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json));
  // 0.5 s in 100 ms intervals: five, or fewer when the sampler woke late (see above).
  EXPECT_GE(all[0]["timeline"].size(), 1u);
  EXPECT_LE(all[0]["timeline"].size(), 5u);
  EXPECT_GE(all[0]["timeline"].back()["end_s"].get<double>(), 0.5 - 1e-9);
  EXPECT_TRUE(all[0]["repartition"].is_null());
  EXPECT_EQ(all[0]["verified"], true);
  std::filesystem::remove(json);
}

TEST(BenchTimelineCli, BadValuesAndDesignsWithoutPartitionsAreClearErrors) {
  const std::string run = "bench --design dex --workload dex-wi --keys 2000 --warmup-ops 100 ";
  ExpectError(run + "--timeline-ms 0", "--timeline-ms: '0': expected a duration [1, ");
  ExpectError(run + "--repartition-at 0.5", "needs --compute-nodes 2 or more");
  ExpectError(run + "--threads 2 --compute-nodes 2 --duration 1 --repartition-at 3", "is not within the 1 s");
  ExpectError(run + "--threads 2 --compute-nodes 2 --ops 1000 --repartition-at 0.5", "needs a timed run");
  ExpectError(run + "--threads 2 --compute-nodes 2 --repartition-at 0.5 --repartition-share 1.5",
              "--repartition-share: '1.5': expected a number (0, 1]");
  ExpectError(run + "--threads 3 --compute-nodes 3 --repartition-at 0.5 --repartition-to 2",
              "must be a neighbour of --repartition-from 0");
  ExpectError(run + "--threads 3 --compute-nodes 3 --repartition-at 0.5 --repartition-from 3",
              "compute nodes are numbered 0..2");
  ExpectError(run + "--repartition-from 1", "--repartition-from needs --repartition-at");
  ExpectError(run + "--scale-out", "--scale-out needs --repartition-at");
  ExpectError("bench --design sherman --workload dex-wi --keys 2000 --warmup-ops 100 --threads 2 "
              "--compute-nodes 2 --duration 1 --repartition-at 0.5",
              "sherman serves every key on every compute node: it has no logical partitions");
  ExpectError(run + "--design dex:partition=off --threads 2 --compute-nodes 2 --duration 1 --repartition-at 0.5",
              "no logical partitions");
}

}  // namespace
