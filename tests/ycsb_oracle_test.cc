// The YCSB oracle: YCSB 0.17.0 itself (Java from Debian, site.ycsb:core:0.17.0 from Maven
// Central, installed by scripts/install-ycsb.sh) generates workloads A-F through its BasicDB,
// dmindex generates the same property files with --trace-out, and the two streams must agree
// on 100 k records: the shares of the hottest 1, 10, 100 keys and 1% of the records within 5%
// relative (workload D: recency ranks, see ReadStream), the operation mix within 0.5 points,
// and the key names themselves - YCSB's load names every record as dmindex does (hashed, and
// ordered or hashed with zeropadding beyond 18 digits), both insert the same names in the same
// order, the hottest 5 keys are the same keys, and dmindex names no key YCSB does not have.
// A trace YCSB wrote then replays through --trace on every design.
//
// Release builds only: under a sanitizer the dmindex side is slow and the Java side is not
// what is being checked.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/key_space.h"
#include "bench/zipfian.h"
#include "designs/registry.h"
#include "test_fabrics.h"

namespace {

using dmindex::testing::RunTool;
using dmindex::testing::ShellQuote;
using dmindex::testing::ToolRun;

// YCSB 0.17.0's workloads/workload[a-f], their properties as published (comments dropped).
const std::map<char, std::string>& YcsbWorkloads() {
  static const std::map<char, std::string> kFiles = {
      {'a', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\n"
            "insertproportion=0\nrequestdistribution=zipfian\n"},
      {'b', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=0.95\nupdateproportion=0.05\nscanproportion=0\n"
            "insertproportion=0\nrequestdistribution=zipfian\n"},
      {'c', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=1\nupdateproportion=0\nscanproportion=0\n"
            "insertproportion=0\nrequestdistribution=zipfian\n"},
      {'d', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=0.95\nupdateproportion=0\nscanproportion=0\n"
            "insertproportion=0.05\nrequestdistribution=latest\n"},
      {'e', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=0\nupdateproportion=0\nscanproportion=0.95\n"
            "insertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\n"
            "scanlengthdistribution=uniform\n"},
      {'f', "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
            "readallfields=true\nreadproportion=0.5\nupdateproportion=0\nscanproportion=0\n"
            "insertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"},
  };
  return kFiles;
}

constexpr int kRecords = 100'000;
constexpr int kOps = 400'000;

struct Stream {
  std::map<std::string, uint64_t> kinds;           // lines per operation
  std::unordered_map<std::string, uint64_t> keys;  // requests per key (inserts excluded)
  std::unordered_set<std::string> names;           // every key named
  std::vector<std::string> inserted;               // the keys of the INSERT lines, in order
  uint64_t lines = 0, requests = 0;
};

// The names of records [0, n), as dmindex names them (bench/key_space.h).
std::vector<std::string> DmindexNames(uint64_t n, dmindex::bench::InsertOrder order, uint32_t zero_padding) {
  std::vector<std::string> names;
  for (uint64_t r = 0; r < n; ++r) names.push_back(dmindex::bench::YcsbKeyName(r, order, zero_padding));
  return names;
}

// Record numbers by name (workload D's recency ranks).
std::unordered_map<std::string, uint64_t> RecordsByName(uint64_t n) {
  std::unordered_map<std::string, uint64_t> m;
  const auto names = DmindexNames(n, dmindex::bench::InsertOrder::kHashed, 1);
  for (uint64_t r = 0; r < n; ++r) m[names[r]] = r;
  return m;
}

// Reads BasicDB lines ("KIND table key ..."), skipping YCSB's property dump and statistics.
// With `records` (workload D), a request counts by its recency - how many records were
// inserted after the one it names - instead of by key: latest's hottest key moves with every
// insert, so its per-key counts are all small and their maximum is noise.
Stream ReadStream(const std::string& path, const std::unordered_map<std::string, uint64_t>* records = nullptr) {
  Stream s;
  uint64_t newest = 0;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '"' || line[0] == '*' || line[0] == '[') continue;
    std::istringstream words(line);
    std::string kind, table, key;
    words >> kind >> table >> key;
    ++s.kinds[kind];
    ++s.lines;
    s.names.insert(key);
    if (kind == "INSERT") s.inserted.push_back(key);
    if (records != nullptr) {
      const uint64_t r = records->at(key);
      if (kind == "INSERT") newest = std::max(newest, r);
      else key = "age " + std::to_string(newest - r);
    }
    if (kind != "INSERT") {
      ++s.keys[key];
      ++s.requests;
    }
  }
  return s;
}

// The `k` most requested keys.
std::set<std::string> Hottest(const Stream& s, size_t k) {
  std::vector<std::pair<uint64_t, std::string>> counts;
  for (const auto& [key, n] : s.keys) counts.emplace_back(n, key);
  std::partial_sort(counts.begin(), counts.begin() + std::min(k, counts.size()), counts.end(), std::greater<>());
  std::set<std::string> top;
  for (size_t i = 0; i < std::min(k, counts.size()); ++i) top.insert(counts[i].second);
  return top;
}

double TopShare(const Stream& s, size_t k) {
  std::vector<uint64_t> counts;
  for (const auto& [key, n] : s.keys) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  uint64_t top = 0;
  for (size_t i = 0; i < std::min(k, counts.size()); ++i) top += counts[i];
  return static_cast<double>(top) / static_cast<double>(s.requests);
}

// Runs a shell command; its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class YcsbOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(DMINDEX_SANITIZER) != "")
      GTEST_SKIP() << "Release builds only: under -fsanitize=" << DMINDEX_SANITIZER
                   << " the dmindex side is too slow and the Java side is not what is checked";
    dir_ = std::filesystem::temp_directory_path() / ("dmx_ycsb_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    const std::string out = (dir_ / "jars").string();
    ASSERT_EQ(Shell(ShellQuote(std::string(DMINDEX_SOURCE_DIR) + "/scripts/install-ycsb.sh") + " --print-dir > " + ShellQuote(out)), 0)
        << "YCSB 0.17.0 is not installed: run scripts/install-ycsb.sh (scripts/install-deps.sh does)";
    std::ifstream(out) >> jars_;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // YCSB's stream for `file` (run phase, or load phase with `load`), written by its BasicDB.
  std::string RunYcsb(const std::string& file, const std::string& extra, bool load, const std::string& out) {
    const std::string cmd = "java -cp '" + jars_ + "/*' site.ycsb.Client " + (load ? "-load" : "-t") +
                            " -db site.ycsb.BasicDB -P " + file + " -p fieldcount=1 -p fieldlength=1 " +
                            extra + " > " + out + " 2> " + out + ".err";
    EXPECT_EQ(Shell(cmd), 0) << cmd;
    return out;
  }

  std::filesystem::path dir_;
  std::string jars_;
};

// Both sides with one 1-byte field (the traces stay small); dmindex without modelled latency
// (its streams do not depend on time with one thread).
constexpr const char* kSmallRecords = " -p fieldcount=1 -p fieldlength=1 ";

TEST_F(YcsbOracle, WorkloadsAToFMatchYcsbsStreams) {
  // YCSB's load names every record as dmindex does.
  const std::string records = " -p recordcount=" + std::to_string(kRecords);
  const std::string load_file = Path("workloadc");
  std::ofstream(load_file) << YcsbWorkloads().at('c');
  const Stream load = ReadStream(RunYcsb(load_file, records, true, Path("load.txt")));
  const auto names = DmindexNames(kRecords, dmindex::bench::InsertOrder::kHashed, 1);
  ASSERT_EQ(load.inserted, names) << "YCSB's load names its records otherwise";
  const auto by_record = RecordsByName(kRecords + kOps / 10);
  for (const auto& [letter, text] : YcsbWorkloads()) {
    SCOPED_TRACE(std::string("workload") + letter);
    const std::string file = Path(std::string("workload") + letter);
    std::ofstream(file) << text;
    const std::string ops = records + " -p operationcount=" + std::to_string(kOps) + kSmallRecords;
    const bool by_age = letter == 'd';  // recency ranks (see ReadStream)
    const Stream ycsb = ReadStream(RunYcsb(file, ops + " -threads 1", false, Path("ycsb.txt")),
                                   by_age ? &by_record : nullptr);
    const std::string dmx_path = Path("dmx.txt");
    ToolRun r = RunTool("bench --design local --latency-us 0 -P " + file + ops + " --trace-out " + dmx_path);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Stream dmx = ReadStream(dmx_path, by_age ? &by_record : nullptr);
    ASSERT_GT(ycsb.lines, static_cast<uint64_t>(kOps) - 1);
    ASSERT_GT(dmx.lines, static_cast<uint64_t>(kOps) - 1);
    std::printf("workload%c: %-28s %-28s\n", letter, "YCSB 0.17.0", "dmindex");
    for (size_t k : {size_t{1}, size_t{10}, size_t{100}, size_t{kRecords / 100}}) {
      const double y = TopShare(ycsb, k), d = TopShare(dmx, k);
      std::printf("  top-%-5zu %s share  %8.4f %28.4f\n", k, by_age ? "recency" : "key    ", y, d);
      EXPECT_NEAR(d / y, 1.0, 0.05) << "top-" << k << " share: YCSB " << y << ", dmindex " << d;
    }
    std::map<std::string, uint64_t> kinds = ycsb.kinds;
    for (const auto& [kind, n] : dmx.kinds) kinds.emplace(kind, 0);
    for (const auto& [kind, n] : kinds) {
      const double y = 100.0 * static_cast<double>(ycsb.kinds.count(kind) ? ycsb.kinds.at(kind) : 0) / ycsb.lines;
      const double d = 100.0 * static_cast<double>(dmx.kinds.count(kind) ? dmx.kinds.at(kind) : 0) / dmx.lines;
      std::printf("  %-6s %% of lines        %8.2f %28.2f\n", kind.c_str(), y, d);
      EXPECT_NEAR(d, y, 0.5) << kind << " share of the operations";
    }
    // The names: the same records inserted under the same names, in the same order; without
    // inserts the hottest keys the same keys (ranks 0-4 of the zipfian are well apart; with
    // inserts a hot rank's record may exist only from some point on, at a time that varies);
    // nothing named that YCSB's load or inserts do not have.
    const size_t both = std::min(ycsb.inserted.size(), dmx.inserted.size());
    EXPECT_TRUE(std::equal(dmx.inserted.begin(), dmx.inserted.begin() + both, ycsb.inserted.begin()))
        << "the inserts' names differ";
    if (ycsb.inserted.empty()) EXPECT_EQ(Hottest(dmx, 5), Hottest(ycsb, 5));
    std::unordered_set<std::string> known(names.begin(), names.end());
    known.insert(dmx.inserted.begin(), dmx.inserted.end());
    uint64_t unknown = 0;
    for (const std::string& name : dmx.names) unknown += !known.contains(name);
    EXPECT_EQ(unknown, 0u) << "names dmindex requested that YCSB never loaded or inserted";
    std::printf("  names: %zu requested, %zu inserts in YCSB's order\n", dmx.names.size(), both);
  }
}

// zeropadding of any width (YCSB pads hashed names too): YCSB's load names and dmindex's.
TEST_F(YcsbOracle, PaddedKeyNamesAreTheRealClients) {
  const std::string file = Path("workloada");
  std::ofstream(file) << YcsbWorkloads().at('a');
  for (const auto& [order, padding] : {std::pair{dmindex::bench::InsertOrder::kOrdered, 22u},
                                       std::pair{dmindex::bench::InsertOrder::kHashed, 25u}}) {
    const std::string props = std::string(" -p insertorder=") + dmindex::bench::InsertOrderName(order) +
                              " -p zeropadding=" + std::to_string(padding) + kSmallRecords;
    SCOPED_TRACE(props);
    const Stream load = ReadStream(RunYcsb(file, props, true, Path("load.txt")));
    const auto names = DmindexNames(1000, order, padding);
    EXPECT_EQ(load.inserted, names);
    ToolRun r = RunTool("bench --design local --latency-us 0 -P " + file + props + " --trace-out " + Path("dmx.txt"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Stream dmx = ReadStream(Path("dmx.txt"));
    EXPECT_EQ(dmx.lines, 1000u);
    for (const std::string& name : dmx.names)
      EXPECT_TRUE(std::find(names.begin(), names.end(), name) != names.end()) << name;
  }
}

TEST_F(YcsbOracle, AYcsbWrittenTraceReplaysOnEveryDesign) {
  const std::string file = Path("workloadd");
  std::ofstream(file) << YcsbWorkloads().at('d');  // reads, and inserts the reads then follow
  const std::string load = RunYcsb(file, "", true, Path("load.txt"));
  const std::string run = RunYcsb(file, "-p operationcount=20000 -threads 2", false, Path("run.txt"));
  for (const std::string& design : dmindex::designs::DesignNames()) {
    ToolRun r = RunTool("bench --design " + design + " --threads 2 --trace " + run + " --trace-load " + load);
    EXPECT_EQ(r.exit_code, 0) << design << ":\n" << r.output;
    EXPECT_NE(r.output.find(" ok"), std::string::npos) << design << ":\n" << r.output;
  }
  // A malformed line is an error naming its line number; a key other than user<N> is one only
  // when the integer mapping is asked for (else keys are byte strings as written).
  const std::string bad = Path("bad.txt");
  std::ofstream(bad) << "READ usertable user1 [ <all fields>]\nREAD usertable 17\nREAD usertable\n";
  ToolRun r = RunTool("bench --design local --trace " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.txt:3: expected '<operation> <table> <key>'"), std::string::npos) << r.output;
  r = RunTool("bench --design local --key-format u64 --trace " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.txt:2: key '17' is not user<number>"), std::string::npos) << r.output;
}

}  // namespace
