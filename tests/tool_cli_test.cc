// The dmindex tool as a user meets it: subcommands run, bad flags give a message and a
// non-zero exit.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct ToolRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

ToolRun RunTool(const std::string& args) {
  std::string cmd = std::string(DMINDEX_TOOL_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ToolRun r{-1, ""};
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

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
