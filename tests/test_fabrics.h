// Fabrics the backend-independent tests run on. Each name makes a fresh cluster of two
// memory nodes; tests parameterised over these names check that every backend keeps the
// same contract.
#pragma once

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/ucx/memserver_process.h"

namespace dmindex::testing {

// Names of the fabrics available in this build ("inproc", and the UCX ones).
std::vector<std::string> TestFabricNames();

// A live fabric with two memory nodes of `pool_bytes` each (plus whatever keeps it alive,
// e.g. memory-server processes, owned by the returned object).
std::unique_ptr<fabric::Fabric> MakeTestFabric(const std::string& name,
                                               uint64_t pool_bytes = 64ull << 20);

// One `dmindex memserver` process over ucx-shm on a free port (1 MB chunks), stopped when
// the returned object is destroyed; for tests that connect to it by address.
Result<std::unique_ptr<fabric::ucx::MemserverProcess>> StartShmMemserver(uint64_t pool_bytes = 64ull << 20);

// `s` as one word of a shell command line, whatever it holds (a path with spaces, quotes).
std::string ShellQuote(const std::string& s);

// Runs the dmindex tool (DMINDEX_TOOL_PATH) with `args` (shell words: quote a path in them
// with ShellQuote), capturing stdout and stderr.
struct ToolRun {
  int exit_code = -1;  // -1 if it did not exit normally
  std::string output;
};
ToolRun RunTool(const std::string& args);

// gtest parameter names must be identifiers: "ucx-shm" -> "ucx_shm".
struct FabricParamName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    std::string n = info.param;
    for (char& c : n)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
  }
};

}  // namespace dmindex::testing
