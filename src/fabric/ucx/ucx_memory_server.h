// A memory server reached over UCX: what `dmindex memserver` runs. It allocates its pool
// through UCX (so the shared-memory transports can export it and clients' READ/WRITE/CAS/FAA
// never involve this process's CPU), serves the out-of-band handshake on HOST:PORT, and runs
// RPCs from clients on a MemoryNode with --rpc-threads handler threads.
//
// One progress thread owns the UCP worker. It spins while there is traffic and sleeps on
// the worker's event fd once idle for `spin` (TCP needs this thread for every verb; shared
// memory needs it only for RPC and connection set-up).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "common/runtime.h"
#include "fabric/memory_node.h"
#include "fabric/ucx/pool_dir.h"
#include "fabric/ucx/rpc_executor.h"
#include "fabric/ucx/server_connections.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {

struct UcxServerOptions {
  std::string listen = "127.0.0.1:0";  // HOST:PORT; port 0 picks a free port
  uint64_t pool_bytes = 4ull << 30;
  MemoryNodeOptions node;              // chunk size, RPC threads
  UcxTransport transport = UcxTransport::kShm;
  // UCX_NET_DEVICES for TCP; empty = "lo" when listening on a loopback address, else all.
  std::string net_devices;
  // The cluster key's file (cluster_key.h); empty = ~/.dmindex/cluster-key, created if absent.
  std::string cluster_key_file;
  // Polling continues this long after the last event before the thread sleeps.
  std::chrono::microseconds spin{50};
  // Non-empty: the pool is persistent, in DATA_DIR/pool (pool_dir.h); restarted on the same
  // directory, the server serves the same bytes under the same identity.
  std::string data_dir;
  // With data_dir: write the pool's dirty pages to disk (msync) this often; 0 = only at a
  // clean shutdown, leaving the rest to the kernel's writeback (docs/UCX.md says what a
  // machine crash loses either way).
  std::chrono::milliseconds sync_period{0};
};

class UcxMemoryServer {
 public:
  // Validates options, binds the port (fails fast if it is taken) and allocates the pool.
  static Result<std::unique_ptr<UcxMemoryServer>> Create(const UcxServerOptions& options);
  ~UcxMemoryServer();
  UcxMemoryServer(const UcxMemoryServer&) = delete;
  UcxMemoryServer& operator=(const UcxMemoryServer&) = delete;

  // Designs register their RPC handlers here (node().rpc()), before Start().
  MemoryNode& node() { return *node_; }
  // The address clients connect to, with the port actually bound.
  const HostPort& address() const { return address_; }
  // Whether the pool was restored from data_dir (false: new, or volatile).
  bool restored() const { return restored_; }

  // Starts serving on background threads.
  Status Start();
  // Stops serving and joins the threads; idempotent, callable from any thread.
  void Stop();

  // An answer in flight: header and data must live until UCX is done with them.
  struct OutgoingReply {
    wire::RpcReplyHeader header;
    std::vector<std::byte> data;  // status message, then the reply payload
  };

 private:
  explicit UcxMemoryServer(const UcxServerOptions& o) : options_(o) {}
  Status AllocatePool(PoolExport* pool);
  // With data_dir: maps DATA_DIR/pool as the pool (see pool_dir.h) at *base.
  Status MapPoolFile(void** base);
  Status PackPool(void* base, PoolExport* pool);
  // Writes the pool's dirty pages to its file; logs a failure.
  void SyncPool();
  void SyncLoop();
  void ProgressLoop();
  void ServiceControl(int timeout_ms);
  // Sends the finished RPCs' answers and the verb batches' (progress thread only).
  void SendReplies();
  void Send(uint32_t connection_id, unsigned am, std::unique_ptr<OutgoingReply> out);
  // A verb batch (TCP, verb_messages.h): carried out here, on the progress thread, in the
  // order batches arrive; its answer is queued for SendReplies.
  static ucs_status_t OnVerbs(void* arg, const void* header, size_t header_length, void* data,
                              size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t OnRequest(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param);
  static void OnRequestData(void* request, ucs_status_t status, size_t length, void* user_data);

  const UcxServerOptions options_;
  HostPort address_;
  std::string log_prefix_;
  std::unique_ptr<UcxContext> context_;
  ucp_mem_h pool_memh_ = nullptr;
  std::unique_ptr<PoolDir> pool_dir_;
  void* pool_base_ = nullptr;
  void* own_mapping_ = nullptr;  // the pool file's mapping when UCX registered it (TCP)
  bool restored_ = false;
  runtime::Mutex sync_mu_;
  runtime::CondVar sync_cv_;
  runtime::Thread sync_thread_;
  std::unique_ptr<UcxWorker> worker_;
  std::unique_ptr<MemoryNode> node_;
  std::unique_ptr<ServerConnections> connections_;
  std::unique_ptr<RpcExecutor> executor_;
  std::vector<std::pair<uint32_t, std::unique_ptr<OutgoingReply>>> verb_answers_;  // by connection
  int worker_fd_ = -1;  // UCX's event fd: readable when the worker has something to progress
  int stop_fd_ = -1;    // eventfd that wakes the progress thread for Stop()
  std::atomic<bool> stopping_{false};
  runtime::Thread progress_thread_;
};

}  // namespace dmindex::fabric::ucx
