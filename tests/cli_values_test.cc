// Every command-line value is checked (issue 10, item 6): each case found by trying the tool
// as a new user gets a clear message naming the flag and exit status 2, before any work.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_fabrics.h"

namespace {

using dmindex::testing::RunTool;
using dmindex::testing::ToolRun;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmx_values_" + std::to_string(getpid()) + "_" + name)).string();
}

// Exit 2 with `message` in the output, and no line longer than a sentence.
void ExpectRefused(const std::string& args, const std::string& message) {
  ToolRun r = RunTool(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << args << ": expected '" << message
                                                       << "' in:\n" << r.output;
  size_t start = 0;
  for (size_t nl; (nl = r.output.find('\n', start)) != std::string::npos; start = nl + 1)
    EXPECT_LT(nl - start, 300u) << args << ": a line of " << nl - start << " characters";
}

TEST(CliValues, CheckSecondsBeyondAMonthIsRefused) {
  // Was: the deadline overflowed, no round ran, and the check said OK.
  ExpectRefused("check --seconds 1e10", "--seconds: '1e10': expected a duration (0, 2592000] s");
}

TEST(CliValues, ACheckThatCheckedNothingIsNeverOk) {
  const std::string empty = TempPath("empty.json");
  std::ofstream(empty) << R"({"format":"dmindex-history","version":3,"design":"sherman",)"
                       << R"("index":"x","process":0,"clock_origin_ns":0,"initial":[],"ops":[]})";
  ToolRun r = RunTool("check --merge " + empty);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no operation was checked"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("OK"), std::string::npos) << r.output;
  std::filesystem::remove(empty);
}

TEST(CliValues, NegativeCountsAreRefusedNotWrapped) {
  ExpectRefused("bench --keys -5", "--keys: '-5': expected a whole number in [0, ");
  ExpectRefused("bench --warmup-ops -1", "--warmup-ops: '-1'");
  ExpectRefused("bench --ops -3", "negative values are not allowed");
  ExpectRefused("check --threads -1", "--threads: '-1'");
  ExpectRefused("fabric-bench --ops -100", "--ops: '-100'");
  ExpectRefused("memserver --listen 127.0.0.1:0 --rpc-threads -2", "--rpc-threads: '-2'");
  ExpectRefused("indexes --memservers 127.0.0.1:1 --release-host -1", "--release-host: '-1'");
}

TEST(CliValues, NanAndInfinityAreRefused) {
  ExpectRefused("check --delay nan", "--delay: 'nan': expected a number [0, 1]");
  ExpectRefused("bench --theta nan", "--theta: 'nan'");
  ExpectRefused("bench --cache-pct inf", "--cache-pct: 'inf'");
  ExpectRefused("bench --latency-us -inf", "--latency-us: '-inf'");
  ExpectRefused("bench --duration nan", "--duration: 'nan'");
}

TEST(CliValues, RunsTooLargeForThisMachineAreRefusedBeforeAllocating) {
  // Was: an uncaught std::bad_alloc.
  ExpectRefused("bench --design naive --workload ycsb-c --keys 3000000000", "need about");
  ExpectRefused("bench --design naive --workload ycsb-c --cache-mb 10000000", "this machine has");
}

TEST(CliValues, AWorkloadFileThatIsADirectoryIsRefused) {
  ExpectRefused("bench --design naive -P " + std::filesystem::temp_directory_path().string(),
                "is a directory");
}

TEST(CliValues, EmptyListItemsAreRefused) {
  // Was: "unknown design '--workload'": the empty item swallowed the next flag.
  ExpectRefused("bench --design , --workload ycsb-c", "--design: ',': empty item");
  ExpectRefused("bench --workload ycsb-c,,ycsb-a", "--workload: 'ycsb-c,,ycsb-a': empty item");
  ExpectRefused("bench --design naive, --workload ycsb-c", "empty item");
}

TEST(CliValues, RangeErrorsAreShort) {
  // Was: DBL_MAX printed with 300 digits.
  ExpectRefused("bench --duration -1", "--duration: '-1': expected a duration (0, 604800] s");
  ExpectRefused("bench --cache-mb -1", "--cache-mb: '-1': expected a number [0, 16777216]");
  ExpectRefused("check --seconds 0", "--seconds: '0'");
}

TEST(CliValues, AnUnknownCommandIsNamed) {
  // Was: "A subcommand is required".
  ExpectRefused("nosuchcommand", "unknown command 'nosuchcommand' (commands: ");
  ExpectRefused("nosuchcommand --keys 5", "unknown command 'nosuchcommand'");
  ExpectRefused("bench --no-such-flag", "no-such-flag");
  ToolRun none = RunTool("");
  EXPECT_EQ(none.exit_code, 2) << none.output;
}

TEST(CliValues, UnwritableOutputFilesFailBeforeTheRun) {
  // Was: the error came after the whole run.
  for (const char* flag : {"--json", "--csv"}) {
    const auto start = std::chrono::steady_clock::now();
    ExpectRefused(std::string("bench --design naive --workload ycsb-c --keys 1000 --duration 30 ") +
                      flag + " /nonexistent/dir/out",
                  std::string(flag) + ": cannot write '/nonexistent/dir/out'");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << flag;
  }
  ExpectRefused("check --rounds 1000 --history-out /nonexistent/dir/h.json", "--history-out: cannot write");
  ExpectRefused("check --history-out " + std::filesystem::temp_directory_path().string(), "is a directory");
  ExpectRefused("plot x.json --out /nonexistent/dir/p.png", "--out: cannot write");
  // The probe leaves no file behind, and an existing file is not truncated by it.
  const std::string existing = TempPath("keep.json");
  std::ofstream(existing) << "keep";
  ToolRun r = RunTool("bench --json " + existing + " --keys -1");
  EXPECT_EQ(r.exit_code, 2);
  std::ifstream in(existing);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "keep");
  std::filesystem::remove(existing);
}

TEST(CliValues, RepartitionIntervalIsBoundedAndARoundEndsWithItsOperations) {
  // Was: a 4294967295 ms pause kept the round from ever ending.
  ExpectRefused("check --design dex --repartition-ms 4294967295",
                "--repartition-ms: '4294967295': expected a duration [0, 60000] ms");
  const auto start = std::chrono::steady_clock::now();
  ToolRun r = RunTool("check --design dex --repartition-ms 60000 --rounds 2 --ops 200");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(CliValues, SizesAndDurationsTakeUnits) {
  ExpectRefused("memserver --listen 127.0.0.1:0 --size 1Q", "--size: '1Q': expected a size");
  ExpectRefused("memserver --listen 127.0.0.1:0 --chunk-size 5000", "multiple of 4096");
  // 64M in 32M chunks: one whole chunk after the superblock, half the pool lost.
  ExpectRefused("memserver --listen 127.0.0.1:0 --size 64M --chunk-size 32M", "holds 1 whole chunk(s)");
  // A pool no machine here has: refused at once (it used to sit registering it, deaf to SIGTERM).
  ExpectRefused("memserver --listen 127.0.0.1:0 --size 100T", "more than this machine's memory");
  ExpectRefused("bench --pool-size 1K", "--pool-size: '1K'");
  ExpectRefused("fabric-bench --seconds 1h", "--seconds: '1h': expected a duration [0.01, 600] s");
  ToolRun ok = RunTool("fabric-bench --ops 100 --seconds 20ms --threads 1");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

}  // namespace
