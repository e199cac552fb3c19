// Memory-server processes started by this process: for tests, and for benchmarks that want
// the UCX fabric on one machine without starting servers by hand. Starts `dmindex memserver`
// on port 0, reads the port from its "listening on" line, and stops it on destruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "dmindex/status.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/ucx_fabric.h"

namespace dmindex::fabric::ucx {

struct MemserverSpec {
  std::string tool_path;  // the dmindex executable
  std::string listen = "127.0.0.1:0";
  uint64_t pool_bytes = 64ull << 20;
  uint64_t chunk_bytes = 1ull << 20;
  uint32_t rpc_threads = 1;
  UcxTransport transport = UcxTransport::kShm;
  std::string cluster_key_file;  // --cluster-key; empty: the default key
  std::string stderr_path;       // where the server's log goes; empty: this process's stderr
  std::string data_dir;          // --data-dir: a persistent pool there; empty: volatile
  std::chrono::milliseconds start_timeout{10000};
};

class MemserverProcess {
 public:
  // The child is killed if the *thread* that started it exits (PR_SET_PDEATHSIG), so start
  // servers from a thread that outlives them.
  static Result<std::unique_ptr<MemserverProcess>> Start(const MemserverSpec& spec);
  ~MemserverProcess();  // SIGTERM, then SIGKILL if it does not exit within 5 s
  MemserverProcess(const MemserverProcess&) = delete;
  MemserverProcess& operator=(const MemserverProcess&) = delete;

  const HostPort& address() const { return address_; }
  pid_t pid() const { return pid_; }
  // Sends `signal` (SIGKILL simulates a crash).
  void Signal(int signal) const;
  // The exit status (as from waitpid) once it exited; Unavailable if it still runs after `timeout`.
  Result<int> Wait(std::chrono::milliseconds timeout);

 private:
  MemserverProcess() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  HostPort address_;
};

// `servers` memory servers as child processes and a fabric connected to them, which owns
// them (they stop when the fabric is destroyed).
Result<std::unique_ptr<UcxFabric>> StartLocalUcxCluster(const MemserverSpec& each,
                                                        uint16_t servers,
                                                        const UcxOptions& client);

}  // namespace dmindex::fabric::ucx
