// Notices when a memory server dies, and whether it comes back with its pool. With shared
// memory a client keeps its mapping of a dead server's pool, so verbs would go on
// "succeeding" on orphaned memory and no UCX error ever comes; over TCP UCX does notice, but
// only when traffic flows. Instead, each client process keeps one idle TCP socket to every
// memory server (the handshake's, wire.h): the kernel closes it when the server process
// exits, for any reason. One thread sleeps in poll() on all of them and keeps a per-node state
// that endpoints check on every verb (one load):
//
//   up ──server gone, pool persistent──> reconnecting ──same pool back──> up (generation + 1)
//    │                                        │
//    └──server gone, pool volatile──> lost <──┴── another pool back, or not back in time
//
// While a node reconnects, the thread redoes the handshake with bounded retries (retry.h) and
// prints a progress line. Lost is final: the fabric then fails every operation (ucx_fabric.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/retry.h"
#include "common/runtime.h"
#include "dmindex/status.h"
#include "fabric/ucx/tcp_socket.h"

namespace dmindex::fabric::ucx {

class LivenessMonitor {
 public:
  enum class State : uint8_t { kUp, kReconnecting, kLost };
  // One reconnection attempt's finding: the server back with the same pool (its new monitor
  // socket), not reachable yet (OK status, no socket), or back with another pool / refusing
  // for good (the node is lost with that status).
  struct Attempt {
    Socket socket;
    Status lost;
  };
  struct Watched {
    Socket socket;            // the node's monitor connection
    bool persistent = false;  // its pool survives the server: wait for it to come back
    std::string name;         // "memory server HOST:PORT (memory node N)", for messages
  };
  using Reconnect = std::function<Attempt(uint16_t node)>;

  LivenessMonitor(std::vector<Watched> nodes, Reconnect reconnect,
                  std::chrono::milliseconds restart_wait);
  ~LivenessMonitor();
  LivenessMonitor(const LivenessMonitor&) = delete;
  LivenessMonitor& operator=(const LivenessMonitor&) = delete;

  State state(uint16_t node) const { return nodes_[node].state.load(std::memory_order_acquire); }
  bool IsDown(uint16_t node) const { return state(node) != State::kUp; }
  // How often the node's server came back with its pool: endpoints reconnect when it moved.
  uint32_t generation(uint16_t node) const {
    return nodes_[node].generation.load(std::memory_order_acquire);
  }
  // The first lost node's reason, or OK: one lost node fails the whole fabric.
  Status FirstLost() const;

 private:
  struct Node {
    Watched watched;
    std::atomic<State> state{State::kUp};
    std::atomic<uint32_t> generation{0};
    Status lost;  // written once, before state becomes kLost
    std::unique_ptr<RetryBudget> budget;  // while reconnecting
    runtime::Clock::time_point gone_at, next_attempt, next_report;
    std::chrono::milliseconds interval{};
  };
  void Run();
  void OnGone(uint16_t node);
  void TryReconnect(uint16_t node);
  void MarkLost(uint16_t node, Status why);
  int PollTimeoutMs() const;

  std::unique_ptr<Node[]> nodes_;
  const size_t count_;
  const Reconnect reconnect_;
  const std::chrono::milliseconds restart_wait_;
  std::atomic<int32_t> first_lost_{-1};
  int stop_fd_ = -1;
  runtime::Thread thread_;
};

}  // namespace dmindex::fabric::ucx
