// The memory server's RPC threads: the progress thread receives requests and hands them
// here; `threads` handler threads (--rpc-threads; memory servers have one or two weak cores)
// run them through MemoryNode::Serve and hand the results back for the progress thread to
// send, since only that thread may touch the UCP worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/runtime.h"
#include "fabric/memory_node.h"

namespace dmindex::fabric::ucx {

struct RpcJob {
  uint32_t connection_id = 0;
  uint64_t sequence = 0;
  RpcOpcode opcode = 0;
  std::vector<std::byte> request;
  // Filled by the handler thread.
  Status status;
  RpcReply reply;
};

class RpcExecutor {
 public:
  // `wake` runs on a handler thread after a job finished (e.g. ucp_worker_signal).
  RpcExecutor(MemoryNode& node, uint32_t threads, std::function<void()> wake);
  ~RpcExecutor();  // drops jobs not started yet, waits for running ones
  RpcExecutor(const RpcExecutor&) = delete;
  RpcExecutor& operator=(const RpcExecutor&) = delete;

  void Submit(std::unique_ptr<RpcJob> job);
  // Finished jobs, oldest first.
  std::vector<std::unique_ptr<RpcJob>> TakeFinished();
  bool HasFinished() const { return has_finished_.load(std::memory_order_acquire); }

 private:
  void HandlerLoop();

  MemoryNode& node_;
  const std::function<void()> wake_;
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  std::deque<std::unique_ptr<RpcJob>> pending_;
  std::vector<std::unique_ptr<RpcJob>> finished_;
  std::atomic<bool> has_finished_{false};
  bool stopping_ = false;
  std::vector<runtime::Thread> threads_;
};

}  // namespace dmindex::fabric::ucx
