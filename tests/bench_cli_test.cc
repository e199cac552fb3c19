// `dmindex bench` and `dmindex plot` as a user meets them: bad flags and values give a clear
// message and a non-zero exit; a short run prints the table, writes JSON/CSV and checks trees.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_fabrics.h"

namespace {

using dmindex::testing::RunTool;
using dmindex::testing::ToolRun;

void ExpectError(const std::string& args, const std::string& message) {
  ToolRun r = RunTool(args);
  EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmx_cli_" + std::to_string(getpid()) + "_" + name)).string();
}

TEST(BenchCli, HelpDocumentsEveryFlag) {
  ToolRun r = RunTool("bench --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* flag : {"--design", "--workload", "-P", "--keys", "--warmup-ops", "--ops",
                           "--duration", "--threads", "--compute-nodes", "--cache-mb", "--cache-pct",
                           "--node-size", "--theta", "--seed", "--latency-us", "--bandwidth-gbps",
                           "--memservers", "--baseline", "--json", "--csv", "--stall-timeout", "--key-format",
                           "--key-style", "--key-bytes", "--value-bytes", "--value-dist"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

TEST(BenchCli, BadFlagsAndValuesAreClearErrors) {
  ExpectError("bench --threads 0", "--threads");
  ExpectError("bench --threads many", "--threads");
  ExpectError("bench --ops 100 --duration 1", "--duration");
  ExpectError("bench --cache-mb 1 --cache-pct 5", "--cache");
  ExpectError("bench --theta 1.5", "--theta");
  ExpectError("bench --stall-timeout -1", "--stall-timeout");
  ExpectError("bench --no-such-flag", "no-such-flag");
  ExpectError("bench --workload ycsb-q", "unknown workload 'ycsb-q'");
  ExpectError("bench -P /nonexistent/workloada", "/nonexistent/workloada");
  ExpectError("bench --design no-such-design", "no-such-design");
  std::string bad = TempPath("malformed");
  std::ofstream(bad) << "# a YCSB file with a bad escape\nreadproportion=\\u00\n";
  ExpectError("bench -P " + bad, "malformed");
  ExpectError("bench -p readproportoin=0.5", "unknown property 'readproportoin'");
  ExpectError("bench --key-bytes 32", "give --key-format bytes");
  ExpectError("bench --key-format bytes --key-bytes 4", "binary keys have 8 ..");
  ExpectError("bench --key-format strings", "--key-format");
  ExpectError("bench --key-format bytes --value-bytes 4", "--value-bytes");
  ExpectError("bench --key-format bytes --value-dist histogram", "--value-dist");
  std::filesystem::remove(bad);
}

std::vector<std::string> Designs() {
  ToolRun r = RunTool("bench --list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::istringstream in(r.output.substr(0, r.output.find('\n')));
  std::string word;
  std::vector<std::string> designs;
  in >> word;  // "designs:"
  while (in >> word) designs.push_back(word);
  return designs;
}

TEST(BenchCli, ShortRunPrintsTableAndWritesJsonAndCsv) {
  std::vector<std::string> designs = Designs();
  if (designs.empty()) GTEST_SKIP() << "no design registered in this build yet";
  const std::string json = TempPath("out.json"), csv = TempPath("out.csv");
  ToolRun r = RunTool("bench --design " + designs.front() +
                      " --workload ycsb-c,ycsb-d --keys 5000 --ops 4000 --warmup-ops 500 "
                      "--threads 2 --json " + json + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Mops/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ycsb-d"), std::string::npos) << r.output;
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["design"], designs.front());
  EXPECT_EQ(all[0]["ops"], 4000);
  EXPECT_EQ(all[1]["verified"], true);
  EXPECT_GT(all[0]["throughput_ops"].get<double>(), 0);
  std::ifstream in(csv);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 3);
  std::filesystem::remove(json);
  std::filesystem::remove(csv);
}

TEST(BenchCli, YcsbPropertyFileRunsUnchanged) {
  std::vector<std::string> designs = Designs();
  if (designs.empty()) GTEST_SKIP() << "no design registered in this build yet";
  const std::string file = TempPath("workloadd"), json = TempPath("d.json");
  std::ofstream(file) << "# Yahoo! Cloud System Benchmark\n# Workload D: Read latest workload\n"
                         "#   Request distribution: latest\n\nrecordcount=3000\noperationcount=2000\n"
                         "workload=site.ycsb.workloads.CoreWorkload\n\nreadallfields=true\n\n"
                         "readproportion=0.95\nupdateproportion=0\nscanproportion=0\n"
                         "insertproportion=0.05\n\nrequestdistribution=latest\n\n";
  ToolRun r = RunTool("bench --design " + designs.front() + " -P " + file + " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // YCSB's records, key names and one thread by default, and the header says so.
  EXPECT_NE(r.output.find(", 1 threads,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# records: bytes: ycsb keys user<FNV-64 of the record>, YCSB records of 10 x "
                          "100-byte fields (1140 bytes serialized as the YCSB binding does)"),
            std::string::npos) << r.output;
  nlohmann::json all = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["workload"], "dmx_cli_" + std::to_string(getpid()) + "_workloadd");
  EXPECT_EQ(all[0]["threads"], 1);
  EXPECT_EQ(all[0]["keys"], 3000);  // recordcount
  EXPECT_EQ(all[0]["ops"], 2000);   // operationcount
  EXPECT_GT(all[0]["inserted"].get<int>(), 0);
  EXPECT_EQ(all[0]["verified"], true);
  std::filesystem::remove(file);
  std::filesystem::remove(json);
}

// --trace-out writes the run's own key names and every field of a write, each its length.
TEST(BenchCli, TraceOutWritesYcsbsKeysAndFields) {
  const std::string file = TempPath("workloada"), out = TempPath("a.trace");
  std::ofstream(file) << "recordcount=200\noperationcount=300\nreadproportion=0.5\nupdateproportion=0.5\n"
                         "requestdistribution=zipfian\nfieldcount=2\nfieldlength=3\n"
                         "insertorder=ordered\nzeropadding=24\n";
  ToolRun r = RunTool("bench --design local -P " + file + " --trace-out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("# records: bytes: ycsb keys user<record> zero-padded to 24 digits, YCSB records "
                          "of 2 x 3-byte fields (34 bytes serialized"), std::string::npos) << r.output;
  std::ifstream in(out);
  std::string line;
  int updates = 0, lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::istringstream words(line);
    std::string kind, table, key, open, f0, f1, close;
    words >> kind >> table >> key >> open >> f0 >> f1 >> close;
    EXPECT_EQ(key.size(), 28u) << line;  // user + 24 digits, zeros kept
    EXPECT_EQ(key.substr(0, 8), "user0000") << line;
    if (kind != "UPDATE") continue;
    ++updates;
    EXPECT_EQ(f0.substr(0, 7), "field0=") << line;
    EXPECT_EQ(f0.size(), 10u) << line;
    EXPECT_EQ(f1.substr(0, 7), "field1=") << line;
    EXPECT_EQ(f1.size(), 10u) << line;
    EXPECT_EQ(close, "]") << line;
  }
  EXPECT_EQ(lines, 300);
  EXPECT_GT(updates, 100);
  std::filesystem::remove(file);
  std::filesystem::remove(out);
}

// A replayed trace's keys are byte strings as written: any word, zeros kept, string order.
TEST(BenchCli, TraceKeysReplayVerbatim) {
  const std::string trace = TempPath("verbatim.trace"), out = TempPath("verbatim.out");
  std::ofstream(trace) << "INSERT usertable user000017 [ field0=abc ]\n"
                          "INSERT usertable user17 [ field0=abc ]\n"
                          "INSERT usertable apple [ field0=x ]\n"
                          "READ usertable user000017 [ <all fields>]\n"
                          "SCAN usertable user0 3 [ <all fields>]\n"
                          "READ usertable apple [ <all fields>]\n"
                          "UPDATE usertable user17 [ field0=q ]\n"
                          "DELETE usertable apple\n";
  ToolRun r = RunTool("bench --design local --trace " + trace + " --trace-out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the trace's 8 operations per run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# records: bytes: the trace's keys verbatim"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" ok"), std::string::npos) << r.output;  // both user000017 and user17 at the end
  std::stringstream written;
  written << std::ifstream(out).rdbuf();
  for (const char* line : {"INSERT usertable user000017 [ field0=", "INSERT usertable apple [ field0=",
                           "SCAN usertable user0 3 [ <all fields>]", "DELETE usertable apple\n"})
    EXPECT_NE(written.str().find(line), std::string::npos) << line << "\n" << written.str().substr(0, 2000);
  // The integer mapping, on request: user<N> is N + 1, so other keys are refused.
  ExpectError("bench --design local --key-format u64 --trace " + trace, "key 'apple' is not user<number>");
  ExpectError("bench --design local --key-bytes 30 --trace " + trace, "replays its keys verbatim");
  std::filesystem::remove(trace);
  std::filesystem::remove(out);
}

}  // namespace

namespace {

constexpr const char* kResults = R"([
  {"design":"a","workload":"ycsb-c","throughput_ops":2e6,"reads_per_op":3,"writes_per_op":0,
   "atomics_per_op":0,"rpcs_per_op":0},
  {"design":"b","workload":"ycsb-c","throughput_ops":1e6,"reads_per_op":2,"writes_per_op":1,
   "atomics_per_op":0.5,"rpcs_per_op":0.1}])";

TEST(PlotCli, WritesAPng) {
  const std::string json = TempPath("plot.json"), png = TempPath("plot.png");
  std::ofstream(json) << kResults;
  ToolRun r = RunTool("plot " + json + " --out " + png);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(png), 10'000u);
  std::filesystem::remove(json);
  std::filesystem::remove(png);
}

TEST(PlotCli, ClearErrors) {
  const std::string json = TempPath("plot2.json");
  ExpectError("plot " + json + " --out x.png", "no such file");
  std::ofstream(json) << "{\"not\": \"a list\"}";
  ExpectError("plot " + json + " --out x.png", "JSON array");
  ExpectError("plot " + json, "--out");
  std::ofstream(json) << kResults;
  ExpectError("plot " + json + " --out x.png --python /nonexistent/python3", "cannot run");
  // An interpreter whose matplotlib cannot be imported: a stub package that refuses to load.
  const std::string stub = TempPath("stub");
  std::filesystem::create_directories(stub + "/matplotlib");
  std::ofstream(stub + "/matplotlib/__init__.py") << "raise ImportError('stubbed out')\n";
  setenv("PYTHONPATH", stub.c_str(), 1);  // inherited by the tool and its python
  ToolRun r = RunTool("plot " + json + " --out " + TempPath("x.png"));
  unsetenv("PYTHONPATH");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("matplotlib is missing"), std::string::npos) << r.output;
  std::filesystem::remove_all(stub);
  std::filesystem::remove(json);
}

}  // namespace
