#include "test_fabrics.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/ucx/memserver_process.h"

namespace dmindex::testing {

std::vector<std::string> TestFabricNames() { return {"inproc", "ucx-shm", "ucx-tcp"}; }

std::unique_ptr<fabric::Fabric> MakeTestFabric(const std::string& name, uint64_t pool_bytes) {
  if (name == "inproc") {
    fabric::InProcOptions o;
    o.memory_nodes = 2;
    o.pool_bytes = pool_bytes;
    o.node.chunk_bytes = 1 << 20;
    o.prepare_node = designs::RegisterMemoryNodeHandlers;  // as dmindex memserver does
    auto f = fabric::InProcFabric::Create(o);
    if (!f.ok()) throw std::runtime_error(f.status().ToString());
    return std::move(f).value();
  }
  if (name == "ucx-shm" || name == "ucx-tcp") {
    // Two `dmindex memserver` processes on free ports; the fabric stops them when destroyed.
    fabric::ucx::MemserverSpec spec;
    spec.tool_path = DMINDEX_TOOL_PATH;
    spec.pool_bytes = pool_bytes;
    spec.chunk_bytes = 1 << 20;
    spec.transport = name == "ucx-shm" ? fabric::ucx::UcxTransport::kShm
                                       : fabric::ucx::UcxTransport::kTcp;
    fabric::ucx::UcxOptions client;
    client.transport = spec.transport;
    auto f = fabric::ucx::StartLocalUcxCluster(spec, 2, client);
    if (!f.ok()) throw std::runtime_error(f.status().ToString());
    return std::move(f).value();
  }
  throw std::invalid_argument("unknown test fabric " + name);
}

Result<std::unique_ptr<fabric::ucx::MemserverProcess>> StartShmMemserver(uint64_t pool_bytes) {
  fabric::ucx::MemserverSpec spec;
  spec.tool_path = DMINDEX_TOOL_PATH;
  spec.pool_bytes = pool_bytes;
  spec.chunk_bytes = 1ull << 20;
  spec.transport = fabric::ucx::UcxTransport::kShm;
  return fabric::ucx::MemserverProcess::Start(spec);
}

std::string ShellQuote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

ToolRun RunTool(const std::string& args) {
  std::string cmd = ShellQuote(DMINDEX_TOOL_PATH) + " " + args + " 2>&1";
  ToolRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace dmindex::testing
