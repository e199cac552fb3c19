// `dmindex check` as a user meets it: it passes on every registered design, it fails (exit 1,
// a report naming a key) on a design broken on purpose, histories written by it merge back,
// and bad flags are clear errors. The multi-process runs over UCX are in
// multiprocess_check_test.cc.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>

#include "designs/registry.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

using testing::RunTool;
using testing::ToolRun;

bool Contains(const ToolRun& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

TEST(CheckCli, PassesOnEveryDesignUnderTornAndDelayedVerbs) {
  for (const std::string& design : designs::DesignNames()) {
    // Designs living in this process issue no verbs to tear (--tear is refused for them).
    const std::string faults = designs::IssuesVerbs(design) ? " --tear --delay 0.01" : "";
    // CompareAndSwap in the mix: every design compares atomically (docs/API.md).
    ToolRun r = RunTool("check --design " + design + faults + " --cas-pct 10 --threads 6 --ops 800");
    EXPECT_EQ(r.exit_code, 0) << design << ":\n" << r.output;
    EXPECT_TRUE(Contains(r, "OK: " + design)) << r.output;
    EXPECT_TRUE(Contains(r, "0 violation(s)")) << r.output;
  }
}

// Sherman without torn-read validation on a fabric that tears READs: readers take half-written
// nodes at face value. The command must notice: exit 1 and a report naming the key.
TEST(CheckCli, FailsWithAReportNamingAKeyOnADesignWithoutValidation) {
  ToolRun r = RunTool("check --design sherman:validation=off --tear --rounds 20 --seed 3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Contains(r, "VIOLATION")) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("--- [a-z ]+, key [0-9]+:"))) << r.output;
  // The control: the same run with validation on passes.
  ToolRun control = RunTool("check --design sherman --tear --rounds 3 --seed 3");
  EXPECT_EQ(control.exit_code, 0) << control.output;
}

TEST(CheckCli, AHistoryWrittenByARunChecksAgainWhenMerged) {
  const std::string path = ::testing::TempDir() + "/check_cli_" + std::to_string(getpid()) + ".json";
  ToolRun r = RunTool("check --design naive --threads 4 --ops 500 --rounds 3 --history-out " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunTool("check --merge " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r, "OK: 1 merged histories")) << r.output;
  // 3 rounds x (4 threads x 500 operations + the read-back), checked as one history.
  EXPECT_TRUE(std::regex_search(r.output, std::regex("in [0-9]{4,} point operations"))) << r.output;
  // Without an index to read back from, --final-state is an error, not a silent pass.
  r = RunTool("check --merge " + path + " --final-state");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Contains(r, "NotFound")) << r.output;
  std::remove(path.c_str());
}

TEST(CheckCli, BadFlagsAreClearErrors) {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"check --design bogus", "unknown design"},
      {"check --design sherman:nope=1", "unknown knob"},
      {"check --threads 0", "--threads"},
      {"check --threads 300", "--threads"},
      {"check --compute-node 256 --index-name x --history-out /dev/null", "--compute-node"},
      {"check --index-name shared", "--history-out"},
      {"check --design local --index-name x --history-out /dev/null", "cannot be shared by processes"},
      {"check --load", "--load is for a shared index"},
      {"check --rounds 0", "--rounds 0"},
      {"check --stall-timeout never", "--stall-timeout"},
      {"check --rounds 2 --seconds 1", "excludes"},
      {"check --tear --memservers 127.0.0.1:1", "in-process fabric only"},
      {"check --memservers ''", "an empty list of memory servers"},
      {"check --fabric sim --platform /tmp", "directory"},
      {"check --tear --design rocksdb", "issues none"},
      {"check --delay 0.5 --design local", "issues none"},
      {"check --final-state", "--final-state works with --merge"},
      {"check --merge /nonexistent/history.json", "cannot read history file"},
      {"check --history-out /nonexistent/dir/h.json --rounds 1 --ops 10", "--history-out: cannot write '/nonexistent/dir/h.json'"},
  };
  for (const Case& c : cases) {
    ToolRun r = RunTool(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args << ":\n" << r.output;
    EXPECT_TRUE(Contains(r, c.message)) << c.args << ": expected '" << c.message << "' in:\n" << r.output;
  }
}

}  // namespace
}  // namespace dmindex
