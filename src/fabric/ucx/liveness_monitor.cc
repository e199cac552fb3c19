#include "fabric/ucx/liveness_monitor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/retry.h"

namespace dmindex::fabric::ucx {
namespace {

// Between reconnection attempts: from a quick first retry (a supervisor restarts a server in
// well under a second) up to a pause that keeps a long outage cheap.
constexpr std::chrono::milliseconds kFirstRetry{20};
constexpr std::chrono::milliseconds kLongestRetry{500};
constexpr std::chrono::seconds kReportEvery{5};

double SecondsSince(runtime::Clock::time_point t) {
  return std::chrono::duration<double>(runtime::Now() - t).count();
}

}  // namespace

LivenessMonitor::LivenessMonitor(std::vector<Watched> nodes, Reconnect reconnect,
                                 std::chrono::milliseconds restart_wait)
    : nodes_(std::make_unique<Node[]>(nodes.size())),
      count_(nodes.size()),
      reconnect_(std::move(reconnect)),
      restart_wait_(restart_wait),
      stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  for (size_t i = 0; i < count_; ++i) nodes_[i].watched = std::move(nodes[i]);
  thread_ = runtime::Thread([this] { Run(); });
}

LivenessMonitor::~LivenessMonitor() {
  uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  thread_.join();
  close(stop_fd_);
}

Status LivenessMonitor::FirstLost() const {
  const int32_t n = first_lost_.load(std::memory_order_acquire);
  return n < 0 ? Status::Ok() : nodes_[n].lost;
}

int LivenessMonitor::PollTimeoutMs() const {
  int timeout = -1;
  const auto now = runtime::Now();
  for (size_t i = 0; i < count_; ++i) {
    if (state(static_cast<uint16_t>(i)) != State::kReconnecting) continue;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(nodes_[i].next_attempt - now, runtime::Clock::duration::zero()));
    timeout = timeout < 0 ? static_cast<int>(wait.count())
                          : std::min(timeout, static_cast<int>(wait.count()));
  }
  return timeout;
}

void LivenessMonitor::Run() {
  std::vector<pollfd> fds;
  std::vector<uint16_t> polled;
  for (;;) {
    fds.assign(1, pollfd{stop_fd_, POLLIN, 0});
    polled.clear();
    for (uint16_t i = 0; i < count_; ++i) {
      if (state(i) != State::kUp) continue;
      fds.push_back({nodes_[i].watched.socket.fd(), POLLIN | POLLRDHUP, 0});
      polled.push_back(i);
    }
    if (poll(fds.data(), fds.size(), PollTimeoutMs()) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    for (size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      // The server never writes after its welcome: readable means closed (EOF) or broken.
      char byte;
      ssize_t n = recv(fds[k].fd, &byte, 1, MSG_DONTWAIT);
      if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      OnGone(polled[k - 1]);
    }
    for (uint16_t i = 0; i < count_; ++i)
      if (state(i) == State::kReconnecting && runtime::Now() >= nodes_[i].next_attempt)
        TryReconnect(i);
  }
}

void LivenessMonitor::OnGone(uint16_t node) {
  Node& n = nodes_[node];
  n.watched.socket.Close();
  if (!n.watched.persistent) {
    MarkLost(node, Status::Unavailable(
                       n.watched.name + " is gone: its process exited or closed the connection. "
                       "Its pool was volatile: every index it held is lost (this process's "
                       "operations on every index fail from now on; restart the memory servers "
                       "and recreate the indexes, or run them with --data-dir)"));
    return;
  }
  n.budget = std::make_unique<RetryBudget>(
      TimeLimit("reconnection attempts", restart_wait_, Status::Code::kUnavailable,
                "its memory server did not come back with its pool"),
      "reconnecting to");
  n.gone_at = runtime::Now();
  n.next_attempt = n.gone_at;
  n.next_report = n.gone_at + kReportEvery;
  n.interval = kFirstRetry;
  std::fprintf(stderr, "dmindex: %s went away; its pool is persistent: reconnecting (for up to %.0f s)\n",
               n.watched.name.c_str(), std::chrono::duration<double>(restart_wait_).count());
  n.state.store(State::kReconnecting, std::memory_order_release);
}

void LivenessMonitor::TryReconnect(uint16_t node) {
  Node& n = nodes_[node];
  Attempt a = reconnect_(node);
  if (!a.lost.ok()) return MarkLost(node, a.lost);
  if (a.socket.valid()) {
    n.watched.socket = std::move(a.socket);
    n.budget.reset();
    std::fprintf(stderr, "dmindex: %s is back with its pool after %.1f s; carrying on\n",
                 n.watched.name.c_str(), SecondsSince(n.gone_at));
    n.generation.fetch_add(1, std::memory_order_acq_rel);
    n.state.store(State::kUp, std::memory_order_release);
    return;
  }
  if (!n.budget->Spend()) return MarkLost(node, n.budget->Exhausted(n.watched.name));
  const auto now = runtime::Now();
  if (now >= n.next_report) {
    std::fprintf(stderr, "dmindex: %s: still reconnecting (%llu attempts, %.0f s)\n",
                 n.watched.name.c_str(), static_cast<unsigned long long>(n.budget->spent()),
                 SecondsSince(n.gone_at));
    n.next_report = now + kReportEvery;
  }
  n.next_attempt = now + n.interval;
  n.interval = std::min(n.interval * 2, kLongestRetry);
}

void LivenessMonitor::MarkLost(uint16_t node, Status why) {
  Node& n = nodes_[node];
  n.budget.reset();
  n.lost = std::move(why);
  std::fprintf(stderr, "dmindex: %s\n", n.lost.ToString().c_str());
  int32_t none = -1;
  first_lost_.compare_exchange_strong(none, node, std::memory_order_acq_rel);
  n.state.store(State::kLost, std::memory_order_release);
}

}  // namespace dmindex::fabric::ucx
