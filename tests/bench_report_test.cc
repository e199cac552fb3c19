// Bench output: latency histogram percentiles, the run plan from flags (and its errors),
// the table with baseline ratios, JSON and CSV records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/bench_plan.h"
#include "bench/latency_histogram.h"
#include "bench/report.h"

namespace dmindex::bench {
namespace {

TEST(BenchHistogram, PercentilesWithinBucketPrecision) {
  LatencyHistogram a, b;
  // 1..100000 ns, split over two histograms that are then merged.
  for (uint64_t ns = 1; ns <= 100'000; ++ns) (ns % 2 ? a : b).Record(ns);
  a.Merge(b);
  EXPECT_EQ(a.count(), 100'000u);
  EXPECT_NEAR(a.PercentileUs(0.5), 50.0, 50.0 * 0.02);
  EXPECT_NEAR(a.PercentileUs(0.99), 99.0, 99.0 * 0.02);
  EXPECT_NEAR(a.PercentileUs(0.999), 99.9, 99.9 * 0.02);
  EXPECT_NEAR(a.MeanUs(), 50.0005, 1e-6);
  LatencyHistogram small;
  small.Record(3);
  EXPECT_DOUBLE_EQ(small.PercentileUs(0.5), 0.003);  // exact below 64 ns
  EXPECT_EQ(LatencyHistogram().PercentileUs(0.5), 0.0);
  LatencyHistogram huge;
  huge.Record(uint64_t{1} << 62);
  EXPECT_NEAR(huge.PercentileUs(1.0), std::ldexp(1.0, 62) / 1e3, std::ldexp(1.0, 62) / 1e3 * 0.02);
}

BenchOptions Options() {
  BenchOptions o;
  o.designs = {"alpha", "beta:knob=1"};
  o.workloads = {"ycsb-a", "dex-ro"};
  return o;
}
const std::vector<std::string> kRegistered = {"alpha", "beta"};

TEST(BenchPlanTest, DesignsTimesWorkloadsWithResolvedKnobs) {
  BenchOptions o = Options();
  o.keys = 1000;
  o.cache_pct = 50;
  o.theta = 0.5;
  o.threads = 4;
  o.compute_nodes = 2;
  auto plan = MakeBenchPlan(o, kRegistered);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->runs.size(), 4u);
  EXPECT_EQ(plan->baseline, "alpha");
  EXPECT_EQ(plan->runs[1].design.label, "alpha");
  EXPECT_EQ(plan->runs[1].workload.name, "dex-ro");
  EXPECT_EQ(plan->runs[2].design.knobs.at("knob"), "1");
  const RunConfig& c = plan->runs[0].config;
  EXPECT_EQ(c.keys, 1000u);
  EXPECT_EQ(c.index.cache_bytes, 8000u);  // 50% of 1000 x 16 bytes
  EXPECT_EQ(c.index.compute_nodes, 2u);
  EXPECT_EQ(c.threads, 4u);
  EXPECT_EQ(c.ops, 0u);
  EXPECT_DOUBLE_EQ(c.seconds, kDefaultSeconds);
  EXPECT_DOUBLE_EQ(plan->runs[0].workload.zipfian_theta, 0.5);
  o.cache_pct.reset();
  o.cache_mb = 2;
  EXPECT_EQ(MakeBenchPlan(o, kRegistered)->runs[0].config.index.cache_bytes, 2u << 20);
}

TEST(BenchPlanTest, DefaultsAndPropertyFileCounts) {
  BenchOptions o;
  auto plan = MakeBenchPlan(o, kRegistered);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs.size(), kRegistered.size() * DefaultWorkloads().size());
  EXPECT_EQ(plan->runs[0].config.keys, kDefaultKeys);
  EXPECT_EQ(plan->runs[0].config.index.cache_bytes, kDefaultKeys * 16 / 10);
  // A YCSB file's recordcount/operationcount apply unless flags say otherwise.
  auto path = std::filesystem::temp_directory_path() / ("dmx_plan_" + std::to_string(getpid()));
  std::ofstream(path) << "recordcount=777\noperationcount=333\nworkload=site.ycsb.workloads.CoreWorkload\n";
  o.workload_files = {path.string()};
  o.properties = {"requestdistribution=latest"};
  plan = MakeBenchPlan(o, kRegistered);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->runs.size(), 2u);  // only the file's workload
  EXPECT_EQ(plan->runs[0].config.keys, 777u);
  EXPECT_EQ(plan->runs[0].config.ops, 333u);
  EXPECT_EQ(plan->runs[0].workload.request, Distribution::kLatest);
  o.seconds = 1;  // --duration wins over operationcount, --keys over recordcount
  o.keys = 50;
  plan = MakeBenchPlan(o, kRegistered);
  std::filesystem::remove(path);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->runs[0].config.ops, 0u);
  EXPECT_EQ(plan->runs[0].config.keys, 50u);
}

TEST(BenchPlanTest, BadRequestsNameTheFlag) {
  auto error = [](BenchOptions o, const std::vector<std::string>& reg = kRegistered) {
    auto plan = MakeBenchPlan(o, reg);
    EXPECT_FALSE(plan.ok());
    return plan.status().message();
  };
  BenchOptions o = Options();
  o.designs = {"gamma"};
  EXPECT_NE(error(o).find("--design"), std::string::npos);
  o = Options();
  o.designs = {"alpha", "alpha"};
  EXPECT_NE(error(o).find("twice"), std::string::npos);
  o = Options();
  o.workloads = {"ycsb-q"};
  EXPECT_NE(error(o).find("--workload"), std::string::npos);
  o = Options();
  o.threads = 0;
  EXPECT_NE(error(o).find("--threads"), std::string::npos);
  o = Options();
  o.compute_nodes = 3;
  EXPECT_NE(error(o).find("--compute-nodes"), std::string::npos);
  o = Options();
  o.ops = 10;
  o.seconds = 1;
  EXPECT_NE(error(o).find("--ops"), std::string::npos);
  o = Options();
  o.cache_mb = 1;
  o.cache_pct = 1;
  EXPECT_NE(error(o).find("--cache"), std::string::npos);
  o = Options();
  o.baseline = "beta";  // the label is beta:knob=1
  EXPECT_NE(error(o).find("--baseline"), std::string::npos);
  o = Options();
  o.node_bytes = 100;
  EXPECT_NE(error(o).find("--node-size"), std::string::npos);
  o = Options();
  o.theta = 1.0;
  EXPECT_NE(error(o).find("theta"), std::string::npos);
  o = Options();
  o.workload_files = {"/nonexistent/workloadz"};
  EXPECT_NE(error(o).find("-P"), std::string::npos);
  o = Options();
  o.properties = {"readproportion"};
  EXPECT_NE(error(o).find("-p"), std::string::npos);
  EXPECT_NE(error(BenchOptions{}, {}).find("no index design"), std::string::npos);
}

std::vector<RunResult> TwoResults() {
  RunResult a;
  a.design = "alpha";
  a.workload = "ycsb-c";
  a.threads = 2;
  a.keys = 100;
  a.ops = 1000;
  a.seconds = 0.5;
  a.p50_us = 1.5;
  a.verbs.reads = 3000;
  a.verbs.read_bytes = 3'000'000;
  a.verbs.round_trips = 2000;
  a.verified = true;
  RunResult b = a;
  b.design = "beta";
  b.ops = 4000;
  b.cache_hits = 3;
  b.cache_misses = 1;
  b.verify_error = "key 5 is missing";
  b.verified = false;
  return {a, b};
}

TEST(BenchReport, TableShowsRatiosAgainstTheBaseline) {
  std::string table = FormatTable(TwoResults(), "alpha", TableColumns::kAll);
  std::istringstream lines(table);
  std::string header, row_a, row_b;
  std::getline(lines, header);
  std::getline(lines, row_a);
  std::getline(lines, row_b);
  EXPECT_NE(header.find("xalpha"), std::string::npos);
  EXPECT_NE(row_a.find("1.00"), std::string::npos) << table;  // baseline vs itself
  EXPECT_NE(row_b.find("4.00"), std::string::npos) << table;  // 4x the ops in the same time
  EXPECT_NE(row_b.find("75.0"), std::string::npos) << table;  // hit %
  EXPECT_NE(row_b.find("FAIL"), std::string::npos) << table;
  EXPECT_NE(row_a.find("3.00"), std::string::npos) << table;  // READ/op
  EXPECT_EQ(header.size() >= row_a.size(), true);
  EXPECT_EQ(header.find("offl/op"), std::string::npos) << "no design offloaded: no column";
}

TEST(BenchReport, OffloadColumnsAppearWhenSomeDesignOffloads) {
  auto results = TwoResults();
  results[1].offloads = 1000;         // 4000 ops
  results[1].offload_fallbacks = 40;
  std::string table = FormatTable(results, "alpha", TableColumns::kAll);
  std::istringstream lines(table);
  std::string header, row_a, row_b;
  std::getline(lines, header);
  std::getline(lines, row_a);
  std::getline(lines, row_b);
  EXPECT_NE(header.find("offl/op"), std::string::npos) << table;
  EXPECT_NE(header.find("fallb/op"), std::string::npos) << table;
  EXPECT_NE(row_b.find(" 0.250 "), std::string::npos) << table;
  EXPECT_NE(row_b.find(" 0.010 "), std::string::npos) << table;
  EXPECT_NE(row_a.find(" 0.000 "), std::string::npos) << table;
  nlohmann::ordered_json j = ToJson(results[1]);
  EXPECT_DOUBLE_EQ(j["offloads_per_op"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["offload_fallbacks_per_op"].get<double>(), 0.01);
}

TEST(BenchReport, SearchLayerCacheColumnsAppearWhenSomeDesignRefreshes) {
  auto results = TwoResults();
  EXPECT_EQ(FormatTable(results, "alpha", TableColumns::kAll).find("stale/op"), std::string::npos) << "no column";
  results[1].slc_refreshes = 7;
  results[1].stale_reads = 2000;  // 4000 ops
  std::string table = FormatTable(results, "alpha", TableColumns::kAll);
  std::istringstream lines(table);
  std::string header, row_a, row_b;
  std::getline(lines, header);
  std::getline(lines, row_a);
  std::getline(lines, row_b);
  EXPECT_NE(header.find("refreshes"), std::string::npos) << table;
  EXPECT_NE(header.find("stale/op"), std::string::npos) << table;
  EXPECT_NE(header.find("p99.99 us"), std::string::npos) << table;
  EXPECT_NE(row_b.find(" 7 "), std::string::npos) << table;
  EXPECT_NE(row_b.find(" 0.500 "), std::string::npos) << table;
  nlohmann::ordered_json j = ToJson(results[1]);
  EXPECT_EQ(j["slc_refreshes"].get<uint64_t>(), 7u);
  EXPECT_DOUBLE_EQ(j["stale_reads_per_op"].get<double>(), 0.5);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The first screen: the compared figures as columns, the rest a line per run where not zero.
TEST(BenchReport, DefaultTableShowsTheComparedFiguresAndOnlyNonZeroOthers) {
  auto results = TwoResults();
  results[1].offloads = 1000;  // 4000 ops
  results[1].cache_bytes = 3 << 20;
  const auto lines = Lines(FormatTable(results, "alpha"));
  ASSERT_GE(lines.size(), 3u);
  for (const char* column : {"design", "Mops/s", "xalpha", "p50 us", "p99 us", "RTT/op", "bytes/op", "client MB", "check"})
    EXPECT_NE(lines[0].find(column), std::string::npos) << column;
  for (const char* wide : {"READ/op", "p99.9 us", "offl/op", "hit %", "pool MB"})
    EXPECT_EQ(lines[0].find(wide), std::string::npos) << wide << " is a figure line's, not a column";
  EXPECT_NE(lines[1].find(" 1.00 "), std::string::npos) << lines[1];     // alpha vs itself
  EXPECT_NE(lines[2].find(" 4.00 "), std::string::npos) << lines[2];     // 4x the ops
  EXPECT_NE(lines[1].find(" 3000 "), std::string::npos) << lines[1];     // bytes/op
  EXPECT_NE(lines[2].find(" 3.0 "), std::string::npos) << lines[2];      // client MB
  EXPECT_NE(lines[2].find("FAIL"), std::string::npos) << lines[2];
  std::string alpha, beta;  // the figure lines
  for (const std::string& l : lines) {
    if (l.rfind("#   ycsb-c alpha ", 0) == 0) alpha = l;
    if (l.rfind("#   ycsb-c beta ", 0) == 0) beta = l;
  }
  EXPECT_NE(alpha.find("READ/op 3.00"), std::string::npos) << alpha;
  EXPECT_EQ(alpha.find("offl/op"), std::string::npos) << "alpha did not offload: " << alpha;
  EXPECT_EQ(alpha.find("hit %"), std::string::npos) << "alpha has no cache: " << alpha;
  EXPECT_EQ(alpha.find("WRITE/op"), std::string::npos) << "alpha wrote nothing: " << alpha;
  EXPECT_NE(beta.find("offl/op 0.250"), std::string::npos) << beta;
  EXPECT_NE(beta.find("hit % 75.0"), std::string::npos) << beta;
}

// Every registered design's name, every figure not zero: still 120 columns, and --columns all
// keeps every figure as a column.
TEST(BenchReport, DefaultTableFitsA120ColumnTerminal) {
  std::vector<RunResult> results;
  for (const char* design : {"local", "naive", "sherman", "dex", "rftree", "xstore", "indexy", "rocksdb", "lmdb",
                             "btree-disk", "sherman:hocl=off"}) {
    RunResult r = TwoResults()[0];
    r.design = design;
    r.workload = "ycsb-e";
    r.ops = 1;
    r.seconds = 1e-7;  // 10 Mops/s
    r.p50_us = r.p99_us = 12345.6;
    r.verbs.reads = r.verbs.writes = r.verbs.cas = r.verbs.rpcs = r.verbs.round_trips = 123;
    r.verbs.read_bytes = 123'456'789;
    r.offloads = r.offload_fallbacks = r.slc_refreshes = r.stale_reads = 5;
    r.model_lookups = r.model_leaves_read = r.speculative_reads = r.invalidations = r.model_fallbacks = 5;
    r.retrains = r.expansions = 5;
    r.cache_hits = r.cache_misses = 1;
    r.ideal_hit_ratio = r.lru_hit_ratio = r.random_hit_ratio = 0.5;
    r.cache_bytes = r.pool_bytes = uint64_t{123456} << 20;
    r.interrupted = true;
    results.push_back(r);
  }
  const std::string table = FormatTable(results, "local");
  for (const std::string& line : Lines(table)) EXPECT_LE(line.size(), kCompactWidth) << line;
  EXPECT_NE(table.find("expand 5"), std::string::npos) << table;  // the last figure, wrapped
  const std::string all = FormatTable(results, "local", TableColumns::kAll);
  for (const char* column : {"READ/op", "p99.99 us", "offl/op", "stale/op", "leaves/get", "expand", "ideal %", "pool MB"})
    EXPECT_NE(Lines(all)[0].find(column), std::string::npos) << column;
}

TEST(BenchReport, JsonAndCsvCarryEveryRequiredField) {
  auto results = TwoResults();
  auto dir = std::filesystem::temp_directory_path();
  const std::string json_path = (dir / ("dmx_rep_" + std::to_string(getpid()) + ".json")).string();
  const std::string csv_path = (dir / ("dmx_rep_" + std::to_string(getpid()) + ".csv")).string();
  ASSERT_TRUE(WriteJson(json_path, results).ok());
  ASSERT_TRUE(WriteCsv(csv_path, results).ok());
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json_path));
  ASSERT_TRUE(all.is_array());
  ASSERT_EQ(all.size(), 2u);
  for (const char* field :
       {"design", "workload", "threads", "keys", "ops", "throughput_ops", "p50_us", "p99_us",
        "p999_us", "p9999_us", "reads_per_op", "writes_per_op", "atomics_per_op", "rpcs_per_op",
        "round_trips_per_op", "bytes_per_op", "offloads_per_op", "offload_fallbacks_per_op",
        "slc_refreshes", "stale_reads_per_op",
        "cache_hit_ratio", "cache_bytes", "pool_bytes"})
    EXPECT_TRUE(all[0].contains(field)) << field;
  EXPECT_DOUBLE_EQ(all[0]["throughput_ops"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(all[0]["reads_per_op"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(all[0]["bytes_per_op"].get<double>(), 3000.0);
  EXPECT_TRUE(all[0]["cache_hit_ratio"].is_null());
  EXPECT_DOUBLE_EQ(all[1]["cache_hit_ratio"].get<double>(), 0.75);
  std::ifstream csv(csv_path);
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header.rfind("design,workload,", 0), 0u) << header;
  EXPECT_EQ(row.rfind("alpha,ycsb-c,", 0), 0u) << row;
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
  std::filesystem::remove(json_path);
  std::filesystem::remove(csv_path);
  EXPECT_FALSE(WriteJson("/nonexistent/dir/x.json", results).ok());
}

}  // namespace
}  // namespace dmindex::bench
