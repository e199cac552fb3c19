// Notices when a memory server dies. With shared memory a client keeps its mapping of a dead
// server's pool, so verbs would go on "succeeding" on orphaned memory and no UCX error ever
// comes; over TCP UCX does notice, but only when traffic flows. Instead, each client process
// keeps one idle TCP socket to every memory server (the handshake's, wire.h): the kernel
// closes it when the server process exits, for any reason. One thread sleeps in poll() on
// all of them and raises a per-node flag that endpoints check on every verb (one load).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/runtime.h"
#include "fabric/ucx/tcp_socket.h"

namespace dmindex::fabric::ucx {

class LivenessMonitor {
 public:
  // sockets[i] is memory node i's handshake socket.
  explicit LivenessMonitor(std::vector<Socket> sockets);
  ~LivenessMonitor();
  LivenessMonitor(const LivenessMonitor&) = delete;
  LivenessMonitor& operator=(const LivenessMonitor&) = delete;

  bool IsDown(uint16_t node) const { return down_[node].load(std::memory_order_acquire); }

 private:
  void Run();

  std::vector<Socket> sockets_;
  std::unique_ptr<std::atomic<bool>[]> down_;
  int stop_fd_ = -1;
  runtime::Thread thread_;
};

}  // namespace dmindex::fabric::ucx
