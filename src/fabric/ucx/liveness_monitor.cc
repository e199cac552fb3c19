#include "fabric/ucx/liveness_monitor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace dmindex::fabric::ucx {

LivenessMonitor::LivenessMonitor(std::vector<Socket> sockets)
    : sockets_(std::move(sockets)),
      down_(std::make_unique<std::atomic<bool>[]>(sockets_.size())),
      stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = runtime::Thread([this] { Run(); });
}

LivenessMonitor::~LivenessMonitor() {
  uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  thread_.join();
  close(stop_fd_);
}

void LivenessMonitor::Run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign(1, pollfd{stop_fd_, POLLIN, 0});
    for (size_t i = 0; i < sockets_.size(); ++i)
      if (!down_[i].load(std::memory_order_relaxed))
        fds.push_back({sockets_[i].fd(), POLLIN | POLLRDHUP, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    for (size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      // The server never writes after its welcome: readable means closed (EOF) or broken.
      char byte;
      ssize_t n = recv(fds[k].fd, &byte, 1, MSG_DONTWAIT);
      if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      for (size_t i = 0; i < sockets_.size(); ++i)
        if (sockets_[i].fd() == fds[k].fd) down_[i].store(true, std::memory_order_release);
    }
  }
}

}  // namespace dmindex::fabric::ucx
