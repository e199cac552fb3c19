// The dmindex tool as a user meets it: subcommands run, bad flags give a message and a
// non-zero exit.
#include <gtest/gtest.h>

#include <string>

#include "test_fabrics.h"

namespace {

using dmindex::testing::RunTool;
using dmindex::testing::ToolRun;

TEST(ToolCli, FabricBenchPrintsEveryVerb) {
  ToolRun r = RunTool("fabric-bench --ops 200 --seconds 0.02 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* op : {"READ 8B", "READ 1024B", "WRITE 1024B", "CAS", "FAA", "batch 4x READ", "RPC ping"})
    EXPECT_NE(r.output.find(op), std::string::npos) << op << " missing in:\n" << r.output;
}

TEST(ToolCli, BadFlagsAreClearErrors) {
  ToolRun r = RunTool("fabric-bench --threads 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--threads"), std::string::npos) << r.output;
  r = RunTool("fabric-bench --no-such-flag");
  EXPECT_NE(r.exit_code, 0);
  r = RunTool("fabric-bench --backends bogus");
  EXPECT_NE(r.exit_code, 0);
  r = RunTool("fabric-bench --latency-us 2 --backends ucx-tcp");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("in-process fabric only"), std::string::npos) << r.output;
  r = RunTool("fabric-bench --memservers 127.0.0.1:1 --ops 100");
  EXPECT_NE(r.exit_code, 0) << "nothing listens on port 1";
  EXPECT_NE(r.output.find("Unavailable"), std::string::npos) << r.output;
  r = RunTool("no-such-command");
  EXPECT_NE(r.exit_code, 0);
  r = RunTool("");
  EXPECT_NE(r.exit_code, 0) << "a subcommand is required";
}

}  // namespace
